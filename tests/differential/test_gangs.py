"""The ``gang`` kind offline: what the generator makes across seeds, how the harness cuts a
scenario into units, how a group's outcome is compared, and what kschedfw makes of the groups
(no control plane needed)."""

from __future__ import annotations

import collections
from typing import Any

from kschedfw.api import parse_object
from kschedfw.config.validate import default_config
from kschedfw.framework.registry import default_registry
from kschedfw.fwk.features import FeatureGates

from tests.differential.decision import compare_group
from tests.differential.gangs import (RACK, generate_gang, group_of, is_pod_group, priority_classes,
                                      scheduler_gates)
from tests.differential.generate import generate
from tests.differential.harness import units
from tests.differential.klog import SchedulerLog
from tests.differential.ours import GroupOutcome, first_outcome, group_outcome

SEEDS = range(30)


def groups_of(seed: int) -> list[tuple[dict[str, Any], list[dict[str, Any]]]]:
    s = generate(seed, "gang")
    found = {(o["metadata"]["namespace"], o["metadata"]["name"]): o for o in s.objects if is_pod_group(o)}
    return [u for u in units(s.pods, found) if isinstance(u, tuple)]


def test_a_gang_seed_is_always_the_same_scenario() -> None:
    assert generate(5, "gang") == generate(5, "gang") == generate_gang(5)
    assert generate(5, "gang") != generate(6, "gang")


def test_seeds_0_to_29_cover_groups_of_2_to_16_of_each_policy_with_and_without_racks() -> None:
    seen: collections.Counter[str] = collections.Counter()
    sizes = set()
    for seed in SEEDS:
        s = generate(seed, "gang")
        seen["plain pods"] += sum(1 for p in s.pods if not group_of(p))
        for group, members in groups_of(seed):
            spec = group["spec"]
            sizes.add(len(members))
            gang = spec["schedulingPolicy"].get("gang")
            seen["basic" if gang is None else "gang minCount = size" if gang["minCount"] == len(members)
                 else "gang minCount < size"] += 1
            seen["rack constraint" if spec.get("schedulingConstraints") else "no constraint"] += 1
            assert len({str(m["spec"]["containers"]) for m in members}) == 1  # identical pods
    assert min(sizes) == 2 and max(sizes) >= 15, sorted(sizes)
    assert all(seen[f] >= 5 for f in ("plain pods", "basic", "gang minCount = size", "gang minCount < size",
                                      "rack constraint", "no constraint")), seen


def test_nodes_and_racks_differ_in_size_so_that_placements_do_not_tie() -> None:
    for seed in SEEDS:
        nodes = [o for o in generate(seed, "gang").objects if o["kind"] == "Node"]
        cpus = [n["status"]["allocatable"]["cpu"] for n in nodes]
        memories = [n["status"]["allocatable"]["memory"] for n in nodes]
        assert len(set(cpus)) == len(cpus) and len(set(memories)) == len(memories)
        racks: dict[str, int] = collections.defaultdict(int)
        for n in nodes:
            racks[n["metadata"]["labels"][RACK]] += int(n["status"]["allocatable"]["cpu"])
        assert len(racks) >= 2 and len(set(racks.values())) == len(racks), racks


def test_with_workload_preemption_off_no_group_can_preempt_or_be_preempted() -> None:
    classes = priority_classes(preemption=False)
    value, policy = classes["fuzz-gang"]
    assert policy == "Never" and all(v <= value for v, _ in classes.values())
    assert "WorkloadAwarePreemption" not in scheduler_gates(False)
    assert "WorkloadAwarePreemption=true" in scheduler_gates(True)
    on = generate_gang(3, preemption=True)
    assert {p["spec"]["priorityClassName"] for p in on.pods if group_of(p)} <= {"fuzz-gang", "fuzz-gang-high"}
    assert priority_classes(preemption=True)["fuzz-gang-high"] == (10000, None)


def test_a_group_is_one_unit_where_its_first_pod_comes_and_an_orphan_pod_stays_alone() -> None:
    def pod(name: str, group: str | None = None) -> dict[str, Any]:
        spec: dict[str, Any] = {"schedulingGroup": {"podGroupName": group}} if group else {}
        return {"metadata": {"name": name, "namespace": "fuzz-a"}, "spec": spec}

    g = {"metadata": {"name": "g", "namespace": "fuzz-a"}}
    played = units((pod("p1"), pod("g-0", "g"), pod("p2"), pod("g-1", "g"), pod("o-0", "gone")),
                   {("fuzz-a", "g"): g})
    assert [u[1] if isinstance(u, tuple) else u["metadata"]["name"] for u in played] == [
        "p1", [pod("g-0", "g"), pod("g-1", "g")], "p2", "o-0"]


def outcome(nodes: dict[str, str], condition: tuple[str, ...] = ("True", "Scheduled", ""),
            victims: tuple[str, ...] = ()) -> GroupOutcome:
    return GroupOutcome(nodes=nodes, condition=condition, victims=victims)


def test_a_group_compares_pods_per_node_not_which_pod_went_where() -> None:
    up = outcome({"g-0": "n1", "g-1": "n2", "g-2": ""})
    assert compare_group("a/g", up, outcome({"g-0": "n2", "g-1": "", "g-2": "n1"}), topology=False).identical
    differs = compare_group("a/g", up, outcome({"g-0": "n1", "g-1": "n1", "g-2": ""}), topology=False)
    assert differs.diffs == ["pod group a/g:\n  pods per node: {'-': 1, 'n1': 1, 'n2': 1} != {'-': 1, 'n1': 2}"]
    assert (differs.groups, differs.groups_identical, differs.pods) == (1, 0, 3)


def test_the_condition_message_is_compared_only_without_a_topology_constraint() -> None:
    """With racks the message names the first placement tried, in Go map order."""
    up = outcome({"g-0": ""}, ("False", "Unschedulable", "0/2 placements are available, first placement status: a"))
    us = outcome({"g-0": ""}, ("False", "Unschedulable", "0/2 placements are available, first placement status: b"))
    assert compare_group("a/g", up, us, topology=True).identical
    assert not compare_group("a/g", up, us, topology=False).identical
    other_reason = outcome({"g-0": ""}, ("False", "SchedulerError", up.condition[2]))
    assert not compare_group("a/g", up, other_reason, topology=True).identical


def test_victims_are_compared() -> None:
    up = outcome({"g-0": "n1"}, victims=("fuzz-a/p-1",))
    assert compare_group("a/g", up, outcome({"g-0": "n1"}), topology=False).diffs == [
        "pod group a/g:\n  victims: ['fuzz-a/p-1'] != []"]


def test_the_log_gives_each_group_its_podgroupscheduled_conditions_in_order(tmp_path: Any) -> None:
    path = tmp_path / "kube-scheduler.log"
    body = ('{\\"status\\":{\\"conditions\\":[{\\"message\\":\\"\\",\\"reason\\":\\"Scheduled\\",'
            '\\"status\\":\\"True\\",\\"type\\":\\"PodGroupScheduled\\"}]}}')
    later = body.replace("Scheduled\\\",\\\"status\\\":\\\"True", "Unschedulable\\\",\\\"status\\\":\\\"False")
    path.write_text("".join(f'I1202 18:33:58.256254   15344 type.go:289] "Request Body" podGroup="fuzz-a/g-3" '
                            f'body="{b}"\n' for b in (body, later)))
    log = SchedulerLog(path)
    log.poll()
    assert log.group_conditions == {"fuzz-a/g-3": [("True", "Scheduled", ""), ("False", "Unschedulable", "")]}


def test_kschedfw_places_some_generated_groups_and_refuses_others() -> None:
    """Every generated group is accepted by the embedded cluster, and the seeds make both
    outcomes: groups that are scheduled and groups that are not."""
    gates = FeatureGates.parse(scheduler_gates())
    registry = default_registry()
    config = default_config(registry, gates)
    conditions: collections.Counter[str] = collections.Counter()
    for seed in range(4):
        s = generate(seed, "gang")
        state = [parse_object(o) for o in s.objects if not is_pod_group(o) and o["kind"] != "Namespace"]
        for group, members in groups_of(seed):
            result = group_outcome(config, registry, gates, state, [parse_object(m) for m in members],
                                   parse_object(group))
            conditions[result.condition[1]] += 1
            bound = [n for n in result.nodes.values() if n]
            if result.condition[0] == "True" and "gang" in group["spec"]["schedulingPolicy"]:
                assert len(bound) >= group["spec"]["schedulingPolicy"]["gang"]["minCount"]
            if result.condition[0] == "False":
                assert not bound
    assert conditions["Scheduled"] and conditions["Unschedulable"], conditions



def test_a_tie_in_the_groups_first_cycle_compares_only_how_many_pods_were_bound(tmp_path: Any) -> None:
    """Upstream picks at random among a pod's best nodes (and among best placements)."""
    lines = ['"Attempting to schedule pod group" podGroup="a/g"',
             '"Attempting to schedule a pod belonging to a pod group" podGroup="a/g" pod="a/g-0"',
             '"Calculated node\'s final score for pod" podGroup="a/g" pod="a/g-0" node="n1" score=452',
             '"Calculated node\'s final score for pod" podGroup="a/g" pod="a/g-0" node="n2" score=450',
             '"Attempting to schedule pod group" podGroup="b/h"',
             '"Attempting to schedule a pod belonging to a pod group" podGroup="b/h" pod="b/h-0"',
             '"Calculated node\'s final score for pod" podGroup="b/h" pod="b/h-0" node="n1" score=452',
             '"Calculated node\'s final score for pod" podGroup="b/h" pod="b/h-0" node="n3" score=452',
             '"Attempting to schedule pod group" podGroup="a/g"',  # a later cycle: not read
             '"Attempting to schedule a pod belonging to a pod group" podGroup="a/g" pod="a/g-1"',
             '"Calculated node\'s final score for pod" podGroup="a/g" pod="a/g-1" node="n1" score=7',
             '"Calculated node\'s final score for pod" podGroup="a/g" pod="a/g-1" node="n2" score=7']
    path = tmp_path / "kube-scheduler.log"
    path.write_text("".join(f"I1202 18:33:58.256254   15344 x.go:1] {line}\n" for line in lines))
    log = SchedulerLog(path)
    log.poll()
    assert (log.group_tied("a/g"), log.group_tied("b/h")) == (False, True)
    up, us = outcome({"h-0": "n1", "h-1": ""}), outcome({"h-0": "n3", "h-1": ""})
    tally = compare_group("b/h", up, us, topology=False, tied=True)
    assert tally.identical and tally.groups_tied == 1
    assert not compare_group("b/h", up, outcome({"h-0": "n3", "h-1": "n1"}), topology=False, tied=True).identical


def test_the_condition_compared_is_the_first_true_else_the_first_written() -> None:
    scheduled, failed = ("True", "Scheduled", ""), ("False", "Unschedulable", "pod group is unschedulable")
    waiting = ("False", "Unschedulable", "pod group is waiting for preemption to complete")
    assert first_outcome([scheduled, failed]) == scheduled  # upstream's regression after a stale read
    assert first_outcome([waiting, scheduled]) == scheduled  # scheduled once its victims were gone
    assert first_outcome([failed, ("False", "Unschedulable", "another message")]) == failed
    assert first_outcome([]) == ()


def test_with_workload_preemption_each_pod_group_names_its_pods_class_and_victims_come_first() -> None:
    """Upstream's PodGroupPostFilter takes the group's priority from the PodGroup's own
    ``priorityClassName`` (admission fills ``spec.priority``; 0 without one finds no victim), so
    the PodGroup and its Workload's template name the class of its pods; and half the plain pods
    (the victims) are created before any group."""
    modes: collections.Counter[str] = collections.Counter()
    for seed in range(10):
        s = generate_gang(seed, preemption=True)
        workloads = {o["metadata"]["name"]: o for o in s.objects if o["kind"] == "Workload"}
        for group, members in groups_of(seed):
            spec = group["spec"]
            assert {m["spec"]["priorityClassName"] for m in members} == {spec["priorityClassName"]}
            template = workloads[group["metadata"]["name"]]["spec"]["podGroupTemplates"][0]
            assert template["priorityClassName"] == spec["priorityClassName"]
            modes[spec.get("disruptionMode", "Pod")] += 1
        plain = [i for i, p in enumerate(s.pods) if not group_of(p)]
        first_group = next(i for i, p in enumerate(s.pods) if group_of(p))
        assert sum(1 for i in plain if i < first_group) >= (len(plain) + 1) // 2
    assert modes["Pod"] and modes["PodGroup"], modes


def test_a_group_is_settled_only_after_its_preemption_and_its_leftovers_last_try(tmp_path: Any) -> None:
    """Upstream's pod-group cycle ends with "Pod group is waiting for preemption" when it
    preempted; the group's next cycle, once its victims are gone, decides. A cycle that sent some
    pods to binding and left others is followed by a cycle for the leftovers after the binds."""
    path = tmp_path / "kube-scheduler.log"
    log = SchedulerLog(path)

    def write(*lines: str) -> None:
        with open(path, "a") as out:
            out.write("".join(f"I1202 18:33:58.256254   15344 x.go:1] {line}\n" for line in lines))
        log.poll()

    write('"Attempting to schedule pod group" podGroup="a/g"',
          '"Start the preemption asynchronously" preemptor="a/g" node="cluster" numVictims=1 numVictimsToDelete=1',
          '"Pod group is waiting for preemption" podGroup="a/g" unschedulablePods=3')
    assert not log.group_settled("a/g")
    write('"Preemptor Pod preempted victim Pod" preemptor="a/g" victim="a/p-1" node="cluster"')
    assert not log.group_settled("a/g")  # still waiting: its retry has not come
    write('"Attempting to schedule pod group" podGroup="a/g"',
          '"Successfully scheduled a pod group" podGroup="a/g" scheduledPods=2 unschedulablePods=1')
    assert not log.group_settled("a/g") and log.group_sent_to_binding("a/g") == 2
    write('"Attempting to schedule pod group" podGroup="a/g"',
          '"Unable to schedule a pod group" podGroup="a/g" unschedulablePods=1',
          '"Successfully bound pod to node" podGroup="a/g" pod="a/g-0" node="n1" evaluatedNodes=1 feasibleNodes=1')
    assert not log.group_settled("a/g")  # the leftover was tried before the last bind
    write('"Attempting to schedule pod group" podGroup="a/g"',
          '"Unable to schedule a pod group" podGroup="a/g" unschedulablePods=1')
    assert log.group_settled("a/g")
    write('"Attempting to schedule pod group" podGroup="b/h"',
          '"Successfully scheduled a pod group" podGroup="b/h" scheduledPods=3 unschedulablePods=0')
    assert log.group_settled("b/h")
