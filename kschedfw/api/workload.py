"""``scheduling.k8s.io/v1alpha2`` Workload and PodGroup: the objects that make pods a group.

A Workload is the static template a controller writes (one ``podGroupTemplates`` entry per kind
of group); a PodGroup is one group at run time, with the status the scheduler writes. Pods join a
group through ``spec.schedulingGroup.podGroupName`` (:class:`kschedfw.api.pod.PodSchedulingGroup`).

Fields keep Go's presence rules, because the API server's validation tells them apart: a pointer
field absent is None, a value field absent is its zero (``minCount`` 0, ``priorityClassName``
""). The one default upstream applies on decode is PodGroup's ``disruptionMode: Pod``. Checks
that need a feature gate or the old object live in :mod:`kschedfw.api.workload_validation`; the
parsers refuse only what the API server's decoder refuses (wrong JSON types).

The kind name ``PodGroup`` is also used by the coscheduling plugin's
``scheduling.x-k8s.io/v1alpha1`` PodGroup; :func:`is_workload_api` tells the two apart by group.
"""

from __future__ import annotations

import datetime as _dt
import json
from typing import Any

import attrs

from kschedfw.api import _parse
from kschedfw.api.timestamps import rfc3339

__all__ = [
    "GROUP", "API_VERSION", "POD_GROUP_KIND", "WORKLOAD_KIND", "DISRUPTION_MODE_POD", "DISRUPTION_MODE_POD_GROUP",
    "POD_GROUP_SCHEDULED", "DISRUPTION_TARGET", "REASON_UNSCHEDULABLE", "REASON_SCHEDULER_ERROR",
    "REASON_PREEMPTION_BY_SCHEDULER", "WORKLOAD_MAX_POD_GROUP_TEMPLATES",
    "MAX_POD_GROUP_RESOURCE_CLAIMS",
    "TypedLocalObjectReference", "GangSchedulingPolicy", "PodGroupSchedulingPolicy",
    "TopologyConstraint", "PodGroupSchedulingConstraints", "PodGroupResourceClaim",
    "PodGroupTemplate", "Workload", "WorkloadPodGroupTemplateReference",
    "PodGroupTemplateReference", "Condition", "PodGroupResourceClaimStatus", "PodGroup",
    "is_workload_api", "API_VERSION", "DISRUPTION_MODES", "DISRUPTION_MODE_POD", "DISRUPTION_MODE_POD_GROUP",
    "DISRUPTION_TARGET", "GROUP", "MAX_POD_GROUP_RESOURCE_CLAIMS", "POD_GROUP_KIND", "POD_GROUP_SCHEDULED",
    "REASON_PREEMPTION_BY_SCHEDULER", "REASON_SCHEDULER_ERROR", "REASON_UNSCHEDULABLE", "WORKLOAD_KIND",
    "WORKLOAD_MAX_POD_GROUP_TEMPLATES", "parse_workload", "parse_pod_group", "workload_manifest",
    "pod_group_manifest", "go_json",
]

from kschedfw.api.workload_names import (API_VERSION, DISRUPTION_MODE_POD, DISRUPTION_MODE_POD_GROUP,
                                         DISRUPTION_MODES, DISRUPTION_TARGET, GROUP,
                                         MAX_POD_GROUP_RESOURCE_CLAIMS, POD_GROUP_KIND, POD_GROUP_SCHEDULED,
                                         REASON_PREEMPTION_BY_SCHEDULER, REASON_SCHEDULER_ERROR,
                                         REASON_UNSCHEDULABLE, WORKLOAD_KIND, WORKLOAD_MAX_POD_GROUP_TEMPLATES,
                                         is_workload_api)

_INT32 = (-(2**31), 2**31 - 1)


# --------------------------------------------------------------------------- shared parts

@attrs.frozen(slots=True)
class TypedLocalObjectReference:
    """The object that manages a Workload (``spec.controllerRef``)."""

    kind: str = ""
    name: str = ""
    api_group: str = ""


@attrs.frozen(slots=True)
class GangSchedulingPolicy:
    """All-or-nothing: the group is scheduled only when ``min_count`` of its pods can be."""

    min_count: int = 0


@attrs.frozen(slots=True)
class PodGroupSchedulingPolicy:
    """A union: exactly one of ``basic`` (``basic: {}`` written) and ``gang`` is set on a valid
    object; the parser keeps both or neither so that validation can say so."""

    basic: bool = False
    gang: GangSchedulingPolicy | None = None

    @property
    def min_count(self) -> int:
        """How many pods must fit at once: the gang's ``minCount``, 1 for a basic group."""
        return self.gang.min_count if self.gang is not None else 1


@attrs.frozen(slots=True)
class TopologyConstraint:
    key: str = ""


@attrs.frozen(slots=True)
class PodGroupSchedulingConstraints:
    """``topology``: the node label whose value all pods of the group share (at most one)."""

    topology: tuple[TopologyConstraint, ...] = ()


@attrs.frozen(slots=True)
class PodGroupResourceClaim:
    """A claim shared by the group: ``name`` plus exactly one of the two sources."""

    name: str = ""
    resource_claim_name: str | None = None
    resource_claim_template_name: str | None = None


def _int32(value: Any, field: str) -> int | None:
    """An int32 field: the decoder refuses a number outside the range."""
    n = _parse.integer(value, field)
    if n is not None and not _INT32[0] <= n <= _INT32[1]:
        raise _parse.fail(field, f"expected a 32-bit integer, got {n}")
    return n


def _parse_policy(d: Any, field: str) -> PodGroupSchedulingPolicy:
    d = _parse.mapping(d, field)
    basic = d.get("basic") is not None
    if basic:
        _parse.mapping(d["basic"], f"{field}.basic")
    gang = None
    if d.get("gang") is not None:
        g = _parse.mapping(d["gang"], f"{field}.gang")
        gang = GangSchedulingPolicy(_int32(g.get("minCount"), f"{field}.gang.minCount") or 0)
    return PodGroupSchedulingPolicy(basic, gang)


def _parse_constraints(d: Any, field: str) -> PodGroupSchedulingConstraints | None:
    if d is None:
        return None
    d = _parse.mapping(d, field)
    keys = []
    for i, t in enumerate(_parse.seq(d.get("topology"), f"{field}.topology")):
        t = _parse.mapping(t, f"{field}.topology[{i}]")
        keys.append(TopologyConstraint(_parse.string(t.get("key"), f"{field}.topology[{i}].key")))
    return PodGroupSchedulingConstraints(tuple(keys))


def _parse_claims(value: Any, field: str) -> tuple[PodGroupResourceClaim, ...]:
    claims = []
    for i, c in enumerate(_parse.seq(value, field)):
        f = f"{field}[{i}]"
        c = _parse.mapping(c, f)
        claims.append(PodGroupResourceClaim(
            _parse.string(c.get("name"), f"{f}.name"),
            _parse.opt_string(c.get("resourceClaimName"), f"{f}.resourceClaimName"),
            _parse.opt_string(c.get("resourceClaimTemplateName"), f"{f}.resourceClaimTemplateName")))
    return tuple(claims)


# --------------------------------------------------------------------------- Workload

@attrs.frozen(slots=True)
class PodGroupTemplate:
    """One kind of group a Workload's controller creates PodGroups from. ``disruption_mode``
    has no default here (only on PodGroup)."""

    name: str
    scheduling_policy: PodGroupSchedulingPolicy = PodGroupSchedulingPolicy()
    scheduling_constraints: PodGroupSchedulingConstraints | None = None
    resource_claims: tuple[PodGroupResourceClaim, ...] = ()
    disruption_mode: str | None = None
    priority_class_name: str = ""
    priority: int | None = None


@attrs.frozen(slots=True)
class Workload:
    """A ``scheduling.k8s.io/v1alpha2`` Workload. Build with :func:`parse_workload`; write back
    with :func:`workload_manifest`."""

    name: str
    namespace: str = "default"
    pod_group_templates: tuple[PodGroupTemplate, ...] = ()
    controller_ref: TypedLocalObjectReference | None = None
    uid: str = ""
    labels: dict[str, str] = attrs.field(factory=dict)
    annotations: dict[str, str] = attrs.field(factory=dict)
    generate_name: str = ""
    resource_version: str = ""
    raw: dict[str, Any] = attrs.field(factory=dict, eq=False, repr=False)

    @property
    def kind(self) -> str:
        """The store key of this kind (:data:`WORKLOAD_KIND`)."""
        return WORKLOAD_KIND

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    def template(self, name: str) -> PodGroupTemplate | None:
        return next((t for t in self.pod_group_templates if t.name == name), None)

    @classmethod
    def from_dict(cls, d: dict[str, Any], *, source: str = "", line: int | None = None,
                  template: bool = False) -> "Workload":
        return _parse.parse_in_context(parse_workload, "Workload", d, source=source, line=line, template=template)


def _parse_template(d: Any, field: str) -> PodGroupTemplate:
    d = _parse.mapping(d, field)
    return PodGroupTemplate(
        name=_parse.string(d.get("name"), f"{field}.name"),
        scheduling_policy=_parse_policy(d.get("schedulingPolicy"), f"{field}.schedulingPolicy"),
        scheduling_constraints=_parse_constraints(d.get("schedulingConstraints"),
                                                  f"{field}.schedulingConstraints"),
        resource_claims=_parse_claims(d.get("resourceClaims"), f"{field}.resourceClaims"),
        disruption_mode=_parse.opt_string(d.get("disruptionMode"), f"{field}.disruptionMode"),
        priority_class_name=_parse.string(d.get("priorityClassName"), f"{field}.priorityClassName"),
        priority=_int32(d.get("priority"), f"{field}.priority"),
    )


def parse_workload(d: dict[str, Any], *, template: bool = False) -> Workload:
    """Build a :class:`Workload` from a manifest dict. Errors name the field, not the object."""
    m = _parse.metadata(d, "Workload", namespaced=True, template=template)
    spec = _parse.mapping(d.get("spec"), "spec")
    ref = None
    if spec.get("controllerRef") is not None:
        r = _parse.mapping(spec["controllerRef"], "spec.controllerRef")
        ref = TypedLocalObjectReference(
            kind=_parse.string(r.get("kind"), "spec.controllerRef.kind"),
            name=_parse.string(r.get("name"), "spec.controllerRef.name"),
            api_group=_parse.string(r.get("apiGroup"), "spec.controllerRef.apiGroup"))
    templates = tuple(_parse_template(t, f"spec.podGroupTemplates[{i}]") for i, t in
                      enumerate(_parse.seq(spec.get("podGroupTemplates"), "spec.podGroupTemplates")))
    return Workload(name=m.name, namespace=m.namespace, pod_group_templates=templates,
                    controller_ref=ref, uid=m.uid, labels=m.labels, annotations=m.annotations,
                    generate_name=m.generate_name, resource_version=m.resource_version, raw=d)


# --------------------------------------------------------------------------- PodGroup

@attrs.frozen(slots=True)
class WorkloadPodGroupTemplateReference:
    workload_name: str = ""
    pod_group_template_name: str = ""


@attrs.frozen(slots=True)
class PodGroupTemplateReference:
    """A union with one member today: the Workload template the group was made from."""

    workload: WorkloadPodGroupTemplateReference | None = None


@attrs.frozen(slots=True)
class Condition:
    """A ``metav1.Condition`` (``PodGroupScheduled``, ``DisruptionTarget``)."""

    type: str
    status: str
    reason: str = ""
    message: str = ""
    last_transition_time: _dt.datetime | None = None
    observed_generation: int = 0


@attrs.frozen(slots=True)
class PodGroupResourceClaimStatus:
    name: str = ""
    resource_claim_name: str | None = None


@attrs.frozen(slots=True)
class PodGroup:
    """A ``scheduling.k8s.io/v1alpha2`` PodGroup. ``disruption_mode`` is ``Pod`` when the
    manifest has none, as upstream's defaulting sets it; the API server drops it again while
    the WorkloadAwarePreemption gate is off. ``conditions`` and ``resource_claim_statuses`` are
    the status."""

    name: str
    namespace: str = "default"
    scheduling_policy: PodGroupSchedulingPolicy = PodGroupSchedulingPolicy()
    pod_group_template_ref: PodGroupTemplateReference | None = None
    scheduling_constraints: PodGroupSchedulingConstraints | None = None
    resource_claims: tuple[PodGroupResourceClaim, ...] = ()
    disruption_mode: str | None = DISRUPTION_MODE_POD
    priority_class_name: str = ""
    priority: int | None = None
    conditions: tuple[Condition, ...] = ()
    resource_claim_statuses: tuple[PodGroupResourceClaimStatus, ...] = ()
    uid: str = ""
    labels: dict[str, str] = attrs.field(factory=dict)
    annotations: dict[str, str] = attrs.field(factory=dict)
    generate_name: str = ""
    resource_version: str = ""
    raw: dict[str, Any] = attrs.field(factory=dict, eq=False, repr=False)

    @property
    def kind(self) -> str:
        """The store key of this kind (:data:`POD_GROUP_KIND`)."""
        return POD_GROUP_KIND

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    @property
    def topology_key(self) -> str:
        """The label key all pods must share a value of, "" without a topology constraint."""
        c = self.scheduling_constraints
        return c.topology[0].key if c is not None and c.topology else ""

    def condition(self, type_: str) -> Condition | None:
        return next((c for c in self.conditions if c.type == type_), None)

    @property
    def generation(self) -> int:
        """``metadata.generation`` as written (0 when unset: the API server's PodGroup strategy
        sets none), which the scheduler copies into a condition's ``observedGeneration``."""
        meta = self.raw.get("metadata")
        value = meta.get("generation") if isinstance(meta, dict) else None
        return value if isinstance(value, int) and not isinstance(value, bool) else 0

    def with_condition(self, cond: Condition, now: _dt.datetime | None = None) -> "PodGroup":
        """The group with ``cond`` set as apimachinery's ``meta.SetStatusCondition`` sets it:
        a condition of that type keeps its ``lastTransitionTime`` unless its status changes;
        a new or changed one gets ``cond``'s time, or ``now`` when it has none."""
        stamp = cond.last_transition_time or now or _dt.datetime.now(_dt.timezone.utc)
        conditions = list(self.conditions)
        for i, old in enumerate(conditions):
            if old.type == cond.type:
                when = old.last_transition_time if old.status == cond.status else stamp
                conditions[i] = attrs.evolve(cond, last_transition_time=when)
                break
        else:
            conditions.append(attrs.evolve(cond, last_transition_time=stamp))
        return attrs.evolve(self, conditions=tuple(conditions))

    @classmethod
    def from_dict(cls, d: dict[str, Any], *, source: str = "", line: int | None = None,
                  template: bool = False) -> "PodGroup":
        return _parse.parse_in_context(parse_pod_group, "PodGroup", d, source=source, line=line, template=template)


def _parse_condition(d: Any, field: str) -> Condition:
    d = _parse.mapping(d, field)
    return Condition(
        type=_parse.string(d.get("type"), f"{field}.type"),
        status=_parse.string(d.get("status"), f"{field}.status"),
        reason=_parse.string(d.get("reason"), f"{field}.reason"),
        message=_parse.string(d.get("message"), f"{field}.message"),
        last_transition_time=_parse.timestamp(d.get("lastTransitionTime"),
                                              f"{field}.lastTransitionTime"),
        observed_generation=_parse.integer(d.get("observedGeneration"),
                                           f"{field}.observedGeneration", 0))


def parse_pod_group(d: dict[str, Any], *, template: bool = False) -> PodGroup:
    """Build a :class:`PodGroup` from a manifest dict. Errors name the field, not the object."""
    m = _parse.metadata(d, "PodGroup", namespaced=True, template=template)
    spec = _parse.mapping(d.get("spec"), "spec")
    status = _parse.mapping(d.get("status"), "status")
    ref = None
    if spec.get("podGroupTemplateRef") is not None:
        r = _parse.mapping(spec["podGroupTemplateRef"], "spec.podGroupTemplateRef")
        workload = None
        if r.get("workload") is not None:
            f = "spec.podGroupTemplateRef.workload"
            w = _parse.mapping(r["workload"], f)
            workload = WorkloadPodGroupTemplateReference(
                _parse.string(w.get("workloadName"), f"{f}.workloadName"),
                _parse.string(w.get("podGroupTemplateName"), f"{f}.podGroupTemplateName"))
        ref = PodGroupTemplateReference(workload)
    mode = _parse.opt_string(spec.get("disruptionMode"), "spec.disruptionMode")
    conditions = tuple(_parse_condition(c, f"status.conditions[{i}]") for i, c in
                       enumerate(_parse.seq(status.get("conditions"), "status.conditions")))
    claim_statuses = []
    for i, s in enumerate(_parse.seq(status.get("resourceClaimStatuses"),
                                     "status.resourceClaimStatuses")):
        f = f"status.resourceClaimStatuses[{i}]"
        s = _parse.mapping(s, f)
        claim_statuses.append(PodGroupResourceClaimStatus(
            _parse.string(s.get("name"), f"{f}.name"),
            _parse.opt_string(s.get("resourceClaimName"), f"{f}.resourceClaimName")))
    return PodGroup(
        name=m.name, namespace=m.namespace,
        scheduling_policy=_parse_policy(spec.get("schedulingPolicy"), "spec.schedulingPolicy"),
        pod_group_template_ref=ref,
        scheduling_constraints=_parse_constraints(spec.get("schedulingConstraints"),
                                                  "spec.schedulingConstraints"),
        resource_claims=_parse_claims(spec.get("resourceClaims"), "spec.resourceClaims"),
        disruption_mode=DISRUPTION_MODE_POD if mode is None else mode,
        priority_class_name=_parse.string(spec.get("priorityClassName"), "spec.priorityClassName"),
        priority=_int32(spec.get("priority"), "spec.priority"),
        conditions=conditions, resource_claim_statuses=tuple(claim_statuses),
        uid=m.uid, labels=m.labels, annotations=m.annotations, generate_name=m.generate_name,
        resource_version=m.resource_version, raw=d)


# --------------------------------------------------------------------------- writing back

def _metadata(obj: Workload | PodGroup) -> dict[str, Any]:
    """The manifest's own metadata when it has one (what was written is kept), else the
    fields the object carries."""
    meta = obj.raw.get("metadata")
    if isinstance(meta, dict) and meta:
        return dict(meta)
    out: dict[str, Any] = {}
    if obj.name:
        out["name"] = obj.name
    if obj.generate_name:
        out["generateName"] = obj.generate_name
    out["namespace"] = obj.namespace
    for key, value in (("uid", obj.uid), ("resourceVersion", obj.resource_version),
                       ("labels", obj.labels), ("annotations", obj.annotations)):
        if value:
            out[key] = dict(value) if isinstance(value, dict) else value
    return out


def _policy_dict(p: PodGroupSchedulingPolicy) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if p.basic:
        out["basic"] = {}
    if p.gang is not None:
        out["gang"] = {"minCount": p.gang.min_count}
    return out


def _constraints_dict(c: PodGroupSchedulingConstraints) -> dict[str, Any]:
    return {"topology": [{"key": t.key} for t in c.topology]} if c.topology else {}


def _claim_dict(c: PodGroupResourceClaim) -> dict[str, Any]:
    out: dict[str, Any] = {"name": c.name}
    if c.resource_claim_name is not None:
        out["resourceClaimName"] = c.resource_claim_name
    if c.resource_claim_template_name is not None:
        out["resourceClaimTemplateName"] = c.resource_claim_template_name
    return out


def _claim_status_dict(s: PodGroupResourceClaimStatus) -> dict[str, Any]:
    out: dict[str, Any] = {"name": s.name}
    if s.resource_claim_name is not None:
        out["resourceClaimName"] = s.resource_claim_name
    return out


def _group_fields(out: dict[str, Any], obj: PodGroupTemplate | PodGroup, *, go_nulls: bool) -> None:
    """The fields templates and groups share, in upstream's field order. ``go_nulls``: write a
    template's absent ``schedulingConstraints`` as null, as Go's JSON encoder does (the field has
    no ``omitempty``)."""
    out["schedulingPolicy"] = _policy_dict(obj.scheduling_policy)
    if obj.scheduling_constraints is not None:
        out["schedulingConstraints"] = _constraints_dict(obj.scheduling_constraints)
    elif go_nulls:
        out["schedulingConstraints"] = None
    if obj.resource_claims:
        out["resourceClaims"] = [_claim_dict(c) for c in obj.resource_claims]
    if obj.disruption_mode is not None:
        out["disruptionMode"] = obj.disruption_mode
    if obj.priority_class_name:
        out["priorityClassName"] = obj.priority_class_name
    if obj.priority is not None:
        out["priority"] = obj.priority


def _template_dict(t: PodGroupTemplate, *, go_nulls: bool = False) -> dict[str, Any]:
    out: dict[str, Any] = {"name": t.name}
    _group_fields(out, t, go_nulls=go_nulls)
    return out


def _condition_dict(c: Condition) -> dict[str, Any]:
    out: dict[str, Any] = {"type": c.type, "status": c.status}
    if c.observed_generation:
        out["observedGeneration"] = c.observed_generation
    out["lastTransitionTime"] = rfc3339(c.last_transition_time) if c.last_transition_time else None
    out["reason"] = c.reason
    out["message"] = c.message
    return out


def workload_manifest(w: Workload) -> dict[str, Any]:
    """The Workload as a manifest (``apiVersion`` ... ``spec``), for ``--write-out`` and the
    API; :func:`parse_workload` reads it back to an equal object."""
    spec: dict[str, Any] = {}
    if w.controller_ref is not None:
        r = w.controller_ref
        spec["controllerRef"] = {**({"apiGroup": r.api_group} if r.api_group else {}),
                                 "kind": r.kind, "name": r.name}
    spec["podGroupTemplates"] = [_template_dict(t) for t in w.pod_group_templates]
    return {"apiVersion": API_VERSION, "kind": "Workload", "metadata": _metadata(w), "spec": spec}


def pod_group_manifest(pg: PodGroup) -> dict[str, Any]:
    """The PodGroup as a manifest with its status (the conditions the scheduler wrote);
    :func:`parse_pod_group` reads it back to an equal object."""
    spec: dict[str, Any] = {}
    ref = pg.pod_group_template_ref
    if ref is not None:
        w = ref.workload
        spec["podGroupTemplateRef"] = {} if w is None else {"workload": {
            "workloadName": w.workload_name, "podGroupTemplateName": w.pod_group_template_name}}
    _group_fields(spec, pg, go_nulls=False)
    out = {"apiVersion": API_VERSION, "kind": "PodGroup", "metadata": _metadata(pg), "spec": spec}
    status: dict[str, Any] = {}
    if pg.conditions:
        status["conditions"] = [_condition_dict(c) for c in pg.conditions]
    if pg.resource_claim_statuses:
        status["resourceClaimStatuses"] = [_claim_status_dict(s) for s in pg.resource_claim_statuses]
    if status:
        out["status"] = status
    return out


def go_json(item: PodGroupTemplate | PodGroupResourceClaim | PodGroupResourceClaimStatus) -> str:
    """A list item as Go's JSON encoder writes the v1alpha2 struct: the value the API server
    shows in a ``Duplicate value`` error."""
    if isinstance(item, PodGroupTemplate):
        d = _template_dict(item, go_nulls=True)
    elif isinstance(item, PodGroupResourceClaim):
        d = _claim_dict(item)
    else:
        d = _claim_status_dict(item)
    return json.dumps(d, separators=(",", ":"))
