"""JSON Schema checking that reports in upstream's field-error vocabulary.

Most schemas here (the config itself, in-tree plugin args) use a small subset of JSON Schema;
:func:`check` validates that subset directly, which keeps ``kschedfw validate`` fast. A schema
using anything else (``$ref``, ``oneOf``, ``if``/``then``, ...) is handed to ``jsonschema``'s
Draft 2020-12 validator, imported only then. Either way the result is a list of :class:`Issue`:
a :class:`~kschedfw.api.field.FieldError` plus which YAML node it should point at.

Integers follow Go's decoding rather than JSON Schema's: ``3.0`` is not an integer and booleans
are never numbers.
"""

from __future__ import annotations

import math
import re
from typing import Any, Iterator

import attrs

from kschedfw.api.field import (DUPLICATE, FORBIDDEN, INVALID, MISSING, REQUIRED, UNSUPPORTED,
                                FieldError, FieldPath)

#: Keywords :func:`check` understands; anything else sends the schema to ``jsonschema``.
_SUPPORTED = frozenset({
    "type", "properties", "additionalProperties", "patternProperties", "required", "items",
    "enum", "const", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "minLength",
    "maxLength", "pattern", "minItems", "maxItems", "uniqueItems", "multipleOf",
    # annotations
    "default", "description", "title", "examples", "$comment", "$schema", "$id", "format",
    "deprecated", "readOnly", "writeOnly",
})


@attrs.frozen
class Issue:
    """A schema violation: ``anchor`` is ``value``, ``key`` (unknown field) or ``parent`` (missing)."""

    error: FieldError
    anchor: str = "value"
    #: for unknown fields: the allowed property names, to suggest the closest one
    allowed: tuple[str, ...] = ()


def json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def _is_type(value: Any, name: str) -> bool:
    if name == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if name == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if name == "string":
        return isinstance(value, str)
    if name == "boolean":
        return isinstance(value, bool)
    if name == "object":
        return isinstance(value, dict)
    if name == "array":
        return isinstance(value, list)
    if name == "null":
        return value is None
    return True


def _scalar(value: Any) -> Any:
    """The value to print after ``Invalid value:``; collections are not printed."""
    if isinstance(value, (dict, list)):
        return MISSING
    return value


def is_simple(schema: Any) -> bool:
    """True when :func:`check` covers every keyword used anywhere in ``schema``."""
    if isinstance(schema, bool):
        return True
    if not isinstance(schema, dict):
        return False
    for key, sub in schema.items():
        if key.startswith("x-"):
            continue
        if key not in _SUPPORTED:
            return False
        if key in ("properties", "patternProperties"):
            if not isinstance(sub, dict) or not all(is_simple(s) for s in sub.values()):
                return False
        elif key in ("items", "additionalProperties"):
            if not is_simple(sub):
                return False
    return True


_SIMPLE: dict[int, tuple[Any, bool]] = {}


def _simple_cached(schema: Any) -> bool:
    hit = _SIMPLE.get(id(schema))
    if hit is not None and hit[0] is schema:
        return hit[1]
    result = is_simple(schema)
    if len(_SIMPLE) > 256:
        _SIMPLE.clear()
    _SIMPLE[id(schema)] = (schema, result)  # the reference keeps the id from being reused
    return result


def check(schema: Any, instance: Any, path: FieldPath = ()) -> list[Issue]:
    """Every violation of ``schema`` by ``instance``, paths prefixed by ``path``."""
    if _simple_cached(schema):
        return list(_check(schema, instance, path))
    return _check_with_jsonschema(schema, instance, path)


def _check(schema: Any, value: Any, path: FieldPath) -> Iterator[Issue]:
    if schema is True or schema == {}:
        return
    if schema is False:
        yield Issue(FieldError(path, FORBIDDEN, "no value is allowed here"))
        return
    types = schema.get("type")
    if types is not None:
        names = [types] if isinstance(types, str) else list(types)
        if not any(_is_type(value, n) for n in names):
            yield Issue(FieldError(path, INVALID, f"expected {' or '.join(names)}, got "
                                   f"{json_type(value)}", _scalar(value)))
            return
    if "enum" in schema and value not in schema["enum"]:
        yield Issue(_not_supported(path, value, schema["enum"]))
        return
    if "const" in schema and value != schema["const"]:
        yield Issue(_not_supported(path, value, [schema["const"]]))
        return
    if isinstance(value, dict):
        yield from _check_object(schema, value, path)
    elif isinstance(value, list):
        yield from _check_array(schema, value, path)
    elif isinstance(value, str):
        yield from _check_string(schema, value, path)
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        yield from _check_number(schema, value, path)


def _not_supported(path: FieldPath, value: Any, allowed: list[Any]) -> FieldError:
    shown = ", ".join(_quote(v) for v in allowed)
    return FieldError(path, UNSUPPORTED, f"supported values: {shown}", _scalar(value))


def _quote(value: Any) -> str:
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, bool):
        return "true" if value else "false"
    return "null" if value is None else str(value)


def _check_object(schema: dict[str, Any], value: dict[str, Any], path: FieldPath) -> Iterator[Issue]:
    props = schema.get("properties", {})
    for name in schema.get("required", ()):
        if name not in value:
            yield Issue(FieldError((*path, name), REQUIRED), anchor="parent")
    patterns = schema.get("patternProperties", {})
    additional = schema.get("additionalProperties", True)
    for key, sub in value.items():
        child = (*path, key)
        if key in props:
            yield from _check(props[key], sub, child)
            continue
        matched = False
        for pattern, psub in patterns.items():
            if re.search(pattern, key):
                matched = True
                yield from _check(psub, sub, child)
        if matched:
            continue
        if additional is False:
            yield Issue(FieldError(child, FORBIDDEN, f'unknown field "{key}"'), anchor="key",
                        allowed=tuple(props))
        elif isinstance(additional, dict):
            yield from _check(additional, sub, child)


def _check_array(schema: dict[str, Any], value: list[Any], path: FieldPath) -> Iterator[Issue]:
    if "minItems" in schema and len(value) < schema["minItems"]:
        yield Issue(FieldError(path, INVALID, f"must have at least {schema['minItems']} items"))
    if "maxItems" in schema and len(value) > schema["maxItems"]:
        yield Issue(FieldError(path, INVALID, f"must have at most {schema['maxItems']} items"))
    if schema.get("uniqueItems"):
        seen: list[Any] = []
        for i, item in enumerate(value):
            if item in seen:
                yield Issue(FieldError((*path, i), DUPLICATE, "", _scalar(item)))
            else:
                seen.append(item)
    items = schema.get("items")
    if items is not None:
        for i, item in enumerate(value):
            yield from _check(items, item, (*path, i))


def _check_string(schema: dict[str, Any], value: str, path: FieldPath) -> Iterator[Issue]:
    if "minLength" in schema and len(value) < schema["minLength"]:
        n = schema["minLength"]
        detail = "must be non-empty" if n == 1 else f"must have at least {n} characters"
        yield Issue(FieldError(path, INVALID, detail, value))
    if "maxLength" in schema and len(value) > schema["maxLength"]:
        yield Issue(FieldError(path, INVALID,
                               f"must be no more than {schema['maxLength']} characters", value))
    if "pattern" in schema and not re.search(schema["pattern"], value):
        detail = schema.get("x-pattern-message") or f"must match the regular expression " \
                                                    f"'{schema['pattern']}'"
        yield Issue(FieldError(path, INVALID, detail, value))


def _check_number(schema: dict[str, Any], value: float, path: FieldPath) -> Iterator[Issue]:
    if isinstance(value, float) and (math.isnan(value) or math.isinf(value)):
        yield Issue(FieldError(path, INVALID, "must be a finite number", value))
        return
    if "minimum" in schema and value < schema["minimum"]:
        yield Issue(FieldError(path, INVALID,
                               f"must be greater than or equal to {schema['minimum']}", value))
    if "maximum" in schema and value > schema["maximum"]:
        yield Issue(FieldError(path, INVALID,
                               f"must be less than or equal to {schema['maximum']}", value))
    if "exclusiveMinimum" in schema and value <= schema["exclusiveMinimum"]:
        yield Issue(FieldError(path, INVALID,
                               f"must be greater than {schema['exclusiveMinimum']}", value))
    if "exclusiveMaximum" in schema and value >= schema["exclusiveMaximum"]:
        yield Issue(FieldError(path, INVALID,
                               f"must be less than {schema['exclusiveMaximum']}", value))
    if "multipleOf" in schema and schema["multipleOf"] and value % schema["multipleOf"]:
        yield Issue(FieldError(path, INVALID, f"must be a multiple of {schema['multipleOf']}",
                               value))


# ------------------------------------------------------------------ full JSON Schema fallback

def _check_with_jsonschema(schema: Any, instance: Any, path: FieldPath) -> list[Issue]:
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import best_match

    validator = Draft202012Validator(schema)
    issues: list[Issue] = []
    for err in validator.iter_errors(instance):
        if err.validator in ("oneOf", "anyOf") and err.context:
            err = best_match(err.context) or err
        issues.extend(_from_jsonschema(err, path))
    return issues


def _from_jsonschema(err: Any, prefix: FieldPath) -> list[Issue]:
    path = (*prefix, *err.absolute_path)
    kind = err.validator
    value = err.instance
    if kind == "required":
        missing = [n for n in err.validator_value if isinstance(value, dict) and n not in value]
        return [Issue(FieldError((*path, n), REQUIRED), anchor="parent") for n in missing[:1]] \
            or [Issue(FieldError(path, REQUIRED, err.message))]
    if kind in ("additionalProperties", "unevaluatedProperties") and isinstance(value, dict):
        schema = err.schema if isinstance(err.schema, dict) else {}
        props = schema.get("properties", {})
        patterns = schema.get("patternProperties", {})
        extra = [k for k in value if k not in props
                 and not any(re.search(p, k) for p in patterns)]
        if extra:
            return [Issue(FieldError((*path, k), FORBIDDEN, f'unknown field "{k}"'), anchor="key",
                          allowed=tuple(props)) for k in extra]
    if kind == "type":
        names = err.validator_value
        names = [names] if isinstance(names, str) else list(names)
        return [Issue(FieldError(path, INVALID, f"expected {' or '.join(names)}, got "
                                 f"{json_type(value)}", _scalar(value)))]
    if kind in ("enum", "const"):
        allowed = err.validator_value if kind == "enum" else [err.validator_value]
        return [Issue(_not_supported(path, value, list(allowed)))]
    if kind == "pattern":
        detail = (err.schema.get("x-pattern-message") if isinstance(err.schema, dict) else None) \
            or f"must match the regular expression '{err.validator_value}'"
        return [Issue(FieldError(path, INVALID, detail, _scalar(value)))]
    return [Issue(FieldError(path, INVALID, err.message, _scalar(value)))]
