"""NodeAffinity's args (upstream NodeAffinityArgs): schema, v1 defaults, validation of ``addedAffinity``."""

from __future__ import annotations

import copy
import re
from typing import Any

from kschedfw.api.field import INVALID, FieldError
from kschedfw.api.validation import go_string_slice, is_qualified_name, is_valid_label_value
from kschedfw.fwk.args import ArgsSpec
from kschedfw.plugins.argschema import I32, Args, Path, args_schema, as_dict, as_list, obj_schema, supported


_SELECTOR_REQUIREMENT = obj_schema({
    "key": {"type": "string"},
    "operator": {"type": "string", "examples": ["In", "NotIn", "Exists", "DoesNotExist", "Gt",
                                                "Lt"]},
    "values": {"type": "array", "items": {"type": "string"}},
})
_NODE_SELECTOR_TERM = obj_schema({
    "matchExpressions": {"type": "array", "items": _SELECTOR_REQUIREMENT},
    "matchFields": {"type": "array", "items": _SELECTOR_REQUIREMENT},
})
_NODE_AFFINITY = obj_schema({
    "requiredDuringSchedulingIgnoredDuringExecution": obj_schema({
        "nodeSelectorTerms": {"type": "array", "items": _NODE_SELECTOR_TERM}}),
    "preferredDuringSchedulingIgnoredDuringExecution": {"type": "array", "items": obj_schema({
        "weight": I32, "preference": _NODE_SELECTOR_TERM})},
}, "Node affinity added to every pod.")

NODE_AFFINITY_SCHEMA = args_schema("NodeAffinityArgs", {
    "addedAffinity": _NODE_AFFINITY,
}, "Arguments of NodeAffinity.")


def default_node_affinity_args(args: Args) -> Args:
    return copy.deepcopy(args)


def _validate_requirement(req: dict[str, Any], path: Path, op: str) -> list[FieldError]:
    """labels.NewRequirement's checks, for an operator already known to be valid."""
    errs: list[FieldError] = []
    key = req.get("key", "")
    values = as_list(req.get("values"))
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


def _validate_node_selector_term(term: dict[str, Any], path: Path) -> list[FieldError]:
    errs: list[FieldError] = []
    for j, expr in enumerate(as_list(term.get("matchExpressions"))):
        expr = as_dict(expr)
        p = (*path, "matchExpressions", j)
        op = expr.get("operator", "")
        if op not in _SELECTOR_OPERATORS:
            errs.append(supported((*p, "operator"), op, _SELECTOR_OPERATORS))
            continue
        errs.extend(_validate_requirement(expr, p, op))
    for j, expr in enumerate(as_list(term.get("matchFields"))):
        expr = as_dict(expr)
        p = (*path, "matchFields", j)
        op = expr.get("operator", "")
        if op in _FIELD_SELECTOR_OPERATORS:
            if len(as_list(expr.get("values"))) != 1:
                errs.append(FieldError((*p, "values"), INVALID, "must have one element",
                                       go_string_slice(expr.get("values"))))
        else:
            errs.append(supported((*p, "operator"), op, _FIELD_SELECTOR_OPERATORS))
    return errs


def _empty_term(term: dict[str, Any]) -> bool:
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
        for i, term in enumerate(as_list(required.get("nodeSelectorTerms"))):
            term = as_dict(term)
            if not _empty_term(term):
                errs.extend(_validate_node_selector_term(term, (*base, i)))
    base = (*path, "addedAffinity", "preferredDuringSchedulingIgnoredDuringExecution")
    for i, pref in enumerate(as_list(affinity.get("preferredDuringSchedulingIgnoredDuringExecution"))):
        pref = as_dict(pref)
        term = as_dict(pref.get("preference"))
        if not pref.get("weight") or _empty_term(term):
            continue
        # upstream reports these paths without ".preference"
        errs.extend(_validate_node_selector_term(term, (*base, i)))
    return errs


ARGS = ArgsSpec(NODE_AFFINITY_SCHEMA, validate_node_affinity_args, default_node_affinity_args)
