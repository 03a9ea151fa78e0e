"""Plugin calls that go wrong: the Error text that names the plugin, and logging without floods.

Every hook call is guarded by the runtime (see :mod:`kschedfw.fwk.hookspecs`): an exception, a return
value of the wrong type or a score that is not an int in range becomes an Error status. A broken
Filter fails on every node of every attempt, so :class:`PluginFaults` logs each distinct fault
(plugin, extension point, cause) once and counts the rest; the first traceback is logged at DEBUG
(``kschedfw --debug``).
"""

from __future__ import annotations

import logging
import warnings
from typing import Any

log = logging.getLogger(__name__)

#: How much of an unexpected return value a message shows.
_MAX_REPR = 60


def describe(value: Any) -> str:
    """``str 'no'``, ``float 99.9``, ``None``: the type and a short repr of what a plugin returned."""
    if value is None:
        return "None"
    text = repr(value)
    if len(text) > _MAX_REPR:
        text = text[:_MAX_REPR - 3] + "..."
    return f"{type(value).__name__} {text}"


def bad_return(plugin: str, point: str, value: Any, want: str) -> str:
    """``plugin "X" Filter returned str 'no'; want Status or None``."""
    return f'plugin "{plugin}" {point} returned {describe(value)}; want {want}'


def raised(exc: BaseException) -> str:
    """The text of an exception inside a plugin, as the Error status carries it."""
    return f"{type(exc).__name__}: {exc}"


class DeprecatedShapeWarning(DeprecationWarning):
    """A hook returned a shape the runtime still accepts for one release but will refuse."""


class PluginFaults:
    """Counts plugin faults per (plugin, extension point, cause); logs the first of each once.
    Warns once per (plugin, extension point) about a deprecated return shape."""

    def __init__(self) -> None:
        self.counts: dict[tuple[str, str, str], int] = {}
        self.deprecated: dict[tuple[str, str], str] = {}

    def deprecated_shape(self, plugin: str, point: str, value: Any, want: str) -> None:
        """A return in a shape kept for one release: a DeprecationWarning naming the plugin, the
        extension point and the shape to return, the first time only (the call is on the hot path)."""
        key = (plugin, point)
        if key in self.deprecated:
            return
        message = (f'plugin "{plugin}" {point} returned {describe(value)}, a shape accepted only until the '
                   f'next release; return {want}')
        self.deprecated[key] = message
        warnings.warn(message, DeprecatedShapeWarning, stacklevel=2)

    def report(self, plugin: str, point: str, cause: str, message: str,
               exc: BaseException | None = None) -> None:
        key = (plugin, point, cause)
        count = self.counts.get(key, 0) + 1
        self.counts[key] = count
        if count == 1:
            log.warning("%s (logged once; later occurrences are only counted)", message)
            if exc is not None:
                log.debug("plugin %s %s: first traceback", plugin, point, exc_info=exc)

    def exception(self, plugin: str, point: str, exc: BaseException) -> str:
        """Report an exception raised by a plugin; returns its message."""
        message = raised(exc)
        self.report(plugin, point, type(exc).__name__, f'plugin "{plugin}" {point} raised {message}', exc)
        return message

    def wrong_type(self, plugin: str, point: str, value: Any, want: str) -> str:
        """Report a return value of the wrong type; returns the message naming it."""
        message = bad_return(plugin, point, value, want)
        self.report(plugin, point, f"returned {type(value).__name__}", message)
        return message

    def summary(self) -> list[str]:
        """One line per fault with its count, most frequent first."""
        return [f'plugin "{p}" {point}: {cause} ({n} times)'
                for (p, point, cause), n in sorted(self.counts.items(), key=lambda kv: -kv[1])]
