"""Builders shared by the PodTopologySpread tests (the counterparts of upstream's ``st.MakePod()``
and ``st.MakeNode()`` wrappers), plus a small object lister. No tests here."""

from __future__ import annotations

from typing import Any, Iterable, Mapping

from kschedfw.api import (GenericObject, LabelSelector, LabelSelectorRequirement, Node,
                          Pod, Taint, TopologySpreadConstraint, parse_object)
from kschedfw import testing as kit
from kschedfw.cache.snapshot import Snapshot
from kschedfw.fwk.cycle_state import CycleState
from kschedfw.framework.handle import Handle
from kschedfw.plugins.podtopologyspread import PodTopologySpread
from kschedfw.plugins.podtopologyspread.common import (HONOR, IGNORE, LABEL_HOSTNAME, Constraint,
                                                       Selector)

__all__ = [
    "FOO", "BAR", "TAINTS", "HONOR", "IGNORE", "HOSTNAME", "ZONE", "DNS", "SA", "UNSCHEDULABLE_TAINT_KEY",
    "exists", "match_labels", "spread", "st_pod", "st_node", "FakeLister", "make_plugin",
    "sel", "C", "normalized_paths", "state_tuple", "new_cycle_state",
]

HOSTNAME = LABEL_HOSTNAME
ZONE = "topology.kubernetes.io/zone"
DNS = "DoNotSchedule"
SA = "ScheduleAnyway"
UNSCHEDULABLE_TAINT_KEY = "node.kubernetes.io/unschedulable"
TAINTS = (Taint(UNSCHEDULABLE_TAINT_KEY, "", "NoSchedule"),)

_UNSET: Any = object()


def exists(*keys: str, labels: Mapping[str, str] | None = None) -> LabelSelector:
    """``st.MakeLabelSelector().Exists(k)...Label(k, v)``."""
    return LabelSelector(dict(labels or {}), tuple(LabelSelectorRequirement(k, "Exists") for k in keys))


def match_labels(**labels: str) -> LabelSelector:
    return LabelSelector(dict(labels))


FOO = exists("foo")
BAR = exists("bar")


def spread(max_skew: int, key: str, when: str, selector: LabelSelector | None = _UNSET,
           min_domains: int | None = None, affinity_policy: str | None = None,
           taints_policy: str | None = None, match_label_keys: Iterable[str] = ()) -> TopologySpreadConstraint:
    """``SpreadConstraint(maxSkew, key, mode, selector, minDomains, affinityPolicy, taintsPolicy, keys)``."""
    return TopologySpreadConstraint(max_skew, key, when, None if selector is _UNSET else selector,
                                    min_domains, affinity_policy, taints_policy, tuple(match_label_keys))


def st_pod(name: str = "p", *, ns: str = "default", uid: str | None = None,
             labels: Mapping[str, str] | None = None, node: str = "", nominated: str = "",
             constraints: Iterable[TopologySpreadConstraint] = (),
             node_selector: Mapping[str, str] | None = None,
             affinity_in: tuple[str, list[str]] | None = None,
             affinity_not_in: tuple[str, list[str]] | None = None,
             tolerate: Iterable[str] = (), terminating: bool = False,
             owner: tuple[str, str, str] | None = None) -> Pod:
    """A pod like ``st.MakePod()``; ``owner`` is ``(apiVersion, kind, name)`` of its controller."""
    affinity = None
    if affinity_in is not None or affinity_not_in is not None:
        key, values = affinity_in if affinity_in is not None else affinity_not_in  # type: ignore[misc]
        op = "In" if affinity_in is not None else "NotIn"
        affinity = kit.node_affinity([{"key": key, "operator": op, "values": list(values)}])
    return kit.make_pod(
        name, namespace=ns, uid=uid if uid is not None else f"{ns}/{name}", labels=labels, node_name=node,
        nominated_node_name=nominated, containers=[], node_selector=node_selector, affinity=affinity,
        topology_spread_constraints=[_constraint_manifest(c) for c in constraints],
        tolerations=[kit.toleration(k) for k in tolerate],
        terminating="2024-01-01T00:00:00Z" if terminating else False,
        owner=None if owner is None else kit.owner_reference(owner[1], owner[2], api_version=owner[0]))


def _constraint_manifest(c: TopologySpreadConstraint) -> dict:
    return kit.spread_constraint(
        c.max_skew, c.topology_key, c.when_unsatisfiable,
        None if c.label_selector is None else c.label_selector.to_dict(), min_domains=c.min_domains,
        node_affinity_policy=c.node_affinity_policy, node_taints_policy=c.node_taints_policy,
        match_label_keys=c.match_label_keys)


def st_node(name: str, labels: Mapping[str, str] | None = None, taints: Iterable[Taint] = ()) -> Node:
    return kit.make_node(name, labels=labels, taints=[t.to_dict() for t in taints], hostname_label=False)


class FakeLister:
    """Services, ReplicaSets, ... by kind and namespace, built from manifest dicts."""

    def __init__(self, objs: Iterable[dict] = ()) -> None:
        self.objs: list[GenericObject] = [parse_object(o) for o in objs]

    def get(self, kind: str, name: str, namespace: str = "") -> Any:
        for o in self.objs:
            if o.kind == kind and o.name == name and o.namespace == namespace:
                return o
        return None

    def list(self, kind: str, namespace: str | None = None) -> list[Any]:
        return [o for o in self.objs if o.kind == kind and (namespace is None or o.namespace == namespace)]


def make_plugin(nodes: Iterable[Node] = (), pods: Iterable[Pod] = (), *, defaulting: str = "List",
                default_constraints: Iterable[dict] = (), objs: Iterable[dict] = (),
                inclusion: bool = True, match_label_keys: bool = True) -> tuple[PodTopologySpread, Snapshot]:
    """The plugin over a snapshot of ``nodes`` and ``pods``; feature switches as upstream tests set them."""
    snapshot = Snapshot.from_objects(list(nodes), list(pods))
    handle = Handle(snapshot=snapshot, lister=FakeLister(objs))
    args: dict = {"defaultingType": defaulting}
    if default_constraints:
        args["defaultConstraints"] = list(default_constraints)
    plugin = PodTopologySpread(args, handle)
    plugin.enable_node_inclusion_policy = inclusion
    plugin.enable_match_label_keys = match_label_keys
    return plugin, snapshot


def sel(selector: LabelSelector | None) -> Selector:
    """``mustConvertLabelSelectorAsSelector``."""
    return Selector.from_label_selector(selector)


def C(max_skew: int, key: str, selector: LabelSelector | None | Selector, min_domains: int = 1,
      affinity_policy: str = HONOR, taints_policy: str = IGNORE) -> Constraint:
    """An expected internal constraint."""
    s = selector if isinstance(selector, Selector) else sel(selector)
    return Constraint(max_skew, key, s, min_domains, affinity_policy, taints_policy)


def normalized_paths(paths: Any) -> tuple:
    """Critical paths with equal counts ordered by topology value, as upstream's comparer does."""
    out = []
    for p in paths:
        (v0, n0), (v1, n1) = p if isinstance(p, tuple) else p.as_tuple()
        if n0 == n1 and v0 > v1:
            v0, v1 = v1, v0
        out.append(((v0, n0), (v1, n1)))
    return tuple(out)


def state_tuple(state: Any) -> tuple:
    """A PreFilterState as comparable data."""
    return (list(state.constraints), normalized_paths(state.critical_paths),
            [dict(m) for m in state.tp_value_to_match_num])


def new_cycle_state() -> CycleState:
    return CycleState()
