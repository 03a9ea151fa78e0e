"""The queueing-hint audit (`simulate --audit-hints`): where a plugin's queueing hints kept a pod
waiting after an event that had made it schedulable, and where they requeued pods for events
that never helped.

A pod in the unschedulable pool is moved only when one of its rejectors' hints says Queue for
an event (upstream's ``isPodWorthRequeuing``). A hint that returns QueueSkip for an event that
did help strands the pod until something else moves it (often the five-minute flush, upstream's
``scheduler_pod_scheduled_after_flush_total``). So after each event handled while a pod's hints
skipped it, the pod is dry-run on the cluster as that event left it (every node filtered, nothing
changed); the first such event after which it fits is reported with how long the pod then
waited. The reverse: each time a hint's Queue moved a pod, its next attempt says whether that
helped; the moves that did not are wasted retries, counted per plugin and event.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

import attrs

from kschedfw.framework.recorder import ForwardingRecorder
from kschedfw.scheduler.schedule_one import new_cycle_state

if TYPE_CHECKING:
    from kschedfw.api import Pod
    from kschedfw.framework.recorder import CycleRecorder
    from kschedfw.fwk.events import ClusterEvent
    from kschedfw.fwk.status import Status
    from kschedfw.fwk.types import QueuedPodInfo
    from kschedfw.scheduler import Scheduler

__all__ = ["HintAudit", "HintAuditReport", "MissedEvent", "Requeues"]


@attrs.define
class MissedEvent:
    """An event after which ``pod`` would have fitted, skipped by ``plugins``' hints; ``waited``:
    simulated seconds from it to the pod's next attempt (to the run's end if none came)."""

    pod: str
    event: str  # the cluster event's label
    object: str  # what changed (a node's name, a pod's namespace/name)
    at: float
    plugins: tuple[str, ...]
    waited: float | None = None
    attempted: bool = False

    def describe(self) -> str:
        hints = " and ".join(f"{p}'s" for p in self.plugins)
        waited = f"waited {self.waited or 0:g} s" + ("" if self.attempted else " (still pending at the end)")
        return (f"{self.pod} {waited}: {self.event} {self.object} made it fit; "
                f"{hints} hint{'s' if len(self.plugins) > 1 else ''} skipped it")

    def as_json(self) -> dict[str, Any]:
        return {"pod": self.pod, "event": self.event, "object": self.object, "at": self.at,
                "plugins": list(self.plugins), "waited": self.waited, "attempted": self.attempted,
                "message": self.describe()}


@attrs.define
class Requeues:
    """One plugin's hint for one event: how often its Queue moved a pod, and how often the pod's
    next attempt then failed anyway (wasted) or succeeded (helped)."""

    plugin: str
    event: str
    requeued: int = 0
    wasted: int = 0
    helped: int = 0

    def as_json(self) -> dict[str, Any]:
        return attrs.asdict(self)


@attrs.frozen
class HintAuditReport:
    missed: tuple[MissedEvent, ...]
    requeues: tuple[Requeues, ...]

    def as_json(self) -> dict[str, Any]:
        return {"missed": [m.as_json() for m in self.missed], "requeues": [r.as_json() for r in self.requeues]}

    def render(self) -> list[str]:
        lines = [f"queueing-hint audit: {len(self.missed)} pod{'s' if len(self.missed) != 1 else ''} kept "
                 "waiting by a hint that skipped the event that made it fit"]
        lines.extend(f"  {m.describe()}" for m in self.missed)
        wasted = [r for r in self.requeues if r.wasted]
        if wasted:
            lines.append("requeues that did not help (plugin, event: wasted of requeued):")
            lines.extend(f"  {r.plugin}, {r.event}: {r.wasted} of {r.requeued}" for r in wasted)
        return lines


class _Tap(ForwardingRecorder):
    def __init__(self, audit: "HintAudit", pod: "Pod", inner: "CycleRecorder | None") -> None:
        super().__init__(inner)
        self.audit, self.pod = audit, pod

    def result(self, evaluated: int, feasible: int, node: str, status: "Status | None") -> None:
        super().result(evaluated, feasible, node, status)
        self.audit.attempted(self.pod, bool(node))


class HintAudit:
    """Watches one scheduler's queue (:meth:`attach` before the run, :meth:`report` after it)."""

    def __init__(self, scheduler: "Scheduler") -> None:
        self.scheduler = scheduler
        self.now: Callable[[], float] = scheduler.clock.now
        self._observed: list[tuple[str, str]] = []
        #: (pod, event label, object, the plugins whose hints skipped it, whether one of them gated it)
        self._checks: list[tuple["Pod", str, str, tuple[str, ...], bool]] = []
        self._open: dict[str, MissedEvent] = {}  # pod uid -> its finding, until its next attempt
        self._missed: list[MissedEvent] = []
        self._requeued: dict[str, Requeues] = {}  # pod uid -> the hint that moved it last
        self._requeues: dict[tuple[str, str], Requeues] = {}

    def attach(self) -> "HintAudit":
        queue, handlers, cycle = self.scheduler.queue, self.scheduler.handlers, self.scheduler.scheduling
        decided, observe, after, recorder_for = (queue.hint_decided, queue.observe_hint,
                                                 handlers.after_event, cycle.recorder_for)

        def observed(plugin: str, label: str, result: str, seconds: float) -> None:
            self._observed.append((plugin, result))
            if observe is not None:
                observe(plugin, label, result, seconds)

        def audited(qpi: "QueuedPodInfo", event: "ClusterEvent", old: Any, new: Any, strategy: Any) -> None:
            if decided is not None:
                decided(qpi, event, old, new, strategy)
            self._decided(qpi, event, old if new is None else new, int(strategy), self._observed)
            self._observed = []

        def handled(event: Any) -> None:
            if after is not None:
                after(event)
            self._dry_run()

        def tapped(pod: "Pod") -> "CycleRecorder | None":
            return _Tap(self, pod, recorder_for(pod) if recorder_for is not None else None)

        queue.observe_hint = observed
        queue.hint_decided = audited
        handlers.after_event = handled
        cycle.recorder_for = tapped
        return self

    def _decided(self, qpi: "QueuedPodInfo", event: "ClusterEvent", obj: Any, strategy: int,
                 observed: list[tuple[str, str]]) -> None:
        pod = qpi.pod
        if strategy == 0:  # QueueSkip: a hint said so (none observed: no rejector registered it)
            skipped = tuple(dict.fromkeys(p for p, result in observed if result == "QueueSkip"))
            if skipped and pod.uid not in self._open:
                gated = any(p in qpi.pending_plugins for p in skipped)
                self._checks.append((pod, event.label, _name(obj), skipped, gated))
            return
        moved_by = next((p for p, result in reversed(observed) if result == "Queue"), "")
        if moved_by:
            entry = self._requeues.setdefault((moved_by, event.label), Requeues(moved_by, event.label))
            entry.requeued += 1
            self._requeued[pod.uid] = entry

    def _dry_run(self) -> None:
        """Each pod a hint skipped for the event just handled, tried on the cluster it left."""
        checks, self._checks = self._checks, []
        if not checks:
            return
        scheduler = self.scheduler
        scheduler.cache.update_snapshot()
        for pod, label, name, plugins, gated in checks:
            fwk = scheduler.frameworks.get(pod.scheduler_name)
            if fwk is None or pod.uid in self._open or not _schedulable(scheduler, fwk, pod, gated):
                continue
            finding = MissedEvent(pod.key, label, name, self.now(), plugins)
            self._open[pod.uid] = finding
            self._missed.append(finding)

    def attempted(self, pod: "Pod", scheduled: bool) -> None:
        finding = self._open.pop(pod.uid, None)
        if finding is not None:
            finding.waited, finding.attempted = self.now() - finding.at, True
        entry = self._requeued.pop(pod.uid, None)
        if entry is not None:
            if scheduled:
                entry.helped += 1
            else:
                entry.wasted += 1

    def report(self) -> HintAuditReport:
        """What was found; a pod still waiting has waited until now."""
        now = self.now()
        for finding in self._open.values():
            finding.waited = now - finding.at
        return HintAuditReport(tuple(self._missed),
                               tuple(sorted(self._requeues.values(), key=lambda r: (-r.wasted, r.plugin, r.event))))


def _schedulable(scheduler: "Scheduler", fwk: Any, pod: "Pod", gated: bool) -> bool:
    """Whether ``pod`` could be scheduled on the cluster as it is now: its PreEnqueue plugins let
    it in (a gated pod is not schedulable however the nodes look), then every node filtered as
    its next cycle would. A pod of a PodGroup is placed by the group's cycle, which a one-pod dry
    run does not answer: for it only a PreEnqueue gate that opened counts (``gated``: a plugin
    whose hint skipped the event had gated the pod)."""
    status = fwk.run_pre_enqueue_plugins(pod)
    if status is not None and not status.is_success():
        return False
    if pod.scheduling_group is not None:
        return gated
    state, _ = new_cycle_state()
    result, status = scheduler.scheduling.schedule_pod(fwk, state, pod, dry_run=True)
    return (status is None or status.is_success()) and bool(result.suggested_host)


def _name(obj: Any) -> str:
    if obj is None:
        return ""
    key = getattr(obj, "key", None)
    return str(key) if isinstance(key, str) and "/" in key else str(getattr(obj, "name", ""))
