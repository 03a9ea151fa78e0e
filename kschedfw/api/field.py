"""Field errors in upstream's vocabulary, shared by manifest parsing and config validation."""

from __future__ import annotations

import json
from typing import Any

import attrs

class _Missing:
    """Marks a FieldError without a value (``Required value`` has none)."""

    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()

#: Where a value sits in a document: keys and list indexes, ``("profiles", 0, "plugins")``.
FieldPath = tuple[str | int, ...]

REQUIRED = "Required value"
INVALID = "Invalid value"
DUPLICATE = "Duplicate value"
UNSUPPORTED = "Unsupported value"
FORBIDDEN = "Forbidden"
NOT_FOUND = "Not found"
TOO_MANY = "Too many"


def format_path(path: FieldPath) -> str:
    """``("profiles", 0, "plugins")`` -> ``profiles[0].plugins`` (Kubernetes field-path style)."""
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + part
    return out


def _go_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):  # %q: quotes, backslashes and control characters escaped
        return json.dumps(value, ensure_ascii=False)
    if value is None:
        return "null"
    return str(value)


@attrs.frozen
class FieldError:
    """One problem with one field, rendered as upstream's ``field.Error`` is.

    ``path`` is relative to whatever the caller validated; callers prefix it when nesting.
    """

    path: FieldPath
    kind: str
    detail: str = ""
    value: Any = MISSING

    def prefixed(self, *prefix: str | int) -> "FieldError":
        return attrs.evolve(self, path=(*prefix, *self.path))

    def body(self) -> str:
        """The text after the path: ``Invalid value: 0: must be positive``."""
        text = self.kind
        if self.value is not MISSING and self.kind in (INVALID, DUPLICATE, UNSUPPORTED, NOT_FOUND, TOO_MANY):
            text += f": {_go_value(self.value)}"
        if self.detail:
            text += f": {self.detail}"
        return text

    def __str__(self) -> str:
        return f"{format_path(self.path)}: {self.body()}"


class ManifestError(ValueError):
    """A Kubernetes manifest that cannot be read: names the source, the object and the field."""

    def __init__(self, message: str, *, source: str = "", line: int | None = None,
                 obj: str = "", field: str = "") -> None:
        self.source, self.line, self.obj, self.field, self.detail = source, line, obj, field, message
        where = source + (f":{line}" if line else "")
        parts = [p for p in (where, obj, field) if p]
        super().__init__(": ".join([*parts, message]))
