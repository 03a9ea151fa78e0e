"""The few apimachinery validators config and plugin args validation need, with upstream's message
texts (plugins validate their args with them, so they live beside the API types).

``is_qualified_name`` and friends return lists of messages exactly as
``k8s.io/apimachinery/pkg/util/validation`` does; ``parse_duration`` follows Go's
``time.ParseDuration`` and ``format_duration`` Go's ``Duration.String``.
"""

from __future__ import annotations

import re
from typing import Any

from kschedfw.api.field import INVALID, FieldError
from kschedfw.api.labelsyntax import label_key_errors, label_value_errors, regex_error

_DNS1123_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
DNS1123_SUBDOMAIN_FMT = _DNS1123_LABEL_FMT + "(\\." + _DNS1123_LABEL_FMT + ")*"
_DNS1123_SUBDOMAIN_ERR = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric "
                          "characters, '-' or '.', and must start and end with an alphanumeric "
                          "character")
_DNS1123_SUBDOMAIN_RE = re.compile(DNS1123_SUBDOMAIN_FMT)
DNS1123_SUBDOMAIN_MAX_LENGTH = 253


def empty_error() -> str:
    return "must be non-empty"


def max_len_error(length: int) -> str:
    return f"must be no more than {length} characters"


def is_dns1123_subdomain(value: str) -> list[str]:
    errs = []
    if len(value) > DNS1123_SUBDOMAIN_MAX_LENGTH:
        errs.append(max_len_error(DNS1123_SUBDOMAIN_MAX_LENGTH))
    if _DNS1123_SUBDOMAIN_RE.fullmatch(value) is None:  # (Go's $: no final newline)
        errs.append(regex_error(_DNS1123_SUBDOMAIN_ERR, DNS1123_SUBDOMAIN_FMT, "example.com"))
    return errs


#: v1.36 apimachinery's IsQualifiedName and IsValidLabelValue are content.IsLabelKey and
#: content.IsLabelValue (lengths in bytes): one rule, in labelsyntax
is_qualified_name = label_key_errors
is_valid_label_value = label_value_errors


def validate_label_name(name: str, path: tuple[Any, ...]) -> list[FieldError]:
    """metav1validation.ValidateLabelName."""
    return [FieldError(path, INVALID, msg, name) for msg in is_qualified_name(name)]


_NATIVE_PREFIX = "kubernetes.io/"
_REQUESTS_PREFIX = "requests."


def is_extended_resource_name(name: str) -> bool:
    """v1helper.IsExtendedResourceName."""
    if "/" not in name or _NATIVE_PREFIX in name or name.startswith(_REQUESTS_PREFIX):
        return False
    return not is_qualified_name(_REQUESTS_PREFIX + name)


# ------------------------------------------------------------------ durations (Go time.Duration)

_UNITS_NS = {"ns": 1, "us": 1_000, "µs": 1_000, "μs": 1_000, "ms": 1_000_000,
             "s": 1_000_000_000, "m": 60_000_000_000, "h": 3_600_000_000_000}
_DURATION_PART = re.compile(r"([0-9]*(?:\.[0-9]*)?)([a-zµμ]+)")
#: JSON Schema pattern accepted for metav1.Duration fields.
#: what a value not matching :data:`DURATION_PATTERN` is told
DURATION_HINT = 'must be a duration such as "10s", "1m30s" or "0"'
DURATION_PATTERN = r"^[-+]?(0|([0-9]*(\.[0-9]*)?(ns|us|µs|μs|ms|s|m|h))+)$"
_MAX_NS = (1 << 63) - 1


def parse_duration(text: str) -> int:
    """Nanoseconds in a Go duration string (``1m30s``, ``-2.5h``, ``0``); ValueError if invalid."""
    s = text
    sign = 1
    if s[:1] in "+-" and s:
        sign = -1 if s[0] == "-" else 1
        s = s[1:]
    if s == "0":
        return 0
    if not s:
        raise ValueError(f"time: invalid duration {text!r}")
    total = 0.0
    pos = 0
    while pos < len(s):
        m = _DURATION_PART.match(s, pos)
        if not m or m.group(1) in ("", ".") or m.group(2) not in _UNITS_NS:
            raise ValueError(f"time: invalid duration {text!r}")
        total += float(m.group(1)) * _UNITS_NS[m.group(2)]
        pos = m.end()
    if total > _MAX_NS + 1:
        raise ValueError(f"time: invalid duration {text!r}")
    return sign * int(round(total))


def format_duration(ns: int) -> str:
    """Go's ``Duration.String``: ``10s``, ``10m0s``, ``1h0m0s``, ``1.5s``, ``0s``."""
    if ns == 0:
        return "0s"
    neg = ns < 0
    ns = abs(ns)
    if ns < 1_000_000_000:
        for unit, size in (("ms", 1_000_000), ("µs", 1_000), ("ns", 1)):
            if ns >= size or unit == "ns":
                text = _frac(ns, size) + unit
                break
    else:
        secs_ns = ns % 60_000_000_000
        minutes = ns // 60_000_000_000
        text = _frac(secs_ns, 1_000_000_000) + "s"
        if minutes:
            hours, minutes = divmod(minutes, 60)
            text = f"{minutes}m" + text
            if hours:
                text = f"{hours}h" + text
    return ("-" if neg else "") + text


def _frac(value: int, size: int) -> str:
    whole, rest = divmod(value, size)
    if not rest:
        return str(whole)
    digits = str(rest).rjust(len(str(size)) - 1, "0").rstrip("0")
    return f"{whole}.{digits}"


class GoValue:
    """A value rendered in field errors the way Go's fmt prints it (unquoted)."""

    __slots__ = ("text", "raw")

    def __init__(self, text: str, raw: Any = None) -> None:
        self.text = text
        self.raw = raw

    def __str__(self) -> str:
        return self.text

    def __repr__(self) -> str:
        return f"GoValue({self.text!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, GoValue) and other.text == self.text

    def __hash__(self) -> int:
        return hash(self.text)


def go_string_slice(values: Any) -> GoValue:
    """``[]string{"a", "b"}`` as ``%#v`` prints it."""
    if values is None:
        return GoValue("[]string(nil)", values)
    if not isinstance(values, list):
        return GoValue(str(values), values)
    inner = ", ".join('"' + str(v).replace('"', '\\"') + '"' for v in values)
    return GoValue("[]string{" + inner + "}", values)
