"""Per-node GPU state (the simulator's ``NodeResource``), derived from the pods on a NodeInfo
and memoised on its generation, plus the devices reserved for assumed pods.

A placed pod's devices come from its ``gpu-index`` annotation. A pod assumed on a node but not
yet bound (or bound by a profile without the PreBind) has no annotation: Reserve recorded its
devices here, and Unreserve, the pod's deletion or its binding elsewhere drops them. A GPU pod
with neither (placed by some other scheduler) is counted on the best-fitting devices, so the
node is never overcommitted.

One :class:`GpuShareState` serves every GPU plugin of a profile (one per framework handle), so
the score plugins see the devices Open-Gpu-Share reserved.
"""

from __future__ import annotations

import threading
import weakref
from typing import TYPE_CHECKING, Any

from kschedfw_gpushare.devices import best_fit, exclusive, packed
from kschedfw_gpushare.resources import (MILLI, gpu_index_of, node_gpu_count, node_gpu_model, pod_shape)

if TYPE_CHECKING:
    from kschedfw import NodeInfo
    from kschedfw.api import Pod
    from kschedfw.fwk.interface import Handle, WatchEvent

_NODES_LIMIT = 50_000

NO_GPU_TAG = "no-gpu"
SHARE_GPU_TAG = "share-gpu"


def affinity_tag(milli: int, count: int) -> str:
    """GpuClustering's class of a pod: ``no-gpu``, ``share-gpu`` or ``<count>-gpu``."""
    if count == 0:
        return NO_GPU_TAG
    if count == 1 and milli < MILLI:
        return SHARE_GPU_TAG
    if milli == MILLI:
        return f"{count}-gpu"
    return f"{count}x{milli}-gpu"  # not in the trace (the simulator refuses such pods)


class NodeGpu:
    """One node at one state: cpu left, idle milli per device, model, the GPU classes of its
    pods, and a memo of per-pod-shape answers (valid as long as this object is)."""

    __slots__ = ("name", "cpu_left", "cpu_capacity", "idle", "count", "model", "affinity", "max_idle", "free",
                 "memo")

    def __init__(self, name: str, cpu_left: int, cpu_capacity: int, idle: tuple[int, ...], model: str,
                 affinity: dict[str, int]) -> None:
        self.name = name
        self.cpu_left = cpu_left
        self.cpu_capacity = cpu_capacity
        self.idle = idle
        self.count = len(idle)
        self.model = model
        self.affinity = affinity
        self.max_idle = max(idle, default=0)
        self.free = sum(1 for g in idle if g == MILLI)
        self.memo: dict[Any, Any] = {}

    @property
    def idle_total(self) -> int:
        return sum(self.idle)

    def __repr__(self) -> str:
        return f"NodeGpu({self.name!r}, cpu_left={self.cpu_left}, idle={list(self.idle)}, model={self.model!r})"


class GpuShareState:
    """Reservations and the memo of :class:`NodeGpu` per node, for one profile."""

    def __init__(self, handle: "Handle | None" = None) -> None:
        #: pod uid -> (node name, devices) for pods Reserve placed
        self.reservations: dict[str, tuple[str, tuple[int, ...]]] = {}
        #: NodeInfo -> (its generation, its state); an entry goes when the node's reservations change
        self.nodes: dict[Any, tuple[int, NodeGpu]] = {}
        self._infos: dict[str, list[Any]] = {}  # node name -> the NodeInfos in ``nodes`` with that name
        self._lock = threading.Lock()
        if handle is not None:
            handle.subscribe("Pod", self._on_pod_event)

    # ------------------------------------------------------------------ reservations
    def reserve(self, pod: "Pod", node_name: str, devices: tuple[int, ...]) -> None:
        with self._lock:
            self._drop(pod.uid)
            self.reservations[pod.uid] = (node_name, devices)
            self._forget(node_name)

    def unreserve(self, pod: "Pod") -> None:
        with self._lock:
            self._drop(pod.uid)

    def reserved(self, pod: "Pod", node_name: str) -> tuple[int, ...] | None:
        kept = self.reservations.get(pod.uid)
        return kept[1] if kept is not None and kept[0] == node_name else None

    def _drop(self, uid: str) -> None:
        kept = self.reservations.pop(uid, None)
        if kept is not None:
            self._forget(kept[0])

    def _forget(self, node_name: str) -> None:
        for info in self._infos.pop(node_name, ()):
            self.nodes.pop(info, None)

    def _on_pod_event(self, event: "WatchEvent") -> None:
        """A deleted pod, or one bound elsewhere or with its devices written on it, needs no
        reservation any more."""
        if event.type == "DELETED":
            uid = event.old.uid if event.old is not None else ""
            if uid in self.reservations:
                self.unreserve(event.old)
            return
        pod = event.new
        kept = self.reservations.get(pod.uid) if pod is not None else None
        if kept is None or not pod.node_name:
            return
        if kept[0] != pod.node_name or gpu_index_of(pod.annotations) is not None:
            self.unreserve(pod)

    # ------------------------------------------------------------------ node state
    def node(self, node_info: "NodeInfo") -> NodeGpu:
        """The node's state now (memoised on the NodeInfo and its generation, and dropped when
        the node's reservations change: the rule of ``kschedfw.fwk.node_reuse``, where the node
        object is left out as the cache moves the generation when it replaces the node). The
        whole-list forms inline this."""
        kept = self.nodes.get(node_info)
        if kept is not None and kept[0] == node_info.generation:
            return kept[1]
        return self.refresh(node_info)

    def refresh(self, node_info: "NodeInfo") -> NodeGpu:
        state = self.build(node_info)
        if len(self.nodes) >= _NODES_LIMIT:  # clones (preemption dry runs) must not pile up
            self.nodes.clear()
            self._infos.clear()
        if node_info not in self.nodes:
            self._infos.setdefault(node_info.name, []).append(node_info)
        self.nodes[node_info] = (node_info.generation, state)
        return state

    def build(self, node_info: "NodeInfo", without: "Pod | None" = None) -> NodeGpu:
        """The node's state from its pods; ``without``: as if that pod were not on it (Reserve
        chooses devices on the node as it was before the pod was assumed there)."""
        node = node_info.node
        name = node_info.name
        cpu_capacity = int(node.allocatable.get("cpu", 0)) if node is not None else 0
        cpu_left = cpu_capacity - int(node_info.requested.get("cpu", 0))
        idle = [MILLI] * node_gpu_count(node)
        affinity: dict[str, int] = {}
        unplaced = []
        skip_uid = without.uid if without is not None else None
        for pod in node_info.pods:
            shape = pod_shape(pod)
            if pod.uid == skip_uid:
                cpu_left += int(pod.request().get("cpu", 0))
                continue
            tag = affinity_tag(shape.milli, shape.gpus)
            if tag != NO_GPU_TAG:
                affinity[tag] = affinity.get(tag, 0) + 1
            if shape.milli <= 0:
                continue
            devices = gpu_index_of(pod.annotations) or self.reserved(pod, name)
            if devices is None:
                unplaced.append(shape)
                continue
            for d in devices:
                if 0 <= d < len(idle):
                    idle[d] -= shape.milli
        for shape in unplaced:
            if shape.gpus == 1 and shape.milli < MILLI:
                chosen = best_fit(idle, shape.milli)
                devices = (chosen,) if chosen is not None else None
            elif shape.milli >= MILLI:
                devices = exclusive(idle, shape.total_milli)
            else:
                devices = packed(idle, shape.milli, shape.gpus)
            for d in devices or ():
                idle[d] -= shape.milli
        return NodeGpu(name, cpu_left, cpu_capacity, tuple(idle), node_gpu_model(node), affinity)


_STATES: "weakref.WeakKeyDictionary[Any, GpuShareState]" = weakref.WeakKeyDictionary()


def state_for(handle: "Handle | None") -> GpuShareState:
    """The profile's shared state (a new private one without a handle)."""
    if handle is None:
        return GpuShareState()
    state = _STATES.get(handle)
    if state is None:
        state = _STATES[handle] = GpuShareState(handle)
    return state
