"""The queueing-hint audit for plugin authors: run a plugin's scenarios and fail on every event
its hints skipped although it made a pending pod schedulable.

    from kschedfw.testing import assert_hints_sound

    def test_my_hints():
        assert_hints_sound([MyPlugin, *defaults], objects, steps)

See :mod:`kschedfw.hintaudit` for what is checked."""

from __future__ import annotations

from typing import Any, Iterable

from kschedfw.hintaudit import HintAudit, HintAuditReport
from kschedfw.testing.profiles import simulation_with

__all__ = ["audit_hints", "assert_hints_sound"]


def audit_hints(classes: Iterable[type], objects: Iterable[Any], steps: Iterable[Any] = (), *,
                until: float | None = None, **kwargs: Any) -> HintAuditReport:
    """The audit of one run of ``objects`` and ``steps`` with a profile of exactly ``classes``
    (arguments as :func:`~kschedfw.testing.simulate_with`'s)."""
    sim = simulation_with(classes, objects, steps, **kwargs)
    audit = HintAudit(sim.scheduler).attach()
    sim.run(until=until)
    return audit.report()


def assert_hints_sound(classes: Iterable[type], objects: Iterable[Any], steps: Iterable[Any] = (),
                       **kwargs: Any) -> HintAuditReport:
    """:func:`audit_hints`, raising AssertionError with every event a hint wrongly skipped."""
    report = audit_hints(classes, objects, steps, **kwargs)
    if report.missed:
        raise AssertionError("queueing hints skipped events that made pods schedulable:\n"
                             + "\n".join(m.describe() for m in report.missed))
    return report
