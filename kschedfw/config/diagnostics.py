"""Diagnostics: one problem in one file, at one line and column, rendered by one reporter.

Text form is gcc-style so editors and CI annotators can jump to it::

    cfg.yaml:14:11: profiles[0].plugins.score.enabled[1].weight: Invalid value: 0: must be positive

followed by `` (did you mean "X"?)`` when there is a hint. Warnings add ``warning: `` before the
path; errors carry no marker (they are the common case and this matches upstream's text).
"""

from __future__ import annotations

from typing import Any, Iterable

import attrs

from kschedfw.api.field import FieldError, format_path

ERROR = "error"
WARNING = "warning"

#: Kinds used for problems that are not field errors.
SYNTAX = "YAML syntax error"
DOCUMENT = "Invalid document"
#: Input past the YAML reader's caps (too deep, an alias bomb, a recursive alias): validation
#: cannot run on it (exit status 2).
UNUSABLE = "Unusable input"


@attrs.frozen
class Diagnostic:
    """One problem, located. ``message`` is the full text after the path (it starts with ``kind``)."""

    file: str
    line: int
    column: int
    path: str
    kind: str
    message: str
    severity: str = ERROR
    hint: str = ""
    plugin: str = ""
    #: 1-based index of the YAML document, set only for documents after the first.
    document: int = 0

    @classmethod
    def from_field_error(cls, err: FieldError, *, file: str, line: int, column: int,
                         severity: str = ERROR, hint: str = "", plugin: str = "") -> "Diagnostic":
        return cls(file=file, line=line, column=column, path=format_path(err.path), kind=err.kind,
                   message=err.body(), severity=severity, hint=hint, plugin=plugin)

    @property
    def is_error(self) -> bool:
        return self.severity == ERROR

    def render(self) -> str:
        where = f"{self.file}:{self.line}:{self.column}: "
        if self.severity != ERROR:
            where += f"{self.severity}: "
        if self.document:
            where += f"document {self.document}: "
        text = where + (f"{self.path}: " if self.path else "") + self.message
        if self.hint:
            text += f" ({self.hint})"
        return text

    def to_json(self) -> dict[str, Any]:
        out = attrs.asdict(self)
        if not self.document:
            del out["document"]
        return out

    def sort_key(self) -> tuple[str, int, int, int, str, str]:
        return (self.file, self.document, self.line, self.column, self.path, self.message)


def did_you_mean(candidate: str) -> str:
    return f'did you mean "{candidate}"?'


def sort_unique(diags: Iterable[Diagnostic]) -> list[Diagnostic]:
    """Sorted by file, line, column; exact duplicates dropped."""
    seen: set[Diagnostic] = set()
    out: list[Diagnostic] = []
    for d in sorted(diags, key=Diagnostic.sort_key):
        if d not in seen:
            seen.add(d)
            out.append(d)
    return out


def render_text(diags: Iterable[Diagnostic]) -> str:
    return "\n".join(d.render() for d in sort_unique(diags))


def summary_line(files: int, valid: int, invalid: int, errors: int, warnings: int,
                 not_checked: int = 0) -> str:
    """``2 files checked: 1 valid, 1 invalid (2 errors)``."""
    noun = "file" if files == 1 else "files"
    counts = [f"{errors} error" + ("" if errors == 1 else "s")]
    if warnings:
        counts.append(f"{warnings} warning" + ("" if warnings == 1 else "s"))
    text = f"{files} {noun} checked: {valid} valid, {invalid} invalid ({', '.join(counts)})"
    if not_checked:
        text += f"; {not_checked} could not be checked"
    return text
