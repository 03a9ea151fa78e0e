"""The CEL environment of DRA device selectors (upstream ``k8s.io/dynamic-resource-allocation/cel``).

An expression sees one variable, ``device``, with ``driver``, ``allowMultipleAllocations``
(DRAConsumableCapacity is beta and on in v1.36), ``attributes`` and ``capacity``. Attributes and
capacities are maps of domain -> (id -> value); a name without a domain belongs to the driver's
domain, so ``device.attributes["gpu.example.com"].model`` reads the attribute ``model`` of a
device of driver ``gpu.example.com``. Attribute values are int, bool, string or ``Semver``;
capacities are ``Quantity``. A domain the device does not have reads as an empty map (so
``"x" in device.attributes["other.com"]`` is false while ``device.attributes["other.com"].x`` is
the runtime error ``no such key: x``), as upstream's map with a default value.

Engine: cel-expr-python (the CEL C++ runtime), with the Kubernetes ``quantity`` and ``semver``
libraries from :mod:`.library` and the strings, math, optional and bindings extensions. An
expression is checked against ``device`` declared as a message of its fields (so ``device.drivr``
is upstream's compile error ``undefined field 'drivr'``, and ``device.driver`` alone is "not
string"), then compiled for evaluation against the map :func:`device_data` builds. Known
differences from cel-go: what is read from ``attributes`` and ``capacity`` is dynamic (cel-go types
capacities as quantities, so ``device.capacity[...].x > 1`` is refused there when compiled and
here when evaluated), and the empty-map default is given to the domains an expression indexes the
maps with as string literals (``device.attributes["dom"]``; computed names are not covered).
"""

from __future__ import annotations

import re
from typing import Any, Mapping

import attrs
from cel_expr_python import cel
from cel_expr_python.ext import ext_bindings, ext_math, ext_optional, ext_strings

from kschedfw.api.quantity import parse_quantity
from kschedfw.plugins.dynamicresources.cel import library

__all__ = ["CompilationResult", "Cache", "CELRuntimeError", "compile_error", "compile_expression", "device_data",
           "device_matches"]


class CELRuntimeError(Exception):
    """An expression failed while evaluating one device; the text is upstream's (cel-go's)."""


@attrs.frozen(slots=True)
class CompilationResult:
    """A compiled selector, or the reason it does not compile (upstream ``Error.Detail``)."""

    expression: str
    program: Any = None
    error: str | None = None
    # domains the expression indexes the maps with: they read as an empty map when absent
    literals: frozenset[str] = frozenset()


def _environment(device: Any) -> Any:
    return cel.NewEnv(
        descriptor_pool=library.POOL,
        variables={"device": device},
        extensions=[ext_strings.ExtStrings(), ext_math.ExtMath(), ext_optional.ExtOptional(),
                    ext_bindings.ExtBindings()],
        functions=library.function_decls(),
    )


#: where expressions are evaluated: ``device`` is the map :func:`device_data` builds
_ENV = _environment(cel.Type.Map(cel.Type.STRING, cel.Type.DYN))
#: where they are checked first: ``device`` as a message of its fields, as cel-go declares it
_CHECK_ENV = _environment(cel.Type(library.DEVICE_TYPE_NAME))
# cel-cpp names the message in an unknown field's error; cel-go does not
_NOT_IN_STRUCT = re.compile(r" not found in struct '[^']*'")
_STATUS_PREFIX = re.compile(r"^[A-Z_]+: ")
_STATUS_SUFFIX = re.compile(r" \[[A-Z_]+\]$")
# a domain named literally where the maps are indexed: device.attributes["dom"], device.capacity['dom']
_DOMAIN_INDEX = re.compile(r"""\b(?:attributes|capacity)\s*\[\s*(?:"([^"\\\n]*)"|'([^'\\\n]*)')\s*\]""")
_TYPE_NAMES = {"INT": "int", "UINT": "uint", "DOUBLE": "double", "STRING": "string", "BYTES": "bytes",
               "NULL": "null_type", "LIST": "list", "MAP": "map", "DURATION": "google.protobuf.Duration",
               "TIMESTAMP": "google.protobuf.Timestamp", "TYPE": "type"}


def _strip_status(text: str) -> str:
    return _STATUS_SUFFIX.sub("", _STATUS_PREFIX.sub("", text.strip()))


def _literals(expression: str) -> frozenset[str]:
    return frozenset(a or b for a, b in _DOMAIN_INDEX.findall(expression))


def compile_expression(expression: str) -> CompilationResult:
    """Compile once; the result says why when the expression cannot be used (upstream texts)."""
    try:
        checked = _CHECK_ENV.compile(expression)
        compiled = _ENV.compile(expression)
    except RuntimeError as err:
        text = _NOT_IN_STRUCT.sub("", _strip_status(str(err)))
        return CompilationResult(expression, error="compilation failed: " + text)
    result_type = checked.return_type().name()
    if result_type not in ("BOOL", "DYN"):
        name = _TYPE_NAMES.get(result_type, result_type)
        return CompilationResult(expression, error=f"must evaluate to bool or the unknown type, not {name}")
    return CompilationResult(expression, program=compiled, literals=_literals(expression))


def compile_error(expression: str) -> str | None:
    """Why the API server would refuse this selector on create (upstream's detail), or None."""
    return compile_expression(expression).error


class Cache:
    """Compiled selectors by expression text (upstream ``cel.Cache``), bounded in size."""

    def __init__(self, max_size: int = 4096) -> None:
        self._max_size = max_size
        self._compiled: dict[str, CompilationResult] = {}

    def get_or_compile(self, expression: str) -> CompilationResult:
        result = self._compiled.get(expression)
        if result is None:
            if len(self._compiled) >= self._max_size:
                self._compiled.pop(next(iter(self._compiled)))
            result = compile_expression(expression)
            self._compiled[expression] = result
        return result


def _split_name(name: str, driver: str) -> tuple[str, str]:
    domain, sep, ident = name.partition("/")
    return (domain, ident) if sep else (driver, name)


def _attribute_value(name: str, attr: Mapping[str, Any]) -> Any:
    if "int" in attr:
        return int(attr["int"])
    if "bool" in attr:
        return bool(attr["bool"])
    if "string" in attr:
        return str(attr["string"])
    if "version" in attr:
        try:
            return library.semver_message(str(attr["version"]))
        except library.SemverError as err:
            raise CELRuntimeError(f"attribute {name}: parse semantic version: {err}") from None
    raise CELRuntimeError(f"attribute {name}: unsupported attribute value")


def device_data(driver: str, device: Mapping[str, Any]) -> dict[str, Any]:
    """The ``device`` variable for one API device (``ResourceSlice.spec.devices[*]``)."""
    attributes: dict[str, dict[str, Any]] = {}
    for name, attr in (device.get("attributes") or {}).items():
        domain, ident = _split_name(name, driver)
        attributes.setdefault(domain, {})[ident] = _attribute_value(name, attr or {})
    capacity: dict[str, dict[str, Any]] = {}
    for name, cap in (device.get("capacity") or {}).items():
        domain, ident = _split_name(name, driver)
        capacity.setdefault(domain, {})[ident] = library.quantity_message(parse_quantity((cap or {}).get("value", 0)))
    return {"driver": driver, "allowMultipleAllocations": bool(device.get("allowMultipleAllocations") or False),
            "attributes": attributes, "capacity": capacity}


def _with_empty_domains(data: dict[str, Any], literals: frozenset[str]) -> dict[str, Any]:
    attributes, capacity = data["attributes"], data["capacity"]
    if literals <= attributes.keys() and literals <= capacity.keys():
        return data
    out = dict(data)
    out["attributes"] = {**{d: {} for d in literals}, **attributes}
    out["capacity"] = {**{d: {} for d in literals}, **capacity}
    return out


def _runtime_message(text: str) -> str:
    text = _strip_status(text)
    m = re.fullmatch(r'Key not found in map : "?(.*?)"?', text)
    if m:
        return f"no such key: {m.group(1)}"
    if text.startswith("No matching overloads found"):
        return "no such overload"
    return text


def device_matches(compiled: CompilationResult, data: dict[str, Any]) -> bool:
    """Evaluate a compiled selector for one device (``data`` from :func:`device_data`)."""
    if compiled.literals:
        data = _with_empty_domains(data, compiled.literals)
    try:
        result = compiled.program.eval(data={"device": data})
    except (RuntimeError, TypeError, ValueError) as err:
        raise CELRuntimeError(_runtime_message(str(err))) from None
    value = result.value()
    if isinstance(value, bool):
        return value
    type_name = result.type().name()
    if type_name == "ERROR":
        raise CELRuntimeError(_runtime_message(str(value)))
    name = _TYPE_NAMES.get(type_name, type_name)
    raise CELRuntimeError(f"CEL result of type {name} could not be converted to bool")
