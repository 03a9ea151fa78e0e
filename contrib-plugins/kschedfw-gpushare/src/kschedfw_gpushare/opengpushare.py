"""Open-Gpu-Share: GPU sharing by milli (Filter, Reserve/Unreserve, PreBind), as the FGD
paper's simulator does it.

Filter keeps the nodes with enough GPU for the pod: a GPU count, the card model it asks for, and
a device fit (a device with ``gpu-milli`` idle for one GPU; ``gpu-count`` devices that hold it
for several). Reserve picks the device(s) by ``gpuSelMethod``: ``best`` (least idle milli that
fits), ``worst``, ``random`` (uniform, with the plugin's seeded generator) or ``FGDScore`` (the
device FGD scores best); whole-GPU pods always take the lowest-index free devices. PreBind
records them on the pod as ``alibabacloud.com/gpu-index`` ("3", "0-1-2-3"), which is how later
cycles (and other schedulers) know which devices are used.
"""

from __future__ import annotations

import random
from typing import TYPE_CHECKING, Any, Mapping, Sequence

from kschedfw import Status, hookimpl
from kschedfw.api.field import FieldError
from kschedfw.fwk.events import ActionType, ClusterEvent, ClusterEventWithHint, EventResource
from kschedfw.fwk.interface import PodAnnotationWriter
from kschedfw.fwk.status import Code, new_rejection
from kschedfw.fwk.types import PreBindPreFlightResult

from kschedfw_gpushare import devices
from kschedfw_gpushare.args import (raise_invalid, GPU_SEL_METHODS, SEED, TYPICAL_PODS, check_choice, check_methods,
                                    check_typical_pods, schema)
from kschedfw_gpushare.fgdscore import fgd_choice, workload_from
from kschedfw_gpushare.nodestate import NodeGpu, state_for
from kschedfw_gpushare.resources import (GPU_INDEX, MILLI, PodShape, format_gpu_index, gpu_index_of, model_matches,
                                         pod_shape)

if TYPE_CHECKING:
    from kschedfw import CycleState, Handle, NodeInfo
    from kschedfw.api import Pod

NAME = "Open-Gpu-Share"

ERR_NO_GPU = "node(s) had no GPU"
ERR_CARD_MODEL = "node(s) didn't match the pod's GPU card model"
ERR_NO_GPU_COUNT = "pod asks for GPU milli without a GPU count"
ERR_INSUFFICIENT_MILLI = "Insufficient alibabacloud.com/gpu-milli"
ERR_INSUFFICIENT_COUNT = "Insufficient alibabacloud.com/gpu-count"
_NO_GPU = (ERR_NO_GPU,)
_CARD_MODEL = (ERR_CARD_MODEL,)

ARGS_SCHEMA = schema(
    gpuSelMethod={"type": "string", "default": "best",
                  "description": "How Reserve picks a shared GPU: best, worst, random or FGDScore."},
    seed=SEED,
    typicalPods=TYPICAL_PODS,
)


def validate_args(args: Mapping[str, Any]) -> list[FieldError]:
    errors = check_choice(args, "gpuSelMethod", GPU_SEL_METHODS) + check_methods(args)
    return errors + check_typical_pods(args, required=args.get("gpuSelMethod") == "FGDScore")


def preset_fits(node: NodeGpu, preset: Sequence[int], milli: int) -> bool:
    """A pod that names its devices fits when each exists and holds its milli."""
    return all(0 <= d < node.count and node.idle[d] >= milli for d in preset)


class OpenGpuShare:
    """Filter, Reserve, Unreserve and PreBind for GPU-sharing pods."""

    name = NAME
    args_schema = ARGS_SCHEMA
    validate_args = staticmethod(validate_args)

    def __init__(self, args: Mapping[str, Any] | None = None, handle: "Handle | None" = None) -> None:
        args = dict(args or {})
        raise_invalid(validate_args(args))
        self.handle = handle
        self.method = args.get("gpuSelMethod") or "best"
        self.rng = random.Random(int(args.get("seed") or 0))
        self.workload = workload_from(args) if self.method == "FGDScore" else None
        self.state = state_for(handle)

    # ------------------------------------------------------------------ Filter
    @hookimpl
    def filter(self, state: "CycleState", pod: "Pod", node_info: "NodeInfo") -> Status | None:
        shape = pod_shape(pod)
        if shape.milli <= 0:
            return None
        return self._verdict(shape, gpu_index_of(pod.annotations), self.state.node(node_info))

    def filter_nodes(self, state: "CycleState", pod: "Pod", nodes: "list[NodeInfo]") -> list[Status | None]:
        shape = pod_shape(pod)
        if shape.milli <= 0:
            return [None] * len(nodes)
        preset = gpu_index_of(pod.annotations)
        cache = self.state.nodes
        refresh = self.state.refresh
        out: list[Status | None] = []
        append = out.append
        if preset is None and (shape.gpus == 1 or (shape.gpus > 1 and shape.milli == MILLI)):
            # the usual pods: one (part of a) GPU, or whole GPUs. One status per reason for the
            # whole call: the framework only names the plugin on it, the same for every node
            one, milli, count, wanted = shape.gpus == 1, shape.milli, shape.gpus, shape.model
            short = new_rejection(Status, Code.Unschedulable, (ERR_INSUFFICIENT_MILLI,) if one and milli < MILLI
                                  else (ERR_INSUFFICIENT_COUNT,))
            no_gpu = new_rejection(Status, Code.UnschedulableAndUnresolvable, _NO_GPU)
            other_model = new_rejection(Status, Code.UnschedulableAndUnresolvable, _CARD_MODEL)
            accepted: dict[str, bool] = {}  # node model -> the pod accepts it
            for info in nodes:
                kept = cache.get(info)
                node = kept[1] if kept is not None and kept[0] == info.generation else refresh(info)
                if not node.count:
                    append(no_gpu)
                    continue
                if wanted:
                    ok = accepted.get(node.model)
                    if ok is None:
                        ok = accepted[node.model] = model_matches(node.model, wanted)
                    if not ok:
                        append(other_model)
                        continue
                append(None if ((node.max_idle >= milli) if one else (node.free >= count)) else short)
            return out
        verdict = self._verdict
        for info in nodes:
            kept = cache.get(info)
            node = kept[1] if kept is not None and kept[0] == info.generation else refresh(info)
            append(verdict(shape, preset, node))
        return out

    def _verdict(self, shape: PodShape, preset: tuple[int, ...] | None, node: NodeGpu) -> Status | None:
        if node.count == 0:
            return new_rejection(Status, Code.UnschedulableAndUnresolvable, (ERR_NO_GPU,))
        if shape.model and not model_matches(node.model, shape.model):
            return new_rejection(Status, Code.UnschedulableAndUnresolvable, (ERR_CARD_MODEL,))
        if shape.gpus <= 0:
            return new_rejection(Status, Code.UnschedulableAndUnresolvable, (ERR_NO_GPU_COUNT,))
        if preset is not None:
            fit = preset_fits(node, preset, shape.milli)
        elif shape.gpus == 1:
            fit = node.max_idle >= shape.milli
        elif shape.milli >= MILLI:
            fit = node.free >= shape.gpus
        else:
            fit = devices.fits(node.idle, shape.milli, shape.gpus)
        if fit:
            return None
        reason = ERR_INSUFFICIENT_MILLI if shape.gpus == 1 and shape.milli < MILLI else ERR_INSUFFICIENT_COUNT
        return new_rejection(Status, Code.Unschedulable, (reason,))

    @hookimpl
    def events_to_register(self) -> list[ClusterEventWithHint]:
        """A GPU frees up when a pod leaves; a node gains GPUs or a model when added or changed."""
        return [ClusterEventWithHint(ClusterEvent(EventResource.AssignedPod, ActionType.Delete)),
                ClusterEventWithHint(ClusterEvent(EventResource.Node, ActionType.Add | ActionType.UpdateNodeAllocatable
                                                  | ActionType.UpdateNodeLabel))]

    # ------------------------------------------------------------------ Reserve
    def choose(self, node: NodeGpu, pod: "Pod") -> tuple[int, ...] | None:
        """The devices the pod gets on the node (as it is without the pod)."""
        shape = pod_shape(pod)
        preset = gpu_index_of(pod.annotations)
        if preset is not None:
            return preset if preset_fits(node, preset, shape.milli) else None
        if shape.milli >= MILLI:
            return devices.exclusive(node.idle, shape.total_milli)
        if shape.gpus != 1:
            return devices.packed(node.idle, shape.milli, shape.gpus)
        if self.method == "FGDScore":
            assert self.workload is not None
            return fgd_choice(self.workload, node, shape)[1]
        if self.method == "random":
            chosen = devices.random_fit(node.idle, shape.milli, self.rng)
        elif self.method == "worst":
            chosen = devices.worst_fit(node.idle, shape.milli)
        else:
            chosen = devices.best_fit(node.idle, shape.milli)
        return (chosen,) if chosen is not None else None

    @hookimpl
    def reserve(self, state: "CycleState", pod: "Pod", node_name: str) -> Status | None:
        if pod_shape(pod).milli <= 0:
            return None
        node_info = self.handle.snapshot.get(node_name) if self.handle is not None else None
        if node_info is None:
            return Status.as_status(f"failed to get node {node_name}")
        chosen = self.choose(self.state.build(node_info, without=pod), pod)
        if chosen is None:
            return Status.as_status(f"failed to allocate gpu to pod({pod.key}) to node({node_name})")
        self.state.reserve(pod, node_name, chosen)
        return None

    @hookimpl
    def unreserve(self, state: "CycleState", pod: "Pod", node_name: str) -> None:
        self.state.unreserve(pod)

    # ------------------------------------------------------------------ PreBind
    @hookimpl
    def pre_bind_pre_flight(self, state: "CycleState", pod: "Pod", node_name: str
                            ) -> tuple[PreBindPreFlightResult | None, Status | None]:
        chosen = self.state.reserved(pod, node_name)
        if chosen is None or pod.annotations.get(GPU_INDEX) == format_gpu_index(chosen):
            return None, Status.skip()
        return PreBindPreFlightResult(allow_parallel=True), None

    @hookimpl
    def pre_bind(self, state: "CycleState", pod: "Pod", node_name: str) -> Status | None:
        chosen = self.state.reserved(pod, node_name)
        if chosen is None:
            return None
        client = self.handle.client if self.handle is not None else None
        if not isinstance(client, PodAnnotationWriter):
            return Status.as_status("no client to write the pod's GPU index with (a PodAnnotationWriter)")
        try:
            client.patch_pod_annotations(pod, {GPU_INDEX: format_gpu_index(chosen)})
        except Exception as exc:  # noqa: BLE001 - any client failure is an Error status
            return Status.as_status(exc)
        return None
