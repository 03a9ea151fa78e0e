"""DefaultPreemption's args (upstream DefaultPreemptionArgs): schema, v1 defaults, validation."""

from __future__ import annotations

import copy

from kschedfw.api.field import INVALID, FieldError
from kschedfw.fwk.args import ArgsSpec
from kschedfw.plugins.argschema import I32, Args, Path, args_schema


DEFAULT_PREEMPTION_SCHEMA = args_schema("DefaultPreemptionArgs", {
    "minCandidateNodesPercentage": {**I32, "default": 10, "description":
                                    "Minimum candidates to shortlist, as a percentage of nodes."},
    "minCandidateNodesAbsolute": {**I32, "default": 100, "description":
                                  "Minimum number of candidates to shortlist."},
}, "Arguments of DefaultPreemption.")


def default_default_preemption_args(args: Args) -> Args:
    out = copy.deepcopy(args)
    out.setdefault("minCandidateNodesPercentage", 10)
    out.setdefault("minCandidateNodesAbsolute", 100)
    return out


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


ARGS = ArgsSpec(DEFAULT_PREEMPTION_SCHEMA, validate_default_preemption_args, default_default_preemption_args)
