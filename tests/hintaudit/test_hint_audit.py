"""The queueing-hint audit: a hint that returns QueueSkip for the event that made a pending pod
fit is caught, with how long the pod then waited (here until upstream's five-minute flush); the
in-tree plugins' hints come out clean on the events their queueing-hint tables cover; requeues
whose next attempt failed anyway are counted per plugin and event."""

from __future__ import annotations

from typing import Any

import pytest

from kschedfw import Status, hookimpl
from kschedfw.api import Node
from kschedfw.cluster.inputs.scenario import Step
from kschedfw.fwk.events import ActionType, ClusterEvent, ClusterEventWithHint, EventResource, QueueingHint
from kschedfw.framework.registry import default_registry
from kschedfw.testing import assert_hints_sound, audit_hints, make_node, make_pod, taint, toleration
from kschedfw.testing.profiles import simulation_with

from tests.scheduler.plugins import BASE


class NeedsReady:
    """Filter: only nodes labelled ready=yes. Its hint is right: Queue once a node has the label."""

    name = "NeedsReady"

    def __init__(self, args: Any = None, handle: Any = None) -> None:
        pass

    @hookimpl
    def filter(self, state: Any, pod: Any, node_info: Any) -> Status | None:
        if node_info.node.labels.get("ready") == "yes":
            return None
        return Status.unschedulable("node(s) not ready")

    @hookimpl
    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [ClusterEventWithHint(ClusterEvent(EventResource.Node, ActionType.Add | ActionType.UpdateNodeLabel),
                                     self.hint)]

    def hint(self, pod: Any, old: Any, new: Any) -> QueueingHint:
        return QueueingHint.Queue if isinstance(new, Node) and new.labels.get("ready") == "yes" \
            else QueueingHint.QueueSkip


class BrokenHint(NeedsReady):
    """The planted bug: the label change that makes a node fit is skipped (a node added is not)."""

    name = "NeedsReady"

    def hint(self, pod: Any, old: Any, new: Any) -> QueueingHint:
        return QueueingHint.QueueSkip if old is not None else super().hint(pod, old, new)


def _labelled(at: float) -> list[Step]:
    return [Step(at, "update", objects=(make_node("n1", labels={"ready": "yes"}),))]


def test_a_hint_that_skips_the_event_that_made_a_pod_fit_is_caught():
    report = audit_hints([*BASE, BrokenHint], [make_node("n1"), make_pod("web-3")], _labelled(10.0))
    [missed] = report.missed
    assert (missed.pod, missed.object, missed.plugins, missed.at) == ("default/web-3", "n1", ("NeedsReady",), 10.0)
    # nothing else comes to move it: the run ends with it pending (upstream: until the flush of
    # pods unschedulable for five minutes)
    assert missed.event == "NodeUpdateNodeLabel" and not missed.attempted
    assert missed.describe() == ("default/web-3 waited 0 s (still pending at the end): NodeUpdateNodeLabel n1 "
                                 "made it fit; NeedsReady's hint skipped it")
    later = audit_hints([*BASE, BrokenHint], [make_node("n1"), make_pod("web-3")],
                        [*_labelled(10.0), Step(300.0, "create", objects=(make_node("n2", labels={"ready": "yes"}),))])
    [missed] = later.missed  # a ready node added at 300 s: the right part of the hint moves it
    assert missed.attempted and missed.waited == 290.0
    assert missed.describe().startswith("default/web-3 waited 290 s: NodeUpdateNodeLabel n1 made it fit")
    with pytest.raises(AssertionError, match="NeedsReady's hint skipped it"):
        assert_hints_sound([*BASE, BrokenHint], [make_node("n1"), make_pod("web-3")], _labelled(10.0))


def test_the_right_hint_passes_and_its_requeues_are_counted():
    """Two label changes: the first (another label) is skipped rightly, the second moves the pod
    and it binds; a node added without the label is skipped rightly too."""
    steps = [Step(5.0, "update", objects=(make_node("n1", labels={"other": "x"}),)),
             Step(6.0, "create", objects=(make_node("n2"),)), *_labelled(10.0)]
    report = assert_hints_sound([*BASE, NeedsReady], [make_node("n1"), make_pod("web-3")], steps)
    assert [(r.plugin, r.event, r.requeued, r.helped, r.wasted) for r in report.requeues] == [
        ("NeedsReady", "NodeUpdateNodeLabel", 1, 1, 0)]


def test_requeues_that_did_not_help_are_wasted_retries():
    """A hint that always says Queue: the other-label change requeues the pod, which fails again."""
    class Eager(NeedsReady):
        name = "NeedsReady"

        def hint(self, pod: Any, old: Any, new: Any) -> QueueingHint:
            return QueueingHint.Queue

    steps = [Step(5.0, "update", objects=(make_node("n1", labels={"other": "x"}),)), *_labelled(30.0)]
    report = audit_hints([*BASE, Eager], [make_node("n1"), make_pod("web-3")], steps)
    assert report.missed == ()
    [entry] = report.requeues
    assert (entry.requeued, entry.wasted, entry.helped) == (2, 1, 1)
    assert "NeedsReady, NodeUpdateNodeLabel: 1 of 2" in "\n".join(report.render())


def _in_tree(*names: str) -> list[type]:
    registry = default_registry()
    return [registry.load(n) for n in ("PrioritySort", "DefaultBinder", *names)]


IN_TREE_CASES = {
    # (plugins, objects, steps): each event makes the pod fit, and the plugin's hint must queue it
    "NodeResourcesFit: node allocatable grows": (
        ("NodeResourcesFit",), [make_node("n1", cpu="1"), make_pod("p", cpu="2")],
        [Step(10.0, "update", objects=(make_node("n1", cpu="4"),))]),
    "NodeResourcesFit: an assigned pod deleted frees room": (
        ("NodeResourcesFit",), [make_node("n1", cpu="2"), make_pod("big", cpu="2", node_name="n1"),
                                make_pod("p", cpu="1")],
        [Step(10.0, "delete", target={"kind": "Pod", "namespace": "default", "name": "big"})]),
    "NodeResourcesFit: a fitting node added": (
        ("NodeResourcesFit",), [make_node("n1", cpu="1"), make_pod("p", cpu="2")],
        [Step(10.0, "create", objects=(make_node("n2", cpu="4"),))]),
    "TaintToleration: the taint removed": (
        ("TaintToleration",), [make_node("n1", taints=[taint("k", "v", "NoSchedule")]), make_pod("p")],
        [Step(10.0, "update", objects=(make_node("n1"),))]),
    "TaintToleration: a tolerated node added": (
        ("TaintToleration",), [make_node("n1", taints=[taint("k", "v", "NoSchedule")]),
                               make_pod("p", tolerations=[toleration("other", "x")])],
        [Step(10.0, "create", objects=(make_node("n2"),))]),
    "NodeAffinity: the label added": (
        ("NodeAffinity",), [make_node("n1"), make_pod("p", node_selector={"zone": "a"})],
        [Step(10.0, "update", objects=(make_node("n1", labels={"zone": "a"}),))]),
    "NodeUnschedulable: the node uncordoned": (
        ("NodeUnschedulable",), [make_node("n1", unschedulable=True), make_pod("p")],
        [Step(10.0, "update", objects=(make_node("n1"),))]),
    "NodePorts: the pod holding the port deleted": (
        ("NodePorts",), [make_node("n1"), make_pod("holder", node_name="n1", host_ports=[8080]),
                         make_pod("p", host_ports=[8080])],
        [Step(10.0, "delete", target={"kind": "Pod", "namespace": "default", "name": "holder"})]),
}


# upstream's queueing-hint integration table, case by case: test_upstream_table


@pytest.mark.parametrize("case", sorted(IN_TREE_CASES))
def test_in_tree_hints_queue_the_pod_on_the_event_that_helps(case):
    plugins, objects, steps = IN_TREE_CASES[case]
    sim = simulation_with(_in_tree(*plugins), objects, steps)
    from kschedfw.hintaudit import HintAudit
    audit = HintAudit(sim.scheduler).attach()
    result = sim.run()
    report = audit.report()
    assert report.missed == ()
    target = next(p for p in result.pods if p.key == "default/p")
    assert target.status == "Bound"
    assert any(r.helped for r in report.requeues), report.requeues  # the event moved it, the hint said so


CLUSTER = """\
apiVersion: v1
kind: Node
metadata: {name: node-7}
status: {allocatable: {cpu: "1", memory: 4Gi, pods: "110"}}
---
apiVersion: v1
kind: Pod
metadata: {name: web-3, namespace: default}
spec:
  containers: [{name: c, image: i, resources: {requests: {cpu: "2"}}}]
"""
SCENARIO = """\
kind: Scenario
steps:
- at: 60s
  update: {apiVersion: v1, kind: Node, metadata: {name: node-7},
           status: {allocatable: {cpu: "4", memory: 4Gi, pods: "110"}}}
"""


def test_simulate_audit_hints_reports_in_text_and_json(tmp_path, capsys):
    """The in-tree NodeResourcesFit hint queues the pod when node-7's allocatable grows: nothing
    missed, one requeue that helped; with --replay the same audit runs on the replayed trace."""
    import json

    from kschedfw.cli.main import main
    from tests.trace.builder import NAMESPACE, event, listed, node, pod, write
    (tmp_path / "cluster.yaml").write_text(CLUSTER)
    (tmp_path / "scenario.yaml").write_text(SCENARIO)
    files = [str(tmp_path / "cluster.yaml"), str(tmp_path / "scenario.yaml")]
    assert main(["simulate", *files, "--audit-hints", "-o", "json"]) == 0
    audit = json.loads(capsys.readouterr().out)["hintAudit"]
    assert audit["missed"] == []
    assert {(r["plugin"], r["event"], r["helped"]) for r in audit["requeues"]} == {
        ("NodeResourcesFit", "NodeUpdateNodeAllocatable", 1)}
    assert main(["simulate", *files, "--audit-hints"]) == 0
    assert "queueing-hint audit: 0 pods kept waiting" in capsys.readouterr().out
    trace = write(tmp_path / "t.gz", [*listed(NAMESPACE, node("n1", "1")), event("ADDED", pod("big", "2")),
                                      event("MODIFIED", node("n1", "4", rv="2"))])
    assert main(["simulate", "--replay", str(trace), "--audit-hints", "-o", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["hintAudit"]["missed"] == [] and report["hintAudit"]["requeues"][0]["helped"] == 1


class Gate:
    """PreEnqueue: a pod waits until it is labelled go=yes. Its hint is right: Queue the pod
    once its own labels say so."""

    name = "Gate"

    def __init__(self, args: Any = None, handle: Any = None) -> None:
        pass

    @hookimpl
    def pre_enqueue(self, pod: Any) -> Status | None:
        return None if pod.labels.get("go") == "yes" else Status.unresolvable("waiting for go")

    @hookimpl
    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [ClusterEventWithHint(ClusterEvent(EventResource.Pod, ActionType.UpdatePodLabel), self.hint)]

    def hint(self, pod: Any, old: Any, new: Any) -> QueueingHint:
        return QueueingHint.Queue if new is not None and new.labels.get("go") == "yes" else QueueingHint.QueueSkip


class BrokenGate(Gate):
    """The planted bug: the label that opens the gate is skipped."""

    name = "Gate"

    def hint(self, pod: Any, old: Any, new: Any) -> QueueingHint:
        return QueueingHint.QueueSkip


def test_a_gated_pod_is_schedulable_only_once_its_gate_opens():
    """A pod a PreEnqueue plugin holds back fits every node, yet is not schedulable: a label
    change that leaves the gate shut is no missed event; the one that opens it is, when the
    gate's hint skips it."""
    steps = [Step(5.0, "update", objects=(make_pod("web-3", labels={"go": "no"}),)),
             Step(10.0, "update", objects=(make_pod("web-3", labels={"go": "yes"}),))]
    objects = [make_node("n1"), make_pod("web-3")]
    report = assert_hints_sound([*BASE, Gate], objects, steps)
    assert [(r.plugin, r.helped) for r in report.requeues] == [("Gate", 1)]
    [missed] = audit_hints([*BASE, BrokenGate], objects, steps).missed
    assert (missed.pod, missed.at, missed.plugins) == ("default/web-3", 10.0, ("Gate",))
