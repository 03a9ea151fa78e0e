"""GPU sharing for kschedfw: the GPU-share resource model (milli per device, from the
``alibabacloud.com/gpu-*`` annotations), the Open-Gpu-Share Filter/Reserve/PreBind plugin and
the six scoring policies of the FGD paper (USENIX ATC '23), with the simulator's names."""

from kschedfw_gpushare.bestfit import BestFitScore
from kschedfw_gpushare.dotproduct import DotProductScore
from kschedfw_gpushare.fgdscore import FGDScore
from kschedfw_gpushare.gpuclustering import GpuClusteringScore
from kschedfw_gpushare.gpupacking import GpuPackingScore
from kschedfw_gpushare.opengpushare import OpenGpuShare
from kschedfw_gpushare.randomscore import RandomScore
from kschedfw_gpushare.resources import pod_gpu_milli_total
from kschedfw_gpushare.typical import typical_pods

__all__ = ["OpenGpuShare", "RandomScore", "DotProductScore", "GpuClusteringScore", "GpuPackingScore",
           "BestFitScore", "FGDScore", "pod_gpu_milli_total", "typical_pods"]
