"""The Kubernetes CEL types DRA selectors use: ``Quantity`` and ``Semver`` (upstream
``k8s.io/apiserver/pkg/cel/library``: ``quantity.go`` and ``semverlib.go``).

cel-expr-python passes only CEL's own values and protobuf messages between an expression and
Python, so each Kubernetes type is a one-field message (``kubernetes.Quantity``,
``kubernetes.Semver``) whose field holds a canonical text: equal values have equal messages, so
CEL's ``==`` compares quantities by value (``quantity("1Gi") == quantity("1024Mi")``) as upstream.
"""

from __future__ import annotations

import re
from fractions import Fraction
from functools import lru_cache
from typing import Any, Callable

from cel_expr_python import cel
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory, struct_pb2

from kschedfw.api.quantity import parse_quantity

QUANTITY_TYPE_NAME = "kubernetes.Quantity"
SEMVER_TYPE_NAME = "kubernetes.Semver"
#: the type ``device`` is checked against: its fields (a misspelt one is a compile error, as in
#: cel-go) and their types (``device.driver`` alone is a string, not a bool); the domains of
#: ``attributes`` and ``capacity`` are Structs, so what is read from them is dynamic
DEVICE_TYPE_NAME = "kubernetes.Device"


def _descriptor_pool() -> descriptor_pool.DescriptorPool:
    field = descriptor_pb2.FieldDescriptorProto
    proto = descriptor_pb2.FileDescriptorProto(name="kschedfw/dra_cel.proto", package="kubernetes",
                                               syntax="proto3", dependency=["google/protobuf/struct.proto"])
    for name in ("Quantity", "Semver"):
        message = proto.message_type.add(name=name)
        message.field.add(name="value", number=1, type=field.TYPE_STRING, label=field.LABEL_OPTIONAL)
    device = proto.message_type.add(name="Device")
    device.field.add(name="driver", number=1, type=field.TYPE_STRING, label=field.LABEL_OPTIONAL)
    device.field.add(name="allowMultipleAllocations", number=2, type=field.TYPE_BOOL, label=field.LABEL_OPTIONAL)
    for number, name in ((3, "attributes"), (4, "capacity")):
        entry = device.nested_type.add(name=f"{name.capitalize()}Entry")
        entry.options.map_entry = True
        entry.field.add(name="key", number=1, type=field.TYPE_STRING, label=field.LABEL_OPTIONAL)
        entry.field.add(name="value", number=2, type=field.TYPE_MESSAGE, type_name=".google.protobuf.Struct",
                        label=field.LABEL_OPTIONAL)
        device.field.add(name=name, number=number, type=field.TYPE_MESSAGE, label=field.LABEL_REPEATED,
                         type_name=f".{DEVICE_TYPE_NAME}.{entry.name}")
    struct_file = descriptor_pb2.FileDescriptorProto()
    struct_pb2.DESCRIPTOR.CopyToProto(struct_file)
    pool = descriptor_pool.DescriptorPool()
    pool.Add(struct_file)
    pool.Add(proto)
    return pool


POOL = _descriptor_pool()
QuantityMessage: Any = message_factory.GetMessageClass(POOL.FindMessageTypeByName(QUANTITY_TYPE_NAME))
SemverMessage: Any = message_factory.GetMessageClass(POOL.FindMessageTypeByName(SEMVER_TYPE_NAME))
QUANTITY = cel.Type(QUANTITY_TYPE_NAME)
SEMVER = cel.Type(SEMVER_TYPE_NAME)

_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1


# --- Quantity -------------------------------------------------------------------------------

def quantity_message(amount: Fraction | int) -> Any:
    """The CEL value of an exact amount (``Fraction`` text, so equal amounts compare equal)."""
    return QuantityMessage(value=str(Fraction(amount)))


def _amount(q: Any) -> Fraction:
    return _fraction(q.value)


@lru_cache(maxsize=4096)
def _fraction(text: str) -> Fraction:
    return Fraction(text)


@lru_cache(maxsize=4096)
def _quantity_text(text: str) -> str:
    return str(Fraction(parse_quantity(text)))


def _string_to_quantity(text: str) -> Any:
    return QuantityMessage(value=_quantity_text(text))


def _is_quantity(text: str) -> bool:
    try:
        parse_quantity(text)
    except ValueError:
        return False
    return True


def _as_integer(q: Any) -> int:
    amount = _amount(q)
    if amount.denominator != 1 or not _INT64_MIN <= amount.numerator <= _INT64_MAX:
        raise ValueError("cannot convert value to integer")
    return amount.numerator


def _is_integer(q: Any) -> bool:
    amount = _amount(q)
    return amount.denominator == 1 and _INT64_MIN <= amount.numerator <= _INT64_MAX


def _sign(q: Any) -> int:
    amount = _amount(q)
    return (amount > 0) - (amount < 0)


def _compare(a: Fraction, b: Fraction) -> int:
    return (a > b) - (a < b)


# --- Semver (github.com/blang/semver/v4 rules) ----------------------------------------------

_NUMERIC = re.compile(r"[0-9]+")
_IDENTIFIER = re.compile(r"[0-9A-Za-z-]+")


class SemverError(ValueError):
    """A version string blang/semver rejects; the text is blang's."""


def parse_semver(text: str) -> tuple[int, int, int, tuple[str, ...]]:
    """``major.minor.patch[-pre][+build]`` -> (major, minor, patch, pre-release identifiers)."""
    if not text:
        raise SemverError("Version string empty")
    parts = text.split(".", 2)
    if len(parts) != 3:
        raise SemverError("No Major.Minor.Patch elements found")
    numbers: list[int] = []
    for label, part in (("major", parts[0]), ("minor", parts[1])):
        if not _NUMERIC.fullmatch(part):
            raise SemverError(f"Invalid character(s) found in {label} number \"{part}\"")
        if len(part) > 1 and part[0] == "0":
            raise SemverError(f"{label.capitalize()} number must not contain leading zeroes \"{part}\"")
        numbers.append(int(part))
    rest = parts[2]
    cut = min((i for i in (rest.find("-"), rest.find("+")) if i >= 0), default=len(rest))
    patch_text, rest = rest[:cut], rest[cut:]
    if not _NUMERIC.fullmatch(patch_text):
        raise SemverError(f"Invalid character(s) found in patch number \"{patch_text}\"")
    if len(patch_text) > 1 and patch_text[0] == "0":
        raise SemverError(f"Patch number must not contain leading zeroes \"{patch_text}\"")
    build = ""
    if "+" in rest:
        rest, build = rest.split("+", 1)
        for ident in build.split("."):
            if not ident:
                raise SemverError("Build meta data is empty")
            if not _IDENTIFIER.fullmatch(ident):
                raise SemverError(f"Invalid character(s) found in build meta data \"{ident}\"")
    pre: tuple[str, ...] = ()
    if rest.startswith("-"):
        pre = tuple(rest[1:].split("."))
        for ident in pre:
            if not ident:
                raise SemverError("Prerelease is empty")
            if not _IDENTIFIER.fullmatch(ident):
                raise SemverError(f"Invalid character(s) found in prerelease \"{ident}\"")
            if _NUMERIC.fullmatch(ident) and len(ident) > 1 and ident[0] == "0":
                raise SemverError(f"Version prerelease number must not contain leading zeroes \"{ident}\"")
    return numbers[0], numbers[1], int(patch_text), pre


def _normalize(text: str) -> str:
    """upstream normalizeAndParse: drop a leading ``v``, leading zeros, fill in minor/patch."""
    text = text.removeprefix("v")
    parts = text.split(".", 2)
    for i, part in enumerate(parts):
        if len(part) > 1:
            part = part.lstrip("0")
            if not part or not part[0].isdigit():
                part = "0" + part
            parts[i] = part
    if len(parts) < 3:
        if any(c in parts[-1] for c in "+-"):
            raise SemverError("short version cannot contain PreRelease/Build meta data")
        parts += ["0"] * (3 - len(parts))
    return ".".join(parts)


def semver_message(text: str, normalize: bool = False) -> Any:
    """The CEL value of a version; build metadata does not take part in comparisons."""
    if normalize:
        text = _normalize(text)
    parse_semver(text)
    return SemverMessage(value=text.split("+", 1)[0])


def _semver_key(v: Any) -> tuple[int, int, int, tuple[str, ...]]:
    return parse_semver(v.value)


def compare_semver(a: str, b: str) -> int:
    """semver 2.0.0 precedence: numbers, then a pre-release sorts before the release."""
    ma, mb = parse_semver(a), parse_semver(b)
    c = _compare(Fraction(ma[0]), Fraction(mb[0])) or _compare(Fraction(ma[1]), Fraction(mb[1])) \
        or _compare(Fraction(ma[2]), Fraction(mb[2]))
    if c:
        return c
    pa, pb = ma[3], mb[3]
    if not pa or not pb:
        return (not pa) - (not pb)
    for x, y in zip(pa, pb):
        if x == y:
            continue
        xn, yn = x.isdigit(), y.isdigit()
        if xn and yn:
            return _compare(Fraction(int(x)), Fraction(int(y)))
        if xn != yn:
            return -1 if xn else 1
        return -1 if x < y else 1
    return _compare(Fraction(len(pa)), Fraction(len(pb)))


def _compare_values(a: Any, b: Any) -> int:
    """compareTo for two quantities or two versions; anything else has no such overload."""
    if isinstance(a, QuantityMessage) and isinstance(b, QuantityMessage):
        return _compare(_amount(a), _amount(b))
    if isinstance(a, SemverMessage) and isinstance(b, SemverMessage):
        return compare_semver(a.value, b.value)
    raise TypeError("no such overload")


def _is_semver(text: str, normalize: bool = False) -> bool:
    try:
        semver_message(text, normalize)
    except SemverError:
        return False
    return True


# --- declarations -----------------------------------------------------------------------------

def _overload(id_: str, result: Any, params: list[Any], impl: Callable[..., Any], *,
              member: bool = False) -> Any:
    return cel.Overload(id_, result, params, is_member=member, impl=impl)


def function_decls() -> list[Any]:
    """quantity(), isQuantity(), semver(), isSemver() and the member functions on both types."""
    S, B, I, D = cel.Type.STRING, cel.Type.BOOL, cel.Type.INT, cel.Type.DOUBLE
    Q, V = QUANTITY, SEMVER

    def qq(op: Callable[[Fraction, Fraction], Any]) -> Callable[[Any, Any], Any]:
        return lambda a, b: op(_amount(a), _amount(b))

    return [
        cel.FunctionDecl("quantity", [_overload("string_to_quantity", Q, [S], _string_to_quantity)]),
        cel.FunctionDecl("isQuantity", [_overload("is_quantity_string", B, [S], _is_quantity)]),
        cel.FunctionDecl("sign", [_overload("quantity_sign", I, [Q], _sign)]),
        cel.FunctionDecl("asApproximateFloat", [
            _overload("quantity_get_float", D, [Q], lambda q: float(_amount(q)), member=True)]),
        cel.FunctionDecl("asInteger", [_overload("quantity_get_int", I, [Q], _as_integer, member=True)]),
        cel.FunctionDecl("isInteger", [_overload("quantity_is_integer", B, [Q], _is_integer, member=True)]),
        cel.FunctionDecl("add", [
            _overload("quantity_add", Q, [Q, Q], qq(lambda a, b: quantity_message(a + b)), member=True),
            _overload("quantity_add_int", Q, [Q, I], lambda a, n: quantity_message(_amount(a) + n), member=True)]),
        cel.FunctionDecl("sub", [
            _overload("quantity_sub", Q, [Q, Q], qq(lambda a, b: quantity_message(a - b)), member=True),
            _overload("quantity_sub_int", Q, [Q, I], lambda a, n: quantity_message(_amount(a) - n), member=True)]),
        # cel-expr-python's runtime tells overloads apart by kind only and both types are
        # messages: the quantity overload carries the implementation for both, which looks at
        # the values' types; the semver overload only declares the signature for the checker.
        cel.FunctionDecl("isGreaterThan", [
            _overload("quantity_is_greater_than", B, [Q, Q], lambda a, b: _compare_values(a, b) == 1, member=True),
            cel.Overload("semver_is_greater_than", B, [V, V], is_member=True)]),
        cel.FunctionDecl("isLessThan", [
            _overload("quantity_is_less_than", B, [Q, Q], lambda a, b: _compare_values(a, b) == -1, member=True),
            cel.Overload("semver_is_less_than", B, [V, V], is_member=True)]),
        cel.FunctionDecl("compareTo", [
            _overload("quantity_compare_to", I, [Q, Q], _compare_values, member=True),
            cel.Overload("semver_compare_to", I, [V, V], is_member=True)]),
        cel.FunctionDecl("semver", [
            _overload("string_to_semver", V, [S], semver_message),
            _overload("string_bool_to_semver", V, [S, B], semver_message)]),
        cel.FunctionDecl("isSemver", [
            _overload("is_semver_string", B, [S], _is_semver),
            _overload("is_semver_string_bool", B, [S, B], _is_semver)]),
        cel.FunctionDecl("major", [_overload("semver_major", I, [V], lambda v: _semver_key(v)[0], member=True)]),
        cel.FunctionDecl("minor", [_overload("semver_minor", I, [V], lambda v: _semver_key(v)[1], member=True)]),
        cel.FunctionDecl("patch", [_overload("semver_patch", I, [V], lambda v: _semver_key(v)[2], member=True)]),
    ]
