"""Status and Code: what every extension point returns, with upstream's meanings and helpers."""

from __future__ import annotations

import enum
from typing import Iterable

import attrs


class Code(enum.IntEnum):
    """Upstream's status codes, in upstream's numeric order."""

    Success = 0
    Error = 1
    Unschedulable = 2
    UnschedulableAndUnresolvable = 3
    Wait = 4
    Skip = 5
    Pending = 6


_REJECTED = frozenset({Code.Unschedulable, Code.UnschedulableAndUnresolvable, Code.Pending})


def _to_reasons(reasons: str | Iterable[str]) -> tuple[str, ...]:
    """``reasons`` as a tuple; one string is one reason (not a tuple of its characters)."""
    if type(reasons) is tuple:
        return reasons
    if isinstance(reasons, str):
        return (reasons,)
    return tuple(reasons)


@attrs.define(slots=True, eq=True, on_setattr=attrs.setters.NO_OP)
class Status:
    """The result of a plugin call.

    ``None`` is accepted everywhere a Status is and means Success, as a nil status does upstream.
    ``reasons`` takes one string or an iterable of strings: ``Status(Code.Unschedulable, "why")``.
    ``plugin`` is the name of the plugin that produced a rejection; the framework fills it in
    (a plain attribute store: the framework sets it on every rejection, on the hot path).
    """

    code: Code = Code.Success
    reasons: tuple[str, ...] = attrs.field(default=(), converter=_to_reasons)
    plugin: str = ""
    error: BaseException | None = attrs.field(default=None, eq=False)

    @classmethod
    def success(cls) -> "Status":
        return cls(Code.Success)

    @classmethod
    def unschedulable(cls, *reasons: str) -> "Status":
        return new_rejection(cls, Code.Unschedulable, reasons)

    @classmethod
    def unresolvable(cls, *reasons: str) -> "Status":
        """UnschedulableAndUnresolvable: preemption cannot help on this node."""
        return new_rejection(cls, Code.UnschedulableAndUnresolvable, reasons)

    @classmethod
    def skip(cls) -> "Status":
        return cls(Code.Skip)

    @classmethod
    def wait(cls, *reasons: str) -> "Status":
        return cls(Code.Wait, reasons)

    @classmethod
    def pending(cls, *reasons: str) -> "Status":
        return new_rejection(cls, Code.Pending, reasons)

    @classmethod
    def as_status(cls, error: BaseException | str) -> "Status":
        """An Error status wrapping an exception or message (upstream ``framework.AsStatus``)."""
        if isinstance(error, BaseException):
            return cls(Code.Error, (), error=error)
        return cls(Code.Error, (error,))

    def is_success(self) -> bool:
        return self.code is Code.Success

    def is_wait(self) -> bool:
        return self.code is Code.Wait

    def is_skip(self) -> bool:
        return self.code is Code.Skip

    def is_rejected(self) -> bool:
        """Unschedulable, UnschedulableAndUnresolvable or Pending."""
        return self.code in _REJECTED

    def message(self) -> str:
        """Reasons joined by ", ", the wrapped error's text first (upstream ``Status.Message``)."""
        parts = list(self.reasons)
        if self.error is not None:
            parts.insert(0, str(self.error) or type(self.error).__name__)
        return ", ".join(parts)

    def __str__(self) -> str:
        return f"{self.code.name}: {self.message()}" if self.reasons or self.error else self.code.name



def new_rejection(cls: type[Status], code: Code, reasons: tuple[str, ...]) -> Status:
    """``cls(code, reasons)`` without the generated __init__ and its converter: Filter plugins
    build one per rejected node, on the hot path (``reasons`` is already a tuple)."""
    if cls is not Status:  # a subclass may have its own __init__
        return cls(code, reasons)
    status = _new(Status)
    status.code = code
    status.reasons = reasons
    status.plugin = ""
    status.error = None
    return status


_new = object.__new__
