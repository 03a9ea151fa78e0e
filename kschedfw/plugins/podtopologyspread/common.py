"""Pieces PodTopologySpread's filtering, scoring and queueing hints share.

* :class:`Selector` is the plugin's form of a label selector, with apimachinery's
  ``labels.Selector`` semantics: :data:`NOTHING` (from a missing selector) matches no pod, an
  empty one matches every pod but counts none (see :func:`count_pods_match_selector`), and
  requirements can be appended, as happens when ``matchLabelKeys`` are merged in.
* :class:`Constraint` is one topology spread constraint made ready for use (upstream's internal
  ``topologySpreadConstraint``): the selector is built and the optional fields are defaulted.
* :func:`default_selector` derives the selector of default constraints from the Services,
  ReplicationControllers, ReplicaSets and StatefulSets that select a pod.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Iterable, Mapping, Sequence

from kschedfw.api import LabelSelector, parse_label_selector
from kschedfw.plugins.helper import first_untolerated_schedule_taint

if TYPE_CHECKING:
    from kschedfw.api import Node, Pod, Taint, Toleration, TopologySpreadConstraint
    from kschedfw.fwk.interface import PodLabelIndex
    from kschedfw.fwk.interface import ObjectLister
    from kschedfw.fwk.types import NodeInfo

__all__ = [
    "NAME", "LABEL_HOSTNAME", "LABEL_TOPOLOGY_ZONE", "DO_NOT_SCHEDULE", "SCHEDULE_ANYWAY",
    "HONOR", "IGNORE", "Selector", "NOTHING", "Constraint",
    "filter_constraints", "merge_label_set_with_selector", "node_labels_match_constraints",
    "count_pods_match_selector", "candidate_nodes", "pod_labels_match_constraints", "required_node_affinity",
    "untolerated_do_not_schedule_taint", "default_selector",
]

NAME = "PodTopologySpread"
LABEL_HOSTNAME = "kubernetes.io/hostname"
LABEL_TOPOLOGY_ZONE = "topology.kubernetes.io/zone"
DO_NOT_SCHEDULE = "DoNotSchedule"
SCHEDULE_ANYWAY = "ScheduleAnyway"
HONOR = "Honor"
IGNORE = "Ignore"

EQUALS, IN, NOT_IN, EXISTS, DOES_NOT_EXIST = "=", "In", "NotIn", "Exists", "DoesNotExist"

#: (key, operator, values)
Requirement = tuple[str, str, tuple[str, ...]]
#: a pod's required node affinity as ``match(node)``
NodeMatcher = Callable[["Node"], bool]


# --------------------------------------------------------------------------- selectors

def _requirement_matcher(key: str, op: str, values: tuple[str, ...]) -> Callable[[Mapping[str, str]], bool]:
    if op == EQUALS:
        want = values[0]
        return lambda labels: labels.get(key) == want
    if op == IN:
        allowed = frozenset(values)
        return lambda labels: labels.get(key) in allowed
    if op == NOT_IN:
        denied = frozenset(values)
        return lambda labels: labels.get(key) not in denied
    if op == EXISTS:
        return lambda labels: key in labels
    if op == DOES_NOT_EXIST:
        return lambda labels: key not in labels
    return lambda labels: False


def _never(labels: Mapping[str, str]) -> bool:
    return False


def _always(labels: Mapping[str, str]) -> bool:
    return True


class Selector:
    """A label selector as apimachinery's ``labels.Selector``.

    ``requirements`` is a tuple of ``(key, operator, values)``; operators are ``=`` (from
    ``matchLabels`` and label sets), ``In``, ``NotIn``, ``Exists`` and ``DoesNotExist``; all must
    hold. ``nothing`` marks the selector of a missing ``labelSelector``: it matches no labels and
    takes no further requirements. ``matches(labels)`` is compiled once per selector.
    """

    __slots__ = ("requirements", "nothing", "matches")

    def __init__(self, requirements: Iterable[Requirement] = (), nothing: bool = False) -> None:
        self.requirements: tuple[Requirement, ...] = () if nothing else tuple(requirements)
        self.nothing = nothing
        self.matches: Callable[[Mapping[str, str]], bool] = self._compile()

    def _compile(self) -> Callable[[Mapping[str, str]], bool]:
        if self.nothing:
            return _never
        reqs = self.requirements
        if not reqs:
            return _always
        if all(op == EQUALS for _, op, _ in reqs):
            pairs = tuple((k, v[0]) for k, _, v in reqs)
            if len(pairs) == 1:
                (k, v), = pairs
                return lambda labels: labels.get(k) == v

            def match_pairs(labels: Mapping[str, str]) -> bool:
                for k, v in pairs:
                    if labels.get(k) != v:
                        return False
                return True
            return match_pairs
        checks = tuple(_requirement_matcher(k, op, v) for k, op, v in reqs)
        if len(checks) == 1:
            return checks[0]

        def match_all(labels: Mapping[str, str]) -> bool:
            for check in checks:
                if not check(labels):
                    return False
            return True
        return match_all

    @classmethod
    def from_label_selector(cls, selector: LabelSelector | None) -> "Selector":
        """``metav1.LabelSelectorAsSelector``: None gives :data:`NOTHING`, ``{}`` matches all."""
        if selector is None:
            return NOTHING
        reqs: list[Requirement] = [(k, EQUALS, (v,)) for k, v in selector.match_labels.items()]
        reqs.extend((r.key, r.operator, tuple(r.values)) for r in selector.match_expressions)
        return cls(reqs)

    @classmethod
    def from_set(cls, label_set: Mapping[str, str]) -> "Selector":
        """``labels.SelectorFromSet``: every label must be equal; an empty set matches all."""
        return cls((k, EQUALS, (v,)) for k, v in label_set.items())

    @property
    def empty(self) -> bool:
        """``Selector.Empty()``: true for a selector with no requirements (not for NOTHING)."""
        return not self.nothing and not self.requirements

    def add(self, requirements: Iterable[Requirement]) -> "Selector":
        """A new selector with ``requirements`` appended (NOTHING stays NOTHING)."""
        if self.nothing:
            return self
        return Selector(self.requirements + tuple(requirements))

    def canonical(self) -> tuple[Requirement, ...] | None:
        """A comparable form: None for NOTHING, else the sorted requirements."""
        if self.nothing:
            return None
        return tuple(sorted((k, op, tuple(sorted(v))) for k, op, v in self.requirements))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Selector):
            return NotImplemented
        return self.canonical() == other.canonical()

    def __hash__(self) -> int:
        return hash(self.canonical())

    def __repr__(self) -> str:
        if self.nothing:
            return "Selector(<nothing>)"
        return "Selector(" + ",".join(
            f"{k}{op}{v[0]}" if op == EQUALS else f"{k} {op} ({','.join(v)})" if v else f"{k} {op}"
            for k, op, v in self.requirements) + ")"


NOTHING = Selector(nothing=True)


def merge_label_set_with_selector(match_labels: Mapping[str, str], selector: Selector) -> Selector:
    """The pod's values for ``matchLabelKeys`` ANDed with the constraint's selector.

    As upstream, a NOTHING selector is returned unchanged (it has no requirements to merge).
    """
    if selector.nothing:
        return selector
    return Selector.from_set(match_labels).add(selector.requirements)


# --------------------------------------------------------------------------- constraints

class Constraint:
    """A topology spread constraint ready for use (upstream ``topologySpreadConstraint``)."""

    __slots__ = ("max_skew", "topology_key", "selector", "min_domains", "node_affinity_policy",
                 "node_taints_policy")

    def __init__(self, max_skew: int, topology_key: str, selector: Selector, min_domains: int = 1,
                 node_affinity_policy: str = HONOR, node_taints_policy: str = IGNORE) -> None:
        self.max_skew = max_skew
        self.topology_key = topology_key
        self.selector = selector
        self.min_domains = min_domains
        self.node_affinity_policy = node_affinity_policy
        self.node_taints_policy = node_taints_policy

    def with_selector(self, selector: Selector) -> "Constraint":
        return Constraint(self.max_skew, self.topology_key, selector, self.min_domains,
                          self.node_affinity_policy, self.node_taints_policy)

    def _key(self) -> tuple[int, str, Selector, int, str, str]:
        return (self.max_skew, self.topology_key, self.selector, self.min_domains,
                self.node_affinity_policy, self.node_taints_policy)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Constraint):
            return NotImplemented
        return self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return (f"Constraint(max_skew={self.max_skew}, topology_key={self.topology_key!r}, "
                f"selector={self.selector!r}, min_domains={self.min_domains}, "
                f"node_affinity_policy={self.node_affinity_policy!r}, "
                f"node_taints_policy={self.node_taints_policy!r})")

    def match_node_inclusion_policies(self, pod: Pod, node: Node, required: NodeMatcher | None,
                                      enable_comparison_operators: bool = True) -> bool:
        """Does ``node`` take part in this constraint's spreading, per nodeAffinityPolicy and
        nodeTaintsPolicy? ``required`` is the pod's required node affinity (None: none)."""
        if self.node_affinity_policy == HONOR and required is not None and not required(node):
            return False
        if self.node_taints_policy == HONOR and untolerated_do_not_schedule_taint(
                node.taints, pod.tolerations, enable_comparison_operators):
            return False
        return True


def filter_constraints(constraints: Iterable[TopologySpreadConstraint], pod_labels: Mapping[str, str], action: str,
                       *, enable_match_label_keys: bool = True,
                       enable_node_inclusion_policy: bool = True) -> list[Constraint]:
    """The constraints with ``whenUnsatisfiable == action``, as :class:`Constraint` objects.

    ``constraints`` are API ``TopologySpreadConstraint`` objects. ``matchLabelKeys`` add the
    pod's values for those keys to the selector; unset fields default to minDomains 1,
    nodeAffinityPolicy Honor and nodeTaintsPolicy Ignore.
    """
    result: list[Constraint] = []
    for c in constraints:
        if c.when_unsatisfiable != action:
            continue
        selector = Selector.from_label_selector(c.label_selector)
        if enable_match_label_keys and c.match_label_keys:
            match_labels = {key: pod_labels[key] for key in c.match_label_keys if key in pod_labels}
            if match_labels:
                selector = merge_label_set_with_selector(match_labels, selector)
        affinity_policy, taints_policy = HONOR, IGNORE
        if enable_node_inclusion_policy:
            if c.node_affinity_policy is not None:
                affinity_policy = c.node_affinity_policy
            if c.node_taints_policy is not None:
                taints_policy = c.node_taints_policy
        result.append(Constraint(
            c.max_skew, c.topology_key, selector,
            c.min_domains if c.min_domains is not None else 1,
            affinity_policy, taints_policy))
    return result


def node_labels_match_constraints(node_labels: Mapping[str, str],
                                  constraints: Sequence[Constraint]) -> bool:
    """Does the node carry every topology key of ``constraints``?"""
    for c in constraints:
        if c.topology_key not in node_labels:
            return False
    return True


def count_pods_match_selector(pods: Iterable[Pod], selector: Selector, namespace: str) -> int:
    """Pods in ``namespace``, not terminating, that ``selector`` selects.

    An empty selector counts nothing (upstream guards on ``selector.Empty()``).
    """
    if selector.empty:
        return 0
    matches = selector.matches
    count = 0
    for p in pods:
        if p.deletion_timestamp is not None or p.namespace != namespace:
            continue
        if matches(p.labels):
            count += 1
    return count


def candidate_nodes(selector: Selector, index: PodLabelIndex | None) -> Iterable[NodeInfo] | None:
    """The NodeInfos that can host a pod ``selector`` counts, from the cache's pod label index
    (:class:`~kschedfw.fwk.interface.PodLabelIndex`): those hosting a pod with the label of
    its narrowest ``key = value`` or ``key In (values)`` requirement. On every other node
    :func:`count_pods_match_selector` is 0. None when the index cannot say (no index, or only
    other operators)."""
    if selector.nothing or not selector.requirements:
        return ()  # matches nothing, or empty: counts nothing
    if index is None:
        return None
    # NodeInfo -> what the index keeps for it (only the keys are used)
    best: Mapping[NodeInfo, object] | None = None
    for key, op, values in selector.requirements:
        nodes: Mapping[NodeInfo, object]
        if op == EQUALS:
            nodes = index.nodes_with(key, values[0])
        elif op == IN:
            if len(values) == 1:
                nodes = index.nodes_with(key, values[0])
            else:  # a pod has one value per key: the node sets are what it can be on
                nodes = {ni: None for value in values for ni in index.nodes_with(key, value)}
        else:
            continue
        if best is None or len(nodes) < len(best):
            best = nodes
            if not best:
                break
    return best


def pod_labels_match_constraints(constraints: Iterable[Constraint], labels: Mapping[str, str]) -> bool:
    """Does any constraint's selector select ``labels``?"""
    for c in constraints:
        if c.selector.matches(labels):
            return True
    return False


# --------------------------------------------------------------------------- node inclusion

def required_node_affinity(pod: Pod) -> NodeMatcher | None:
    """The pod's ``nodeSelector`` and required node affinity as ``match(node) -> bool``.

    None when the pod constrains nothing (every node matches).
    """
    node_selector = pod.node_selector
    required = None
    affinity = pod.affinity
    if affinity is not None and affinity.node_affinity is not None:
        required = affinity.node_affinity.required
    if not node_selector and required is None:
        return None
    pairs = tuple(node_selector.items())

    def match(node: Node) -> bool:
        labels = node.labels
        for k, v in pairs:
            if labels.get(k) != v:
                return False
        return required is None or required.matches(labels, node.name)
    return match


def untolerated_do_not_schedule_taint(taints: Sequence[Taint], tolerations: Sequence[Toleration],
                                      enable_comparison_operators: bool = True) -> bool:
    """Is any NoSchedule/NoExecute taint left untolerated by ``tolerations``?"""
    return first_untolerated_schedule_taint(taints, tolerations, enable_comparison_operators) is not None


# --------------------------------------------------------------------------- default selector

_RC_KIND = ("", "v1", "ReplicationController")
_RS_KIND = ("apps", "v1", "ReplicaSet")
_SS_KIND = ("apps", "v1", "StatefulSet")


def _raw(obj: Any) -> dict[str, Any]:
    if obj is None:
        return {}
    if isinstance(obj, dict):
        return obj
    raw = getattr(obj, "raw", None)
    return raw if isinstance(raw, dict) else {}


def _spec(obj: Any) -> dict[str, Any]:
    spec = _raw(obj).get("spec")
    return spec if isinstance(spec, dict) else {}


def _safe_list(lister: ObjectLister, kind: str, namespace: str) -> list[Any]:
    try:
        return list(lister.list(kind, namespace) or ())
    except (KeyError, LookupError, ValueError, TypeError):
        return []


def _safe_get(lister: ObjectLister, kind: str, name: str, namespace: str) -> Any:
    try:
        return lister.get(kind, name, namespace)
    except (KeyError, LookupError, ValueError, TypeError):
        return None


def _controller_of(pod: Pod) -> dict[str, Any] | None:
    """The owner reference marked ``controller: true`` (``metav1.GetControllerOf``)."""
    for ref in pod.owner_references or ():
        if isinstance(ref, dict) and ref.get("controller") is True:
            return ref
    return None


def _parse_group_version(api_version: str) -> tuple[str, str] | None:
    """``schema.ParseGroupVersion``: "v1" -> ("", "v1"), "apps/v1" -> ("apps", "v1")."""
    if not api_version:
        return ("", "")
    if api_version == "v1":
        return ("", "v1")
    parts = api_version.split("/")
    if len(parts) == 1:
        return ("", parts[0])
    if len(parts) == 2:
        return (parts[0], parts[1])
    return None


def _string_map(value: Any) -> dict[str, str] | None:
    if not isinstance(value, dict):
        return None
    return {str(k): str(v) for k, v in value.items()}


def _label_selector_requirements(value: Any) -> tuple[Requirement, ...] | None:
    """Requirements of a workload's ``spec.selector`` (None when it selects nothing or is invalid)."""
    try:
        selector = Selector.from_label_selector(parse_label_selector(value, "spec.selector"))
    except Exception:  # an invalid selector adds nothing, as upstream ignores the error
        return None
    if selector.nothing:
        return None
    return selector.requirements


def default_selector(pod: Pod, lister: ObjectLister) -> Selector:
    """The selector of default constraints (upstream ``helper.DefaultSelector``).

    Labels of every Service in the pod's namespace whose selector matches the pod are merged
    into one set; the requirements of the pod's controlling ReplicationController (its label set
    is merged too), ReplicaSet or StatefulSet (``apps/v1``) are added to it.
    """
    namespace = pod.namespace
    pod_labels = pod.labels
    label_set: dict[str, str] = {}
    for service in _safe_list(lister, "Service", namespace):
        if getattr(service, "namespace", namespace) != namespace:
            continue
        svc_selector = _string_map(_spec(service).get("selector"))
        if svc_selector is None:
            continue  # a Service without a selector selects nothing
        if all(pod_labels.get(k) == v for k, v in svc_selector.items()):
            label_set.update(svc_selector)
    selector = Selector.from_set(label_set)

    owner = _controller_of(pod)
    if owner is None:
        return selector
    gv = _parse_group_version(str(owner.get("apiVersion") or ""))
    if gv is None:
        return selector
    gvk = (gv[0], gv[1], str(owner.get("kind") or ""))
    name = str(owner.get("name") or "")
    if gvk == _RC_KIND:
        rc = _safe_get(lister, "ReplicationController", name, namespace)
        if rc is not None:
            rc_selector = _string_map(_spec(rc).get("selector")) or {}
            label_set = {**label_set, **rc_selector}
            selector = Selector.from_set(label_set)
    elif gvk == _RS_KIND or gvk == _SS_KIND:
        kind = "ReplicaSet" if gvk == _RS_KIND else "StatefulSet"
        workload = _safe_get(lister, kind, name, namespace)
        if workload is not None:
            reqs = _label_selector_requirements(_spec(workload).get("selector"))
            if reqs is not None:
                selector = selector.add(reqs)
    return selector
