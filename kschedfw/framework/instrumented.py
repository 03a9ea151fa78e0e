"""Instrumentation the runtime compiles in: plugin durations for sampled cycles, and the duration
of every run of an extension point (upstream: ``instrumented_plugins.go``, the duration each
``Run*Plugins`` observes, and ``CycleState.ShouldRecordPluginMetrics``).

A profile given an :class:`Instrumentation` (``Framework.instrument``) compiles, beside its plain
:class:`~kschedfw.framework.plans.Plans`, a timed copy (:meth:`~kschedfw.framework.plans.Plans.timed`,
each timed list's entries wrapped by :func:`timed_entries`); a cycle whose CycleState has
``record_plugin_metrics`` set (the scheduler samples upstream's 10% of cycles) runs the timed
copy, every other cycle the plain one, whose entries are the plugins' own methods: an unsampled
cycle pays one flag test per extension point. Extension-point durations are observed by
:func:`extension_point` around each ``run_*`` method, on every call once instrumented. Nothing here replaces a method of a live
object: the choice is made when the plan is compiled and read per call.
"""

from __future__ import annotations

import functools
from typing import Any, Callable, Protocol, TypeVar

from kschedfw.fwk.extension_points import HOOKS

__all__ = ["Instrumentation", "OBSERVED_POINTS", "Observe", "code_label", "extension_point", "status_label",
           "timed_call", "timed_entries"]

#: ``observe(status code name, seconds)``
Observe = Callable[[str, float], None]

#: the extension points whose runs :func:`extension_point` observes (upstream's labels)
OBSERVED_POINTS: tuple[str, ...] = tuple(str(h.label) for h in HOOKS if h.observed)


class Instrumentation(Protocol):
    """Where a profile's durations go (:class:`kschedfw.metrics.SchedulerMetrics`)."""

    def now(self) -> float:
        """The clock durations are measured with."""
        ...

    def plugin_observer(self, plugin: str, point: str) -> Observe:
        """Observes one plugin's calls at one extension point, by status."""
        ...

    def extension_point_observer(self, point: str, profile: str) -> Observe:
        """Observes the runs of one extension point of one profile, by status."""
        ...

    def node_hint_observer(self, profile: str) -> Callable[[bool, float], None]:
        """Observes the batch's node hints (whether one was given, seconds)."""
        ...

    def store_results_observer(self, profile: str) -> Callable[[float], None]:
        """Observes the batch storing a cycle's results."""
        ...


def code_label(status: Any) -> str:
    """A Status's code name as upstream prints it; None is Success."""
    code = getattr(status, "code", None)
    return code.name if code is not None else "Success"


def status_label(returned: Any) -> str:
    """The status code name of what a plugin returned ("Success" for None or a score); PreFilter
    and PostFilter return ``(result, status)``."""
    if isinstance(returned, tuple) and returned:
        returned = returned[-1]
    return code_label(returned)


def _timed(fn: Callable[..., Any], observe: Observe, clock: Callable[[], float]) -> Callable[..., Any]:
    def timed(*args: Any) -> Any:
        start = clock()
        try:
            returned = fn(*args)
        except Exception:
            observe("Error", clock() - start)
            raise
        observe("Success" if returned is None else status_label(returned), clock() - start)
        return returned
    return timed


def timed_call(fn: Callable[..., Any], plugin: str, point: str, instrumentation: Instrumentation) -> Callable[..., Any]:
    """``fn``, one plugin's hook at ``point``, with its calls timed into the plugin's observer."""
    return _timed(fn, instrumentation.plugin_observer(plugin, point), instrumentation.now)


def timed_entries(entries: tuple[tuple[Any, ...], ...], point: str,
                  instrumentation: Instrumentation) -> tuple[tuple[Any, ...], ...]:
    """``entries`` (``(name, fn, ...)``) with each ``fn`` timed into the plugin's observer."""
    clock = instrumentation.now
    return tuple((entry[0], _timed(entry[1], instrumentation.plugin_observer(entry[0], point), clock), *entry[2:])
                 for entry in entries)


_Method = TypeVar("_Method", bound=Callable[..., Any])


def extension_point(point: str, where: int | str | None, *, framework_arg: bool = False
                    ) -> Callable[[_Method], _Method]:
    """Observe each run of the decorated ``run_*`` method as ``point``, once its framework is
    instrumented. ``where`` is the Status in what it returns: None for the value itself, an index
    into a returned tuple, or "" when upstream always says Success. ``framework_arg``: the
    framework is the method's first argument (the algorithm's Filter over all nodes), not ``self``."""
    if point not in OBSERVED_POINTS:
        raise ValueError(f"{point!r} is not an observed extension point of the table: {OBSERVED_POINTS}")

    def decorate(method: _Method) -> _Method:
        @functools.wraps(method)
        def run(self: Any, *args: Any, **kwargs: Any) -> Any:
            observers = (args[0] if framework_arg else self).point_observers
            if observers is None:
                return method(self, *args, **kwargs)
            framework = args[0] if framework_arg else self
            observe = observers[point]
            clock = framework.instrumentation.now
            start = clock()
            try:
                returned = method(self, *args, **kwargs)
            except Exception:
                observe("Error", clock() - start)
                raise
            if where == "":
                code = "Success"
            else:
                code = code_label(returned if where is None else returned[where])
            observe(code, clock() - start)
            return returned
        return run  # type: ignore[return-value]
    return decorate
