"""The scheduler, on upstream's seams: :mod:`~kschedfw.scheduler.scheduler` (profiles, wiring and
the loop), :mod:`~kschedfw.scheduler.eventhandlers` (watch events into the cache and the queue),
:mod:`~kschedfw.scheduler.schedule_one` (the scheduling cycle), :mod:`~kschedfw.scheduler.binding`
(the binding cycle), :mod:`~kschedfw.scheduler.outcomes` (the attempt log and the failure handler
both cycles share), :mod:`~kschedfw.scheduler.event_labels` and
:mod:`~kschedfw.scheduler.loop_metrics` (what the handlers and the loop report)."""

from kschedfw.scheduler.outcomes import AttemptRecord
from kschedfw.scheduler.scheduler import IdleHook, Scheduler

__all__ = ["Scheduler", "AttemptRecord", "IdleHook"]
