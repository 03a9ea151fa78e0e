"""Args of the in-tree plugins: JSON Schemas, upstream v1 defaulting, upstream semantic validation.

As upstream keeps ``types_pluginargs.go``, ``v1/defaults.go`` and ``validation_pluginargs.go`` with
the config API, so do we. Plugin classes point their ``args_schema`` at ``IN_TREE_ARGS[name].schema``
and their ``validate_args`` at ``IN_TREE_ARGS[name].validate``.

Validators take args already decoded and defaulted (missing fields read as Go zero values) and
return :class:`~kschedfw.errors.FieldError` lists with paths relative to ``args`` and upstream's
exact texts. Feature gates that change a rule come in explicitly as a ``features`` mapping
(a :class:`~kschedfw.features.FeatureGates` built from the command line); without one the v1.36
defaults apply. Nothing here reads gate state from a module.
"""

from __future__ import annotations

import copy
import re
from types import MappingProxyType
from typing import Any, Callable, Mapping

import attrs

from kschedfw.features import DEFAULT_FEATURE_GATES, enabled

from kschedfw.config.jsonsubset import DURATION_HINT
from kschedfw.config.k8svalidation import (DURATION_PATTERN, GoValue, format_duration,
                                           go_string_slice, is_qualified_name,
                                           is_valid_label_value, parse_duration,
                                           validate_label_name)
from kschedfw.errors import (DUPLICATE, FORBIDDEN, INVALID, REQUIRED, UNSUPPORTED, FieldError)

#: The v1.36 defaults of the gates, read-only: what applies when no gates are passed.
FEATURE_GATES: Mapping[str, bool] = MappingProxyType(DEFAULT_FEATURE_GATES)

MAX_CUSTOM_PRIORITY_SCORE = 10
LEAST_ALLOCATED = "LeastAllocated"
MOST_ALLOCATED = "MostAllocated"
REQUESTED_TO_CAPACITY_RATIO = "RequestedToCapacityRatio"
SCORING_STRATEGY_TYPES = (LEAST_ALLOCATED, MOST_ALLOCATED, REQUESTED_TO_CAPACITY_RATIO)
SYSTEM_DEFAULTING = "System"
LIST_DEFAULTING = "List"

Args = dict[str, Any]
Path = tuple[Any, ...]


def _gate(features: Mapping[str, bool] | None, name: str) -> bool:
    return enabled(features, name)


def _supported(path: Path, value: Any, allowed: list[str]) -> FieldError:
    return FieldError(path, UNSUPPORTED, "supported values: " + ", ".join(f'"{v}"' for v in allowed),
                      value)


def _list(value: Any) -> list:
    return value if isinstance(value, list) else []


def _dict(value: Any) -> dict:
    return value if isinstance(value, dict) else {}


# ---------------------------------------------------------------------------------- schemas

_I32 = {"type": "integer", "minimum": -(2 ** 31), "maximum": 2 ** 31 - 1}
_I64 = {"type": "integer", "minimum": -(2 ** 63), "maximum": 2 ** 63 - 1}
_DURATION = {"type": "string", "pattern": DURATION_PATTERN, "x-pattern-message": DURATION_HINT}
_DEFAULT_RESOURCES = [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}]


def _obj(props: dict, description: str = "", **extra: Any) -> dict:
    out = {"type": "object", "properties": props, "additionalProperties": False, **extra}
    if description:
        out["description"] = description
    return out


def _args_schema(kind: str, props: dict, description: str) -> dict:
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "title": kind,
            **_obj(props, description)}


RESOURCE_SPEC = _obj({"name": {"type": "string", "description": "Resource name."},
                      "weight": {**_I64, "description": "Resource weight."}},
                     "A resource and its weight.")
SHAPE_POINT = _obj({"utilization": {**_I32, "description": "Utilization (x axis), 0-100."},
                    "score": {**_I32, "description": "Score (y axis), 0-10."}},
                   "A point of a piecewise linear scoring function.")
SHAPE = {"type": "array", "items": SHAPE_POINT}

_SELECTOR_REQUIREMENT = _obj({
    "key": {"type": "string"},
    "operator": {"type": "string", "examples": ["In", "NotIn", "Exists", "DoesNotExist", "Gt",
                                                "Lt"]},
    "values": {"type": "array", "items": {"type": "string"}},
})
_NODE_SELECTOR_TERM = _obj({
    "matchExpressions": {"type": "array", "items": _SELECTOR_REQUIREMENT},
    "matchFields": {"type": "array", "items": _SELECTOR_REQUIREMENT},
})
_NODE_AFFINITY = _obj({
    "requiredDuringSchedulingIgnoredDuringExecution": _obj({
        "nodeSelectorTerms": {"type": "array", "items": _NODE_SELECTOR_TERM}}),
    "preferredDuringSchedulingIgnoredDuringExecution": {"type": "array", "items": _obj({
        "weight": _I32, "preference": _NODE_SELECTOR_TERM})},
}, "Node affinity added to every pod.")
_LABEL_SELECTOR = _obj({
    "matchLabels": {"type": "object", "additionalProperties": {"type": "string"}},
    "matchExpressions": {"type": "array", "items": _obj({
        "key": {"type": "string"}, "operator": {"type": "string"},
        "values": {"type": "array", "items": {"type": "string"}}})},
})
_TOPOLOGY_SPREAD_CONSTRAINT = _obj({
    "maxSkew": _I32,
    "topologyKey": {"type": "string"},
    "whenUnsatisfiable": {"type": "string", "examples": ["DoNotSchedule", "ScheduleAnyway"]},
    "labelSelector": _LABEL_SELECTOR,
    "minDomains": _I32,
    "nodeAffinityPolicy": {"type": "string"},
    "nodeTaintsPolicy": {"type": "string"},
    "matchLabelKeys": {"type": "array", "items": {"type": "string"}},
})

DEFAULT_PREEMPTION_SCHEMA = _args_schema("DefaultPreemptionArgs", {
    "minCandidateNodesPercentage": {**_I32, "default": 10, "description":
                                    "Minimum candidates to shortlist, as a percentage of nodes."},
    "minCandidateNodesAbsolute": {**_I32, "default": 100, "description":
                                  "Minimum number of candidates to shortlist."},
}, "Arguments of DefaultPreemption.")

INTER_POD_AFFINITY_SCHEMA = _args_schema("InterPodAffinityArgs", {
    "hardPodAffinityWeight": {**_I32, "default": 1, "description":
                              "Scoring weight of existing pods with a matching hard affinity."},
    "ignorePreferredTermsOfExistingPods": {"type": "boolean", "default": False, "description":
                                           "Ignore existing pods' preferred terms when scoring."},
}, "Arguments of InterPodAffinity.")

NODE_AFFINITY_SCHEMA = _args_schema("NodeAffinityArgs", {
    "addedAffinity": _NODE_AFFINITY,
}, "Arguments of NodeAffinity.")

NODE_RESOURCES_BALANCED_ALLOCATION_SCHEMA = _args_schema("NodeResourcesBalancedAllocationArgs", {
    "resources": {"type": "array", "items": RESOURCE_SPEC, "default": _DEFAULT_RESOURCES,
                  "description": "Resources to balance; weights must be 1."},
}, "Arguments of NodeResourcesBalancedAllocation.")

NODE_RESOURCES_FIT_SCHEMA = _args_schema("NodeResourcesFitArgs", {
    "ignoredResources": {"type": "array", "items": {"type": "string"},
                         "description": "Resources the filter ignores."},
    "ignoredResourceGroups": {"type": "array", "items": {"type": "string"},
                              "description": "Resource groups (prefixes) the filter ignores."},
    "scoringStrategy": {**_obj({
        "type": {"type": "string", "examples": list(SCORING_STRATEGY_TYPES)},
        "resources": {"type": "array", "items": RESOURCE_SPEC},
        "requestedToCapacityRatio": _obj({"shape": SHAPE}),
    }), "default": {"type": LEAST_ALLOCATED, "resources": _DEFAULT_RESOURCES},
        "description": "How nodes are scored."},
}, "Arguments of NodeResourcesFit.")

POD_TOPOLOGY_SPREAD_SCHEMA = _args_schema("PodTopologySpreadArgs", {
    "defaultConstraints": {"type": "array", "items": _TOPOLOGY_SPREAD_CONSTRAINT,
                           "description": "Constraints for pods that define none (List)."},
    "defaultingType": {"type": "string", "default": SYSTEM_DEFAULTING,
                       "examples": [SYSTEM_DEFAULTING, LIST_DEFAULTING],
                       "description": "System (built-in constraints) or List (defaultConstraints)."},
}, "Arguments of PodTopologySpread.")

VOLUME_BINDING_SCHEMA = _args_schema("VolumeBindingArgs", {
    "bindTimeoutSeconds": {**_I64, "default": 600, "description": "Timeout of volume binding."},
    "shape": {**SHAPE, "description": "Scoring function of storage capacity "
                                      "(feature gate StorageCapacityScoring)."},
}, "Arguments of VolumeBinding.")

DYNAMIC_RESOURCES_SCHEMA = _args_schema("DynamicResourcesArgs", {
    "filterTimeout": {**_DURATION, "default": "10s",
                      "description": "Limit on one Filter call; 0 disables the limit."},
    "bindingTimeout": {**_DURATION, "default": "10m0s",
                       "description": "How long PreBind waits for device binding conditions."},
}, "Arguments of DynamicResources.")


# ---------------------------------------------------------------------------------- defaults

def apply_defaults(schema: Any, args: Any) -> Any:
    """A copy of ``args`` with every missing property that has a ``default`` in ``schema`` set.

    Recurses into objects and array items that are present. Generic JSON Schema defaulting, used
    for plugins without an upstream defaulting function.
    """
    if not isinstance(schema, dict):
        return copy.deepcopy(args)
    if isinstance(args, dict):
        out = {}
        props = schema.get("properties")
        if not isinstance(props, dict):
            props = {}
        for key, value in args.items():
            out[key] = apply_defaults(props.get(key), value)
        for key, sub in props.items():
            if key not in out and isinstance(sub, dict) and "default" in sub:
                out[key] = apply_defaults(sub, copy.deepcopy(sub["default"]))
        return out
    if isinstance(args, list):
        return [apply_defaults(schema.get("items"), item) for item in args]
    return copy.deepcopy(args)


def _default_weights(resources: list) -> None:
    for r in resources:
        if isinstance(r, dict) and not r.get("weight"):
            r["weight"] = 1


def default_default_preemption_args(args: Args) -> Args:
    out = copy.deepcopy(args)
    out.setdefault("minCandidateNodesPercentage", 10)
    out.setdefault("minCandidateNodesAbsolute", 100)
    return out


def default_inter_pod_affinity_args(args: Args) -> Args:
    out = copy.deepcopy(args)
    out.setdefault("hardPodAffinityWeight", 1)
    out.setdefault("ignorePreferredTermsOfExistingPods", False)
    return out


def default_node_affinity_args(args: Args) -> Args:
    return copy.deepcopy(args)


def default_node_resources_balanced_allocation_args(args: Args) -> Args:
    out = copy.deepcopy(args)
    if not out.get("resources"):
        out["resources"] = copy.deepcopy(_DEFAULT_RESOURCES)
    else:
        _default_weights(out["resources"])
    return out


def default_node_resources_fit_args(args: Args) -> Args:
    out = copy.deepcopy(args)
    if out.get("scoringStrategy") is None:
        out["scoringStrategy"] = {"type": LEAST_ALLOCATED,
                                  "resources": copy.deepcopy(_DEFAULT_RESOURCES)}
    strategy = out["scoringStrategy"]
    if isinstance(strategy, dict):
        if not strategy.get("resources"):
            strategy["resources"] = copy.deepcopy(_DEFAULT_RESOURCES)
        _default_weights(_list(strategy.get("resources")))
    return out


def default_pod_topology_spread_args(args: Args) -> Args:
    """v1 defaults ``defaultingType`` to System even when ``defaultConstraints`` are given."""
    out = copy.deepcopy(args)
    if not out.get("defaultingType"):
        out["defaultingType"] = SYSTEM_DEFAULTING
    return out


def default_volume_binding_args(args: Args, features: Mapping[str, bool] | None = None) -> Args:
    out = copy.deepcopy(args)
    out.setdefault("bindTimeoutSeconds", 600)
    if not out.get("shape") and _gate(features, "StorageCapacityScoring"):
        out["shape"] = [{"utilization": 0, "score": MAX_CUSTOM_PRIORITY_SCORE},
                        {"utilization": 100, "score": 0}]
    return out


def default_dynamic_resources_args(args: Args, features: Mapping[str, bool] | None = None) -> Args:
    out = copy.deepcopy(args)
    if _gate(features, "DRASchedulerFilterTimeout"):
        out.setdefault("filterTimeout", "10s")
    if _gate(features, "DRADeviceBindingConditions"):
        out.setdefault("bindingTimeout", "10m0s")
    return out


# ---------------------------------------------------------------------------------- validation

def validate_default_preemption_args(args: Args, path: Path = ()) -> list[FieldError]:
    errs: list[FieldError] = []
    pct_path, abs_path = (*path, "minCandidateNodesPercentage"), (*path, "minCandidateNodesAbsolute")
    pct = args.get("minCandidateNodesPercentage", 0)
    absolute = args.get("minCandidateNodesAbsolute", 0)
    if pct < 0 or pct > 100:
        errs.append(FieldError(pct_path, INVALID, "not in valid range [0, 100]", pct))
    if absolute < 0:
        errs.append(FieldError(abs_path, INVALID, "not in valid range [0, inf)", absolute))
    if pct == 0 and absolute == 0:
        errs.append(FieldError(pct_path, INVALID,
                               "cannot be zero at the same time as minCandidateNodesAbsolute", pct))
        errs.append(FieldError(abs_path, INVALID,
                               "cannot be zero at the same time as minCandidateNodesPercentage",
                               absolute))
    return errs


def validate_inter_pod_affinity_args(args: Args, path: Path = ()) -> list[FieldError]:
    weight = args.get("hardPodAffinityWeight", 0)
    if weight < 0 or weight > 100:
        return [FieldError((*path, "hardPodAffinityWeight"), INVALID, "not in valid range [0, 100]",
                           weight)]
    return []


def _validate_requirement(req: dict, path: Path, op: str) -> list[FieldError]:
    """labels.NewRequirement's checks, for an operator already known to be valid."""
    errs: list[FieldError] = []
    key = req.get("key", "")
    values = _list(req.get("values"))
    key_msgs = is_qualified_name(key)
    if key_msgs:
        errs.append(FieldError((*path, "key"), INVALID, "; ".join(key_msgs), key))
    vpath = (*path, "values")
    shown = go_string_slice(req.get("values"))
    if op in ("In", "NotIn"):
        if not values:
            errs.append(FieldError(vpath, INVALID,
                                   "for 'in', 'notin' operators, values set can't be empty", shown))
    elif op in ("Exists", "DoesNotExist"):
        if values:
            errs.append(FieldError(vpath, INVALID,
                                   "values set must be empty for exists and does not exist", shown))
    elif op in ("Gt", "Lt"):
        if len(values) != 1:
            errs.append(FieldError(vpath, INVALID,
                                   "for 'Gt', 'Lt' operators, exactly one value is required", shown))
        for i, v in enumerate(values):
            ok = _GO_INT.match(str(v)) is not None and -(2 ** 63) <= int(str(v)) < 2 ** 63
            if not ok:
                errs.append(FieldError((*vpath, i), INVALID,
                                       "for 'Gt', 'Lt' operators, the value must be an integer", v))
    for i, v in enumerate(values):
        msgs = is_valid_label_value(str(v))
        if msgs:
            errs.append(FieldError((*vpath, i), INVALID, "; ".join(msgs), v))
    return errs


_GO_INT = re.compile(r"^[+-]?[0-9]+$")
_SELECTOR_OPERATORS = ["In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"]
_FIELD_SELECTOR_OPERATORS = ["In", "NotIn"]


def _validate_node_selector_term(term: dict, path: Path) -> list[FieldError]:
    errs: list[FieldError] = []
    for j, expr in enumerate(_list(term.get("matchExpressions"))):
        expr = _dict(expr)
        p = (*path, "matchExpressions", j)
        op = expr.get("operator", "")
        if op not in _SELECTOR_OPERATORS:
            errs.append(_supported((*p, "operator"), op, _SELECTOR_OPERATORS))
            continue
        errs.extend(_validate_requirement(expr, p, op))
    for j, expr in enumerate(_list(term.get("matchFields"))):
        expr = _dict(expr)
        p = (*path, "matchFields", j)
        op = expr.get("operator", "")
        if op in _FIELD_SELECTOR_OPERATORS:
            if len(_list(expr.get("values"))) != 1:
                errs.append(FieldError((*p, "values"), INVALID, "must have one element",
                                       go_string_slice(expr.get("values"))))
        else:
            errs.append(_supported((*p, "operator"), op, _FIELD_SELECTOR_OPERATORS))
    return errs


def _empty_term(term: dict) -> bool:
    return not term.get("matchExpressions") and not term.get("matchFields")


def validate_node_affinity_args(args: Args, path: Path = ()) -> list[FieldError]:
    affinity = args.get("addedAffinity")
    if not isinstance(affinity, dict):
        return []
    errs: list[FieldError] = []
    required = affinity.get("requiredDuringSchedulingIgnoredDuringExecution")
    if isinstance(required, dict):
        base = (*path, "addedAffinity", "requiredDuringSchedulingIgnoredDuringExecution",
                "nodeSelectorTerms")
        for i, term in enumerate(_list(required.get("nodeSelectorTerms"))):
            term = _dict(term)
            if not _empty_term(term):
                errs.extend(_validate_node_selector_term(term, (*base, i)))
    base = (*path, "addedAffinity", "preferredDuringSchedulingIgnoredDuringExecution")
    for i, pref in enumerate(_list(affinity.get("preferredDuringSchedulingIgnoredDuringExecution"))):
        pref = _dict(pref)
        term = _dict(pref.get("preference"))
        if not pref.get("weight") or _empty_term(term):
            continue
        # upstream reports these paths without ".preference"
        errs.extend(_validate_node_selector_term(term, (*base, i)))
    return errs


def validate_node_resources_balanced_allocation_args(args: Args, path: Path = ()
                                                     ) -> list[FieldError]:
    errs: list[FieldError] = []
    seen: set[str] = set()
    for i, res in enumerate(_list(args.get("resources"))):
        res = _dict(res)
        name = res.get("name", "")
        if name in seen:
            errs.append(FieldError((*path, "resources", i, "name"), DUPLICATE, "", name))
        else:
            seen.add(name)
        weight = res.get("weight", 0)
        if weight != 1:
            errs.append(FieldError((*path, "resources", i, "weight"), INVALID, "must be 1", weight))
    return errs


def validate_function_shape(shape: Any, path: Path) -> list[FieldError]:
    points = _list(shape)
    if not points:
        return [FieldError(path, REQUIRED, "at least one point must be specified")]
    errs: list[FieldError] = []
    points = [_dict(p) for p in points]
    for i in range(1, len(points)):
        prev, cur = points[i - 1].get("utilization", 0), points[i].get("utilization", 0)
        if prev >= cur:
            errs.append(FieldError((*path, i, "utilization"), INVALID,
                                   "values must be sorted in increasing order", cur))
            break
    for i, point in enumerate(points):
        util, score = point.get("utilization", 0), point.get("score", 0)
        if util < 0 or util > 100:
            errs.append(FieldError((*path, i, "utilization"), INVALID, "not in valid range [0, 100]",
                                   util))
        if score < 0 or score > MAX_CUSTOM_PRIORITY_SCORE:
            errs.append(FieldError((*path, i, "score"), INVALID,
                                   f"not in valid range [0, {MAX_CUSTOM_PRIORITY_SCORE}]", score))
    return errs


def _validate_resources(resources: Any, path: Path) -> list[FieldError]:
    errs = []
    for i, res in enumerate(_list(resources)):
        res = _dict(res)
        weight = res.get("weight", 0)
        if weight <= 0 or weight > 100:
            errs.append(FieldError((*path, i, "weight"), INVALID,
                                   f"resource weight of {res.get('name', '')} not in valid range "
                                   "(0, 100]", weight))
    return errs


def validate_node_resources_fit_args(args: Args, path: Path = ()) -> list[FieldError]:
    errs: list[FieldError] = []
    for i, res in enumerate(_list(args.get("ignoredResources"))):
        errs.extend(validate_label_name(str(res), (*path, "ignoredResources", i)))
    for i, group in enumerate(_list(args.get("ignoredResourceGroups"))):
        p = (*path, "ignoredResourceGroups", i)
        if "/" in str(group):
            errs.append(FieldError(p, INVALID, "resource group name can't contain '/'", group))
        errs.extend(validate_label_name(str(group), p))
    spath = (*path, "scoringStrategy")
    strategy = args.get("scoringStrategy")
    if not isinstance(strategy, dict):
        errs.append(FieldError(spath, REQUIRED, "ScoringStrategy field is required"))
        return errs
    kind = strategy.get("type", "")
    if kind not in SCORING_STRATEGY_TYPES:
        errs.append(_supported((*spath, "type"), kind, sorted(SCORING_STRATEGY_TYPES)))
    errs.extend(_validate_resources(strategy.get("resources"), (*spath, "resources")))
    rtcr = strategy.get("requestedToCapacityRatio")
    if kind == REQUESTED_TO_CAPACITY_RATIO:
        if not isinstance(rtcr, dict):
            errs.append(FieldError((*spath, "requestedToCapacityRatio"), REQUIRED,
                                   "must be specified when type is RequestedToCapacityRatio"))
        else:
            errs.extend(validate_function_shape(rtcr.get("shape"),
                                                (*spath, "requestedToCapacityRatio", "shape")))
    elif rtcr is not None:
        errs.append(FieldError((*spath, "requestedToCapacityRatio"), FORBIDDEN,
                               "must be nil when type is not RequestedToCapacityRatio"))
    return errs


def validate_pod_topology_spread_args(args: Args, path: Path = ()) -> list[FieldError]:
    errs: list[FieldError] = []
    constraints = [_dict(c) for c in _list(args.get("defaultConstraints"))]
    dtype = args.get("defaultingType", "")
    if dtype not in (SYSTEM_DEFAULTING, LIST_DEFAULTING):
        errs.append(_supported((*path, "defaultingType"), dtype,
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
            errs.append(_supported((*p, "whenUnsatisfiable"), action,
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


def validate_volume_binding_args(args: Args, path: Path = (),
                                 features: Mapping[str, bool] | None = None) -> list[FieldError]:
    errs: list[FieldError] = []
    timeout = args.get("bindTimeoutSeconds", 0)
    if timeout < 0:
        errs.append(FieldError((*path, "bindTimeoutSeconds"), INVALID,
                               "invalid BindTimeoutSeconds, should not be a negative value", timeout))
    if _gate(features, "StorageCapacityScoring"):
        errs.extend(validate_function_shape(args.get("shape"), (*path, "shape")))
    elif args.get("shape") is not None:
        errs.append(FieldError((*path, "shape"), INVALID,
                               "unexpected field `shape`, remove it or turn on the feature gate "
                               "StorageCapacityScoring"))
    return errs


def _duration(value: Any) -> int | None:
    try:
        return parse_duration(value) if isinstance(value, str) else None
    except ValueError:
        return None


def validate_dynamic_resources_args(args: Args, path: Path = (),
                                    features: Mapping[str, bool] | None = None
                                    ) -> list[FieldError]:
    errs: list[FieldError] = []
    for key in ("filterTimeout", "bindingTimeout"):
        value = args.get(key)
        if value is not None and _duration(value) is None:
            errs.append(FieldError((*path, key), INVALID, DURATION_HINT, value))
    ft, bt = _duration(args.get("filterTimeout")), _duration(args.get("bindingTimeout"))
    if _gate(features, "DRASchedulerFilterTimeout"):
        if ft is not None and ft < 0:
            errs.append(FieldError((*path, "filterTimeout"), INVALID, "must be zero or positive",
                                   GoValue(format_duration(ft))))
    elif args.get("filterTimeout") is not None:
        errs.append(FieldError((*path, "filterTimeout"), FORBIDDEN,
                               "DRASchedulingFilterTimeout feature gate is disabled"))
    if _gate(features, "DRADeviceBindingConditions") and _gate(features,
                                                                "DRAResourceClaimDeviceStatus"):
        if bt is not None and bt < 1_000_000_000:
            errs.append(FieldError((*path, "bindingTimeout"), INVALID, "must be at least 1 second",
                                   GoValue(format_duration(bt))))
    elif args.get("bindingTimeout") is not None:
        errs.append(FieldError((*path, "bindingTimeout"), FORBIDDEN,
                               "DRADeviceBindingConditions or DRAResourceClaimDeviceStatus feature "
                               "gate is disabled"))
    return errs


# ---------------------------------------------------------------------------------- registry

@attrs.frozen
class ArgsSpec:
    """Schema, defaulting and validation of one in-tree plugin's args (kind ``<name>Args``).

    ``gated``: ``validate`` and ``defaults`` take a ``features`` keyword (rules that depend on
    a feature gate); :meth:`check` and :meth:`default` pass the caller's gates to those only.
    """

    schema: dict
    validate: Callable[..., list[FieldError]]
    defaults: Callable[..., Args]
    gated: bool = False

    def check(self, args: Args, features: Mapping[str, bool] | None = None) -> list[FieldError]:
        return self.validate(args, features=features) if self.gated else self.validate(args)

    def default(self, args: Args, features: Mapping[str, bool] | None = None) -> Args:
        return self.defaults(args, features=features) if self.gated else self.defaults(args)


IN_TREE_ARGS: dict[str, ArgsSpec] = {
    "DefaultPreemption": ArgsSpec(DEFAULT_PREEMPTION_SCHEMA, validate_default_preemption_args,
                                  default_default_preemption_args),
    "DynamicResources": ArgsSpec(DYNAMIC_RESOURCES_SCHEMA, validate_dynamic_resources_args,
                                 default_dynamic_resources_args, gated=True),
    "InterPodAffinity": ArgsSpec(INTER_POD_AFFINITY_SCHEMA, validate_inter_pod_affinity_args,
                                 default_inter_pod_affinity_args),
    "NodeAffinity": ArgsSpec(NODE_AFFINITY_SCHEMA, validate_node_affinity_args,
                             default_node_affinity_args),
    "NodeResourcesBalancedAllocation": ArgsSpec(
        NODE_RESOURCES_BALANCED_ALLOCATION_SCHEMA, validate_node_resources_balanced_allocation_args,
        default_node_resources_balanced_allocation_args),
    "NodeResourcesFit": ArgsSpec(NODE_RESOURCES_FIT_SCHEMA, validate_node_resources_fit_args,
                                 default_node_resources_fit_args),
    "PodTopologySpread": ArgsSpec(POD_TOPOLOGY_SPREAD_SCHEMA, validate_pod_topology_spread_args,
                                  default_pod_topology_spread_args),
    "VolumeBinding": ArgsSpec(VOLUME_BINDING_SCHEMA, validate_volume_binding_args,
                              default_volume_binding_args, gated=True),
}


def in_tree_spec(name: str, schema: dict | None) -> ArgsSpec | None:
    """The in-tree args spec of ``name`` when the installed plugin uses the in-tree schema."""
    spec = IN_TREE_ARGS.get(name)
    if spec is not None and (schema is None or schema is spec.schema or schema == spec.schema):
        return spec
    return None


def default_args(name: str, schema: dict | None, args: Args | None,
                 features: Mapping[str, bool] | None = None) -> Args:
    """Fully defaulted args for plugin ``name``: upstream's defaulting for in-tree args kinds
    (when the plugin uses the in-tree schema, with the gates in ``features``), JSON Schema
    ``default``s otherwise."""
    args = {} if args is None else args
    spec = in_tree_spec(name, schema)
    if spec is not None:
        return spec.default(args, features)
    if schema is None:
        return copy.deepcopy(args)
    return apply_defaults(schema, args)
