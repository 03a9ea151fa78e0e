"""The GPU plugins' args: JSON Schemas (with defaults) and the checks a schema cannot express,
as field errors with clear messages."""

from __future__ import annotations

import math
from typing import Any, Mapping

from kschedfw.api.field import INVALID, REQUIRED, UNSUPPORTED, FieldError

GPU_SEL_METHODS = ("best", "worst", "random", "FGDScore")
DIM_EXT_METHODS = ("merge", "share", "divide")
NORM_METHODS = ("node", "pod", "max")
#: how far the typical pods' probabilities may sum from 1
PROBABILITY_TOLERANCE = 1e-3

TYPICAL_POD_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "cpuMilli": {"type": "integer", "minimum": 0},
        "gpuMilli": {"type": "integer", "minimum": 0, "maximum": 1000},
        "gpuNumber": {"type": "integer", "minimum": 0},
        "gpuType": {"type": "string"},
        "probability": {"type": "number", "minimum": 0, "maximum": 1},
    },
    "required": ["cpuMilli", "gpuMilli", "gpuNumber", "probability"],
    "additionalProperties": False,
}

TYPICAL_PODS: dict[str, Any] = {
    "type": "array", "items": TYPICAL_POD_SCHEMA, "default": [],
    "description": "The target workload: pod shapes with their probabilities (summing to 1), "
                   "e.g. kschedfw_gpushare.typical.typical_pods(trace pods).",
}
SEED: dict[str, Any] = {"type": "integer", "default": 0, "description": "Seed of the plugin's random choices."}
DIM_EXT_METHOD: dict[str, Any] = {"type": "string", "default": "merge",
                                  "description": "How GPU devices become vector dimensions: merge, share or divide."}
NORM_METHOD: dict[str, Any] = {"type": "string", "default": "max",
                               "description": "How vectors are normalised: max (largest node), node or pod."}


def schema(**properties: dict[str, Any]) -> dict[str, Any]:
    """An args schema with these properties; ``dimExtMethod`` and ``normMethod`` are always
    accepted, as the simulator hands them to every GPU plugin."""
    return {"type": "object",
            "properties": {"dimExtMethod": DIM_EXT_METHOD, "normMethod": NORM_METHOD, **properties},
            "additionalProperties": False}


def check_choice(args: Mapping[str, Any], field: str, choices: tuple[str, ...]) -> list[FieldError]:
    value = args.get(field)
    if value is None or value in choices:
        return []
    return [FieldError((field,), UNSUPPORTED, "supported values: " + ", ".join(f'"{c}"' for c in choices), value)]


def check_methods(args: Mapping[str, Any]) -> list[FieldError]:
    return check_choice(args, "dimExtMethod", DIM_EXT_METHODS) + check_choice(args, "normMethod", NORM_METHODS)


def check_typical_pods(args: Mapping[str, Any], *, required: bool) -> list[FieldError]:
    """The typical pods are there when needed and their probabilities sum to 1."""
    typical = args.get("typicalPods") or []
    if not typical:
        if required:
            return [FieldError(("typicalPods",), REQUIRED, "FGD scores fragmentation against the typical pods of the "
                               "workload: give them (kschedfw_gpushare.typical.typical_pods computes them)")]
        return []
    total = math.fsum(float(t.get("probability", 0)) for t in typical if isinstance(t, Mapping))
    if abs(total - 1.0) > PROBABILITY_TOLERANCE:
        return [FieldError(("typicalPods",), INVALID, f"probabilities must sum to 1, they sum to {total:g}",
                           f"{len(typical)} pods")]
    return []


def raise_invalid(errors: list[FieldError]) -> None:
    """A plugin built with args its ``validate_args`` refuses (a caller that skipped validation)."""
    if errors:
        raise ValueError("; ".join(str(e) for e in errors))
