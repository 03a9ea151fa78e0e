"""DynamicResources' args (upstream DynamicResourcesArgs): schema, v1 defaults and validation, which
depend on the DRA feature gates."""

from __future__ import annotations

import copy
from typing import Any, Mapping

from kschedfw.api.field import FORBIDDEN, INVALID, FieldError
from kschedfw.api.validation import DURATION_HINT, DURATION_PATTERN, GoValue, format_duration, parse_duration
from kschedfw.fwk.args import ArgsSpec
from kschedfw.fwk.features import enabled
from kschedfw.plugins.argschema import Args, Path, args_schema


DURATION = {"type": "string", "pattern": DURATION_PATTERN, "x-pattern-message": DURATION_HINT}

DYNAMIC_RESOURCES_SCHEMA = args_schema("DynamicResourcesArgs", {
    "filterTimeout": {**DURATION, "default": "10s",
                      "description": "Limit on one Filter call; 0 disables the limit."},
    "bindingTimeout": {**DURATION, "default": "10m0s",
                       "description": "How long PreBind waits for device binding conditions."},
}, "Arguments of DynamicResources.")


def default_dynamic_resources_args(args: Args, features: Mapping[str, bool] | None = None) -> Args:
    out = copy.deepcopy(args)
    if enabled(features, "DRASchedulerFilterTimeout"):
        out.setdefault("filterTimeout", "10s")
    if enabled(features, "DRADeviceBindingConditions"):
        out.setdefault("bindingTimeout", "10m0s")
    return out


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
    if enabled(features, "DRASchedulerFilterTimeout"):
        if ft is not None and ft < 0:
            errs.append(FieldError((*path, "filterTimeout"), INVALID, "must be zero or positive",
                                   GoValue(format_duration(ft))))
    elif args.get("filterTimeout") is not None:
        errs.append(FieldError((*path, "filterTimeout"), FORBIDDEN,
                               "DRASchedulingFilterTimeout feature gate is disabled"))
    if enabled(features, "DRADeviceBindingConditions") and enabled(features,
                                                                   "DRAResourceClaimDeviceStatus"):
        if bt is not None and bt < 1_000_000_000:
            errs.append(FieldError((*path, "bindingTimeout"), INVALID, "must be at least 1 second",
                                   GoValue(format_duration(bt))))
    elif args.get("bindingTimeout") is not None:
        errs.append(FieldError((*path, "bindingTimeout"), FORBIDDEN,
                               "DRADeviceBindingConditions or DRAResourceClaimDeviceStatus feature "
                               "gate is disabled"))
    return errs


ARGS = ArgsSpec(DYNAMIC_RESOURCES_SCHEMA, validate_dynamic_resources_args, default_dynamic_resources_args, gated=True)
