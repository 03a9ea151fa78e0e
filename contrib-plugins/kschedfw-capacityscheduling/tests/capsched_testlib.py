"""Builders shared by the CapacityScheduling tests (upstream's makePod, makeEQ, st.MakeNode...)."""

from __future__ import annotations

from kschedfw import testing as kit
from kschedfw.api import parse_object

from kschedfw_capacityscheduling import ElasticQuotaInfo, ElasticQuotaInfos, Resource

GPU = "nvidia.com/gpu"
MID_PRIORITY, HIGH_PRIORITY = 100, 1000


def make_pod(name: str, namespace: str, mem: int, cpu: int, gpu: int, priority: int, uid: str, node: str = "",
             phase: str = "", terminating: bool = False, nominated: str = "", preemption_policy: str = ""):
    """Upstream ``makePod``: one container requesting memory (bytes), cpu (millicores) and GPUs;
    zero termination grace period."""
    requests = {"memory": str(mem), "cpu": f"{cpu}m", GPU: str(gpu)}
    return _pod(name, namespace, uid, [kit.container("pause", requests=requests)], priority, node, phase,
                terminating, nominated, preemption_policy, terminationGracePeriodSeconds=0)


def st_pod(name: str, uid: str, namespace: str = "default", priority: int = 0, node: str = "",
           terminating: bool = False, nominated: str = "", preemption_policy: str = ""):
    """``st.MakePod()``: no containers."""
    return _pod(name, namespace, uid, [], priority, node, "", terminating, nominated, preemption_policy)


def _pod(name, namespace, uid, containers, priority, node, phase, terminating, nominated, preemption_policy,
         **spec):
    return kit.make_pod(name, namespace=namespace, uid=uid, containers=containers, priority=priority,
                        node_name=node, phase=phase or None, nominated_node_name=nominated,
                        terminating="2026-01-01T00:00:00Z" if terminating else False,
                        preemption_policy=preemption_policy or None, **spec)


def make_node(name: str, resources: dict):
    """``st.MakeNode().Name(name).Capacity(resources)``: capacity = allocatable, 32 pods."""
    return kit.make_node(name, capacity={"pods": "32", **resources}, hostname_label=False)


def make_eq(namespace: str, name: str, max_: dict | None, min_: dict | None):
    spec: dict = {}
    if max_ is not None:
        spec["max"] = max_
    if min_ is not None:
        spec["min"] = min_
    return parse_object({"apiVersion": "scheduling.x-k8s.io/v1alpha1", "kind": "ElasticQuota",
                         "metadata": {"name": name, "namespace": namespace}, "spec": spec})


def resource_list(cpu: int, mem: int) -> dict:
    """``makeResourceList``: cpu in millicores, memory in bytes."""
    return {"cpu": f"{cpu}m", "memory": str(mem)}


def res(milli_cpu: int = 0, memory: int = 0, ephemeral: int = 0, gpu: int | None = None) -> Resource:
    return Resource(milli_cpu, memory, ephemeral, 0, {} if gpu is None else {GPU: gpu})


def info(namespace: str, *, min_: Resource | None = None, max_: Resource | None = None,
         used: Resource | None = None, pods: set | None = None) -> ElasticQuotaInfo:
    return ElasticQuotaInfo(namespace, min_, max_, used if used is not None else Resource(), set(pods or ()))


def infos(*items: ElasticQuotaInfo) -> ElasticQuotaInfos:
    return ElasticQuotaInfos({i.namespace: i for i in items})
