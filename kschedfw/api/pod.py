"""Pods and the parts of a pod spec the scheduler reads."""

from __future__ import annotations

import datetime as _dt
from typing import Any, Mapping, NamedTuple

import attrs

from kschedfw.api import _parse
from kschedfw.api.node import TAINT_EFFECTS
from kschedfw.api.resources import (DEFAULT_MEMORY_REQUEST, DEFAULT_MILLI_CPU_REQUEST,
                                    parse_resource_list)
from kschedfw.api.selectors import (LabelSelector, NodeSelector, PreferredSchedulingTerm, _as_int,
                                    parse_label_selector, parse_node_selector,
                                    parse_preferred_scheduling_term)
from kschedfw.api.field import ManifestError

__all__ = [
    "ContainerPort", "Container", "Toleration", "PodAffinityTerm", "WeightedPodAffinityTerm",
    "NodeAffinity", "PodAffinity", "Affinity", "TopologySpreadConstraint", "Volume",
    "PodCondition", "PodSchedulingGroup", "Pod", "parse_pod", "compute_pod_request",
    "DEFAULT_SCHEDULER_NAME", "TAINT_EFFECTS", "TOLERATION_OPERATORS", "SCHEDULER_ERROR",
]

DEFAULT_SCHEDULER_NAME = "default-scheduler"
#: The PodScheduled condition's reason after an attempt failed with an error (a plugin that
#: raised or returned an Error status, an extender or a bind that failed), as core/v1 names it;
#: a pod no node fits has reason Unschedulable instead.
SCHEDULER_ERROR = "SchedulerError"
TOLERATION_OPERATORS = ("Equal", "Exists", "Gt", "Lt")
_PROTOCOLS = ("TCP", "UDP", "SCTP")
_POD_LEVEL_RESOURCES = ("cpu", "memory")


# --------------------------------------------------------------------------- containers

@attrs.frozen(slots=True)
class ContainerPort:
    container_port: int
    host_port: int = 0
    protocol: str = "TCP"
    host_ip: str = ""


@attrs.frozen(slots=True)
class Container:
    """A container or init container. ``requests`` already include limits-defaulted entries
    (a resource with a limit but no request requests its limit, as the API server defaults it).
    An init container with ``restart_policy == "Always"`` is a sidecar."""

    name: str
    image: str = ""
    requests: dict[str, int] = attrs.field(factory=dict)
    limits: dict[str, int] = attrs.field(factory=dict)
    ports: tuple[ContainerPort, ...] = ()
    restart_policy: str | None = None

    @property
    def is_sidecar(self) -> bool:
        return self.restart_policy == "Always"


def _parse_port(d: Any, field: str, host_network: bool) -> ContainerPort:
    d = _parse.mapping(d, field)
    port = _parse.integer(d.get("containerPort"), f"{field}.containerPort")
    if port is None:
        raise _parse.fail(f"{field}.containerPort", "Required value: containerPort is required")
    if not 0 < port < 65536:
        raise _parse.fail(f"{field}.containerPort",
                          f"Invalid value: {port}: must be between 1 and 65535, inclusive")
    host_port = _parse.integer(d.get("hostPort"), f"{field}.hostPort", 0)
    if not 0 <= host_port < 65536:
        raise _parse.fail(f"{field}.hostPort",
                          f"Invalid value: {host_port}: must be 0 (none) or between 1 and 65535")
    if host_network and host_port == 0:
        host_port = port  # the API server defaults hostPort to containerPort on the host network
    protocol = _parse.string(d.get("protocol"), f"{field}.protocol") or "TCP"
    if protocol not in _PROTOCOLS:
        raise _parse.fail(f"{field}.protocol", f"Unsupported value: {protocol!r}: supported "
                                               f"values: \"TCP\", \"UDP\", \"SCTP\"")
    return ContainerPort(port, host_port, protocol, _parse.string(d.get("hostIP"), f"{field}.hostIP"))


def _parse_container(d: Any, field: str, host_network: bool) -> Container:
    d = _parse.mapping(d, field)
    name = _parse.string(d.get("name"), f"{field}.name")
    if not name:
        raise _parse.fail(f"{field}.name", "Required value: every container needs a name")
    res = _parse.mapping(d.get("resources"), f"{field}.resources")
    limits = parse_resource_list(res.get("limits"), field=f"{field}.resources.limits")
    requests = parse_resource_list(res.get("requests"), field=f"{field}.resources.requests")
    if limits:
        for k, v in limits.items():
            if k not in requests:
                requests[k] = v
    raw_ports = d.get("ports")
    ports = tuple(_parse_port(p, f"{field}.ports[{i}]", host_network)
                  for i, p in enumerate(_parse.seq(raw_ports, f"{field}.ports"))) if raw_ports else ()
    return Container(
        name=name,
        image=_parse.string(d.get("image"), f"{field}.image"),
        requests=requests,
        limits=limits,
        ports=ports,
        restart_policy=_parse.opt_string(d.get("restartPolicy"), f"{field}.restartPolicy"),
    )


# --------------------------------------------------------------------------- tolerations

@attrs.frozen(slots=True)
class Toleration:
    key: str = ""
    operator: str = "Equal"
    value: str = ""
    effect: str = ""
    toleration_seconds: int | None = None

    def tolerates(self, taint: Any) -> bool:
        """Whether this toleration tolerates ``taint`` (anything with key, value and effect)."""
        if self.effect and self.effect != taint.effect:
            return False
        if self.key and self.key != taint.key:
            return False
        op = self.operator
        if op == "Exists":
            return True
        if op == "Equal" or op == "":
            value: str = taint.value
            return self.value == value
        if op == "Gt" or op == "Lt":
            mine, theirs = _as_int(self.value), _as_int(taint.value)
            if mine is None or theirs is None:
                return False
            return theirs > mine if op == "Gt" else theirs < mine
        return False


def _parse_toleration(d: Any, field: str) -> Toleration:
    d = _parse.mapping(d, field)
    key = _parse.string(d.get("key"), f"{field}.key")
    op = _parse.string(d.get("operator"), f"{field}.operator") or "Equal"
    if op not in TOLERATION_OPERATORS:
        raise _parse.fail(f"{field}.operator", f"Unsupported value: {op!r}: supported values: "
                                               + ", ".join(f'"{o}"' for o in TOLERATION_OPERATORS))
    value = _parse.string(d.get("value"), f"{field}.value")
    if op == "Exists" and value:
        raise _parse.fail(f"{field}.value", "Invalid value: must be empty when operator is Exists")
    if not key and op != "Exists":
        raise _parse.fail(f"{field}.operator",
                          "Invalid value: operator must be Exists when key is empty")
    effect = _parse.string(d.get("effect"), f"{field}.effect")
    if effect and effect not in TAINT_EFFECTS:
        raise _parse.fail(f"{field}.effect", f"Unsupported value: {effect!r}: supported values: "
                                             + ", ".join(f'"{e}"' for e in TAINT_EFFECTS))
    seconds = _parse.integer(d.get("tolerationSeconds"), f"{field}.tolerationSeconds")
    return Toleration(key, op, value, effect, seconds)


# --------------------------------------------------------------------------- affinity

@attrs.frozen(slots=True)
class PodAffinityTerm:
    label_selector: LabelSelector | None
    namespaces: tuple[str, ...] = ()
    topology_key: str = ""
    namespace_selector: LabelSelector | None = None
    match_label_keys: tuple[str, ...] = ()
    mismatch_label_keys: tuple[str, ...] = ()


@attrs.frozen(slots=True)
class WeightedPodAffinityTerm:
    weight: int
    term: PodAffinityTerm


@attrs.frozen(slots=True)
class NodeAffinity:
    required: NodeSelector | None = None
    preferred: tuple[PreferredSchedulingTerm, ...] = ()


@attrs.frozen(slots=True)
class PodAffinity:
    """Pod affinity or anti-affinity (same shape)."""

    required: tuple[PodAffinityTerm, ...] = ()
    preferred: tuple[WeightedPodAffinityTerm, ...] = ()


@attrs.frozen(slots=True)
class Affinity:
    """Parsed ``spec.affinity``. A part written as an empty mapping (``podAffinity: {}``) is kept,
    empty, as upstream keeps the non-nil struct: pods with any pod (anti-)affinity, even empty, are
    never signed for batching and count among a node's pods with affinity. Only an ``Affinity``
    with all three parts absent is stored as ``Pod.affinity = None``."""

    node_affinity: NodeAffinity | None = None
    pod_affinity: PodAffinity | None = None
    pod_anti_affinity: PodAffinity | None = None


_REQUIRED = "requiredDuringSchedulingIgnoredDuringExecution"
_PREFERRED = "preferredDuringSchedulingIgnoredDuringExecution"


def _parse_pod_affinity_term(d: Any, field: str) -> PodAffinityTerm:
    d = _parse.mapping(d, field)
    topology_key = _parse.string(d.get("topologyKey"), f"{field}.topologyKey")
    if not topology_key:
        raise _parse.fail(f"{field}.topologyKey", "Required value: can not be empty")
    return PodAffinityTerm(
        label_selector=parse_label_selector(d.get("labelSelector"), f"{field}.labelSelector"),
        namespaces=_parse.string_tuple(d.get("namespaces"), f"{field}.namespaces"),
        topology_key=topology_key,
        namespace_selector=parse_label_selector(d.get("namespaceSelector"),
                                                f"{field}.namespaceSelector"),
        match_label_keys=_parse.string_tuple(d.get("matchLabelKeys"), f"{field}.matchLabelKeys"),
        mismatch_label_keys=_parse.string_tuple(d.get("mismatchLabelKeys"),
                                                f"{field}.mismatchLabelKeys"),
    )


def _parse_weighted_term(d: Any, field: str) -> WeightedPodAffinityTerm:
    d = _parse.mapping(d, field)
    weight = _parse.integer(d.get("weight"), f"{field}.weight", 0)
    if not 1 <= weight <= 100:
        raise _parse.fail(f"{field}.weight", f"Invalid value: {weight}: must be in the range 1-100")
    if d.get("podAffinityTerm") is None:
        raise _parse.fail(f"{field}.podAffinityTerm", "Required value: podAffinityTerm is required")
    return WeightedPodAffinityTerm(weight, _parse_pod_affinity_term(d.get("podAffinityTerm"),
                                                                     f"{field}.podAffinityTerm"))


def _parse_pod_affinity(d: Any, field: str) -> PodAffinity | None:
    if d is None:
        return None
    d = _parse.mapping(d, field)
    required = tuple(_parse_pod_affinity_term(t, f"{field}.{_REQUIRED}[{i}]")
                     for i, t in enumerate(_parse.seq(d.get(_REQUIRED), f"{field}.{_REQUIRED}")))
    preferred = tuple(_parse_weighted_term(t, f"{field}.{_PREFERRED}[{i}]")
                      for i, t in enumerate(_parse.seq(d.get(_PREFERRED), f"{field}.{_PREFERRED}")))
    return PodAffinity(required, preferred)


def _parse_affinity(d: Any, field: str) -> Affinity | None:
    if d is None:
        return None
    d = _parse.mapping(d, field)
    node_affinity = None
    na = d.get("nodeAffinity")
    if na is not None:
        nf = f"{field}.nodeAffinity"
        na = _parse.mapping(na, nf)
        required = parse_node_selector(na.get(_REQUIRED), f"{nf}.{_REQUIRED}")
        preferred = tuple(parse_preferred_scheduling_term(t, f"{nf}.{_PREFERRED}[{i}]")
                          for i, t in enumerate(_parse.seq(na.get(_PREFERRED), f"{nf}.{_PREFERRED}")))
        node_affinity = NodeAffinity(required, preferred)
    pod_affinity = _parse_pod_affinity(d.get("podAffinity"), f"{field}.podAffinity")
    anti = _parse_pod_affinity(d.get("podAntiAffinity"), f"{field}.podAntiAffinity")
    if node_affinity is None and pod_affinity is None and anti is None:
        return None
    return Affinity(node_affinity, pod_affinity, anti)


# --------------------------------------------------------------------------- topology spread

@attrs.frozen(slots=True)
class TopologySpreadConstraint:
    max_skew: int
    topology_key: str
    when_unsatisfiable: str
    label_selector: LabelSelector | None = None
    min_domains: int | None = None
    node_affinity_policy: str | None = None
    node_taints_policy: str | None = None
    match_label_keys: tuple[str, ...] = ()


_TSC_KEYS = {k.lower(): k for k in (
    "maxSkew", "topologyKey", "whenUnsatisfiable", "labelSelector", "minDomains",
    "nodeAffinityPolicy", "nodeTaintsPolicy", "matchLabelKeys")}


def _parse_tsc(d: Any, field: str) -> TopologySpreadConstraint:
    d = _parse.mapping(d, field)
    if any(k not in _TSC_KEYS.values() for k in d):
        # Go's JSON decoding matches field names case-insensitively (scheduler_perf's own templates
        # write ``NodeAffinityPolicy``), so accept other spellings of the known keys.
        d = {_TSC_KEYS.get(k.lower(), k) if isinstance(k, str) else k: v for k, v in d.items()}
    max_skew = _parse.integer(d.get("maxSkew"), f"{field}.maxSkew", 0)
    if max_skew <= 0:
        raise _parse.fail(f"{field}.maxSkew", f"Invalid value: {max_skew}: must be greater than zero")
    key = _parse.string(d.get("topologyKey"), f"{field}.topologyKey")
    if not key:
        raise _parse.fail(f"{field}.topologyKey", "Required value: can not be empty")
    when = _parse.string(d.get("whenUnsatisfiable"), f"{field}.whenUnsatisfiable")
    if when not in ("DoNotSchedule", "ScheduleAnyway"):
        raise _parse.fail(f"{field}.whenUnsatisfiable", f"Unsupported value: {when!r}: supported "
                                                        f"values: \"DoNotSchedule\", \"ScheduleAnyway\"")
    min_domains = _parse.integer(d.get("minDomains"), f"{field}.minDomains")
    if min_domains is not None and min_domains <= 0:
        raise _parse.fail(f"{field}.minDomains",
                          f"Invalid value: {min_domains}: must be greater than zero")
    policies = []
    for name in ("nodeAffinityPolicy", "nodeTaintsPolicy"):
        policy = _parse.opt_string(d.get(name), f"{field}.{name}")
        if policy is not None and policy not in ("Honor", "Ignore"):
            raise _parse.fail(f"{field}.{name}", f"Unsupported value: {policy!r}: supported "
                                                 f"values: \"Honor\", \"Ignore\"")
        policies.append(policy)
    return TopologySpreadConstraint(
        max_skew=max_skew, topology_key=key, when_unsatisfiable=when,
        label_selector=parse_label_selector(d.get("labelSelector"), f"{field}.labelSelector"),
        min_domains=min_domains, node_affinity_policy=policies[0], node_taints_policy=policies[1],
        match_label_keys=_parse.string_tuple(d.get("matchLabelKeys"), f"{field}.matchLabelKeys"),
    )


# --------------------------------------------------------------------------- volumes, conditions

@attrs.frozen(slots=True)
class Volume:
    """A pod volume. ``source`` is the volume-source key (``persistentVolumeClaim``, ``emptyDir``,
    ``csi``, ``ephemeral``...), ``details`` its mapping. ``claim_name`` is set for
    ``persistentVolumeClaim`` volumes only (see :meth:`Pod.claim_names` for ephemeral ones)."""

    name: str
    source: str = ""
    claim_name: str | None = None
    read_only: bool = False
    details: dict[str, Any] = attrs.field(factory=dict)


def _parse_volume(d: Any, field: str) -> Volume:
    d = _parse.mapping(d, field)
    name = _parse.string(d.get("name"), f"{field}.name")
    if not name:
        raise _parse.fail(f"{field}.name", "Required value: every volume needs a name")
    source, details = "", {}
    for key, val in d.items():
        if key != "name":
            source = key
            details = _parse.mapping(val, f"{field}.{key}")
            break
    claim_name = None
    if source == "persistentVolumeClaim":
        claim_name = _parse.string(details.get("claimName"), f"{field}.{source}.claimName")
        if not claim_name:
            raise _parse.fail(f"{field}.{source}.claimName", "Required value: claimName is required")
    read_only = _parse.boolean(details.get("readOnly"), f"{field}.{source}.readOnly")
    return Volume(name, source, claim_name, read_only, dict(details))


@attrs.frozen(slots=True)
class PodCondition:
    type: str
    status: str
    reason: str = ""
    message: str = ""
    last_transition_time: _dt.datetime | None = None


def _parse_condition(d: Any, field: str) -> PodCondition:
    d = _parse.mapping(d, field)
    return PodCondition(
        type=_parse.string(d.get("type"), f"{field}.type"),
        status=_parse.string(d.get("status"), f"{field}.status"),
        reason=_parse.string(d.get("reason"), f"{field}.reason"),
        message=_parse.string(d.get("message"), f"{field}.message"),
        last_transition_time=_parse.timestamp(d.get("lastTransitionTime"),
                                              f"{field}.lastTransitionTime"),
    )


@attrs.frozen(slots=True)
class PodSchedulingGroup:
    """``spec.schedulingGroup``: the ``scheduling.k8s.io`` PodGroup the pod belongs to. A
    one-of whose only member is ``pod_group_name`` (None when the manifest has
    ``schedulingGroup: {}``, which the API server refuses)."""

    pod_group_name: str | None = None


def _parse_scheduling_group(d: Any, field: str) -> PodSchedulingGroup:
    d = _parse.mapping(d, field)
    return PodSchedulingGroup(_parse.opt_string(d.get("podGroupName"), f"{field}.podGroupName"))


# --------------------------------------------------------------------------- pod request

#: what a container without a cpu / memory request counts for when scoring (upstream
#: ``DefaultMilliCPURequest`` / ``DefaultMemoryRequest``)
_NON_ZERO_DEFAULTS: Mapping[str, int] = {"cpu": DEFAULT_MILLI_CPU_REQUEST, "memory": DEFAULT_MEMORY_REQUEST}


def _with_defaults(requests: Mapping[str, int], defaults: Mapping[str, int]) -> Mapping[str, int]:
    """A container's requests with each resource of ``defaults`` it does not name (an explicit 0
    is named) added (component-helpers ``applyNonMissing``)."""
    if all(k in requests for k in defaults):
        return requests
    out = dict(requests)
    for k, v in defaults.items():
        out.setdefault(k, v)
    return out


def _pod_level_requests_set(pod_level: Mapping[str, int] | None) -> bool:
    """Upstream ``IsPodLevelRequestsSet``: the pod-level requests name cpu, memory or hugepages."""
    if not pod_level:
        return False
    return any(k in _POD_LEVEL_RESOURCES or k.startswith("hugepages-") for k in pod_level)


def _default_pod_level_requests(requests: dict[str, int], limits: Mapping[str, int],
                                containers: tuple[Container, ...],
                                init_containers: tuple[Container, ...]) -> dict[str, int]:
    """``spec.resources.requests`` as the API server defaults them (upstream ``defaultPodRequests``
    in ``pkg/apis/core/v1/defaults.go``), only when pod-level limits are set: a missing cpu or
    memory request takes the containers' aggregated request when some container names it, and
    any missing request (cpu, memory, hugepages) the pod-level limit otherwise."""
    if not limits:
        return requests
    out = dict(requests)
    for k, v in _aggregate(containers, init_containers, {}, None, None).items():
        if k in _POD_LEVEL_RESOURCES:
            out.setdefault(k, v)
    for k, v in limits.items():
        if k in _POD_LEVEL_RESOURCES or k.startswith("hugepages-"):
            out.setdefault(k, v)
    return out


def compute_pod_request(containers: tuple[Container, ...], init_containers: tuple[Container, ...],
                        overhead: Mapping[str, int], *, pod_level: Mapping[str, int] | None = None,
                        non_zero: bool = False) -> dict[str, int]:
    """The amount of each resource a pod needs on a node.

    Regular containers and sidecars (restartable init containers) run together, so their requests
    add up. Each ordinary init container runs alone next to the sidecars started before it. The
    pod needs the larger of the two phases, per resource, plus its overhead. Pod-level requests
    (``spec.resources``) replace the container totals for cpu, memory and hugepages.

    With ``non_zero``, the scheduler's scoring count (upstream ``PodInfo.CalculateResource``):
    without pod-level requests every container (init and sidecar too) that names no cpu / memory
    request counts 100m / 200Mi; with pod-level requests that placeholder is added, to each
    container lacking it, only for a resource named nowhere in the pod's requests (pod level,
    any container, overhead), as upstream's ``getNonMissingContainerRequests`` decides.
    """
    if not non_zero:
        return _aggregate(containers, init_containers, overhead, pod_level, None)
    if not _pod_level_requests_set(pod_level):
        return _aggregate(containers, init_containers, overhead, pod_level, _NON_ZERO_DEFAULTS)
    requests = _aggregate(containers, init_containers, overhead, pod_level, None)
    missing = {k: v for k, v in _NON_ZERO_DEFAULTS.items() if k not in requests}
    if not missing:
        return requests
    return _aggregate(containers, init_containers, overhead, pod_level, missing)


def _aggregate(containers: tuple[Container, ...], init_containers: tuple[Container, ...],
               overhead: Mapping[str, int], pod_level: Mapping[str, int] | None,
               defaults: Mapping[str, int] | None) -> dict[str, int]:
    """component-helpers ``PodRequests``; ``defaults`` fill each container's missing requests."""
    total: dict[str, int] = {}
    for c in containers:
        reqs = _with_defaults(c.requests, defaults) if defaults else c.requests
        for k, v in reqs.items():
            total[k] = total.get(k, 0) + v
    if init_containers:
        sidecars: dict[str, int] = {}
        init_peak: dict[str, int] = {}
        for c in init_containers:
            reqs = _with_defaults(c.requests, defaults) if defaults else c.requests
            if c.restart_policy == "Always":
                for k, v in reqs.items():
                    total[k] = total.get(k, 0) + v
                    sidecars[k] = sidecars.get(k, 0) + v
                phase: Mapping[str, int] = sidecars
            else:
                phase = dict(sidecars)
                for k, v in reqs.items():
                    phase[k] = phase.get(k, 0) + v
            for k, v in phase.items():
                peak = init_peak.get(k)
                if peak is None or v > peak:
                    init_peak[k] = v
        for k, v in init_peak.items():
            current = total.get(k)
            if current is None or v > current:
                total[k] = v
    if pod_level:
        for k, v in pod_level.items():
            if k in _POD_LEVEL_RESOURCES or k.startswith("hugepages-"):
                total[k] = v
    for k, v in overhead.items():
        total[k] = total.get(k, 0) + v
    return total


# --------------------------------------------------------------------------- pod

_TERMINAL_PHASES = frozenset(("Succeeded", "Failed"))


class NodeDelta(NamedTuple):
    """A pod's contribution to a NodeInfo's aggregates (see :meth:`Pod.node_delta`)."""

    requested: tuple[tuple[str, int], ...]
    non_zero_requested: tuple[tuple[str, int], ...]
    host_port_keys: tuple[tuple[str, str, int], ...]
    claim_keys: tuple[str, ...]


@attrs.frozen(slots=True, unsafe_hash=False)
class Pod:
    """A pod as the scheduler sees it. Build with :func:`parse_pod` (or ``parse_object``); change
    with ``attrs.evolve`` or the ``with_*`` helpers. Dicts are shared: treat them as read-only.
    Hash is the uid; equality compares every field except ``raw``."""

    name: str
    namespace: str = "default"
    uid: str = ""
    labels: dict[str, str] = attrs.field(factory=dict)
    annotations: dict[str, str] = attrs.field(factory=dict)
    owner_references: tuple[dict[str, Any], ...] = ()
    node_name: str = ""
    scheduler_name: str = DEFAULT_SCHEDULER_NAME
    priority: int | None = None
    priority_class_name: str = ""
    preemption_policy: str | None = None
    containers: tuple[Container, ...] = ()
    init_containers: tuple[Container, ...] = ()
    overhead: dict[str, int] = attrs.field(factory=dict)
    node_selector: dict[str, str] = attrs.field(factory=dict)
    affinity: Affinity | None = None
    tolerations: tuple[Toleration, ...] = ()
    topology_spread_constraints: tuple[TopologySpreadConstraint, ...] = ()
    scheduling_gates: tuple[str, ...] = ()
    volumes: tuple[Volume, ...] = ()
    resource_claims: tuple[dict[str, Any], ...] = ()
    host_network: bool = False
    nominated_node_name: str = ""
    phase: str = "Pending"
    conditions: tuple[PodCondition, ...] = ()
    start_time: _dt.datetime | None = None
    creation_timestamp: _dt.datetime | None = None
    deletion_timestamp: _dt.datetime | None = None
    deletion_grace_period_seconds: int | None = None
    termination_grace_period_seconds: int = 30
    resource_version: str = ""
    raw: dict[str, Any] = attrs.field(factory=dict, eq=False, repr=False)
    # additions
    generate_name: str = ""
    finalizers: tuple[str, ...] = ()
    pod_level_requests: dict[str, int] = attrs.field(factory=dict)
    scheduling_group: PodSchedulingGroup | None = None
    # caches (filled on first use; survive with_node/with_nominated_node)
    _request: dict[str, int] | None = attrs.field(init=False, default=None, eq=False, repr=False)
    _request_nz: dict[str, int] | None = attrs.field(init=False, default=None, eq=False, repr=False)
    _host_ports: "tuple[ContainerPort, ...] | None" = attrs.field(init=False, default=None, eq=False, repr=False)
    _node_delta: "NodeDelta | None" = attrs.field(init=False, default=None, eq=False, repr=False)

    def __hash__(self) -> int:
        return hash(self.uid)

    # -- identity and state
    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    @property
    def is_terminated(self) -> bool:
        return self.phase in _TERMINAL_PHASES

    @property
    def is_terminating(self) -> bool:
        return self.deletion_timestamp is not None

    @property
    def is_assigned(self) -> bool:
        return self.node_name != ""

    @property
    def effective_priority(self) -> int:
        return self.priority if self.priority is not None else 0

    def condition(self, type_: str) -> PodCondition | None:
        for c in self.conditions:
            if c.type == type_:
                return c
        return None

    # -- resources
    def request(self, *, non_zero: bool = False, pod_level: bool = True) -> dict[str, int]:
        """Resources the pod needs (cached; do not modify the returned dict).

        ``non_zero``: the scoring count of :func:`compute_pod_request`. ``pod_level=False``
        leaves ``spec.resources`` out (upstream ``SkipPodLevelResources``), as
        NodeResourcesFit's scorer does; computed afresh each call for a pod that has them.
        """
        if not pod_level and self.pod_level_requests:
            return compute_pod_request(self.containers, self.init_containers, self.overhead,
                                       non_zero=non_zero)
        if non_zero:
            cached = self._request_nz
            if cached is None:
                cached = compute_pod_request(self.containers, self.init_containers, self.overhead,
                                             pod_level=self.pod_level_requests, non_zero=True)
                object.__setattr__(self, "_request_nz", cached)
            return cached
        cached = self._request
        if cached is None:
            cached = compute_pod_request(self.containers, self.init_containers, self.overhead,
                                         pod_level=self.pod_level_requests)
            object.__setattr__(self, "_request", cached)
        return cached

    def node_delta(self) -> "NodeDelta":
        """What the pod adds to its node's aggregates (NodeInfo), computed once: its requests,
        its scoring cpu/memory (missing requests count 100m / 200Mi), its host port keys and its
        claim keys (``namespace/claim``)."""
        cached = self._node_delta
        if cached is None:
            non_zero = self.request(non_zero=True)
            cached = NodeDelta(
                tuple(self.request().items()),
                tuple((name, amount) for name, amount in non_zero.items() if name in ("cpu", "memory")),
                tuple((port.host_ip or "0.0.0.0", port.protocol or "TCP", port.host_port)
                      for port in self.host_ports()),
                tuple(f"{self.namespace}/{volume.claim_name}" for volume in self.volumes if volume.claim_name))
            object.__setattr__(self, "_node_delta", cached)
        return cached

    def host_ports(self) -> tuple[ContainerPort, ...]:
        """Ports with ``host_port > 0`` of containers and sidecar (restartable) init containers."""
        cached = self._host_ports
        if cached is None:
            cached = tuple(p for c in (*self.containers, *(i for i in self.init_containers if i.is_sidecar))
                           for p in c.ports if p.host_port > 0)
            object.__setattr__(self, "_host_ports", cached)
        return cached

    def image_names(self) -> tuple[str, ...]:
        """Images of containers then init containers, as written."""
        return tuple(c.image for c in (*self.containers, *self.init_containers) if c.image)

    def claim_names(self) -> tuple[str, ...]:
        """PVC names the pod uses: ``persistentVolumeClaim`` claims and generic ephemeral
        volumes' claims (named ``<pod>-<volume>``)."""
        out = []
        for v in self.volumes:
            if v.claim_name:
                out.append(v.claim_name)
            elif v.source == "ephemeral":
                out.append(f"{self.name}-{v.name}")
        return tuple(out)

    # -- changes
    def _evolve_keep_caches(self, **changes: Any) -> "Pod":
        """A copy with ``changes`` (fields none of the caches depend on: the node, the
        nomination, ``raw``) and the caches kept. Copies the slots directly rather than
        through ``attrs.evolve``: a pod-group cycle assumes a pod in every placement it tries."""
        new = object.__new__(type(self))
        setattr_ = object.__setattr__
        for name in _POD_SLOTS:
            setattr_(new, name, getattr(self, name))
        for name, value in changes.items():
            setattr_(new, name, value)
        return new

    def with_node(self, name: str) -> "Pod":
        """The pod bound to node ``name`` (``spec.nodeName``, also in ``raw``). Its NodeInfo
        contribution is worked out here, once for every copy (a pod-group cycle binds a pod
        to a node in each placement it tries)."""
        self.node_delta()
        raw = dict(self.raw)
        raw["spec"] = {**(raw.get("spec") or {}), "nodeName": name}
        return self._evolve_keep_caches(node_name=name, raw=raw)

    def with_nominated_node(self, name: str) -> "Pod":
        """The pod with ``status.nominatedNodeName`` set (``""`` clears it)."""
        raw = dict(self.raw)
        status = dict(raw.get("status") or {})
        if name:
            status["nominatedNodeName"] = name
        else:
            status.pop("nominatedNodeName", None)
        raw["status"] = status
        return self._evolve_keep_caches(nominated_node_name=name, raw=raw)

    @classmethod
    def from_dict(cls, d: dict[str, Any], *, source: str = "", line: int | None = None,
                  template: bool = False) -> "Pod":
        try:
            return parse_pod(d, template=template)
        except ManifestError as exc:
            raise _parse.with_context(exc, source=source, line=line,
                                      obj=_parse.describe_object(d, "Pod")) from None


#: every attribute a Pod holds (its fields, caches included)
_POD_SLOTS = tuple(a.name for a in attrs.fields(Pod))


def parse_pod(d: dict[str, Any], *, template: bool = False) -> Pod:
    """Build a :class:`Pod` from a manifest dict. Errors name the field but not the object."""
    m = _parse.metadata(d, "Pod", namespaced=True, template=template)
    spec = _parse.mapping(d.get("spec"), "spec")
    status = _parse.mapping(d.get("status"), "status")
    host_network = _parse.boolean(spec.get("hostNetwork"), "spec.hostNetwork")
    containers = tuple(_parse_container(c, f"spec.containers[{i}]", host_network)
                       for i, c in enumerate(_parse.seq(spec.get("containers"), "spec.containers")))
    raw_init = spec.get("initContainers")
    init_containers = tuple(
        _parse_container(c, f"spec.initContainers[{i}]", host_network)
        for i, c in enumerate(_parse.seq(raw_init, "spec.initContainers"))) if raw_init else ()
    tolerations = tuple(_parse_toleration(t, f"spec.tolerations[{i}]")
                        for i, t in enumerate(_parse.seq(spec.get("tolerations"), "spec.tolerations")))
    tscs = tuple(_parse_tsc(t, f"spec.topologySpreadConstraints[{i}]") for i, t in
                 enumerate(_parse.seq(spec.get("topologySpreadConstraints"),
                                      "spec.topologySpreadConstraints")))
    gates = []
    for i, g in enumerate(_parse.seq(spec.get("schedulingGates"), "spec.schedulingGates")):
        gname = _parse.string(_parse.mapping(g, f"spec.schedulingGates[{i}]").get("name"),
                              f"spec.schedulingGates[{i}].name")
        if not gname:
            raise _parse.fail(f"spec.schedulingGates[{i}].name", "Required value")
        gates.append(gname)
    volumes = tuple(_parse_volume(v, f"spec.volumes[{i}]")
                    for i, v in enumerate(_parse.seq(spec.get("volumes"), "spec.volumes")))
    claims = _parse.seq(spec.get("resourceClaims"), "spec.resourceClaims")
    for i, c in enumerate(claims):
        _parse.mapping(c, f"spec.resourceClaims[{i}]")
    pod_res = _parse.mapping(spec.get("resources"), "spec.resources")
    pod_level: dict[str, int] = {}
    if pod_res:
        pod_level = _default_pod_level_requests(
            parse_resource_list(pod_res.get("requests"), field="spec.resources.requests"),
            parse_resource_list(pod_res.get("limits"), field="spec.resources.limits"),
            containers, init_containers)
    conditions = tuple(_parse_condition(c, f"status.conditions[{i}]")
                       for i, c in enumerate(_parse.seq(status.get("conditions"), "status.conditions")))
    return Pod(
        name=m.name,
        namespace=m.namespace,
        uid=m.uid,
        labels=m.labels,
        annotations=m.annotations,
        owner_references=m.owner_references,
        node_name=_parse.string(spec.get("nodeName"), "spec.nodeName"),
        scheduler_name=_parse.string(spec.get("schedulerName"), "spec.schedulerName")
        or DEFAULT_SCHEDULER_NAME,
        priority=_parse.integer(spec.get("priority"), "spec.priority"),
        priority_class_name=_parse.string(spec.get("priorityClassName"), "spec.priorityClassName"),
        preemption_policy=_parse.opt_string(spec.get("preemptionPolicy"), "spec.preemptionPolicy"),
        containers=containers,
        init_containers=init_containers,
        overhead=parse_resource_list(spec.get("overhead"), field="spec.overhead"),
        node_selector=_parse.string_map(spec.get("nodeSelector"), "spec.nodeSelector"),
        affinity=_parse_affinity(spec.get("affinity"), "spec.affinity"),
        tolerations=tolerations,
        topology_spread_constraints=tscs,
        scheduling_gates=tuple(gates),
        volumes=volumes,
        resource_claims=tuple(claims),
        host_network=host_network,
        nominated_node_name=_parse.string(status.get("nominatedNodeName"),
                                          "status.nominatedNodeName"),
        phase=_parse.string(status.get("phase"), "status.phase") or "Pending",
        conditions=conditions,
        start_time=_parse.timestamp(status.get("startTime"), "status.startTime"),
        creation_timestamp=m.creation_timestamp,
        deletion_timestamp=m.deletion_timestamp,
        deletion_grace_period_seconds=m.deletion_grace_period_seconds,
        termination_grace_period_seconds=_parse.integer(
            spec.get("terminationGracePeriodSeconds"), "spec.terminationGracePeriodSeconds", 30),
        resource_version=m.resource_version,
        raw=d,
        generate_name=m.generate_name,
        finalizers=m.finalizers,
        pod_level_requests=pod_level,
        scheduling_group=None if (group := spec.get("schedulingGroup")) is None
        else _parse_scheduling_group(group, "spec.schedulingGroup"),
    )
