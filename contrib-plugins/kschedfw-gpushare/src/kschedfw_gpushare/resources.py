"""The GPU-share resource model: what a pod asks for and what a node has, read from the
annotations, labels and capacity the Alibaba GPU trace (and its simulator) use.

A pod asks for ``gpu-count`` GPUs with ``gpu-milli`` thousandths of each (annotations; the
requests carry only cpu and memory), optionally restricted to card models (``gpu-card-model``,
``|``-separated). A node has ``gpu-count`` devices of 1000 milli each (capacity) of one model
(label). The devices a placed pod uses are in its ``gpu-index`` annotation ("3", "0-1-2-3").
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Mapping, NamedTuple

from kschedfw.api.quantity import parse_quantity, resource_amount, value

if TYPE_CHECKING:
    from kschedfw.api import Node, Pod

GPU_MILLI = "alibabacloud.com/gpu-milli"
GPU_COUNT = "alibabacloud.com/gpu-count"
GPU_CARD_MODEL = "alibabacloud.com/gpu-card-model"
GPU_INDEX = "alibabacloud.com/gpu-index"

#: milli of one GPU
MILLI = 1000
#: the largest node of the trace, the scale of DotProduct and BestFit
MAX_SPEC_CPU = 128000
MAX_SPEC_GPU = 8000
DEVICE_SEPARATOR = "-"
#: cpu a container without a cpu request counts for (upstream's non-zero request)
DEFAULT_MILLI_CPU_REQUEST = 100

_GO_INT = re.compile(r"[+-]?[0-9]+")


class PodShape(NamedTuple):
    """What the GPU plugins see of a pod (the simulator's ``PodResource``); hashable, so it keys
    every memo. ``milli`` is per GPU; ``model`` is the raw annotation."""

    cpu: int
    milli: int
    gpus: int
    model: str

    @property
    def total_milli(self) -> int:
        return self.milli * self.gpus

    @property
    def is_share(self) -> bool:
        """One GPU, partly: it shares a device with other pods."""
        return self.gpus == 1 and self.milli < MILLI


def gpu_milli_of(annotations: Mapping[str, str]) -> int:
    """``gpu-milli`` as a whole number (a quantity, rounded up); 0 when absent or invalid."""
    raw = annotations.get(GPU_MILLI)
    if raw is None:
        return 0
    try:
        return value(parse_quantity(raw))
    except (ValueError, TypeError):
        return 0


def gpu_count_of(annotations: Mapping[str, str]) -> int:
    """``gpu-count`` as a decimal integer; 0 when absent, invalid or negative."""
    raw = annotations.get(GPU_COUNT)
    if raw is None or not _GO_INT.fullmatch(str(raw)):
        return 0
    return max(int(raw), 0)


def gpu_index_of(annotations: Mapping[str, str]) -> tuple[int, ...] | None:
    """The devices of ``gpu-index``; None when absent, empty or not a list of integers."""
    raw = annotations.get(GPU_INDEX)
    if not raw:
        return None
    parts = str(raw).split(DEVICE_SEPARATOR)
    if not all(_GO_INT.fullmatch(p) for p in parts):
        return None
    return tuple(int(p) for p in parts)


def format_gpu_index(devices: tuple[int, ...] | list[int]) -> str:
    return DEVICE_SEPARATOR.join(str(d) for d in devices)


def _container_cpu(requests: Mapping[str, int]) -> int:
    return requests["cpu"] if "cpu" in requests else DEFAULT_MILLI_CPU_REQUEST


_SHAPES: dict[str, tuple[Any, Any, PodShape]] = {}


def pod_shape(pod: "Pod") -> PodShape:
    """The pod's shape, kept per uid while its annotations and containers stay the same objects."""
    kept = _SHAPES.get(pod.uid) if pod.uid else None
    if kept is not None and kept[0] is pod.annotations and kept[1] is pod.containers:
        return kept[2]
    annotations = pod.annotations
    shape = PodShape(sum(_container_cpu(c.requests) for c in pod.containers), gpu_milli_of(annotations),
                     gpu_count_of(annotations), annotations.get(GPU_CARD_MODEL, ""))
    if pod.uid:
        if len(_SHAPES) > 200_000:
            _SHAPES.clear()
        _SHAPES[pod.uid] = (annotations, pod.containers, shape)
    return shape


def manifest_shape(manifest: Mapping[str, Any]) -> PodShape:
    """:func:`pod_shape` of a pod manifest (a dict as in YAML)."""
    annotations = (manifest.get("metadata") or {}).get("annotations") or {}
    cpu = 0
    for container in (manifest.get("spec") or {}).get("containers") or ():
        requests = ((container.get("resources") or {}).get("requests")) or {}
        limits = ((container.get("resources") or {}).get("limits")) or {}
        raw = requests.get("cpu", limits.get("cpu"))
        cpu += DEFAULT_MILLI_CPU_REQUEST if raw is None else resource_amount("cpu", raw)
    return PodShape(cpu, gpu_milli_of(annotations), gpu_count_of(annotations),
                    str(annotations.get(GPU_CARD_MODEL, "")))


def shape_of(pod_or_manifest: "Pod | Mapping[str, Any]") -> PodShape:
    if isinstance(pod_or_manifest, Mapping):
        return manifest_shape(pod_or_manifest)
    return pod_shape(pod_or_manifest)


def pod_gpu_milli_total(pod_or_manifest: "Pod | Mapping[str, Any]") -> int:
    """GPU milli the pod asks for in all: milli per GPU times the GPU count (0 for CPU-only)."""
    shape = shape_of(pod_or_manifest)
    return max(shape.milli, 0) * shape.gpus


def model_matches(node_model: str, pod_model: str) -> bool:
    """Whether a node of ``node_model`` may run a pod asking for ``pod_model`` (``|``-separated
    models, any of which will do). No models asked (empty, or only separators) matches every
    node; a node without a model (a CPU node) matches no model."""
    if not pod_model:
        return True
    if not node_model:
        return False
    asked = [m for m in pod_model.split("|") if m]
    return not asked or node_model in asked


def node_gpu_count(node: "Node | None") -> int:
    """The node's devices: its ``gpu-count`` capacity (allocatable for a manifest without
    capacity)."""
    if node is None:
        return 0
    resources = node.capacity or node.allocatable
    return max(int(resources.get(GPU_COUNT, 0) or 0), 0)


def node_gpu_model(node: "Node | None") -> str:
    if node is None:
        return ""
    return node.labels.get(GPU_CARD_MODEL, "")
