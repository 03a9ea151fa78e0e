"""The whole-list forms (filter_nodes, score_nodes, normalize_score_values) give what the
per-node hooks give, node for node, for every plugin."""

from __future__ import annotations

import pytest

from kschedfw.testing.harness import PluginHarness

from kschedfw_gpushare import (BestFitScore, DotProductScore, FGDScore, GpuClusteringScore, GpuPackingScore,
                               OpenGpuShare, RandomScore)
from gpukit import gpu_node, gpu_pod

TYPICAL = [{"cpuMilli": 4000, "gpuMilli": 500, "gpuNumber": 1, "gpuType": "", "probability": 0.5},
           {"cpuMilli": 16000, "gpuMilli": 1000, "gpuNumber": 2, "gpuType": "", "probability": 0.3},
           {"cpuMilli": 2000, "gpuMilli": 0, "gpuNumber": 0, "gpuType": "", "probability": 0.2}]
NODES = [gpu_node("g2-a", 8), gpu_node("g2-b", 8), gpu_node("t4", 2, "T4", cpu="32"), gpu_node("v100", 4, "V100M16"),
         gpu_node("cpu", 0, "")]
PODS = [gpu_pod("s1", 300, index="0", node_name="g2-a"), gpu_pod("s2", 600, index="0", node_name="g2-a"),
        gpu_pod("w1", 1000, 2, index="1-2", node_name="g2-a", cpu="16"), gpu_pod("c1", node_name="g2-b", cpu="40"),
        gpu_pod("s3", 500, index="1", node_name="t4"), gpu_pod("w2", 1000, 1, index="3", node_name="v100")]
INCOMING = [gpu_pod("share", 250), gpu_pod("share-big", 700, cpu="20"), gpu_pod("one", 1000),
            gpu_pod("two", 1000, 2), gpu_pod("cpu-only", cpu="8"), gpu_pod("typed", 1000, model="T4|V100M16")]


@pytest.mark.parametrize("cls, args", [
    (RandomScore, {"seed": 3}), (DotProductScore, {}), (DotProductScore, {"dimExtMethod": "share", "normMethod": "node"}),
    (DotProductScore, {"dimExtMethod": "divide", "normMethod": "pod"}), (GpuClusteringScore, {}),
    (GpuPackingScore, {}), (BestFitScore, {}), (FGDScore, {"typicalPods": TYPICAL}),
])
def test_scores(cls, args):
    reports = []
    for fast in (True, False):
        h = PluginHarness(OpenGpuShare, cls, nodes=NODES, pods=PODS, args={cls.name: args}, fast_paths=fast)
        reports.append([(h.score(pod).scores.get(cls.name), h.feasible(pod)) for pod in INCOMING])
    assert reports[0] == reports[1]
    assert any(scores is not None and len(set(scores.raw.values())) > 1 for scores, _ in reports[0])


def test_filter():
    verdicts = []
    for fast in (True, False):
        h = PluginHarness(OpenGpuShare, nodes=NODES, pods=PODS, fast_paths=fast)
        verdicts.append([{n: (s.code, s.reasons) for n, s in h.filter(pod).statuses.items()} for pod in INCOMING])
    assert verdicts[0] == verdicts[1]
