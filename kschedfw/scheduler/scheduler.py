"""The scheduler (upstream scheduler.go): a profile per schedulerName, the collaborators built once
and wired together, and the loop that runs them.

Single-threaded and event-driven: cluster changes arrive as watch events, time comes from the
cluster's clock, and what upstream does concurrently (binding, Permit waits) resumes through
callbacks, so a run is reproducible from its seed.

One event discipline on every backend: the backend queues watch events and the loop hands them to
the handlers (``cluster.deliver()``) before each cycle and after timers ran, never inside a plugin
call or a write. So a bind's outcome comes before the watch event that confirms it, as upstream's
binding goroutine finishes before its informer sees the bound pod.
"""

from __future__ import annotations

import random
from typing import TYPE_CHECKING, Any, Callable, Iterable, Mapping

from kschedfw.cache.cache import Cache
from kschedfw.cycle import ScheduleAlgorithm
from kschedfw.extenders.cycle import build_extenders, with_extender_ignored_resources
from kschedfw.extenders.http_extender import ExtenderConfigError
from kschedfw.framework.batch import BatchMetrics
from kschedfw.framework.profile import new_profile
from kschedfw.framework.runtime import Framework, FrameworkError
from kschedfw.framework.waiting_pods import WaitingPod
from kschedfw.fwk.features import enabled
from kschedfw.queue import Nominator, PriorityQueue
from kschedfw.queue.active_queue import InFlightEvent
from kschedfw.scheduler.binding import BindingCycle
from kschedfw.scheduler.eventhandlers import EventHandlers
from kschedfw.scheduler.loop_metrics import NULL_METRICS
from kschedfw.scheduler.outcomes import AttemptLog, AttemptRecord, FailureHandler
from kschedfw.scheduler.schedule_one import SchedulingCycle

if TYPE_CHECKING:
    from kschedfw.api import Pod
    from kschedfw.config.expand import SchedulerConfig
    from kschedfw.framework.registry import Registry
    from kschedfw.fwk.interface import Backend
    from kschedfw.metrics import SchedulerMetrics
    from kschedfw.scheduler.loop_metrics import LoopMetrics

#: ``idle(deadline) -> keep running?``: see :meth:`Scheduler.run`.
IdleHook = Callable[[float | None], bool]


class Scheduler:
    """Upstream Scheduler: the profiles by schedulerName (``frameworks``), the cache and queue
    they share, the event handlers, the scheduling and binding cycles, and the loop."""

    def __init__(self, config: "SchedulerConfig", registry: "Registry", cluster: "Backend",
                 *, seed: int = 0, record_attempts: bool = True,
                 feature_gates: Mapping[str, bool] | None = None, fast_paths: bool = True,
                 once: bool = False, ties: str = "random", metrics: "SchedulerMetrics | None" = None) -> None:
        """``once`` and ``ties`` are kschedfw extensions, not upstream: with ``once`` a pod whose
        attempt fails is never retried (see :class:`~kschedfw.queue.PriorityQueue`); ``ties``
        is how the cycle breaks ties between the best nodes (:data:`kschedfw.cycle.TIES`).
        ``metrics``: report upstream's metrics there (every profile compiles its timed plan
        against it: plugin durations for the sampled cycles, extension-point durations for every
        run); None: none are kept."""
        # extenders' ignoredByScheduler resources are NodeResourcesFit's ignoredResources (upstream)
        config = with_extender_ignored_resources(config)
        try:
            self.extenders = build_extenders(config)
        except ExtenderConfigError as exc:
            raise FrameworkError(f"couldn't build extenders: {exc}") from None
        self.config = config
        self.cluster = cluster
        self.clock = cluster.clock
        self.cache = Cache()
        self.waiting_pods: dict[str, WaitingPod] = {}
        #: upstream's metrics, or the null metrics that keep nothing (chosen once)
        self.metrics: "LoopMetrics" = metrics if metrics is not None else NULL_METRICS
        self.frameworks: dict[str, Framework] = {}
        #: upstream's batching counters (gate OpportunisticBatching), for every profile
        self.batch_metrics = BatchMetrics()
        # built before the queue (which needs the profiles' QueueSort), so every Handle has it
        nominator = Nominator(self._current_pod)
        for profile in config.profiles:
            fwk = new_profile(profile, registry, cluster, snapshot=self.cache.snapshot, nominator=nominator,
                              waiting_pods=self.waiting_pods, activate=self._activate, extenders=self.extenders,
                              metrics=metrics, feature_gates=feature_gates, fast_paths=fast_paths,
                              batch_metrics=self.batch_metrics, seed=seed, pod_group_manager=self.cache)
            self.frameworks[profile.scheduler_name] = fwk
        first = next(iter(self.frameworks.values()))
        # the cycle uses no batch when ties go by name: signing the pods would be wasted
        batching = ties == "random" and any(fwk.batch is not None for fwk in self.frameworks.values())
        self.queue = PriorityQueue(less=first.less, frameworks=self.frameworks, clock=self.clock,
                                   sort_key=first.queue_sort_key,
                                   pod_initial_backoff=float(config.pod_initial_backoff_seconds),
                                   pod_max_backoff=float(config.pod_max_backoff_seconds),
                                   pod_lister=self._current_pod, namespace_labels=self._namespace_labels,
                                   pod_signers={name: fwk.sign_pod for name, fwk in self.frameworks.items()}
                                   if batching else None, once=once, nominator=nominator,
                                   pod_groups_retry_by_backoff=enabled(feature_gates, "GenericWorkload"))
        if self.metrics.enabled:  # without metrics the queue does not time its hints at all
            self.queue.observe_hint = self.metrics.queueing_hint_ran
        self.algorithm = ScheduleAlgorithm(percentage_of_nodes_to_score=config.percentage_of_nodes_to_score,
                                           rng=random.Random(seed), nominator=self.queue.nominator,
                                           extenders=self.extenders, ties=ties)
        self.attempt_log = AttemptLog(self.clock, enabled=record_attempts)
        handle_failure = FailureHandler(cluster=cluster, queue=self.queue, attempts=self.attempt_log,
                                        metrics=self.metrics)
        self.binding = BindingCycle(cluster=cluster, cache=self.cache, queue=self.queue,
                                    waiting_pods=self.waiting_pods, extenders=self.extenders,
                                    attempts=self.attempt_log, handle_failure=handle_failure,
                                    metrics=self.metrics, on_bound=self._progressed)
        self.scheduling = SchedulingCycle(cluster=cluster, cache=self.cache, queue=self.queue,
                                          frameworks=self.frameworks, algorithm=self.algorithm,
                                          binding=self.binding, attempts=self.attempt_log,
                                          handle_failure=handle_failure, metrics=self.metrics,
                                          generic_workload=enabled(feature_gates, "GenericWorkload"),
                                          topology_aware=enabled(feature_gates, "TopologyAwareWorkloadScheduling"),
                                          workload_aware_preemption=enabled(feature_gates, "WorkloadAwarePreemption"))
        self.handlers = EventHandlers(cache=self.cache, queue=self.queue, scheduler_names=self.frameworks,
                                      waiting_pods=self.waiting_pods, metrics=self.metrics,
                                      generic_workload=enabled(feature_gates, "GenericWorkload"),
                                      gang_scheduling=enabled(feature_gates, "GangScheduling"))
        if self.scheduling.pod_groups is not None:
            self.handlers.on_pod_group_deleted = self.scheduling.pod_groups.forget
        cluster.watch(self.handlers.callback())
        #: called when something changed: a pod was bound, or a backend timer ran
        self.on_progress: Callable[[], None] | None = None
        # what reports read, the collaborators' own (not copies)
        #: every attempt's outcome so far, in order (empty unless ``record_attempts``)
        self.attempts: list[AttemptRecord] = self.attempt_log.records
        #: the pods this scheduler bound (not the ones that came bound)
        self.bound_uids: set[str] = self.binding.bound_uids
        #: the pods whose binding cycle waits on the backend (BINDING_MAY_WAIT_KEY)
        self.waiting_bindings: set[str] = self.binding.waiting_bindings

    # ------------------------------------------------------------------ what others read
    @property
    def bound_count(self) -> int:
        """How many pods this scheduler bound."""
        return len(self.bound_uids)

    def metric_counts(self) -> tuple[dict[str, int], dict[str, Any]]:
        """What :meth:`SchedulerMetrics.publish` copies: the pending pods per queue, and the
        counts kept anyway (incoming pods, unschedulable plugins, cache sizes, in-flight
        events, batching)."""
        queue = self.queue
        inflight: dict[str, int] = {}
        for item in queue.active_q.in_flight_events():
            label = item.event.label if isinstance(item, InFlightEvent) else "PodPopped"
            inflight[label] = inflight.get(label, 0) + 1
        batch = self.batch_metrics.counters()
        return dict(queue.pending_pods()), {
            "incoming": dict(queue.incoming_pods), "unschedulable": queue.unschedulable_reasons(),
            "cache": self.cache.sizes(), "inflight": inflight,
            "batch_attempts": batch[self.batch_metrics.ATTEMPTS],
            "batch_flushed": batch[self.batch_metrics.CACHE_FLUSHED],
        }

    def plugin_faults(self) -> list[str]:
        """Every plugin fault so far (raised, wrong return type, bad score), one line per
        (profile, plugin, extension point, cause) with its count; each was logged once."""
        return [f"{name}: {line}" for name, fwk in self.frameworks.items() for line in fwk.faults.summary()]

    # ------------------------------------------------------------------ what the profiles' Handles call
    def _current_pod(self, key: str) -> "Pod | None":
        namespace, _, name = key.partition("/")
        pod: "Pod | None" = self.cluster.get("Pod", name, namespace)
        return pod

    def _namespace_labels(self, namespace: str) -> dict[str, str] | None:
        ns = self.cluster.get("Namespace", namespace)
        return ns.labels if ns is not None else None

    def _activate(self, pods: Iterable["Pod"]) -> None:
        trial = self.scheduling.pod_groups.trial_uids if self.scheduling.pod_groups is not None else None
        if trial:  # a pod-group trial's own pods are being tried already (see PodGroupCycle)
            pods = [pod for pod in pods if pod.uid not in trial]
            if not pods:
                return
        self.queue.activate(list(pods))

    def _progressed(self) -> None:
        if self.on_progress is not None:
            self.on_progress()

    # ------------------------------------------------------------------ the loop
    def run(self, until: float | None = None, *, stop: Callable[[], bool] | None = None,
            idle: IdleHook | None = None) -> None:
        """Schedule every ready pod, run what falls due (backend timers such as victims' grace
        periods, Permit timeouts, backoff expiry, the 5-minute flush of unschedulable pods), and
        when nothing is ready hand the next deadline to ``idle``.

        ``until``: return once the next deadline is later than this (the clock is not moved there).
        ``stop``: checked before every cycle; True returns at once.
        ``idle(deadline)``: called when nothing is ready, with the next deadline (None: nothing is
        scheduled); it returns False to end the run. A backend that receives events from outside
        blocks there until an event arrives or the deadline passes; the default moves a simulated
        clock to the deadline and ends the run when there is none."""
        if idle is None:
            idle = self._jump
        schedule_one = self.scheduling.schedule_one
        self.run_due()
        while True:
            if stop is not None and stop():
                return
            if schedule_one():
                continue
            self.run_due()
            if stop is not None and stop():
                return
            if self.queue.pending_pods().get("active", 0):
                continue
            deadline = self.next_wakeup()
            if until is not None and (deadline is None or deadline > until):
                return
            if not idle(deadline):
                return
            self.run_due()

    def _jump(self, deadline: float | None) -> bool:
        """The default idle hook: a simulated clock jumps to the deadline."""
        if deadline is None:
            return False
        if deadline > self.clock.now():
            set_clock = getattr(self.clock, "set", None)
            if set_clock is None:
                raise TypeError("Scheduler.run: this backend's clock cannot jump; pass an idle hook")
            set_clock(deadline)
        return True

    def run_due(self) -> bool:
        """Run everything due now; True when a backend timer ran (which counts as progress:
        ``on_progress`` is called)."""
        cluster = self.cluster
        ran = cluster.run_due_timers()
        cluster.deliver()
        if ran:
            self._progressed()
        self.expire_waiting_pods()
        cluster.deliver()
        self.queue.flush_backoff_q_completed()
        self.queue.flush_unschedulable_pods_leftover()
        return ran

    def next_wakeup(self) -> float | None:
        """The next moment something scheduled happens: a backend timer, a Permit timeout, a
        backoff expiry or the unschedulable flush; None when nothing is scheduled."""
        times = [t for t in (self.cluster.next_timer(), self.next_waiting_deadline(), self.queue.next_wakeup())
                 if t is not None]
        return min(times) if times else None

    def expire_waiting_pods(self) -> None:
        """Time out the Permit waits whose deadline passed (each resumes its binding cycle)."""
        now = self.clock.now()
        for wp in list(self.waiting_pods.values()):
            deadline = wp.next_deadline()
            if deadline is not None and deadline <= now:
                wp.expire(now)

    def next_waiting_deadline(self) -> float | None:
        deadlines = [d for wp in self.waiting_pods.values() if (d := wp.next_deadline()) is not None]
        return min(deadlines) if deadlines else None
