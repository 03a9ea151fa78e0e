"""A placement narrows the scheduler's candidate nodes, not what plugins count.

Upstream's pod-group placement cycle (schedule_one_podgroup.go, with AssumePlacement in
backend/cache/snapshot.go) filters and scores only the placement's nodes, but its
``Snapshot.List()`` and ``Get()``, which PodTopologySpread's and InterPodAffinity's PreFilter
read, stay the whole cluster. So a spread constraint's skew is counted against domains outside
the placement, and anti-affinity sees pods in other racks of the same zone. Each case states
the placement upstream's rule gives and, for contrast, the one a placement-only count would.

Nodes have 2 CPUs and ``rack``/``zone`` labels; group pods ask for 1 CPU; a gang with a rack
topology constraint is tried in each rack. Among feasible racks the default placement scoring
(PodGroupPodsCount, then MostAllocated over the placement) picks the most allocated one.
"""

from __future__ import annotations

from typing import Any

import pytest

from kschedfw.api.load import parse_object
from tests.scheduler.pod_group_steps import (Expect, StepT, create, gang_policy, node, pod_group, run_table,
                                             workload)

GATES = "GenericWorkload=true,GangScheduling=true,TopologyAwareWorkloadScheduling=true"
WORKLOAD = workload("workload", ("t1", gang_policy(1)))


def rack_node(name: str, rack: str, zone: str) -> Any:
    return node(name, "2", {"rack": rack, "zone": zone, "kubernetes.io/hostname": name})


def gang(name: str, min_count: int) -> Any:
    return pod_group(name, "workload", "t1", gang_policy(min_count), topology_key="rack")


def a_pod(name: str, *, group: str | None = None, labels: dict[str, str] | None = None, cpu: str = "1",
          node_name: str | None = None, extra: dict[str, Any] | None = None) -> Any:
    spec: dict[str, Any] = {"priority": 100, "terminationGracePeriodSeconds": 0,
                            "containers": [{"name": "c", "image": "image", "resources": {"requests": {"cpu": cpu}}}]}
    if group:
        spec["schedulingGroup"] = {"podGroupName": group}
    if node_name:
        spec["nodeName"] = node_name
    spec.update(extra or {})
    return parse_object({"apiVersion": "v1", "kind": "Pod",
                         "metadata": {"name": name, "labels": labels or {}}, "spec": spec})


def spread(key: str) -> dict[str, Any]:
    return {"topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": key, "whenUnsatisfiable": "DoNotSchedule",
                                           "labelSelector": {"matchLabels": {"app": "x"}}}]}


def anti_affinity(app: str, key: str) -> dict[str, Any]:
    return {"affinity": {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": {"matchLabels": {"app": app}}, "topologyKey": key}]}}}


def members(group: str, count: int, extra: dict[str, Any]) -> tuple[Any, ...]:
    return tuple(a_pod(f"p{i}", group=group, labels={"app": "x"}, extra=extra) for i in range(1, count + 1))


TWO_ZONES = (rack_node("node1", "rack-1", "zone-1"), rack_node("node2", "rack-1", "zone-1"),
             rack_node("node3", "rack-2", "zone-2"), rack_node("node4", "rack-2", "zone-2"))

CASES: list[tuple[str, tuple[StepT, ...]]] = [
    # zone-1 holds one app=x pod, zone-2 none: the global minimum is 0, so in rack-1 (zone-1)
    # the first member's skew would be 1+1-0 = 2 > 1. Only rack-2 is feasible. Counting rack-1
    # alone (minimum 1) would find both racks feasible and pick the more allocated rack-1.
    ("zone spread counts the zone outside the placement", (
        create(*TWO_ZONES),
        create(a_pod("existing", labels={"app": "x"}, node_name="node1")),
        create(gang("pg1", 2)), create(*members("pg1", 2, spread("zone"))),
        Expect(scheduled=("p1", "p2"), on=(("p1", "p2"), frozenset({"node3", "node4"}))))),
    # hostname spread over four empty nodes: the global minimum stays 0 while two nodes are
    # outside the placement, so a rack of two nodes takes at most two members and a gang of
    # three fits in no rack ("0/2 placements are available"). Counting the rack alone would
    # let the third member onto a node holding one (skew 2-1 = 1) and schedule the gang.
    ("hostname spread counts the nodes outside the placement", (
        create(*TWO_ZONES),
        create(gang("pg1", 3)), create(*members("pg1", 3, spread("kubernetes.io/hostname"))),
        Expect(unschedulable=("p1", "p2", "p3")))),
    # the app=db pod is in rack-2, zone-1: anti-affinity by zone rules out rack-1 too (same
    # zone), leaving rack-3. Seeing rack-1 alone would find no db pod and, rack-1 being the
    # more allocated (the filler pod), choose it.
    ("anti-affinity by zone sees a pod in another rack", (
        create(rack_node("node1", "rack-1", "zone-1"), rack_node("node2", "rack-1", "zone-1"),
               rack_node("node3", "rack-2", "zone-1"),
               rack_node("node4", "rack-3", "zone-2"), rack_node("node5", "rack-3", "zone-2")),
        create(a_pod("db", labels={"app": "db"}, node_name="node3"), a_pod("filler", node_name="node1")),
        create(gang("pg1", 2)), create(*members("pg1", 2, anti_affinity("db", "zone"))),
        Expect(scheduled=("p1", "p2"), on=(("p1", "p2"), frozenset({"node4", "node5"}))))),
    # the same, the other way round: the pod in rack-2 refuses app=x pods in its zone
    ("an existing pod's anti-affinity by zone reaches into the placement", (
        create(rack_node("node1", "rack-1", "zone-1"), rack_node("node2", "rack-1", "zone-1"),
               rack_node("node3", "rack-2", "zone-1"),
               rack_node("node4", "rack-3", "zone-2"), rack_node("node5", "rack-3", "zone-2")),
        create(a_pod("db", labels={"app": "db"}, node_name="node3", extra=anti_affinity("x", "zone")),
               a_pod("filler", node_name="node1")),
        create(gang("pg1", 2)), create(*members("pg1", 2, {})),
        Expect(scheduled=("p1", "p2"), on=(("p1", "p2"), frozenset({"node4", "node5"}))))),
]


@pytest.mark.parametrize("fast_paths", [True, False], ids=["indexed", "plain"])
@pytest.mark.parametrize("steps", [steps for _, steps in CASES], ids=[name for name, _ in CASES])
def test_plugins_count_the_whole_cluster_in_a_placement(steps: tuple[StepT, ...], fast_paths: bool) -> None:
    """Both paths: the cache's pod indexes and the plain walk over the nodes count alike; each
    case's expected outcome (where the gang lands, or that it is unschedulable) is checked."""
    expected = [step for step in steps if isinstance(step, Expect)]
    assert expected, "a case without an expected outcome checks nothing"
    assert run_table([WORKLOAD], steps, GATES, fast_paths) == len(expected)
