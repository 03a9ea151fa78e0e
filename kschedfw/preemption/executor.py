"""Actuation of a preemption decision (upstream ``framework/preemption/executor.go``).

For every victim: a pod waiting at Permit is preempted in the scheduler's memory; any other pod
gets the ``DisruptionTarget=True`` condition (reason ``PreemptionByScheduler``) and is deleted
gracefully. Each victim gets a ``Preempted`` event. Lower-priority pods nominated to the same
node lose their nomination. The preemptor is a pod or a pod group (workload-aware preemption):
:class:`PodPreemptor` and :class:`PodGroupPreemptor` give the executor what it says and logs of
either (upstream ExecutorPreemptor); a pod group's candidate "node" is ``cluster``.

With SchedulerAsyncPreemption (on by default since v1.33) the work runs outside the scheduling
cycle; while it runs, the preemptor's uid is in :attr:`Executor.preempting` and DefaultPreemption's
PreEnqueue keeps the preemptor out of the active queue. kschedfw is single-threaded: the
"goroutine" is handed to :attr:`Executor.spawn`, which by default runs it at once (it is done
before PostFilter returns). Tests and simulations may replace ``spawn`` to run it later. Against a
real API server (a client with :class:`~kschedfw.fwk.interface.BackgroundApiCalls`) the
evictions' API calls run off the scheduler's thread, as upstream's goroutine: pods waiting at
Permit are preempted in memory first, the rest are evicted elsewhere, and the bookkeeping
(PreEnqueue's gate, re-activating the preemptor after a failure) is done back on the scheduler's
thread.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Callable, Iterable, Protocol

import attrs

from kschedfw.fwk.interface import BackgroundApiCalls, NotFound
from kschedfw.fwk.status import Status
from kschedfw.fwk.victims import Candidate, Victims
from kschedfw.preemption.types import DISRUPTION_TARGET, PREEMPTION_BY_SCHEDULER

if TYPE_CHECKING:
    from kschedfw.api import Pod
    from kschedfw.api.workload import PodGroup
    from kschedfw.fwk.interface import Handle

log = logging.getLogger(__name__)

#: the candidate "node" of a pod group's preemption: the domain is the whole cluster
POD_GROUP_CANDIDATE_NAME = "cluster"


class ExecutorPreemptor(Protocol):
    """What the executor needs of whoever preempts: a pod or a pod group."""

    @property
    def uid(self) -> str: ...

    @property
    def key(self) -> str: ...

    @property
    def scheduler_name(self) -> str: ...

    @property
    def priority(self) -> int: ...

    @property
    def kind(self) -> str:
        """``pod`` or ``podgroup``: how events and conditions name the preemptor."""
        ...

    @property
    def pods(self) -> list["Pod"]:
        """The pods to retry at once when an eviction failed."""
        ...


@attrs.frozen
class PodPreemptor:
    """A single pod preempting (upstream podExecutorPreemptor)."""

    pod: "Pod"
    kind = "pod"

    @property
    def uid(self) -> str:
        return self.pod.uid

    @property
    def key(self) -> str:
        return self.pod.key

    @property
    def scheduler_name(self) -> str:
        return self.pod.scheduler_name

    @property
    def priority(self) -> int:
        return self.pod.effective_priority

    @property
    def pods(self) -> list["Pod"]:
        return [self.pod]


def pod_group_priority(pod_group: "PodGroup") -> int:
    """``spec.priority``, or 0 when it has none (upstream util.PodGroupPriority: a group made
    without a default priority class, or with WorkloadAwarePreemption off)."""
    return pod_group.priority if pod_group.priority is not None else 0


def pod_group_uid(pod_group: "PodGroup") -> str:
    """The PodGroup's uid; its ``namespace/name`` for one without (built by hand, or read from a
    manifest without a uid), so that such groups are not all one preemptor."""
    return pod_group.uid or pod_group.key


@attrs.frozen
class PodGroupPreemptor:
    """A pod group preempting for its unscheduled ``members`` (upstream podGroupExecutorPreemptor):
    the events name the PodGroup's uid, the condition its pods' scheduler."""

    pod_group: "PodGroup"
    members: tuple["Pod", ...]
    kind = "podgroup"

    @property
    def uid(self) -> str:
        return pod_group_uid(self.pod_group)

    @property
    def key(self) -> str:
        return self.pod_group.key

    @property
    def scheduler_name(self) -> str:
        # every pod of a group has the same scheduler
        return self.members[0].scheduler_name if self.members else ""

    @property
    def priority(self) -> int:
        return pod_group_priority(self.pod_group)

    @property
    def pods(self) -> list["Pod"]:
        return list(self.members)


#: ``preempt_pod(candidate, preemptor, victim, plugin_name) -> error message or None``
PreemptPodFunc = Callable[[Candidate, ExecutorPreemptor, "Pod", str], "str | None"]


def aggregate_errors(messages: Iterable[str]) -> str:
    """One message as is, several distinct ones as ``[a, b]`` (upstream utilerrors.Aggregate)."""
    seen: list[str] = []
    for m in messages:
        if m not in seen:
            seen.append(m)
    if not seen:
        return ""
    if len(seen) == 1:
        return seen[0]
    return "[" + ", ".join(seen) + "]"


def _error_text(exc: BaseException) -> str:
    if isinstance(exc, KeyError) and exc.args:
        return str(exc.args[0])
    return str(exc) or type(exc).__name__


def get_lower_priority_nominated_pods(handle: Handle, priority: int, node_name: str) -> list["Pod"]:
    """Pods nominated to ``node_name`` whose priority is below ``priority``."""
    nominated = handle.nominated_pods_for_node(node_name)
    return [p for p in nominated if p.effective_priority < priority]


def clear_nominated_node_name(handle: Handle, pods: Iterable["Pod"]) -> str | None:
    """Patch ``status.nominatedNodeName`` to "" for each pod that has one; returns the errors."""
    client = handle.client
    errors: list[str] = []
    for pod in pods:
        if not pod.nominated_node_name:
            continue
        if client is not None:
            try:
                client.set_nominated_node_name(pod, "")
            except Exception as exc:  # the API call failed: keep going, report at the end
                errors.append(_error_text(exc))
                continue
        # The pod update normally reaches the nominator through the queue; make sure it does.
        handle.delete_nominated_pod_if_exists(pod)
    return aggregate_errors(errors) or None


class Executor:
    """Evicts victims, synchronously or "asynchronously" (see the module docstring)."""

    def __init__(self, handle: Handle, *, async_preemption: bool = True) -> None:
        self.handle = handle
        self.async_preemption = async_preemption
        #: uids of preemptors whose asynchronous preemption has not finished
        self.preempting: set[str] = set()
        #: preemptor uid -> (namespace, name) of the last victim being evicted
        self.last_victims_pending_preemption: dict[str, tuple[str, str]] = {}
        #: evicts one victim; replaceable in tests
        self.preempt_pod: PreemptPodFunc = self._preempt_pod
        #: runs the asynchronous part; the default runs it immediately
        self.spawn: Callable[[Callable[[], None]], None] = lambda fn: fn()

    # ------------------------------------------------------------------ one victim
    def _preempt_pod(self, candidate: Candidate, preemptor: ExecutorPreemptor, victim: "Pod", plugin_name: str) -> str | None:
        if self._preempt_if_waiting(candidate, preemptor, victim, plugin_name):
            return None
        return self._evict(candidate, preemptor, victim)

    def _preempt_if_waiting(self, candidate: Candidate, preemptor: ExecutorPreemptor, victim: "Pod", plugin_name: str) -> bool:
        """A pod held at Permit goes back to the queue without an API call; True if it was one."""
        waiting = self.handle.get_waiting_pod(victim.uid)
        if waiting is None or not waiting.preempt(plugin_name, "preempted"):
            return False
        self.handle.event_recorder.record_event(
            victim, "Normal", "Preempted",
            f"Preempted by {preemptor.kind} {preemptor.uid} on node {candidate.name} (in kube-scheduler memory).")
        return True

    def _evict(self, candidate: Candidate, preemptor: ExecutorPreemptor, victim: "Pod") -> str | None:
        """The DisruptionTarget condition, then a graceful deletion; the error text, if any. Only
        API calls and an event: it may run off the scheduler's thread."""
        client = self.handle.client
        if client is not None:
            condition_message = f"{preemptor.scheduler_name}: preempting to accommodate a higher priority {preemptor.kind}"
            existing = victim.condition(DISRUPTION_TARGET)
            if existing is None or (existing.status, existing.reason, existing.message) != \
                    ("True", PREEMPTION_BY_SCHEDULER, condition_message):
                try:
                    patched = client.add_pod_condition(victim, DISRUPTION_TARGET, "True",
                                                       PREEMPTION_BY_SCHEDULER, condition_message)
                except NotFound:
                    patched = None
                except Exception as exc:
                    log.error("could not add DisruptionTarget condition to %s: %s", victim.key, exc)
                    return _error_text(exc)
                if patched is None:
                    log.debug("victim %s is already deleted", victim.key)
                    return None
            try:
                client.delete_pod(victim)
            except NotFound:
                log.debug("victim %s is already deleted", victim.key)
                return None
            except Exception as exc:
                log.error("tried to preempt pod %s: %s", victim.key, exc)
                return _error_text(exc)
            log.debug("preemptor %s preempted victim %s on node %s", preemptor.key, victim.key, candidate.name)
        self.handle.event_recorder.record_event(victim, "Normal", "Preempted",
                                                f"Preempted by {preemptor.kind} {preemptor.uid} on node {candidate.name}")
        return None

    # ------------------------------------------------------------------ a whole candidate
    def actuate_pod_preemption(self, target_node: str, victims: Victims, preemptor: "Pod",
                               plugin_name: str) -> Status | None:
        """Evict ``victims`` so that the pod ``preemptor`` fits ``target_node``."""
        return self._actuate(Candidate(target_node, victims), PodPreemptor(preemptor), plugin_name)

    def actuate_pod_group_preemption(self, victims: Victims, preemptor_pods: Iterable["Pod"],
                                     pod_group: "PodGroup", plugin_name: str) -> Status | None:
        """Evict ``victims`` so that ``pod_group``'s ``preemptor_pods`` fit the cluster."""
        return self._actuate(Candidate(POD_GROUP_CANDIDATE_NAME, victims),
                             PodGroupPreemptor(pod_group, tuple(preemptor_pods)), plugin_name)

    def _actuate(self, candidate: Candidate, preemptor: ExecutorPreemptor, plugin_name: str) -> Status | None:
        if self.async_preemption:
            self.prepare_candidate_async(candidate, preemptor, plugin_name)
            return None
        return self.prepare_candidate(candidate, preemptor, plugin_name)

    def prepare_candidate(self, candidate: Candidate, preemptor: ExecutorPreemptor, plugin_name: str) -> Status | None:
        """Synchronous actuation: evict every victim, then clear lower-priority nominations."""
        for victim in candidate.victims.pods:
            if victim.deletion_timestamp is not None:
                continue  # graceful deletion already started
            error = self.preempt_pod(candidate, preemptor, victim, plugin_name)
            if error is not None:
                return Status.as_status(error)
        nominated = get_lower_priority_nominated_pods(self.handle, preemptor.priority, candidate.name)
        error = clear_nominated_node_name(self.handle, nominated)
        if error is not None:
            log.error("cannot clear 'NominatedNodeName' field: %s", error)
        return None

    def prepare_candidate_async(self, candidate: Candidate, preemptor: ExecutorPreemptor, plugin_name: str) -> None:
        """Asynchronous actuation; the preemptor is gated at PreEnqueue until it is done."""
        victim_pods = [v for v in candidate.victims.pods if v.deletion_timestamp is None]
        if not victim_pods:
            return
        uid = preemptor.uid
        self.preempting.add(uid)

        def finish(failed: bool) -> None:
            self.preempting.discard(uid)
            self.last_victims_pending_preemption.pop(uid, None)
            if failed:
                # The preemptor could be stuck in the unschedulable pool: retry it now.
                self.handle.activate(preemptor.pods)

        def run() -> None:
            log.debug("start the preemption asynchronously: preemptor=%s node=%s numVictims=%d numVictimsToDelete=%d",
                      preemptor.key, candidate.name, len(candidate.victims.pods), len(victim_pods))
            nominated = get_lower_priority_nominated_pods(self.handle, preemptor.priority, candidate.name)
            error = clear_nominated_node_name(self.handle, nominated)
            if error is not None:
                log.error("cannot clear 'NominatedNodeName' field from lower priority pods on node %s: %s",
                          candidate.name, error)
            failed = error is not None
            background = self.handle.client
            if not isinstance(background, BackgroundApiCalls):
                finish(self._evict_in_order(candidate, preemptor, victim_pods, plugin_name) or failed)
                return
            to_evict = [v for v in victim_pods if not self._preempt_if_waiting(candidate, preemptor, v, plugin_name)]
            if not to_evict:
                finish(failed)
                return
            last = to_evict[-1]
            self.last_victims_pending_preemption[uid] = (last.namespace, last.name)
            background.run_api_calls(lambda: self._evict_in_order(candidate, preemptor, to_evict, plugin_name),
                                     lambda result: finish(result is not False or failed))

        self.spawn(run)

    def _evict_in_order(self, candidate: Candidate, preemptor: ExecutorPreemptor, victims: list["Pod"],
                        plugin_name: str) -> bool:
        """All victims but the last, then the last one (recorded first, so that PreEnqueue can
        tell when its eviction has started); stop at the first failure. True if one failed."""
        for victim in victims[:-1]:
            error = self.preempt_pod(candidate, preemptor, victim, plugin_name)
            if error is not None:
                log.error("error occurred during async preemption: %s", error)
                return True
        last = victims[-1]
        self.last_victims_pending_preemption[preemptor.uid] = (last.namespace, last.name)
        error = self.preempt_pod(candidate, preemptor, last, plugin_name)
        if error is not None:
            log.error("error occurred during async preemption of the last victim: %s", error)
            return True
        return False

    # ------------------------------------------------------------------ PreEnqueue support
    def is_pod_running_preemption(self, pod_uid: str) -> bool:
        """True while the pod's asynchronous preemption is still evicting victims."""
        return self._is_running_preemption(pod_uid)

    def is_pod_group_running_preemption(self, group_uid: str) -> bool:
        """True while the pod group's asynchronous preemption is still evicting victims."""
        return self._is_running_preemption(group_uid)

    def _is_running_preemption(self, uid: str) -> bool:
        if uid not in self.preempting:
            return False
        pending = self.last_victims_pending_preemption.get(uid)
        if pending is None:
            return True  # not even the last victim has been reached yet
        namespace, name = pending
        victim = self.handle.lister.get("Pod", name, namespace)
        if victim is None:
            return False  # already gone
        if victim.deletion_timestamp is not None:
            return False  # its deletion has started
        return True
