"""What the in-tree plugins' args modules share: schema builders in upstream's integer ranges, the
piecewise scoring function shape (NodeResourcesFit's RequestedToCapacityRatio, VolumeBinding), the
default resources, and the small coercions their validators use on decoded args."""

from __future__ import annotations

from typing import Any

from kschedfw.api.field import INVALID, REQUIRED, UNSUPPORTED, FieldError

Args = dict[str, Any]
Path = tuple[Any, ...]

MAX_CUSTOM_PRIORITY_SCORE = 10
I32 = {"type": "integer", "minimum": -(2 ** 31), "maximum": 2 ** 31 - 1}
I64 = {"type": "integer", "minimum": -(2 ** 63), "maximum": 2 ** 63 - 1}
DEFAULT_RESOURCES = [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}]


def supported(path: Path, value: Any, allowed: list[str]) -> FieldError:
    return FieldError(path, UNSUPPORTED, "supported values: " + ", ".join(f'"{v}"' for v in allowed),
                      value)


def as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def as_dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def obj_schema(props: dict[str, Any], description: str = "", **extra: Any) -> dict[str, Any]:
    out = {"type": "object", "properties": props, "additionalProperties": False, **extra}
    if description:
        out["description"] = description
    return out


def args_schema(kind: str, props: dict[str, Any], description: str) -> dict[str, Any]:
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "title": kind,
            **obj_schema(props, description)}


RESOURCE_SPEC = obj_schema({"name": {"type": "string", "description": "Resource name."},
                            "weight": {**I64, "description": "Resource weight."}},
                           "A resource and its weight.")
SHAPE_POINT = obj_schema({"utilization": {**I32, "description": "Utilization (x axis), 0-100."},
                          "score": {**I32, "description": "Score (y axis), 0-10."}},
                         "A point of a piecewise linear scoring function.")
SHAPE = {"type": "array", "items": SHAPE_POINT}


def default_weights(resources: list[Any]) -> None:
    for r in resources:
        if isinstance(r, dict) and not r.get("weight"):
            r["weight"] = 1


def validate_function_shape(shape: Any, path: Path) -> list[FieldError]:
    points = as_list(shape)
    if not points:
        return [FieldError(path, REQUIRED, "at least one point must be specified")]
    errs: list[FieldError] = []
    points = [as_dict(p) for p in points]
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
