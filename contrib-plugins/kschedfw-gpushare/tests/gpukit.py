"""Nodes and pods shaped like the Alibaba GPU trace's, for the tests."""

from __future__ import annotations

from kschedfw.testing import make_node, make_pod

from kschedfw_gpushare.resources import GPU_CARD_MODEL, GPU_COUNT, GPU_INDEX, GPU_MILLI


def gpu_node(name: str, gpus: int = 8, model: str = "G2", cpu: str = "96", memory: str = "512Gi"):
    extra = {GPU_COUNT: str(gpus), GPU_MILLI: str(gpus * 1000)} if gpus else {}
    return make_node(name, cpu=cpu, memory=memory, pods="1001", labels={GPU_CARD_MODEL: model} if model else None,
                     extra_allocatable=extra)


def gpu_pod(name: str, milli: int = 0, count: int = 1, *, model: str = "", cpu: str = "4", memory: str = "8Gi",
            index: str | None = None, node_name: str = ""):
    annotations = {}
    if milli:
        annotations = {GPU_MILLI: str(milli), GPU_COUNT: str(count)}
    if model:
        annotations[GPU_CARD_MODEL] = model
    if index is not None:
        annotations[GPU_INDEX] = index
    return make_pod(name, cpu=cpu, memory=memory, annotations=annotations, node_name=node_name, uid=f"uid-{name}")
