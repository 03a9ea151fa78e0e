"""InterPodAffinity's args (upstream InterPodAffinityArgs): schema, v1 defaults, validation."""

from __future__ import annotations

import copy

from kschedfw.api.field import INVALID, FieldError
from kschedfw.fwk.args import ArgsSpec
from kschedfw.plugins.argschema import I32, Args, Path, args_schema


INTER_POD_AFFINITY_SCHEMA = args_schema("InterPodAffinityArgs", {
    "hardPodAffinityWeight": {**I32, "default": 1, "description":
                              "Scoring weight of existing pods with a matching hard affinity."},
    "ignorePreferredTermsOfExistingPods": {"type": "boolean", "default": False, "description":
                                           "Ignore existing pods' preferred terms when scoring."},
}, "Arguments of InterPodAffinity.")


def default_inter_pod_affinity_args(args: Args) -> Args:
    out = copy.deepcopy(args)
    out.setdefault("hardPodAffinityWeight", 1)
    out.setdefault("ignorePreferredTermsOfExistingPods", False)
    return out


def validate_inter_pod_affinity_args(args: Args, path: Path = ()) -> list[FieldError]:
    weight = args.get("hardPodAffinityWeight", 0)
    if weight < 0 or weight > 100:
        return [FieldError((*path, "hardPodAffinityWeight"), INVALID, "not in valid range [0, 100]",
                           weight)]
    return []


ARGS = ArgsSpec(INTER_POD_AFFINITY_SCHEMA, validate_inter_pod_affinity_args, default_inter_pod_affinity_args)
