"""PodTopologySpread's args (upstream PodTopologySpreadArgs): schema, v1 defaults, validation."""

from __future__ import annotations

import copy

from kschedfw.api.field import DUPLICATE, FORBIDDEN, INVALID, REQUIRED, FieldError
from kschedfw.api.validation import validate_label_name
from kschedfw.fwk.args import ArgsSpec
from kschedfw.plugins.argschema import I32, Args, Path, args_schema, as_dict, as_list, obj_schema, supported


SYSTEM_DEFAULTING = "System"
LIST_DEFAULTING = "List"

_LABEL_SELECTOR = obj_schema({
    "matchLabels": {"type": "object", "additionalProperties": {"type": "string"}},
    "matchExpressions": {"type": "array", "items": obj_schema({
        "key": {"type": "string"}, "operator": {"type": "string"},
        "values": {"type": "array", "items": {"type": "string"}}})},
})
_TOPOLOGY_SPREAD_CONSTRAINT = obj_schema({
    "maxSkew": I32,
    "topologyKey": {"type": "string"},
    "whenUnsatisfiable": {"type": "string", "examples": ["DoNotSchedule", "ScheduleAnyway"]},
    "labelSelector": _LABEL_SELECTOR,
    "minDomains": I32,
    "nodeAffinityPolicy": {"type": "string"},
    "nodeTaintsPolicy": {"type": "string"},
    "matchLabelKeys": {"type": "array", "items": {"type": "string"}},
})

POD_TOPOLOGY_SPREAD_SCHEMA = args_schema("PodTopologySpreadArgs", {
    "defaultConstraints": {"type": "array", "items": _TOPOLOGY_SPREAD_CONSTRAINT,
                           "description": "Constraints for pods that define none (List)."},
    "defaultingType": {"type": "string", "default": SYSTEM_DEFAULTING,
                       "examples": [SYSTEM_DEFAULTING, LIST_DEFAULTING],
                       "description": "System (built-in constraints) or List (defaultConstraints)."},
}, "Arguments of PodTopologySpread.")


def default_pod_topology_spread_args(args: Args) -> Args:
    """v1 defaults ``defaultingType`` to System even when ``defaultConstraints`` are given."""
    out = copy.deepcopy(args)
    if not out.get("defaultingType"):
        out["defaultingType"] = SYSTEM_DEFAULTING
    return out


def validate_pod_topology_spread_args(args: Args, path: Path = ()) -> list[FieldError]:
    errs: list[FieldError] = []
    constraints = [as_dict(c) for c in as_list(args.get("defaultConstraints"))]
    dtype = args.get("defaultingType", "")
    if dtype not in (SYSTEM_DEFAULTING, LIST_DEFAULTING):
        errs.append(supported((*path, "defaultingType"), dtype,
                              [SYSTEM_DEFAULTING, LIST_DEFAULTING]))
    elif dtype == SYSTEM_DEFAULTING and constraints:
        errs.append(FieldError((*path, "defaultingType"), INVALID,
                               "when .defaultConstraints are not empty", dtype))
    base = (*path, "defaultConstraints")
    for i, c in enumerate(constraints):
        p = (*base, i)
        skew = c.get("maxSkew", 0)
        if skew <= 0:
            errs.append(FieldError((*p, "maxSkew"), INVALID, "not in valid range (0, inf)", skew))
        key = c.get("topologyKey", "")
        if not key:
            errs.append(FieldError((*p, "topologyKey"), REQUIRED, "can not be empty"))
        else:
            errs.extend(validate_label_name(key, (*p, "topologyKey")))
        action = c.get("whenUnsatisfiable", "")
        if not action:
            errs.append(FieldError((*p, "whenUnsatisfiable"), REQUIRED, "can not be empty"))
        elif action not in ("DoNotSchedule", "ScheduleAnyway"):
            errs.append(supported((*p, "whenUnsatisfiable"), action,
                                  ["DoNotSchedule", "ScheduleAnyway"]))
        if c.get("labelSelector") is not None:
            errs.append(FieldError((*p, "labelSelector"), FORBIDDEN,
                                   "constraint must not define a selector, as they deduced for "
                                   "each pod"))
        for other in constraints[:i]:
            if (other.get("topologyKey", ""), other.get("whenUnsatisfiable", "")) == (key, action):
                errs.append(FieldError(p, DUPLICATE, "", f"{{{key}, {action}}}"))
                break
    return errs


ARGS = ArgsSpec(POD_TOPOLOGY_SPREAD_SCHEMA, validate_pod_topology_spread_args, default_pod_topology_spread_args)
