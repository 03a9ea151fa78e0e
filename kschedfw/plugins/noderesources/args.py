"""The args of NodeResourcesFit and NodeResourcesBalancedAllocation (upstream NodeResourcesFitArgs,
NodeResourcesBalancedAllocationArgs): schemas, v1 defaults, validation."""

from __future__ import annotations

import copy
from typing import Any

from kschedfw.api.field import DUPLICATE, FORBIDDEN, INVALID, REQUIRED, FieldError
from kschedfw.api.validation import validate_label_name
from kschedfw.fwk.args import ArgsSpec
from kschedfw.plugins.argschema import (DEFAULT_RESOURCES, RESOURCE_SPEC, SHAPE, Args, Path, args_schema, as_dict,
                                        as_list, default_weights, obj_schema, supported, validate_function_shape)


LEAST_ALLOCATED = "LeastAllocated"
MOST_ALLOCATED = "MostAllocated"
REQUESTED_TO_CAPACITY_RATIO = "RequestedToCapacityRatio"
SCORING_STRATEGY_TYPES = (LEAST_ALLOCATED, MOST_ALLOCATED, REQUESTED_TO_CAPACITY_RATIO)

NODE_RESOURCES_BALANCED_ALLOCATION_SCHEMA = args_schema("NodeResourcesBalancedAllocationArgs", {
    "resources": {"type": "array", "items": RESOURCE_SPEC, "default": DEFAULT_RESOURCES,
                  "description": "Resources to balance; weights must be 1."},
}, "Arguments of NodeResourcesBalancedAllocation.")

NODE_RESOURCES_FIT_SCHEMA = args_schema("NodeResourcesFitArgs", {
    "ignoredResources": {"type": "array", "items": {"type": "string"},
                         "description": "Resources the filter ignores."},
    "ignoredResourceGroups": {"type": "array", "items": {"type": "string"},
                              "description": "Resource groups (prefixes) the filter ignores."},
    "scoringStrategy": {**obj_schema({
        "type": {"type": "string", "examples": list(SCORING_STRATEGY_TYPES)},
        "resources": {"type": "array", "items": RESOURCE_SPEC},
        "requestedToCapacityRatio": obj_schema({"shape": SHAPE}),
    }), "default": {"type": LEAST_ALLOCATED, "resources": DEFAULT_RESOURCES},
        "description": "How nodes are scored."},
}, "Arguments of NodeResourcesFit.")


def default_node_resources_balanced_allocation_args(args: Args) -> Args:
    out = copy.deepcopy(args)
    if not out.get("resources"):
        out["resources"] = copy.deepcopy(DEFAULT_RESOURCES)
    else:
        default_weights(out["resources"])
    return out


def default_node_resources_fit_args(args: Args) -> Args:
    out = copy.deepcopy(args)
    if out.get("scoringStrategy") is None:
        out["scoringStrategy"] = {"type": LEAST_ALLOCATED,
                                  "resources": copy.deepcopy(DEFAULT_RESOURCES)}
    strategy = out["scoringStrategy"]
    if isinstance(strategy, dict):
        if not strategy.get("resources"):
            strategy["resources"] = copy.deepcopy(DEFAULT_RESOURCES)
        default_weights(as_list(strategy.get("resources")))
    return out


def validate_node_resources_balanced_allocation_args(args: Args, path: Path = ()
                                                     ) -> list[FieldError]:
    errs: list[FieldError] = []
    seen: set[str] = set()
    for i, res in enumerate(as_list(args.get("resources"))):
        res = as_dict(res)
        name = res.get("name", "")
        if name in seen:
            errs.append(FieldError((*path, "resources", i, "name"), DUPLICATE, "", name))
        else:
            seen.add(name)
        weight = res.get("weight", 0)
        if weight != 1:
            errs.append(FieldError((*path, "resources", i, "weight"), INVALID, "must be 1", weight))
    return errs


def _validate_resources(resources: Any, path: Path) -> list[FieldError]:
    errs = []
    for i, res in enumerate(as_list(resources)):
        res = as_dict(res)
        weight = res.get("weight", 0)
        if weight <= 0 or weight > 100:
            errs.append(FieldError((*path, i, "weight"), INVALID,
                                   f"resource weight of {res.get('name', '')} not in valid range "
                                   "(0, 100]", weight))
    return errs


def validate_node_resources_fit_args(args: Args, path: Path = ()) -> list[FieldError]:
    errs: list[FieldError] = []
    for i, res in enumerate(as_list(args.get("ignoredResources"))):
        errs.extend(validate_label_name(str(res), (*path, "ignoredResources", i)))
    for i, group in enumerate(as_list(args.get("ignoredResourceGroups"))):
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
        errs.append(supported((*spath, "type"), kind, sorted(SCORING_STRATEGY_TYPES)))
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


FIT_ARGS = ArgsSpec(NODE_RESOURCES_FIT_SCHEMA, validate_node_resources_fit_args, default_node_resources_fit_args)
BALANCED_ALLOCATION_ARGS = ArgsSpec(NODE_RESOURCES_BALANCED_ALLOCATION_SCHEMA,
                                    validate_node_resources_balanced_allocation_args,
                                    default_node_resources_balanced_allocation_args)
