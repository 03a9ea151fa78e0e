"""How a scheduling attempt ends, for both cycles: the log of attempts (for reports and
`explain`) and upstream's handleSchedulingFailure. It sits below the scheduling and the binding
cycle, since a pod fails in either."""

from __future__ import annotations

from typing import TYPE_CHECKING

import attrs

from kschedfw.api.pod import SCHEDULER_ERROR
from kschedfw.cycle import fit_status
from kschedfw.fwk.fit_error import Diagnosis, FitError
from kschedfw.fwk.status import Code, Status
from kschedfw.fwk.types import NominatingInfo, NominatingMode

if TYPE_CHECKING:
    from kschedfw.api import Pod
    from kschedfw.framework.runtime import Framework
    from kschedfw.fwk.interface import Backend, Clock
    from kschedfw.fwk.types import QueuedPodInfo
    from kschedfw.queue import PriorityQueue
    from kschedfw.scheduler.loop_metrics import LoopMetrics

#: events are truncated to this, the PodScheduled condition is not
MAX_EVENT_MESSAGE = 1024


@attrs.define
class AttemptRecord:
    """The outcome of one scheduling attempt, for reports and `explain`."""

    pod: str
    profile: str
    cycle: int
    time: float
    result: str  # "Scheduled" | "Unschedulable" | "SchedulerError" | "Waiting"
    node: str = ""
    message: str = ""
    #: the pod's attempt count when this was recorded (upstream QueuedPodInfo.Attempts)
    attempt: int = 0


@attrs.frozen
class Failure:
    """How a pod's last failed attempt ended: the status (a FitError's Diagnosis inside when no
    node fit) and what became of its nomination, from which a report builds the structured reason."""

    status: Status
    #: the node PostFilter nominated ("": it cleared the nomination; None: left it as it was)
    nominated_node: str | None = None


class AttemptLog:
    """Every attempt's outcome, in order, unless ``enabled`` is off (a benchmark keeps none), and
    each pod's last failure while ``keep_failures`` (default: as ``enabled``). Only the last one
    per pod is kept: a Diagnosis holds a status per node, and a report explains where a pod is
    now, not each retry."""

    def __init__(self, clock: "Clock", *, enabled: bool = True, keep_failures: bool | None = None) -> None:
        self.clock = clock
        self.enabled = enabled
        self.records: list[AttemptRecord] = []
        self.keep_failures = enabled if keep_failures is None else keep_failures
        #: pod uid -> its last failed attempt, until it is scheduled
        self.failures: dict[str, Failure] = {}

    def failed(self, pod: "Pod", status: Status, nominated_node: str | None) -> None:
        if self.keep_failures:
            self.failures[pod.uid] = Failure(status, nominated_node)

    def record(self, qpi: "QueuedPodInfo", fwk: "Framework", cycle: int, result: str, node: str = "",
               message: str = "") -> None:
        if self.keep_failures and result == "Scheduled":
            self.failures.pop(qpi.pod.uid, None)
        if self.enabled:
            self.records.append(AttemptRecord(qpi.pod.key, fwk.profile_name, cycle, self.clock.now(),
                                              result, node, message, qpi.attempts))


def one_node_failure(pod: "Pod", host: str, status: Status) -> Status:
    """A Reserve/Permit rejection becomes a FitError over one node, as upstream reports it."""
    if not status.is_rejected():
        return status
    diagnosis = Diagnosis()
    diagnosis.node_to_status.set(host, status)
    if status.code is Code.Pending:
        diagnosis.pending_plugins.add(status.plugin)
    else:
        diagnosis.unschedulable_plugins.add(status.plugin)
    return fit_status(FitError(pod.key, 1, diagnosis))


class FailureHandler:
    """Upstream handleSchedulingFailure: requeue, nominate, event, PodScheduled condition."""

    def __init__(self, *, cluster: "Backend", queue: "PriorityQueue", attempts: AttemptLog,
                 metrics: "LoopMetrics") -> None:
        self.cluster = cluster
        self.queue = queue
        self.attempts = attempts
        self.metrics = metrics

    def __call__(self, fwk: "Framework", qpi: "QueuedPodInfo", status: Status,
                 nominating_info: NominatingInfo | None, cycle: int) -> None:
        pod = qpi.pod
        reason = "Unschedulable" if status.is_rejected() else SCHEDULER_ERROR
        self.metrics.attempt(pod.uid, "unschedulable" if status.is_rejected() else "error", fwk.profile_name)
        fit_error = status.error if isinstance(status.error, FitError) else None
        if fit_error is not None:
            qpi.unschedulable_plugins = set(fit_error.diagnosis.unschedulable_plugins)
            qpi.pending_plugins = set(fit_error.diagnosis.pending_plugins)
        else:
            qpi.unschedulable_plugins = set()
            qpi.pending_plugins = set()
        message = str(fit_error) if fit_error is not None else status.message()
        # before the status patch: a dry run's decision, made there, reads it
        self.attempts.failed(pod, status, None if nominating_info is None or nominating_info.mode is not
                             NominatingMode.Override else nominating_info.nominated_node_name)
        queue = self.queue
        current = self.cluster.get("Pod", pod.name, pod.namespace)
        if current is None or current.node_name:
            queue.done(pod.uid)
        elif current.uid != pod.uid:
            # recreated while its failure was handled: upstream skips requeueing and status updates
            queue.done(pod.uid)
            self.attempts.record(qpi, fwk, cycle, reason, "", message)
            return
        else:
            qpi.pod = current
            queue.add_unschedulable_if_not_present(qpi, cycle)
            queue.done(pod.uid)
        nominated: str | None = None
        if nominating_info is not None and nominating_info.mode is NominatingMode.Override:
            nominated = nominating_info.nominated_node_name
            queue.nominator.add_nominated_pod(current or pod, nominating_info)
        event_message = message
        if len(event_message) > MAX_EVENT_MESSAGE:
            event_message = event_message[:MAX_EVENT_MESSAGE - 4] + " ..."
        self.cluster.record_event(pod, "Warning", "FailedScheduling", event_message)
        self.cluster.patch_pod_scheduling_failure(pod, reason, message, nominated)
        self.attempts.record(qpi, fwk, cycle, reason, nominated or "", message)
