"""Upstream's queueing-hint integration table (kube-scheduler v1.36
``test/integration/scheduler/queueing/queue.go``, ``CoreResourceEnqueueTestCases``), played on
the embedded cluster with upstream's plugin set for each case (PrioritySort, DefaultBinder and the
case's plugins), each case under upstream's name.

The rule each case checks, as upstream's table does: the pods are created and rejected once; then
the trigger changes the cluster (at 10 s). The pods the in-tree hints move out of the
unschedulable pool for the trigger's events are exactly the ones upstream's table says are
requeued; those that then fit are bound (``binds``, by default all requeued pods); and the
queueing-hint audit finds no pod a hint left waiting although the trigger had made it fit
(except where upstream's own hint does so: ``upstream_gap``, documented in
``test_fuzzer_clusters``).

Not ported, and why:

- the cases that run only with the SchedulerQueueingHints gate off ("(QHint: disabled)"): that
  gate is GA and locked on in v1.36 and kschedfw has no queue without hints;
- "Pod rejected by the PreFilter of NodeAffinity plugin and Filter of NodeResourcesFit is requeued
  based on both plugins": its trigger only reads the queue's record of the rejecting plugins (no
  event); ``test_both_rejectors_are_recorded`` below checks the same record instead;
- the NodeDeclaredFeatures cases ("pod becomes schedulable after node update with required
  feature" and the three after it): kschedfw has neither the NodeDeclaredFeatures gate nor its
  plugin;
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping

import attrs
import pytest

from kschedfw.api import Pod, parse_object
from kschedfw.cluster.inputs.scenario import Step
from kschedfw.framework.registry import default_registry
from kschedfw.fwk.features import FeatureGates
from kschedfw.hintaudit import HintAudit
from kschedfw.testing import (make_node, make_pod, make_pv, make_pvc, make_storage_class, make_csi_node,
                              node_affinity, pod_affinity_term, spread_constraint, taint, toleration)
from kschedfw.testing.profiles import simulation_with

from tests.hintaudit.test_fuzzer_clusters import upstream_gap

TRIGGER_AT = 10.0
ZONE = "topology.kubernetes.io/zone"
NOT_READY = taint("node.kubernetes.io/not-ready")
BIND_COMPLETED = {"pv.kubernetes.io/bind-completed": "yes"}


@attrs.frozen
class Case:
    plugins: tuple[str, ...]
    objects: tuple[Any, ...]  # nodes, bound pods, storage and DRA objects, then the pending pods
    trigger: tuple[Step, ...]
    requeued: frozenset[str]  # upstream's WantRequeuedPods
    binds: frozenset[str] | None = None  # the pods that then bind: the requeued ones unless given
    gates: Mapping[str, bool] = attrs.field(factory=dict)


def case(plugins: Iterable[str], objects: Iterable[Any], trigger: Iterable[Step], requeued: Iterable[str] = (),
         *, binds: Iterable[str] | None = None, gates: Mapping[str, bool] | None = None) -> Case:
    return Case(tuple(plugins), tuple(objects), tuple(trigger), frozenset(requeued),
                None if binds is None else frozenset(binds), dict(gates or {}))


# --------------------------------------------------------------------------- builders

def node(name: str, labels: Mapping[str, str] | None = None, *, cpu: str = "4", pods: str = "110",
         taints: Iterable[Mapping[str, str]] = (), **kwargs: Any) -> Any:
    return make_node(name, cpu=cpu, pods=pods, labels=labels, taints=taints, hostname_label=False, **kwargs)


def exists(key: str) -> dict[str, Any]:
    return {"matchExpressions": [{"key": key, "operator": "Exists"}]}


def anti(key: str, topology: str) -> dict[str, Any]:
    """Required anti-affinity to pods that have label ``key``, over ``topology``."""
    return {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        pod_affinity_term(topology, exists(key))]}}


def affinity(key: str, topology: str) -> dict[str, Any]:
    return {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        pod_affinity_term(topology, exists(key))]}}


def node_in(key: str, *values: str) -> dict[str, Any]:
    return node_affinity([{"key": key, "operator": "In", "values": list(values)}])


def spread(key: str, topology: str, min_domains: int | None = None) -> list[dict[str, Any]]:
    return [spread_constraint(1, topology, "DoNotSchedule", exists(key), min_domains=min_domains)]


def create(*objects: Any, at: float = TRIGGER_AT) -> Step:
    return Step(at, "create", objects=objects)


def update(*objects: Any, at: float = TRIGGER_AT) -> Step:
    return Step(at, "update", objects=objects)


def delete(kind: str, name: str, namespace: str | None = "default", at: float = TRIGGER_AT) -> Step:
    target = {"kind": kind, "name": name}
    if namespace is not None and kind in ("Pod", "PersistentVolumeClaim", "CSIStorageCapacity", "ResourceClaim"):
        target["namespace"] = namespace
    return Step(at, "delete", target=target)


def delete_pod(name: str) -> Step:
    return delete("Pod", name)


CASES: dict[str, Case] = {}


# --------------------------------------------------------------------------- node and pod events

CASES.update({
    "Pod without a required toleration to a node isn't requeued to activeQ": case(
        ("TaintToleration", "NodeResourcesFit"),
        [node("fake-node", cpu="2", taints=[NOT_READY]), make_pod("pod1", cpu="4"),
         make_pod("pod2", cpu="4", tolerations=[toleration("node.kubernetes.io/not-ready")])],
        [update(node("fake-node", cpu="4", taints=[NOT_READY]))], {"pod2"}),
    "Pod rejected by the PodAffinity plugin is requeued when a new Node is created and turned to ready": case(
        ("InterPodAffinity",),
        [node("fake-node", {"node": "fake-node"}, cpu="2"),
         make_pod("pod1", labels={"anti": "anti"}, affinity=anti("anti", "node"), node_name="fake-node"),
         make_pod("pod2", labels={"anti": "anti"}, affinity=anti("anti", "node"))],
        [create(node("fake-node2", {"node": "fake-node2"}, cpu="2", taints=[NOT_READY])),
         update(node("fake-node2", {"node": "fake-node2"}, cpu="2"), at=TRIGGER_AT + 1)], {"pod2"}),
    "Pod rejected by the NodeAffinity plugin is requeued when a Node's label is updated": case(
        ("NodeAffinity",),
        [node("fake-node1", {"group": "a"}), make_pod("pod1", affinity=node_in("group", "b")),
         make_pod("pod2", affinity=node_in("group", "c"))],
        [update(node("fake-node1", {"group": "b"}))], {"pod1"}),
    "Pod rejected by the NodeAffinity plugin is not requeued when an updated Node haven't changed the "
    "'match' verdict": case(
        ("NodeAffinity", "NodeResourcesFit"),
        [node("node1", {"group": "a"}, cpu="2"), node("node2", {"group": "b"}),
         make_pod("pod1", cpu="4", affinity=node_in("group", "a"))],
        [update(node("node1", {"group": "a", "node": "fake-node"}, cpu="2"))]),
    "Pod rejected by the NodeAffinity plugin is requeued when a Node is added": case(
        ("NodeAffinity",),
        [node("fake-node1", {"group": "a"}), make_pod("pod1", affinity=node_in("group", "b")),
         make_pod("pod2", affinity=node_in("group", "c"))],
        [create(node("fake-node2", {"group": "b"}))], {"pod1"}),
    "Pod updated with toleration requeued to activeQ": case(
        ("TaintToleration",),
        [node("fake-node", taints=[taint("taint-key")]), make_pod("pod1"), make_pod("pod2")],
        [update(make_pod("pod1", tolerations=[toleration("taint-key")]))], {"pod1"}),
    "Pod rejected by the TaintToleration plugin is requeued when the Node's taint is updated": case(
        ("TaintToleration",),
        [node("fake-node", taints=[NOT_READY]), make_pod("pod1", tolerations=[toleration("taint-key")]),
         make_pod("pod2", tolerations=[toleration("taint-key2")]), make_pod("pod3")],
        [update(node("fake-node", taints=[taint("taint-key")]))], {"pod1"}),
    "Pod rejected by the TaintToleration plugin is requeued when a Node that has the correspoding taint is "
    "added": case(
        ("TaintToleration",),
        [node("fake-node1", taints=[NOT_READY]), make_pod("pod1", tolerations=[toleration("taint-key")]),
         make_pod("pod2")],
        [create(node("fake-node2", taints=[taint("taint-key")]))], {"pod1"}),
    "Pod rejected by the NodeResourcesFit plugin is requeued when the Pod is updated to scale down": case(
        ("NodeResourcesFit",), [node("fake-node", cpu="2"), make_pod("pod1", cpu="4")],
        [update(make_pod("pod1", cpu="2"))], {"pod1"}),
    "Pod rejected by the NodeResourcesFit plugin is requeued when a Pod is deleted": case(
        ("NodeResourcesFit",),
        [node("fake-node", cpu="2"), make_pod("pod1", cpu="2", node_name="fake-node"), make_pod("pod2", cpu="2")],
        [delete_pod("pod1")], {"pod2"}),
    "Pod rejected by the NodeResourcesFit plugin is requeued when a Node is created": case(
        ("NodeResourcesFit",), [node("fake-node1", cpu="2"), make_pod("pod1", cpu="4"), make_pod("pod2", cpu="5")],
        [create(node("fake-node2", cpu="4"))], {"pod1"}),
    "Pod rejected by the NodeResourcesFit plugin is requeued when a Node is updated": case(
        ("NodeResourcesFit",), [node("fake-node", cpu="2"), make_pod("pod1", cpu="4"), make_pod("pod2", cpu="5")],
        [update(node("fake-node", cpu="4"))], {"pod1"}),
    "Pod rejected by the NodeResourcesFit plugin isn't requeued when a Node is updated without increase in the "
    "requested resources": case(
        ("NodeResourcesFit", "NodeAffinity"),
        [node("fake-node1", cpu="4"), node("fake-node2", {"group": "b"}, cpu="2"),
         make_pod("pod1", cpu="4", affinity=node_in("group", "b"))],
        [update(node("fake-node1", cpu="4", memory="64Gi"))]),
    "Pod rejected by the NodeResourcesFit plugin is requeued when a Node is updated with increase in the "
    "requested resources": case(
        ("NodeResourcesFit", "NodeAffinity"),
        [node("fake-node1", cpu="4"), node("fake-node2", {"group": "b"}, cpu="2"),
         make_pod("pod1", cpu="4", affinity=node_in("group", "b"))],
        # requeued for fake-node1's cpu; NodeAffinity still keeps it off that node
        [update(node("fake-node1", cpu="5"))], {"pod1"}, binds=()),
    "Pod rejected by the NodeResourcesFit plugin is requeued when a Node is updated with increase in the "
    "allowed pods number": case(
        ("NodeResourcesFit", "NodeAffinity"),
        [node("fake-node1", pods="2"), node("fake-node2", {"group": "b"}, pods="1"),
         make_pod("pod1", affinity=node_in("group", "b"), node_name="fake-node2"),
         make_pod("pod2", affinity=node_in("group", "b"))],
        [update(node("fake-node1", pods="3"))], {"pod2"}, binds=()),
    "Updating pod label doesn't retry scheduling if the Pod was rejected by TaintToleration": case(
        ("TaintToleration",), [node("fake-node", taints=[NOT_READY]), make_pod("pod1")],
        [update(make_pod("pod1", labels={"key": "val"}))]),
    "Pod rejected with hostport by the NodePorts plugin is requeued when pod with common hostport is deleted": case(
        ("NodePorts",),
        [node("fake-node", {"node": "fake-node"}),
         make_pod("pod1", host_ports=[8080], node_name="fake-node"),
         make_pod("pod2", host_ports=[8081], node_name="fake-node"),
         make_pod("pod3", host_ports=[8080]), make_pod("pod4", host_ports=[8081])],
        [delete_pod("pod1")], {"pod3"}),
    "Pod rejected with hostport by the NodePorts plugin is requeued when new node is created": case(
        ("NodePorts",),
        [node("fake-node", {"node": "fake-node"}), make_pod("pod1", host_ports=[8080], node_name="fake-node"),
         make_pod("pod2", host_ports=[8080])],
        [create(node("fake-node2", {"node": "fake-node2"}))], {"pod2"}),
    "Pod rejected by the NodeUnschedulable plugin is requeued when the node is turned to ready": case(
        ("NodeUnschedulable",), [node("fake-node", unschedulable=True), make_pod("pod1")],
        [update(node("fake-node"))], {"pod1"}),
    "Pod rejected by the NodeUnschedulable plugin is requeued when a new node is created": case(
        ("NodeUnschedulable",), [node("fake-node1", unschedulable=True), make_pod("pod1")],
        [create(node("fake-node2"))], {"pod1"}),
    "Pod rejected by the NodeUnschedulable plugin isn't requeued when another unschedulable node is created": case(
        ("NodeUnschedulable",), [node("fake-node1", unschedulable=True), make_pod("pod1")],
        [create(node("fake-node2", unschedulable=True))]),
})

# --------------------------------------------------------------------------- InterPodAffinity

CASES.update({
    "Pod rejected by the InterPodAffinity plugin is requeued when deleting the existed pod's label that matches "
    "the podAntiAffinity": case(
        ("InterPodAffinity",),
        [node("fake-node", {"node": "fake-node"}),
         make_pod("pod1", labels={"anti1": "anti1", "anti2": "anti2"}, node_name="fake-node"),
         make_pod("pod2", labels={"anti1": "anti1"}, affinity=anti("anti1", "node")),
         make_pod("pod3", labels={"anti2": "anti2"}, affinity=anti("anti2", "node"))],
        [update(make_pod("pod1", labels={"anti2": "anti2"}, node_name="fake-node"))], {"pod2"}),
    "Pod rejected by the InterPodAffinity plugin is requeued when deleting the existing pod that matches the "
    "target podAntiAffinity": case(
        ("InterPodAffinity",),
        [node("fake-node", {"node": "fake-node"}),
         make_pod("pod1", labels={"anti1": "anti1"}, node_name="fake-node"),
         make_pod("pod2", labels={"anti2": "anti2"}, node_name="fake-node"),
         make_pod("pod3", labels={"anti1": "anti1"}, affinity=anti("anti1", "node")),
         make_pod("pod4", labels={"anti2": "anti2"}, affinity=anti("anti2", "node"))],
        [delete_pod("pod1")], {"pod3"}),
    "Pod rejected by the InterPodAffinity plugin is requeued when deleting the existing pod with podAntiAffinity "
    "that matches the target pod": case(
        ("InterPodAffinity",),
        [node("fake-node", {"node": "fake-node"}),
         make_pod("pod1", affinity=anti("anti1", "node"), node_name="fake-node"),
         make_pod("pod2", affinity=anti("anti2", "node"), node_name="fake-node"),
         make_pod("pod3", labels={"anti1": "anti1"}), make_pod("pod4", labels={"anti2": "anti2"})],
        [delete_pod("pod1")], {"pod3"}),
    "Pod rejected by the PodAffinity plugin is requeued when updating the existed pod's label to make it match "
    "the pod's podAffinity": case(
        ("InterPodAffinity",),
        [node("fake-node", {"node": "fake-node"}), make_pod("pod1", node_name="fake-node"),
         make_pod("pod2", affinity=affinity("aaa", "node")), make_pod("pod3", affinity=affinity("bbb", "node"))],
        [update(make_pod("pod1", labels={"aaa": "bbb"}, node_name="fake-node"))], {"pod2"}),
    "Pod rejected by the InterPodAffinity plugin is requeued when creating the node with the topologyKey label "
    "of the pod affinity": case(
        ("InterPodAffinity",),
        [node("fake-node1", {"aaa": "fake-node"}),
         make_pod("pod1", affinity=affinity("bbb", "zone")), make_pod("pod2", affinity=affinity("ccc", "region"))],
        # requeued; no pod labelled bbb runs anywhere and pod1 does not match its own term, so it
        # stays pending
        [create(node("fake-node2", {"zone": "zone1"}))], {"pod1"}, binds=()),
    "Pod rejected by the InterPodAffinity plugin is requeued when updating the node with the topologyKey label "
    "of the pod affinity": case(
        ("InterPodAffinity", "NodeAffinity"),
        [node("fake-node", {"region": "region-1"}), node("fake-node2", {"region": "region-2", "group": "b"}),
         make_pod("pod1", labels={"affinity1": "affinity1"}, node_name="fake-node"),
         make_pod("pod2", labels={"affinity1": "affinity1"}, affinity=affinity("affinity1", "node")),
         make_pod("pod3", labels={"affinity1": "affinity1"}, affinity=affinity("affinity1", "other")),
         make_pod("pod4", affinity={**affinity("affinity1", "region"), **node_in("group", "b")})],
        [update(node("fake-node", {"node": "fake-node", "region": "region-2"}))], {"pod2", "pod4"}),
    "Pod rejected by the InterPodAffinity plugin is requeued when updating the node with the topologyKey label "
    "of the pod anti affinity": case(
        ("InterPodAffinity",),
        [node("fake-node", {"node": "fake-node", "service": "service-a", "other": "fake-node"}),
         make_pod("pod1", labels={"anti1": "anti1"}, node_name="fake-node"),
         make_pod("pod2", labels={"anti1": "anti1"}, affinity=anti("anti1", "node")),
         make_pod("pod3", labels={"anti1": "anti1"}, affinity=anti("anti1", "service")),
         make_pod("pod4", labels={"anti1": "anti1"}, affinity=anti("anti1", "other"))],
        # pod2 fits (the node lost its "node" label); pod3 is requeued, but pod1 is still in
        # service-b's domain, so it stays pending
        [update(node("fake-node", {"service": "service-b", "region": "fake-node", "other": "fake-node"}))],
        {"pod2", "pod3"}, binds={"pod2"}),
    "Pod rejected by the InterPodAffinity plugin is requeued when creating the node with the topologyKey label "
    "of the pod anti affinity": case(
        ("InterPodAffinity",),
        [node("fake-node1", {"zone": "fake-node", "node": "fake-node"}),
         make_pod("pod1", labels={"anti1": "anti1"}, node_name="fake-node1"),
         make_pod("pod2", affinity=anti("anti1", "zone")), make_pod("pod3", affinity=anti("anti1", "node"))],
        # pod3 fits on the new node (it has no "node" label); pod2 is requeued but the new node is
        # in pod1's zone
        [create(node("fake-node2", {"zone": "fake-node"}))], {"pod2", "pod3"}, binds={"pod3"}),
})

# --------------------------------------------------------------------------- PodTopologySpread

_ONE_NODE = node("fake-node", {"node": "fake-node"}, cpu="2")
_SPREAD_PODS = [make_pod("pod1", labels={"key1": "val"}, node_name="fake-node"),
                make_pod("pod2", labels={"key2": "val"}, node_name="fake-node")]
_TWO_NODES = [node("fake-node1", {"node": "fake-node"}), node("fake-node2", {"zone": "fake-node"})]


def _spread_pod(name: str, key: str, topology: str, min_domains: int | None = None, **kwargs: Any) -> Any:
    return make_pod(name, labels={key: "val"}, topology_spread_constraints=spread(key, topology, min_domains),
                    **kwargs)


CASES.update({
    "Pods with PodTopologySpread should be requeued when a Pod with matching label is scheduled": case(
        ("PodTopologySpread",),
        [_ONE_NODE, *_SPREAD_PODS, _spread_pod("pod3", "key1", "node", 3), _spread_pod("pod4", "key2", "node", 3)],
        # requeued (a matching pod came); with minDomains 3 on one node it still does not fit
        [create(make_pod("pod5", labels={"key1": "val"}, node_name="fake-node"))], {"pod3"}, binds=()),
    "Pods with PodTopologySpread should be requeued when a scheduled Pod label is updated to match the "
    "selector": case(
        ("PodTopologySpread",),
        [_ONE_NODE, *_SPREAD_PODS, _spread_pod("pod3", "key1", "node", 3), _spread_pod("pod4", "key2", "node", 3)],
        [update(make_pod("pod1", labels={"key3": "val"}, node_name="fake-node"))], {"pod3"}),
    "Pods with PodTopologySpread should be requeued when a scheduled Pod with matching label is deleted": case(
        ("PodTopologySpread",),
        [_ONE_NODE, *_SPREAD_PODS, _spread_pod("pod3", "key1", "node", 2), _spread_pod("pod4", "key2", "node", 3)],
        [delete_pod("pod1")], {"pod3"}),
    "Pods with PodTopologySpread should be requeued when a Node with topology label is created": case(
        ("PodTopologySpread",),
        [*_TWO_NODES, make_pod("pod1", labels={"key1": "val"}, node_name="fake-node1"),
         make_pod("pod2", labels={"key1": "val"}, node_name="fake-node2"),
         _spread_pod("pod3", "key1", "node", 2), _spread_pod("pod4", "key1", "zone", 2)],
        # fake-node1 and fake-node3 share the "node" value: still one domain
        [create(node("fake-node3", {"node": "fake-node"}))], {"pod3"}, binds=()),
    "Pods with PodTopologySpread should be requeued when a Node is updated to have the topology label": case(
        ("PodTopologySpread",),
        [node("fake-node1", {"node": "fake-node", "region": "fake-node", "service": "service-a"}),
         node("fake-node2", {"node": "fake-node", "region": "fake-node", "service": "service-a"}),
         _spread_pod("pod1", "key1", "node", node_name="fake-node1"),
         _spread_pod("pod2", "key1", "zone", node_name="fake-node2"),
         _spread_pod("pod3", "key1", "region", node_name="fake-node2"),
         _spread_pod("pod4", "key1", "service", node_name="fake-node2"),
         *(_spread_pod(f"pod{i}", "key1", key, 3) for i, key in
           ((5, "node"), (6, "zone"), (7, "region"), (8, "other"), (9, "service")))],
        [update(node("fake-node2", {"zone": "fake-node", "region": "fake-node", "service": "service-b"}))],
        {"pod5", "pod6", "pod9"}, binds=()),
    "Pods with PodTopologySpread should be requeued when a Node with a topology label is deleted (QHint: "
    "enabled)": case(
        ("PodTopologySpread",),
        [*_TWO_NODES, _spread_pod("pod1", "key1", "node", node_name="fake-node1"),
         _spread_pod("pod2", "key1", "zone", node_name="fake-node2"),
         _spread_pod("pod3", "key1", "node", 3), _spread_pod("pod4", "key1", "zone", 3)],
        [delete("Node", "fake-node2", None)], {"pod4"}, binds=()),
    "Pods with PodTopologySpread should be requeued when a NodeTaint of a Node with a topology label has been "
    "updated": case(
        ("PodTopologySpread",),
        [*_TWO_NODES, node("fake-node3", {"zone": "fake-node"}, taints=[NOT_READY]),
         _spread_pod("pod1", "key1", "node", node_name="fake-node1"),
         _spread_pod("pod2", "key1", "node", node_name="fake-node2"),
         _spread_pod("pod3", "key1", "node", 3),
         _spread_pod("pod4", "key1", "zone", 3, tolerations=[toleration("aaa")])],
        [update(node("fake-node3", {"zone": "fake-node"}, taints=[taint("aaa", "bbb")]))], {"pod4"}, binds=()),
})


# --------------------------------------------------------------------------- the runner

def _in_tree(*names: str) -> list[type]:
    registry = default_registry()
    return [registry.load(n) for n in ("PrioritySort", "DefaultBinder", *names)]


@attrs.frozen
class Played:
    requeued: frozenset[str]  # pods a hint's Queue moved for an event at or after the trigger
    bound: frozenset[str]
    unexplained: tuple[str, ...]  # the audit's findings that upstream's hints do not share


def play(c: Case) -> Played:
    classes = _in_tree(*c.plugins)
    sim = simulation_with(classes, c.objects, c.trigger, pod_initial_backoff_seconds=1, pod_max_backoff_seconds=1,
                          feature_gates=FeatureGates(c.gates) if c.gates else None)
    moved: set[str] = set()
    queue, triggers = sim.scheduler.queue, _changed(c.trigger)
    inner = queue.hint_decided

    def decided(qpi: Any, event: Any, old: Any, new: Any, strategy: Any) -> None:
        if inner is not None:
            inner(qpi, event, old, new, strategy)
        obj = new if new is not None else old
        if int(strategy) != 0 and (type(obj).__name__, getattr(obj, "name", "")) in triggers:
            moved.add(qpi.pod.name)

    queue.hint_decided = decided
    audit = HintAudit(sim.scheduler).attach()
    result = sim.run()
    pending = {o.name for o in c.objects if isinstance(o, Pod) and not o.node_name}
    bound = frozenset(p.key.partition("/")[2] for p in result.pods
                      if p.key.partition("/")[2] in pending and p.status == "Bound")
    manifests = {f"{o.namespace}/{o.name}": _manifest(o) for o in c.objects if isinstance(o, Pod)}
    unexplained = tuple(m.describe() for m in audit.report().missed if not upstream_gap(m, manifests))
    return Played(frozenset(moved), bound, unexplained)


def _changed(steps: Iterable[Step]) -> set[tuple[str, str]]:
    """(kind, name) of what the trigger changes: the moves its events caused are the requeues
    (not those of the events that followed, such as a requeued pod's binding)."""
    out = set()
    for step in steps:
        out.update((type(o).__name__, o.name) for o in step.objects)
        if step.target:
            out.add((step.target["kind"], step.target["name"]))
    return out


def _manifest(pod: Any) -> dict[str, Any]:
    return pod.raw


@pytest.mark.parametrize("name", list(CASES))
def test_in_tree_hints_requeue_what_upstreams_table_says(name):
    c = CASES[name]
    played = play(c)
    assert played.unexplained == ()
    assert sorted(played.requeued) == sorted(c.requeued)
    assert sorted(played.bound) == sorted(c.requeued if c.binds is None else c.binds)


def test_both_rejectors_are_recorded():
    """Upstream's "Pod rejected by the PreFilter of NodeAffinity plugin and Filter of
    NodeResourcesFit is requeued based on both plugins": NodeAffinity's PreFilter narrows the pod
    to fake-node, where NodeResourcesFit's Filter rejects it; both are the pod's rejectors, so the
    hints of either can move it."""
    nodes = [node("fake-node", {"node": "fake-node"}, cpu="2"),
             node("fake-node2", {"node": "fake-node2", "zone": "zone1"}, cpu="2")]
    pod = make_pod("pod1", labels={"unscheduled": "plugins"}, cpu="4", affinity={"nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{"matchFields": [
            {"key": "metadata.name", "operator": "In", "values": ["fake-node"]}]}]}}})
    sim = simulation_with(_in_tree("NodeAffinity", "NodeResourcesFit"), [*nodes, pod])
    sim.run()
    qpi = sim.scheduler.queue.get_pod("default/pod1")
    assert set(qpi.unschedulable_plugins) == {"NodeAffinity", "NodeResourcesFit"}
