"""A plugin's args: how they are defaulted and checked before the plugin is built.

The simple form, for most plugins, is two optional class attributes: ``args_schema`` (JSON Schema,
whose ``default``s fill missing fields) and ``validate_args`` (``args -> [FieldError]``, paths
relative to ``args``). A plugin whose defaults are not a schema's (upstream's ``v1/defaults.go``
functions) or whose rules depend on a feature gate declares an :class:`ArgsSpec` as ``args_spec``
instead, with ``args_schema`` and ``validate_args`` taken from it; the in-tree plugins do. The
configuration code reads either form through the plugin registry, never a plugin module.
"""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Any, Callable, Mapping

import attrs

if TYPE_CHECKING:
    from kschedfw.api.field import FieldError

__all__ = ["Args", "ArgsSpec", "apply_defaults", "default_args"]

Args = dict[str, Any]


@attrs.frozen
class ArgsSpec:
    """Schema, defaulting and validation of one plugin's args (kind ``<name>Args``).

    ``gated``: ``validate`` and ``defaults`` take a ``features`` keyword (rules that depend on a
    feature gate, the gates a Handle carries); :meth:`check` and :meth:`default` pass the caller's
    gates to those only, so a plugin without gated rules keeps one-argument functions.
    """

    schema: dict[str, Any]
    validate: Callable[..., list[FieldError]]
    defaults: Callable[..., Args]
    gated: bool = False

    def check(self, args: Args, features: Mapping[str, bool] | None = None) -> list[FieldError]:
        return self.validate(args, features=features) if self.gated else self.validate(args)

    def default(self, args: Args, features: Mapping[str, bool] | None = None) -> Args:
        return self.defaults(args, features=features) if self.gated else self.defaults(args)


def apply_defaults(schema: Any, args: Any) -> Any:
    """A copy of ``args`` with every missing property that has a ``default`` in ``schema`` set.

    Recurses into objects and array items that are present. Generic JSON Schema defaulting, for
    plugins without an :class:`ArgsSpec`.
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


def default_args(spec: ArgsSpec | None, schema: dict[str, Any] | None, args: Args | None,
                 features: Mapping[str, bool] | None = None) -> Args:
    """Fully defaulted args: the plugin's own defaulting when it declares an :class:`ArgsSpec`
    whose schema is the one in use (with the gates in ``features``), the schema's ``default``s
    otherwise, ``args`` as given without a schema."""
    args = {} if args is None else args
    if spec is not None and (schema is None or schema is spec.schema or schema == spec.schema):
        return spec.default(args, features)
    if schema is None:
        return copy.deepcopy(args)
    result: Args = apply_defaults(schema, args)
    return result
