"""VolumeBinding's args (upstream VolumeBindingArgs): schema, v1 defaults and validation, both
depending on the StorageCapacityScoring gate."""

from __future__ import annotations

import copy
from typing import Mapping

from kschedfw.api.field import INVALID, FieldError
from kschedfw.fwk.args import ArgsSpec
from kschedfw.fwk.features import enabled
from kschedfw.plugins.argschema import (I64, MAX_CUSTOM_PRIORITY_SCORE, SHAPE, Args, Path, args_schema,
                                        validate_function_shape)


VOLUME_BINDING_SCHEMA = args_schema("VolumeBindingArgs", {
    "bindTimeoutSeconds": {**I64, "default": 600, "description": "Timeout of volume binding."},
    "shape": {**SHAPE, "description": "Scoring function of storage capacity "
                                      "(feature gate StorageCapacityScoring)."},
}, "Arguments of VolumeBinding.")


def default_volume_binding_args(args: Args, features: Mapping[str, bool] | None = None) -> Args:
    out = copy.deepcopy(args)
    out.setdefault("bindTimeoutSeconds", 600)
    if not out.get("shape") and enabled(features, "StorageCapacityScoring"):
        out["shape"] = [{"utilization": 0, "score": MAX_CUSTOM_PRIORITY_SCORE},
                        {"utilization": 100, "score": 0}]
    return out


def validate_volume_binding_args(args: Args, path: Path = (),
                                 features: Mapping[str, bool] | None = None) -> list[FieldError]:
    errs: list[FieldError] = []
    timeout = args.get("bindTimeoutSeconds", 0)
    if timeout < 0:
        errs.append(FieldError((*path, "bindTimeoutSeconds"), INVALID,
                               "invalid BindTimeoutSeconds, should not be a negative value", timeout))
    if enabled(features, "StorageCapacityScoring"):
        errs.extend(validate_function_shape(args.get("shape"), (*path, "shape")))
    elif args.get("shape") is not None:
        errs.append(FieldError((*path, "shape"), INVALID,
                               "unexpected field `shape`, remove it or turn on the feature gate "
                               "StorageCapacityScoring"))
    return errs


ARGS = ArgsSpec(VOLUME_BINDING_SCHEMA, validate_volume_binding_args, default_volume_binding_args, gated=True)
