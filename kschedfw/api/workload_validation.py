"""What kube-apiserver does to a Workload, a PodGroup and a pod's ``spec.schedulingGroup`` on
create and update, in its words and field paths (v1.36).

Upstream runs, in order: decoding with defaults (PodGroup's ``disruptionMode: Pod``, done by
:func:`kschedfw.api.workload.parse_pod_group`), the registry strategy's ``PrepareFor*`` (status
reset, fields of disabled gates dropped unless the old object used them: the ``prepare_*`` and
``drop_*`` functions here), then validation: the hand-written part (object metadata, status
conditions) and the declarative rules generated from the v1alpha2 types (unions, formats,
``maxItems``, gates, immutability: the ``validate_*`` functions here). The declarative rules
ratchet on update: a field equal to its old value is not checked again.

The gates are passed in (:class:`WorkloadGates`, ``generic_workload=``) so that the caller
decides where they come from. Findings and texts were compared with a v1.36.2 API server, gates
off and on (``tests/kube/test_workload_validation_server.py``). Not here: what admission adds
on create (``PodGroupWorkloadExists``, and with WorkloadAwarePreemption the Priority plugin,
which resolves a PodGroup's ``priority`` from its ``priorityClassName``).
"""

from __future__ import annotations

import re
from typing import Any, Callable, Sequence, TypeVar

import attrs

from kschedfw.api.field import (DUPLICATE, FORBIDDEN, INVALID, REQUIRED, TOO_MANY, UNSUPPORTED,
                                FieldError)
from kschedfw.api.labelsyntax import label_key_errors, label_value_errors, regex_error
from kschedfw.api.pod import Pod
from kschedfw.api.validation import DNS1123_SUBDOMAIN_FMT, GoValue
from kschedfw.api.workload import (DISRUPTION_MODES, MAX_POD_GROUP_RESOURCE_CLAIMS,
                                   WORKLOAD_MAX_POD_GROUP_TEMPLATES, Condition, PodGroup,
                                   PodGroupResourceClaim, PodGroupSchedulingConstraints,
                                   PodGroupSchedulingPolicy, PodGroupTemplate,
                                   PodGroupTemplateReference, TypedLocalObjectReference, Workload,
                                   go_json)

__all__ = [
    "WorkloadGates", "drop_disabled_workload_fields", "drop_disabled_pod_group_fields",
    "prepare_pod_group_for_create", "prepare_pod_group_for_update",
    "prepare_pod_group_status_update", "validate_workload", "validate_workload_update",
    "validate_pod_group", "validate_pod_group_update", "validate_pod_group_status_update",
    "validate_pod_scheduling_group", "drop_disabled_scheduling_group",
]

Path = tuple[Any, ...]
_T = TypeVar("_T")

IMMUTABLE = "field is immutable"
HIGHEST_USER_DEFINABLE_PRIORITY = 1_000_000_000
_INT32_MIN = -(2**31)


@attrs.frozen(slots=True)
class WorkloadGates:
    """The feature gates the scheduling.k8s.io/v1alpha2 strategies read (all alpha, off in
    v1.36). GenericWorkload itself decides whether the API is served at all."""

    topology_aware_workload_scheduling: bool = False
    dra_workload_resource_claims: bool = False
    workload_aware_preemption: bool = False


# ------------------------------------------------------------------ formats
# The declarative formats (``content``) count bytes and say so; the older util/validation
# name checks used for object metadata say "characters". Go matches a pattern against the whole
# text, hence ``fullmatch``.

_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_LABEL_RE = re.compile(_LABEL_FMT)
_SUBDOMAIN_RE = re.compile(DNS1123_SUBDOMAIN_FMT)
_LABEL_ERR = ("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or "
              "'-', and must start and end with an alphanumeric character")
_SUBDOMAIN_ERR = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric "
                  "characters, '-' or '.', and must start and end with an alphanumeric character")


def _too_long(value: str, limit: int, unit: str) -> list[str]:
    return [f"must be no more than {limit} {unit}"] if len(value.encode()) > limit else []


def _dns_label(value: str, unit: str = "bytes") -> list[str]:
    """A short name (content.IsDNS1123Label)."""
    errs = _too_long(value, 63, unit)
    if not _LABEL_RE.fullmatch(value):
        errs.append("must not contain dots" if _SUBDOMAIN_RE.fullmatch(value)
                    else regex_error(_LABEL_ERR, _LABEL_FMT, "my-name", "123-abc"))
    return errs


def _dns_subdomain(value: str, unit: str = "bytes") -> list[str]:
    """A long name (content.IsDNS1123Subdomain)."""
    errs = _too_long(value, 253, unit)
    if not _SUBDOMAIN_RE.fullmatch(value):
        errs.append(regex_error(_SUBDOMAIN_ERR, DNS1123_SUBDOMAIN_FMT, "example.com"))
    return errs


def _object_name(value: str) -> list[str]:
    """NameIsDNSSubdomain, as object metadata and pods' podGroupName are checked."""
    return _dns_subdomain(value, "characters")


def _path_segment_name(value: str) -> list[str]:
    if value in (".", ".."):
        return [f"may not be '{value}'"]
    return [f"may not contain '{c}'" for c in ("/", "%") if c in value]


def _format(path: Path, value: str, check: Callable[[str], list[str]]) -> list[FieldError]:
    return [FieldError(path, INVALID, m, value) for m in check(value)]


def _required_name(path: Path, value: str, check: Callable[[str], list[str]]) -> list[FieldError]:
    """A required string with a format: Required when empty, else its format's findings."""
    return [FieldError(path, REQUIRED)] if not value else _format(path, value, check)


def _union(path: Path, members: Sequence[tuple[str, bool]]) -> list[FieldError]:
    """Exactly one member set (declarative ``+k8s:unionMember``)."""
    names = ", ".join(f"`{name}`" for name, _ in members)
    chosen = [name for name, is_set in members if is_set]
    if len(chosen) > 1:
        return [FieldError(path, INVALID, f"must specify exactly one of: {names}",
                           "{" + ", ".join(chosen) + "}")]
    if not chosen:
        return [FieldError(path, INVALID, f"must specify one of: {names}", "")]
    return []


def _unique(path: Path, items: Sequence[_T], key: Callable[[_T], str],
            shown: Callable[[_T], str]) -> list[FieldError]:
    """Every later item whose key an earlier one has (a list with map semantics)."""
    seen: set[str] = set()
    errs = []
    for i, item in enumerate(items):
        if key(item) in seen:
            errs.append(FieldError((*path, i), DUPLICATE, "", GoValue(shown(item))))
        seen.add(key(item))
    return errs


def _immutable(path: Path) -> FieldError:
    return FieldError(path, INVALID, IMMUTABLE, None)


def _too_many(path: Path, count: int, limit: int) -> FieldError:
    return FieldError(path, TOO_MANY, f"must have at most {limit} item{'s' if limit != 1 else ''}",
                      count)


# ------------------------------------------------------------------ object metadata (hand-written)

def _object_meta(obj: Workload | PodGroup) -> list[FieldError]:
    """ValidateObjectMeta for a namespaced object named as a DNS subdomain."""
    errs: list[FieldError] = []
    if obj.generate_name:
        masked = obj.generate_name[:-1] + "a" if obj.generate_name.endswith("-") else obj.generate_name
        errs.extend(FieldError(("metadata", "generateName"), INVALID, m, obj.generate_name)
                    for m in _object_name(masked))
    if not obj.name:
        errs.append(FieldError(("metadata", "name"), REQUIRED, "name or generateName is required"))
    else:
        errs.extend(_format(("metadata", "name"), obj.name, _object_name))
    if not obj.namespace:
        errs.append(FieldError(("metadata", "namespace"), REQUIRED))
    else:
        errs.extend(_format(("metadata", "namespace"), obj.namespace,
                            lambda v: _dns_label(v, "characters")))
    errs.extend(_labels_and_annotations(obj))
    return errs


def _labels_and_annotations(obj: Workload | PodGroup) -> list[FieldError]:
    errs: list[FieldError] = []
    for key, value in obj.labels.items():
        errs.extend(_format(("metadata", "labels"), key, label_key_errors))
        errs.extend(_format(("metadata", "labels"), value, label_value_errors))
    for key in obj.annotations:
        errs.extend(FieldError(("metadata", "annotations"), INVALID, m, key)
                    for m in label_key_errors(key.lower()))
    return errs


def _object_meta_update(new: Workload | PodGroup, old: Workload | PodGroup) -> list[FieldError]:
    """ValidateObjectMetaUpdate: a resourceVersion, and name, namespace and uid unchanged."""
    errs: list[FieldError] = []
    if not new.resource_version:
        errs.append(FieldError(("metadata", "resourceVersion"), INVALID,
                               "must be specified for an update", ""))
    for field, new_value, old_value in (("name", new.name, old.name),
                                        ("namespace", new.namespace, old.namespace),
                                        ("uid", new.uid, old.uid)):
        if new_value != old_value:
            errs.append(FieldError(("metadata", field), INVALID, IMMUTABLE, new_value))
    errs.extend(_labels_and_annotations(new))
    return errs


# ------------------------------------------------------------------ the declarative rules

def _policy(path: Path, policy: PodGroupSchedulingPolicy) -> list[FieldError]:
    errs = _union(path, (("basic", policy.basic), ("gang", policy.gang is not None)))
    if policy.gang is not None:
        here = (*path, "gang", "minCount")
        if policy.gang.min_count == 0:  # a zero value counts as unset
            errs.append(FieldError(here, REQUIRED))
        elif policy.gang.min_count < 1:
            errs.append(FieldError(here, INVALID, "must be greater than or equal to 1",
                                   policy.gang.min_count))
    return errs


def _constraints(path: Path, c: PodGroupSchedulingConstraints | None,
                 gates: WorkloadGates) -> list[FieldError]:
    if not gates.topology_aware_workload_scheduling:
        return [FieldError(path, FORBIDDEN)] if c is not None else []
    if c is None or not c.topology:
        return []
    here = (*path, "topology")
    if len(c.topology) > 1:
        return [_too_many(here, len(c.topology), 1)]
    return [e for i, t in enumerate(c.topology)
            for e in _required_name((*here, i, "key"), t.key, label_key_errors)]


def _claims(path: Path, claims: Sequence[PodGroupResourceClaim]) -> list[FieldError]:
    if len(claims) > MAX_POD_GROUP_RESOURCE_CLAIMS:
        return [_too_many(path, len(claims), MAX_POD_GROUP_RESOURCE_CLAIMS)]
    errs = _unique(path, claims, lambda c: c.name, go_json)
    for i, c in enumerate(claims):
        here = (*path, i)
        errs.extend(_union(here, (("resourceClaimName", c.resource_claim_name is not None),
                                  ("resourceClaimTemplateName",
                                   c.resource_claim_template_name is not None))))
        errs.extend(_required_name((*here, "name"), c.name, _dns_label))
        for field, value in (("resourceClaimName", c.resource_claim_name),
                             ("resourceClaimTemplateName", c.resource_claim_template_name)):
            if value is not None:
                errs.extend(_format((*here, field), value, _dns_subdomain))
    return errs


def _disruption_mode(path: Path, mode: str | None, gates: WorkloadGates, *,
                     required: bool) -> list[FieldError]:
    if not gates.workload_aware_preemption:
        return [FieldError(path, FORBIDDEN)] if mode is not None else []
    if mode is None:  # PodGroup's has a default, so it is required once the gate is on
        return [FieldError(path, REQUIRED)] if required else []
    if mode not in DISRUPTION_MODES:
        return [FieldError(path, UNSUPPORTED, "supported values: "
                           + ", ".join(f'"{m}"' for m in DISRUPTION_MODES), mode)]
    return []


def _priority_class_name(path: Path, name: str, gates: WorkloadGates) -> list[FieldError]:
    if not gates.workload_aware_preemption:
        return [FieldError(path, FORBIDDEN)] if name else []
    return _format(path, name, _dns_subdomain) if name else []


def _priority(path: Path, priority: int | None, gates: WorkloadGates) -> list[FieldError]:
    if not gates.workload_aware_preemption:
        return [FieldError(path, FORBIDDEN)] if priority is not None else []
    if priority is None:
        return []
    if priority > HIGHEST_USER_DEFINABLE_PRIORITY:
        return [FieldError(path, INVALID, f"must be less than or equal to "
                                          f"{HIGHEST_USER_DEFINABLE_PRIORITY}", priority)]
    if priority < _INT32_MIN:
        return [FieldError(path, INVALID, f"must be greater than or equal to {_INT32_MIN}",
                           priority)]
    return []


def _template(path: Path, t: PodGroupTemplate, gates: WorkloadGates) -> list[FieldError]:
    errs = _required_name((*path, "name"), t.name, _dns_label)
    errs.extend(_policy((*path, "schedulingPolicy"), t.scheduling_policy))
    errs.extend(_constraints((*path, "schedulingConstraints"), t.scheduling_constraints, gates))
    errs.extend(_claims((*path, "resourceClaims"), t.resource_claims))
    errs.extend(_disruption_mode((*path, "disruptionMode"), t.disruption_mode, gates,
                                 required=False))
    errs.extend(_priority_class_name((*path, "priorityClassName"), t.priority_class_name, gates))
    errs.extend(_priority((*path, "priority"), t.priority, gates))
    return errs


def _controller_ref(path: Path, ref: TypedLocalObjectReference | None) -> list[FieldError]:
    if ref is None:
        return []
    errs = _format((*path, "apiGroup"), ref.api_group, _dns_subdomain) if ref.api_group else []
    errs.extend(_required_name((*path, "kind"), ref.kind, _path_segment_name))
    errs.extend(_required_name((*path, "name"), ref.name, _path_segment_name))
    return errs


def _templates_list(path: Path, templates: Sequence[PodGroupTemplate], *,
                    changed: bool | None) -> list[FieldError]:
    """The list-level rules of ``podGroupTemplates``: immutable (``changed`` on update), at most
    8, at least one. Any finding stops the checks of the items."""
    errs = [_immutable(path)] if changed else []
    if len(templates) > WORKLOAD_MAX_POD_GROUP_TEMPLATES:
        errs.append(_too_many(path, len(templates), WORKLOAD_MAX_POD_GROUP_TEMPLATES))
    if not templates:
        errs.append(FieldError(path, REQUIRED))
    return errs


def _declarative_workload(w: Workload, gates: WorkloadGates) -> list[FieldError]:
    errs = _controller_ref(("spec", "controllerRef"), w.controller_ref)
    path = ("spec", "podGroupTemplates")
    listed = _templates_list(path, w.pod_group_templates, changed=None)
    if listed:
        return errs + listed
    errs.extend(_unique(path, w.pod_group_templates, lambda t: t.name, go_json))
    for i, t in enumerate(w.pod_group_templates):
        errs.extend(_template((*path, i), t, gates))
    return errs


def _template_ref(path: Path, ref: PodGroupTemplateReference | None) -> list[FieldError]:
    if ref is None:
        return []
    errs = _union(path, (("workload", ref.workload is not None),))
    if ref.workload is not None:
        here = (*path, "workload")
        errs.extend(_required_name((*here, "workloadName"), ref.workload.workload_name,
                                   _dns_subdomain))
        errs.extend(_required_name((*here, "podGroupTemplateName"),
                                   ref.workload.pod_group_template_name, _dns_label))
    return errs


def _pod_group_status(pg: PodGroup) -> list[FieldError]:
    path = ("status", "resourceClaimStatuses")
    statuses = pg.resource_claim_statuses
    if len(statuses) > MAX_POD_GROUP_RESOURCE_CLAIMS:
        return [_too_many(path, len(statuses), MAX_POD_GROUP_RESOURCE_CLAIMS)]
    errs = _unique(path, statuses, lambda s: s.name, go_json)
    for i, s in enumerate(statuses):
        if s.resource_claim_name is not None:
            errs.extend(_format((*path, i, "resourceClaimName"), s.resource_claim_name,
                                _dns_subdomain))
    return errs


def _declarative_pod_group(pg: PodGroup, gates: WorkloadGates) -> list[FieldError]:
    errs = _template_ref(("spec", "podGroupTemplateRef"), pg.pod_group_template_ref)
    errs.extend(_policy(("spec", "schedulingPolicy"), pg.scheduling_policy))
    errs.extend(_constraints(("spec", "schedulingConstraints"), pg.scheduling_constraints, gates))
    errs.extend(_claims(("spec", "resourceClaims"), pg.resource_claims))
    errs.extend(_disruption_mode(("spec", "disruptionMode"), pg.disruption_mode, gates,
                                 required=True))
    errs.extend(_priority_class_name(("spec", "priorityClassName"), pg.priority_class_name, gates))
    errs.extend(_priority(("spec", "priority"), pg.priority, gates))
    return errs + _pod_group_status(pg)


# ------------------------------------------------------------------ Workload

def drop_disabled_workload_fields(new: Workload, old: Workload | None,
                                  gates: WorkloadGates) -> Workload:
    """The Workload as the strategy keeps it: each template's fields of a disabled gate cleared,
    unless the old template at the same index already used them."""
    old_templates = old.pod_group_templates if old is not None else ()
    templates = []
    for i, t in enumerate(new.pod_group_templates):
        prev = old_templates[i] if i < len(old_templates) else None
        templates.append(_drop_group_fields(t, prev, gates))
    return attrs.evolve(new, pod_group_templates=tuple(templates))


def validate_workload(w: Workload, gates: WorkloadGates) -> list[FieldError]:
    """The findings on create: metadata, then the declarative rules."""
    return _object_meta(w) + _declarative_workload(w, gates)


def validate_workload_update(new: Workload, old: Workload,
                             gates: WorkloadGates) -> list[FieldError]:
    """The findings on update. ``controllerRef`` and ``podGroupTemplates`` are immutable; an
    unchanged spec is not checked again (even against rules a gate added since)."""
    errs = _object_meta_update(new, old)
    if new.controller_ref != old.controller_ref:
        errs.append(_immutable(("spec", "controllerRef")))
    if new.pod_group_templates != old.pod_group_templates:
        errs.extend(_templates_list(("spec", "podGroupTemplates"), new.pod_group_templates,
                                    changed=True))
    return errs


# ------------------------------------------------------------------ PodGroup

_GroupT = TypeVar("_GroupT", PodGroup, PodGroupTemplate)


def _drop_group_fields(new: _GroupT, old: _GroupT | None, gates: WorkloadGates) -> _GroupT:
    """dropDisabled*Fields: a field of a disabled gate is cleared unless ``old`` has it."""
    changes: dict[str, Any] = {}
    if not gates.topology_aware_workload_scheduling and (old is None or old.scheduling_constraints is None):
        changes["scheduling_constraints"] = None
    if not gates.dra_workload_resource_claims and (old is None or not old.resource_claims):
        changes["resource_claims"] = ()
    if not gates.workload_aware_preemption:
        if old is None or old.disruption_mode is None:
            changes["disruption_mode"] = None
        if old is None or not old.priority_class_name:
            changes["priority_class_name"] = ""
        if old is None or old.priority is None:
            changes["priority"] = None
    return attrs.evolve(new, **changes) if changes else new


def drop_disabled_pod_group_fields(new: PodGroup, old: PodGroup | None,
                                   gates: WorkloadGates) -> PodGroup:
    """The PodGroup's spec as the strategy keeps it (see :func:`_drop_group_fields`)."""
    return _drop_group_fields(new, old, gates)


def prepare_pod_group_for_create(pg: PodGroup, gates: WorkloadGates) -> PodGroup:
    """PrepareForCreate: no status from the user, fields of disabled gates dropped."""
    return drop_disabled_pod_group_fields(
        attrs.evolve(pg, conditions=(), resource_claim_statuses=()), None, gates)


def prepare_pod_group_for_update(new: PodGroup, old: PodGroup, gates: WorkloadGates) -> PodGroup:
    """PrepareForUpdate of the main resource: the status stays the old one."""
    kept = attrs.evolve(new, conditions=old.conditions,
                        resource_claim_statuses=old.resource_claim_statuses)
    return drop_disabled_pod_group_fields(kept, old, gates)


def prepare_pod_group_status_update(new: PodGroup, old: PodGroup, gates: WorkloadGates) -> PodGroup:
    """PrepareForUpdate of ``/status``: the spec stays the old one; claim statuses are dropped
    while DRAWorkloadResourceClaims is off and the group has no claims."""
    kept = attrs.evolve(old, conditions=new.conditions,
                        resource_claim_statuses=new.resource_claim_statuses,
                        resource_version=new.resource_version, raw=new.raw)
    if not gates.dra_workload_resource_claims and not old.resource_claims:
        kept = attrs.evolve(kept, resource_claim_statuses=())
    return kept


def validate_pod_group(pg: PodGroup, gates: WorkloadGates) -> list[FieldError]:
    """The findings on create: metadata, then the declarative rules."""
    return _object_meta(pg) + _declarative_pod_group(pg, gates)


def validate_pod_group_update(new: PodGroup, old: PodGroup,
                              gates: WorkloadGates) -> list[FieldError]:
    """The findings on update of the main resource. Every spec field but ``priorityClassName``
    and ``priority`` with WorkloadAwarePreemption off is immutable; a field of a disabled gate
    may keep its old value but not take a new one."""
    errs = _object_meta_update(new, old)
    if new.pod_group_template_ref != old.pod_group_template_ref:
        errs.append(_immutable(("spec", "podGroupTemplateRef")))
    if new.scheduling_policy != old.scheduling_policy:
        errs.append(_immutable(("spec", "schedulingPolicy")))
    if new.scheduling_constraints != old.scheduling_constraints:
        path = ("spec", "schedulingConstraints")
        if gates.topology_aware_workload_scheduling:
            errs.append(_immutable(path))
        elif new.scheduling_constraints is not None:
            errs.append(FieldError(path, FORBIDDEN))
    if new.resource_claims != old.resource_claims:
        path = ("spec", "resourceClaims")
        errs.append(_immutable(path))
        if len(new.resource_claims) > MAX_POD_GROUP_RESOURCE_CLAIMS:
            errs.append(_too_many(path, len(new.resource_claims), MAX_POD_GROUP_RESOURCE_CLAIMS))
    wap = gates.workload_aware_preemption
    for field, new_value, old_value, unset in (
            ("disruptionMode", new.disruption_mode, old.disruption_mode, None),
            ("priorityClassName", new.priority_class_name, old.priority_class_name, ""),
            ("priority", new.priority, old.priority, None)):
        if new_value == old_value:
            continue
        path = ("spec", field)
        if not wap:
            if new_value != unset:
                errs.append(FieldError(path, FORBIDDEN))
            continue
        if field == "disruptionMode" and new_value is None:
            errs.append(FieldError(path, REQUIRED))
        errs.append(_immutable(path))
    if (new.conditions, new.resource_claim_statuses) != (old.conditions,
                                                         old.resource_claim_statuses):
        errs.extend(_pod_group_status(new))
    return errs


def _conditions(conditions: Sequence[Condition], path: Path) -> list[FieldError]:
    """metav1 ValidateConditions: one condition per type, each well formed."""
    errs: list[FieldError] = []
    seen: set[str] = set()
    for i, c in enumerate(conditions):
        here = (*path, i)
        if c.type in seen:
            errs.append(FieldError((*here, "type"), DUPLICATE, "", c.type))
        seen.add(c.type)
        errs.extend(_format((*here, "type"), c.type, label_key_errors))
        if c.status not in ("False", "True", "Unknown"):
            errs.append(FieldError((*here, "status"), UNSUPPORTED,
                                   'supported values: "False", "True", "Unknown"', c.status))
        if c.observed_generation < 0:
            errs.append(FieldError((*here, "observedGeneration"), INVALID,
                                   "must be greater than or equal to zero", c.observed_generation))
        if c.last_transition_time is None:
            errs.append(FieldError((*here, "lastTransitionTime"), REQUIRED))
        if not c.reason:
            errs.append(FieldError((*here, "reason"), REQUIRED))
        else:
            if not _REASON_RE.fullmatch(c.reason):
                errs.append(FieldError((*here, "reason"), INVALID, _REASON_ERR, c.reason))
            if len(c.reason) > 1024:
                errs.append(FieldError((*here, "reason"), "Too long",
                                       "may not be more than 1024 bytes"))
        if len(c.message.encode()) > 32 * 1024:
            errs.append(FieldError((*here, "message"), "Too long",
                                   "may not be more than 32768 bytes"))
    return errs


_REASON_FMT = "[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?"
_REASON_RE = re.compile(_REASON_FMT)
_REASON_ERR = regex_error(
    "a condition reason must start with alphabetic character, optionally followed by a string "
    "of alphanumeric characters or '_,:', and must end with an alphanumeric character or '_'",
    _REASON_FMT, "my_name", "MY_NAME", "MyName", "ReasonA,ReasonB", "ReasonA:ReasonB")


def validate_pod_group_status_update(new: PodGroup, old: PodGroup) -> list[FieldError]:
    """The findings on update of ``/status`` (``new`` as :func:`prepare_pod_group_status_update`
    made it): metadata, the conditions, and every claim status naming one of the spec's
    claims; then the declarative status rules when the status changed."""
    errs = _object_meta_update(new, old)
    errs.extend(_conditions(new.conditions, ("status", "conditions")))
    claim_names = {c.name for c in new.resource_claims}
    for i, s in enumerate(new.resource_claim_statuses):
        if s.name not in claim_names:
            errs.append(FieldError(("status", "resourceClaimStatuses", i, "name"), INVALID,
                                   "must match the name of an entry in `spec.resourceClaims`",
                                   s.name))
    if new.resource_claim_statuses != old.resource_claim_statuses:
        errs.extend(_pod_group_status(new))
    return errs


# ------------------------------------------------------------------ pods joining a group

def validate_pod_scheduling_group(pod: Pod) -> list[FieldError]:
    """The pod spec's ``schedulingGroup``: a one-of whose only member, ``podGroupName``, must
    be set and name a PodGroup (a DNS subdomain)."""
    group = pod.scheduling_group
    if group is None:
        return []
    path = ("spec", "schedulingGroup", "podGroupName")
    if group.pod_group_name is None:
        return [FieldError(path, INVALID, "must specify one of: `podGroupName`", None)]
    return _format(path, group.pod_group_name, _object_name)


def drop_disabled_scheduling_group(pod: Pod, old: Pod | None, *, generic_workload: bool) -> Pod:
    """The pod as the API server stores it: ``spec.schedulingGroup`` dropped while the
    GenericWorkload gate is off, unless the old pod already had one."""
    if generic_workload or pod.scheduling_group is None or (
            old is not None and old.scheduling_group is not None):
        return pod
    raw = pod.raw
    if isinstance(raw.get("spec"), dict) and "schedulingGroup" in raw["spec"]:
        spec = {k: v for k, v in raw["spec"].items() if k != "schedulingGroup"}
        raw = {**raw, "spec": spec}
    return attrs.evolve(pod, scheduling_group=None, raw=raw)
