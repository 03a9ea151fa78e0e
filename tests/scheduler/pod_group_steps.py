"""Upstream's pod-group integration tables as steps played through the embedded cluster.

Upstream's steps act (create, delete) or wait for an outcome. Here the actions are scenario
steps ``SPACING`` simulated seconds apart, each settling before the next, and a wait is checked
at the last moment before the next action (or once the run has ended). The API server of
upstream's integration tests runs without the Priority admission plugin (pods carry their
priority), and so does the cluster here."""

from __future__ import annotations

from typing import Any

import attrs

from kschedfw.api.load import parse_object
from kschedfw.api.workload import POD_GROUP_KIND
from kschedfw.cluster.apiserver.podadmission import ADMISSION_PLUGINS
from kschedfw.cluster.inputs.scenario import Step
from kschedfw.config.validate import default_config
from kschedfw.framework.registry import default_registry
from kschedfw.fwk.features import FeatureGates
from kschedfw.simulation import Simulation

SPACING = 100.0


def node(name: str, cpu: str, labels: dict[str, str]) -> Any:
    """``st.MakeNode().Capacity(...)``: the CPUs given and 32 pods, capacity and allocatable."""
    resources = {"cpu": cpu, "pods": "32"}
    return parse_object({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels},
                         "status": {"allocatable": resources, "capacity": resources}})


def workload(name: str, *templates: tuple[str, dict[str, Any]]) -> Any:
    return parse_object({"apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "Workload", "metadata": {"name": name},
                         "spec": {"podGroupTemplates": [{"name": t, "schedulingPolicy": p} for t, p in templates]}})


def gang_policy(n: int) -> dict[str, Any]:
    return {"gang": {"minCount": n}}


BASIC: dict[str, Any] = {"basic": {}}


def pod_group(name: str, workload_name: str, template: str, policy: dict[str, Any], *,
              priority: int | None = None, topology_key: str | None = None) -> Any:
    spec: dict[str, Any] = {"podGroupTemplateRef": {"workload": {"workloadName": workload_name,
                                                                 "podGroupTemplateName": template}},
                            "schedulingPolicy": policy}
    if priority is not None:
        spec["priority"] = priority
    if topology_key:
        spec["schedulingConstraints"] = {"topology": [{"key": topology_key}]}
    return parse_object({"apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "PodGroup",
                         "metadata": {"name": name}, "spec": spec})


def pod(name: str, priority: int, *, cpu: str = "1", group: str | None = None, zero_grace: bool = False,
        node_name: str | None = None) -> Any:
    spec: dict[str, Any] = {"priority": priority,
                            "containers": [{"name": "c", "image": "image", "resources": {"requests": {"cpu": cpu}}}]}
    if group:
        spec["schedulingGroup"] = {"podGroupName": group}
    if zero_grace:
        spec["terminationGracePeriodSeconds"] = 0
    if node_name:
        spec["nodeName"] = node_name
    return parse_object({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": spec})


@attrs.frozen
class Create:
    objects: tuple[Any, ...]


def create(*objects: Any) -> Create:
    return Create(objects)


@attrs.frozen
class Delete:
    names: tuple[str, ...]


@attrs.frozen
class Expect:
    """What upstream waits for or verifies: pods gated at PreEnqueue (in the unschedulable pool
    with no condition), unschedulable, scheduled or removed; ``some`` (scheduled, unschedulable)
    counts among ``of``; a group's PodGroupScheduled condition (group, status, reason); pods
    ``on`` some of the nodes given; pods all in one domain of a topology key."""

    gated: tuple[str, ...] = ()
    unschedulable: tuple[str, ...] = ()
    scheduled: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    some: tuple[int, int] | None = None
    of: tuple[str, ...] = ()
    condition: tuple[str, str, str] | None = None
    on: tuple[tuple[str, ...], frozenset[str]] | None = None
    one_domain: tuple[tuple[str, ...], str] | None = None


StepT = Create | Delete | Expect


def play(objects: list[Any], steps: tuple[StepT, ...], gates: str, until: float, fast_paths: bool = True
         ) -> Simulation:
    """The run of ``steps`` after ``objects``, with the actions up to ``until`` only (``fast_paths``
    off: the plain path, plugins walking the nodes instead of the cache's indexes)."""
    feature_gates = FeatureGates.parse(gates)
    scenario, at = [], 1.0
    for step in steps:
        if isinstance(step, Create):
            scenario.append(Step(at, "create", step.objects))
        elif isinstance(step, Delete):
            scenario.extend(Step(at, "delete", target={"kind": "Pod", "name": n, "namespace": "default"})
                            for n in step.names)
        else:
            continue
        at += SPACING
    registry = default_registry()
    sim = Simulation(default_config(registry, feature_gates), registry, objects,
                     [s for s in scenario if s.at <= until], feature_gates=feature_gates,
                     admission_plugins=ADMISSION_PLUGINS - {"Priority"}, fast_paths=fast_paths)
    sim.run()
    return sim


def checkpoints(steps: tuple[StepT, ...]) -> list[tuple[float, list[Expect]]]:
    """Each run of expectations with the moment it is checked at: just before the next action
    (the actions are SPACING apart from 1s), or once everything has settled."""
    out: list[tuple[float, list[Expect]]] = []
    actions = 0
    pending: list[Expect] = []
    for step in steps:
        if isinstance(step, Expect):
            pending.append(step)
            continue
        if pending:
            out.append((actions * SPACING, pending))
            pending = []
        actions += 1
    if pending:
        out.append((1e12, pending))
    return out


def check(sim: Simulation, expect: Expect) -> None:
    pods = {p.name: p for p in sim.cluster.list("Pod")}

    def scheduled(name: str) -> bool:
        return name in pods and bool(pods[name].node_name)

    def unschedulable(name: str) -> bool:
        cond = pods[name].condition("PodScheduled") if name in pods else None
        return not scheduled(name) and cond is not None and cond.reason == "Unschedulable"

    pool = {qpi.pod.name for qpi in sim.scheduler.queue.unschedulable_pods.values()}
    for name in expect.gated:
        assert name in pool and pods[name].condition("PodScheduled") is None, f"{name} not gated at PreEnqueue"
    for name in expect.unschedulable:
        assert unschedulable(name), f"{name} not unschedulable"
    for name in expect.scheduled:
        assert scheduled(name), f"{name} not scheduled"
    for name in expect.removed:
        assert name not in pods, f"{name} not removed"
    if expect.some is not None:
        got = (sum(map(scheduled, expect.of)), sum(map(unschedulable, expect.of)))
        assert got == expect.some, f"(scheduled, unschedulable) of {expect.of}"
    if expect.condition is not None:
        name, status, reason = expect.condition
        group = sim.cluster.get(POD_GROUP_KIND, name, "default")
        cond = group.condition("PodGroupScheduled") if group is not None else None
        assert cond is not None and (cond.status, cond.reason) == (status, reason), f"{name}: {cond}"
    if expect.on is not None:
        names, nodes = expect.on
        placed = {n: pods[n].node_name for n in names}
        assert all(v in nodes for v in placed.values()), f"{placed} not within {sorted(nodes)}"
    if expect.one_domain is not None:
        names, key = expect.one_domain
        domains = {sim.cluster.get("Node", pods[n].node_name).labels.get(key) for n in names if scheduled(n)}
        assert all(map(scheduled, names)) and len(domains) == 1 and None not in domains, f"{key}: {domains}"


def run_table(objects: list[Any], steps: tuple[StepT, ...], gates: str, fast_paths: bool = True) -> int:
    """Play ``steps`` once per checkpoint and check its expectations there; how many were checked."""
    checked = 0
    for until, expectations in checkpoints(steps):
        sim = play(objects, steps, gates, until, fast_paths)
        for expect in expectations:
            check(sim, expect)
            checked += 1
    return checked
