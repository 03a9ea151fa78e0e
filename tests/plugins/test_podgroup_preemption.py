"""Workload-aware victim selection as upstream's podgrouppreemption_test.go states it.

Victims are units: a pod, or all pods of a PodGroup in PodGroup disruption mode (with the
group's priority). Only units of lower priority than the preemptor's PodGroup may go; a group
with a preemptionPolicy=Never pod does not preempt. Units are kept back most important first:
higher priority, then a pod of a group before a lone pod, then the older pod, or the larger and
then older group; PDB-violating units (any pod violating) are kept back before the others.

The scheduling function is upstream's mock: each rule gives ``capacity`` slots once none of its
blocking pods is left on its node, and the group fits when the slots cover its pods."""

from __future__ import annotations

import datetime as dt

import pytest

from kschedfw.api.workload import DISRUPTION_MODE_POD, DISRUPTION_MODE_POD_GROUP, PodGroup
from kschedfw.cache.snapshot import Snapshot
from kschedfw.framework.handle import Handle
from kschedfw.fwk.status import Code, Status
from kschedfw.preemption import Executor, PodGroupEvaluator, PodGroupPreemptor
from kschedfw.preemption.podgroup import Victim, more_important_victim, new_domain_for_workload_preemption
from kschedfw.testing.builders import make_node, make_pdb, make_pod
from tests.plugins.fakes import FakeLister

LOW, MID, HIGH = 10, 100, 1000
NOW = dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)


def pod(name, uid=None, *, node="", priority=None, group=None, start=None, labels=None, policy=None):
    extra = {"schedulingGroup": {"podGroupName": group}} if group else {}
    return make_pod(name, uid=uid or name, node_name=node, priority=priority, labels=labels,
                    start_time=None if start is None else f"1970-01-01T00:00:{start:02d}Z",
                    preemption_policy=policy, **extra)


def group(name, *, mode=None, priority=None):
    return PodGroup(name=name, uid=name, priority=priority,
                    disruption_mode=mode if mode is not None else DISRUPTION_MODE_POD)


def preemptor(priority, *pods):
    return PodGroupPreemptor(PodGroup(name="preemptor-pg", uid="preemptor-pg", priority=priority), tuple(pods))


APP_FOO_PDB = [make_pdb("pdb", match_labels={"app": "foo"}, disruptions_allowed=0)]
FOO = {"app": "foo"}
PG_MODE = DISRUPTION_MODE_POD_GROUP

CASES = [
    dict(name="Mix of no-group and single-pod-groups", nodes=["node1", "node2", "node3"],
         pods=[pod("p1", "v1", node="node1", priority=LOW), pod("p2", "v2", node="node2", priority=LOW, group="pg1"),
               pod("p3", "v3", node="node3", priority=LOW, group="pg2")],
         groups=[group("pg1"), group("pg2")], preemptor=preemptor(HIGH, pod("p", priority=HIGH)),
         rules=[("node1", 1, {"p1"}), ("node2", 1, {"p2"}), ("node3", 1, {"p3"})],
         want=["p1"], code=Code.Success),
    dict(name="Priority: Shared group vs no group", nodes=["node1", "node2", "node3"],
         pods=[pod("p1", "v1", node="node1", priority=LOW, group="pg1", start=1),
               pod("p2", "v2", node="node2", priority=LOW, group="pg1", start=0),
               pod("p3", "v3", node="node3", priority=MID)],
         groups=[group("pg1")], preemptor=preemptor(HIGH, pod("p", priority=HIGH)),
         rules=[("node1", 1, {"p1"}), ("node2", 1, {"p2"}), ("node3", 1, {"p3"})],
         want=["p1"], code=Code.Success),
    dict(name="Shared Group: Preempt separately", nodes=["node1", "node2"],
         pods=[pod("p1", "v1", node="node1", priority=LOW, group="pg1", start=1),
               pod("p2", "v2", node="node2", priority=LOW, group="pg1", start=0)],
         groups=[group("pg1")], preemptor=preemptor(HIGH, pod("p", priority=HIGH)),
         rules=[("node1", 1, {"p1"}), ("node2", 1, {"p2"})], want=["p1"], code=Code.Success),
    dict(name="Complex Mixed: Shared, different, and no groups", nodes=["node1", "node2", "node3", "node4", "node5"],
         pods=[pod("p1", "v1", node="node1", priority=LOW, group="pg1", start=2),
               pod("p2", "v2", node="node2", priority=LOW, group="pg1", start=1),
               pod("p3", "v3", node="node3", priority=LOW, group="pg2", start=0),
               pod("p4", "v4", node="node4", priority=MID),
               pod("p5", "v5", node="node5", priority=HIGH, group="pg3", start=0)],
         groups=[group("pg1"), group("pg2"), group("pg3")],
         preemptor=preemptor(HIGH, pod("p-1", priority=HIGH), pod("p-2", priority=HIGH), pod("p-3", priority=HIGH)),
         rules=[("node1", 1, {"p1"}), ("node2", 1, {"p2"}), ("node3", 1, {"p3"}), ("node4", 1, {"p4"}),
                ("node5", 1, {"p5"})],
         want=["p1", "p2", "p3"], code=Code.Success),
    dict(name="PDB: Mixed groups", nodes=["node1", "node2"],
         pods=[pod("victim-pdb", "v1", node="node1", labels=FOO, priority=LOW, group="pg1"),
               pod("victim-no-pdb", "v2", node="node2", priority=LOW, group="pg1")],
         pdbs=APP_FOO_PDB, preemptor=preemptor(HIGH, pod("p", priority=HIGH)),
         rules=[("node1", 1, {"victim-pdb"}), ("node2", 1, {"victim-no-pdb"})],
         want=["victim-no-pdb"], code=Code.Success),
    dict(name="PodGroup with PreemptNever does not perform preemption", nodes=["node1", "node2", "node3"],
         pods=[pod("p1", "v1", node="node1", priority=LOW), pod("p2", "v2", node="node2", priority=LOW, group="pg1"),
               pod("p3", "v3", node="node3", priority=LOW, group="pg2")],
         preemptor=preemptor(HIGH, pod("p-1", priority=HIGH, policy="Never"), pod("p-2", priority=HIGH)),
         rules=[("node1", 1, {"p1"}), ("node2", 1, {"p2"}), ("node3", 1, {"p3"})],
         want=[], code=Code.Unschedulable),
    dict(name="Preempt single lower priority pod", nodes=["node1"],
         pods=[pod("p1", "v1", node="node1", priority=LOW)], preemptor=preemptor(HIGH, pod("p", priority=HIGH)),
         rules=[("node1", 1, {"p1"})], want=["p1"], code=Code.Success),
    dict(name="Priority: Prefer lower priority victim", nodes=["node1"],
         pods=[pod("p1", "v1", node="node1", priority=LOW), pod("p2", "v2", node="node1", priority=MID),
               pod("p3", "v3", node="node1", priority=HIGH)],
         preemptor=preemptor(HIGH, pod("p", priority=HIGH)),
         rules=[("node1", 1, {"p1"}), ("node1", 1, {"p2"}), ("node1", 1, {"p3"})], want=["p1"], code=Code.Success),
    dict(name="Efficiency: Preempt minimum number of victims", nodes=["node1"],
         pods=[pod(f"p{i}", f"v{i}", node="node1", priority=LOW) for i in range(1, 5)],
         preemptor=preemptor(HIGH, pod("p", priority=HIGH)),
         rules=[("node1", 1, {"p1", "p2"}), ("node1", 1, {"p1"})], want=["p1"], code=Code.Success),
    dict(name="PDB: Prefer non-violating victim", nodes=["node1"],
         pods=[pod("victim-pdb", "v1", node="node1", labels=FOO, priority=LOW),
               pod("victim-no-pdb", "v2", node="node1", priority=LOW)],
         pdbs=APP_FOO_PDB, preemptor=preemptor(HIGH, pod("p", priority=HIGH)),
         rules=[("node1", 1, {"victim-pdb"}), ("node1", 1, {"victim-no-pdb"})],
         want=["victim-no-pdb"], code=Code.Success),
    dict(name="PodGroup with PreemptNever does not perform preemption (groups with priorities)",
         nodes=["node1", "node2", "node3"],
         pods=[pod("p1", "v1", node="node1", priority=LOW), pod("p2", "v2", node="node2", priority=LOW, group="pg1"),
               pod("p3", "v3", node="node3", priority=LOW, group="pg2")],
         groups=[group("pg1", priority=LOW), group("pg2", priority=LOW)],
         preemptor=preemptor(HIGH, pod("p-1", priority=HIGH, policy="Never"), pod("p-2", priority=HIGH)),
         rules=[("node1", 1, {"p1"}), ("node2", 1, {"p2"}), ("node3", 1, {"p3"})],
         want=[], code=Code.Unschedulable),
    dict(name="PDB: Prefer lower priority pod for preemption, when preemption without pdb violation is not possible",
         nodes=["node1"],
         pods=[pod("p1", "v1", node="node1", labels=FOO, priority=LOW),
               pod("p2", "v2", node="node1", labels=FOO, priority=MID)],
         pdbs=APP_FOO_PDB, preemptor=preemptor(HIGH, pod("p", priority=HIGH)),
         rules=[("node1", 1, {"p1"}), ("node1", 1, {"p2"})], want=["p1"], code=Code.Success),
    dict(name="PodGroup: Preempt group as a whole", nodes=["node1", "node2"],
         pods=[pod("p1", "v1", node="node1", priority=LOW, group="pg1"),
               pod("p2", "v2", node="node2", priority=LOW, group="pg1")],
         groups=[group("pg1", mode=PG_MODE, priority=LOW)], preemptor=preemptor(HIGH, pod("p", priority=HIGH)),
         rules=[("node1", 1, {"p1"})], want=["p1", "p2"], code=Code.Success),
    dict(name="PodGroup: Prefer single pod over podGroup for preemption candidate", nodes=["node1"],
         pods=[pod("p1", "p1", node="node1", priority=LOW), pod("g1-1", "g1", node="node1", group="pg1", priority=LOW),
               pod("g1-2", "g2", node="node1", group="pg1", priority=LOW)],
         groups=[group("pg1", mode=PG_MODE, priority=LOW)], preemptor=preemptor(HIGH, pod("p", priority=HIGH)),
         rules=[("node1", 1, {"g1-1", "g1-2"}), ("node1", 1, {"p1"})], want=["p1"], code=Code.Success),
    dict(name="PodGroup: Preempt group as a whole on single node", nodes=["node1"],
         pods=[pod("g1-1", "g1", node="node1", group="pg1", priority=LOW),
               pod("g1-2", "g2", node="node1", group="pg1", priority=LOW), pod("p1", "p1", node="node1", priority=MID)],
         groups=[group("pg1", mode=PG_MODE, priority=LOW)], preemptor=preemptor(HIGH, pod("p", priority=HIGH)),
         rules=[("node1", 1, {"g1-1"})], want=["g1-1", "g1-2"], code=Code.Success),
    dict(name="PDB: Unit violation if any member violates", nodes=["node1"],
         pods=[pod("g1-1", "g1", node="node1", labels=FOO, group="pg1", priority=LOW),
               pod("g1-2", "g2", node="node1", group="pg1", priority=LOW), pod("p1", "p1", node="node1", priority=LOW)],
         groups=[group("pg1", mode=PG_MODE, priority=LOW)], pdbs=APP_FOO_PDB,
         preemptor=preemptor(HIGH, pod("p", priority=HIGH)),
         rules=[("node1", 1, {"g1-1"}), ("node1", 1, {"p1"})], want=["p1"], code=Code.Success),
    dict(name="PodGroup: Prefer preempting single pod over group of same priority", nodes=["node1"],
         pods=[pod("p1", "p1", node="node1", priority=LOW), pod("g1-1", "g1", node="node1", group="pg1", priority=LOW),
               pod("g1-2", "g2", node="node1", group="pg1", priority=LOW)],
         groups=[group("pg1", mode=PG_MODE, priority=LOW)], preemptor=preemptor(HIGH, pod("p", priority=HIGH)),
         rules=[("node1", 1, {"g1-1", "g1-2"}), ("node1", 1, {"p1"})], want=["p1"], code=Code.Success),
    dict(name="Failure: Cannot preempt the victim with higher priority", nodes=["node1"],
         pods=[pod("p1", "v1", node="node1", priority=HIGH)], preemptor=preemptor(MID, pod("p", priority=MID)),
         rules=[("node1", 0, {"p1"})], want=[], code=Code.UnschedulableAndUnresolvable),
    dict(name="Failure: Cannot preempt if node is empty", nodes=["node1"], pods=[],
         preemptor=preemptor(MID, pod("p", priority=MID)), rules=[], want=[], code=Code.UnschedulableAndUnresolvable),
    dict(name="Priority divergence: candidate victim PodGroup has lower priority than the Pods from that group",
         nodes=["node1", "node2"],
         pods=[pod("p1", "v1", node="node1", priority=HIGH, group="pg1"),
               pod("p2", "v2", node="node2", priority=HIGH, group="pg1")],
         groups=[group("pg1", mode=PG_MODE, priority=MID)], preemptor=preemptor(HIGH, pod("p", priority=HIGH)),
         rules=[("node1", 1, {"p1"})], want=["p1", "p2"], code=Code.Success),
    dict(name="Priority divergence: candidate victim PodGroup has higher priority than the Pods from that group",
         nodes=["node1", "node2"],
         pods=[pod("p1", "v1", node="node1", priority=LOW, group="pg1"),
               pod("p2", "v2", node="node2", priority=LOW, group="pg1")],
         groups=[group("pg1", mode=PG_MODE, priority=MID)], preemptor=preemptor(MID, pod("p", priority=MID)),
         rules=[("node1", 1, {"p1"})], want=[], code=Code.UnschedulableAndUnresolvable),
    dict(name="Priority divergence: preemptor PodGroup has higher priority than the Pod from preemptor PodGroup",
         nodes=["node1", "node2"],
         pods=[pod("p1", "v1", node="node1", priority=MID, group="pg1"),
               pod("p2", "v2", node="node2", priority=MID, group="pg1")],
         groups=[group("pg1", mode=PG_MODE, priority=MID)], preemptor=preemptor(HIGH, pod("p", priority=LOW)),
         rules=[("node1", 1, {"p1"})], want=["p1", "p2"], code=Code.Success),
    dict(name="Priority divergence: preemptor PodGroup has lower priority than the Pod from preemptor PodGroup",
         nodes=["node1", "node2"],
         pods=[pod("p1", "v1", node="node1", priority=MID, group="pg1"),
               pod("p2", "v2", node="node2", priority=MID, group="pg1")],
         groups=[group("pg1", mode=PG_MODE, priority=MID)], preemptor=preemptor(LOW, pod("p", priority=HIGH)),
         rules=[("node1", 1, {"p1"})], want=[], code=Code.UnschedulableAndUnresolvable),
]


def blocking_rules_func(snapshot, members, rules):
    """Upstream's mock podGroupSchedulingFunc over ``snapshot``'s NodeInfos as they are now."""
    def schedule():
        slots = 0
        for node_name, capacity, blocking in rules:
            node_info = snapshot.get(node_name)
            if node_info is not None and not any(p.name in blocking for p in node_info.pods):
                slots += capacity
        return Status.success() if slots >= len(members) else Status.unschedulable()
    return schedule


def _evaluator(snapshot, objects=()):
    handle = Handle(snapshot=snapshot, lister=FakeLister(*objects))
    return PodGroupEvaluator(handle, Executor(handle, async_preemption=False), "DefaultPreemption")


@pytest.mark.parametrize("tc", CASES, ids=[c["name"] for c in CASES])
def test_select_victims_on_domain(tc):
    snapshot = Snapshot.from_objects([make_node(n) for n in tc["nodes"]], tc["pods"])
    evaluator = _evaluator(snapshot, tc.get("groups", ()))
    domain = new_domain_for_workload_preemption(snapshot.node_infos(), evaluator._pod_group_of, "test-domain", NOW)
    pre = tc["preemptor"]
    victims, status = evaluator.select_victims_on_domain(pre, domain, tc.get("pdbs", []),
                                                         blocking_rules_func(snapshot, pre.members, tc["rules"]))
    assert status.code is tc["code"]
    if tc["code"] is Code.Success:
        assert victims is not None
        assert sorted(p.name for p in victims.pods) == sorted(tc["want"])
    else:
        assert victims is None


def _v(priority, *groups, start=None):
    """A victim whose pods are in ``groups`` (None: a lone pod)."""
    pods = [make_pod(f"p{i}", uid=f"u{i}", **({"schedulingGroup": {"podGroupName": g}} if g else {}))
            for i, g in enumerate(groups or (None,))]
    return Victim(pods, priority, start)


BEFORE = dt.datetime(1970, 1, 1, 0, 8, 20, tzinfo=dt.timezone.utc)
LATER = dt.datetime(1970, 1, 1, 0, 16, 40, tzinfo=dt.timezone.utc)


@pytest.mark.parametrize("name,v1,v2,want", [
    ("vi1 has higher priority", _v(20), _v(10), True),
    ("vi2 has higher priority", _v(10), _v(20), False),
    ("vi1 is PG, vi2 is Pod, same priority", _v(10, "pg"), _v(10), True),
    ("vi1 is Pod, vi2 is PG, same priority", _v(10), _v(10, "pg"), False),
    ("both Pods, vi1 older", _v(10, start=BEFORE), _v(10, start=LATER), True),
    ("both Pods, vi2 older", _v(10, start=LATER), _v(10, start=BEFORE), False),
    ("both PGs, vi1 larger", _v(10, "pg", "pg"), _v(10, "pg"), True),
    ("both PGs, vi2 larger", _v(10, "pg"), _v(10, "pg", "pg"), False),
    ("both PGs, same size, vi1 older", _v(10, "pg", "pg", start=BEFORE), _v(10, "pg", "pg", start=LATER), True),
    ("both PGs, same size, vi2 older", _v(10, "pg", "pg", start=LATER), _v(10, "pg", "pg", start=BEFORE), False),
])
def test_more_important_victim(name, v1, v2, want):
    assert more_important_victim(v1, v2) is want


def test_domain_groups_only_pod_group_mode_members():
    """Pods of a PodGroup in PodGroup mode are one unit with the group's priority; pods of a group
    in Pod mode, of a missing group, or of none are units of their own with their own priority."""
    pods = [pod("a1", node="n1", priority=LOW, group="whole", start=3), pod("a2", node="n2", priority=LOW,
                                                                              group="whole", start=1),
            pod("b1", node="n1", priority=LOW, group="each"), pod("c1", node="n2", priority=LOW, group="missing"),
            pod("d1", node="n2", priority=MID)]
    snapshot = Snapshot.from_objects([make_node("n1"), make_node("n2")], pods)
    evaluator = _evaluator(snapshot, [group("whole", mode=PG_MODE, priority=HIGH), group("each")])
    domain = new_domain_for_workload_preemption(snapshot.node_infos(), evaluator._pod_group_of, "d", NOW)
    units = {tuple(p.name for p in v.pods): (v.priority, v.earliest_start_time) for v in domain.victims}
    assert units == {("a1", "a2"): (HIGH, dt.datetime(1970, 1, 1, 0, 0, 1, tzinfo=dt.timezone.utc)),
                     ("b1",): (LOW, NOW), ("c1",): (LOW, NOW), ("d1",): (MID, NOW)}
