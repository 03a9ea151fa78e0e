"""Upstream kube-scheduler's metrics (``pkg/scheduler/metrics``): same names, labels and buckets,
in a registry of their own, served on ``/metrics`` by ``kschedfw run``.

The scheduler is given a :class:`SchedulerMetrics` when metrics are wanted and holds
:data:`kschedfw.scheduler.loop_metrics.NULL_METRICS`, whose methods do nothing, otherwise: chosen once, so the loop tests nothing
(the watch handler, whose timing is per event, is chosen once too). A :class:`SchedulerMetrics` is the
profiles' :class:`~kschedfw.framework.instrumented.Instrumentation`: each profile compiles timed
copies of its plugin lists against it, run in the cycles whose CycleState records plugin metrics
(a sample, upstream's 10%: :meth:`SchedulerMetrics.cycle_started`); the other cycles call the plugins
directly. Extension-point durations are observed on every run, once per extension point (Filter
once per cycle over all nodes), as upstream.

Counts the scheduler keeps anyway (the queue's incoming pods, unschedulable plugins, in-flight
events, the cache's sizes, the batching counters) are not counted twice: :meth:`SchedulerMetrics.publish`
copies them on the scheduler's thread about once a second, and a collector serves that copy.

The pod-group metrics are registered only with the GenericWorkload gate on, as upstream's.

Not exported, having no meaning here: the async API dispatcher's, the preemption goroutines'
(preemption runs in the cycle), the DRA binding-condition metrics, and
``scheduler_plugin_evaluation_total`` (counted per node upstream: a Python counter per Filter and
Score call would cost as much as a light plugin).
"""

from __future__ import annotations

import bisect
import itertools
import random
import threading
import time
from typing import TYPE_CHECKING, Any, Callable, Mapping, Protocol

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, disable_created_metrics, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily, Metric
from prometheus_client.exposition import CONTENT_TYPE_LATEST
from prometheus_client.utils import floatToGoString

if TYPE_CHECKING:
    from kschedfw.framework.instrumented import Observe
    from kschedfw.fwk.types import QueuedPodInfo

__all__ = ["SchedulerMetrics", "LeanHistogram", "CONTENT_TYPE_LATEST", "PLUGIN_METRICS_SAMPLE_PERCENT"]

PLUGIN_METRICS_SAMPLE_PERCENT = 10  # upstream pluginMetricsSamplePercent
MAX_OPEN_ATTEMPTS = 100_000  # start times kept for attempts not yet ended (oldest dropped beyond)


def exponential_buckets(start: float, factor: float, count: int) -> list[float]:
    """component-base's ExponentialBuckets."""
    return [start * factor ** i for i in range(count)]


def attempts_label(attempts: int) -> str:
    """upstream getAttemptsLabel: the attempt count, capped at "15+"."""
    return "15+" if attempts >= 15 else str(attempts)


class MetricSource(Protocol):
    """What :meth:`SchedulerMetrics.publish` copies from (the Scheduler)."""

    def metric_counts(self) -> tuple[Mapping[str, int], dict[str, Any]]:
        """(pending pods per queue, the other counts :class:`_PublishedCollector` serves)."""
        ...


class SchedulerMetrics:
    enabled = True

    def __init__(self, *, rng: random.Random | None = None,
                 clock: Callable[[], float] = time.perf_counter, generic_workload: bool = False) -> None:
        # upstream exposes no *_created series (a process-wide switch)
        disable_created_metrics()  # type: ignore[no-untyped-call]  # prometheus_client leaves it unannotated
        self.registry = CollectorRegistry(auto_describe=True)
        self._rng = rng or random.Random()
        self._clock = clock
        self._starts: dict[str, float] = {}
        r = self.registry
        self.schedule_attempts = Counter(
            "scheduler_schedule_attempts", "Number of attempts to schedule pods, by the result. 'unschedulable' "
            "means a pod could not be scheduled, while 'error' means an internal scheduler problem.",
            ["result", "profile"], registry=r)
        self.attempt_duration = Histogram(
            "scheduler_scheduling_attempt_duration_seconds",
            "Scheduling attempt latency in seconds (scheduling algorithm + binding)", ["result", "profile"],
            buckets=exponential_buckets(0.001, 2, 15), registry=r)
        self.pending_pods = Gauge(
            "scheduler_pending_pods", "Number of pending pods, by the queue type. 'active' means number of pods "
            "in activeQ; 'backoff' means number of pods in backoffQ; 'unschedulable' means number of pods in "
            "unschedulablePods that the scheduler attempted to schedule and failed; 'gated' is the number of "
            "unschedulable pods that the scheduler never attempted to schedule because they are gated.",
            ["queue"], registry=r)
        self.preemption_attempts = Counter(
            "scheduler_preemption_attempts", "Total preemption attempts in the cluster till now", registry=r)
        self.preemption_victims = Histogram(
            "scheduler_preemption_victims", "Number of selected preemption victims",
            buckets=exponential_buckets(1, 2, 7), registry=r)
        self.plugin_duration = LeanHistogram(
            "scheduler_plugin_execution_duration_seconds",
            "Duration for running a plugin at a specific extension point.", ["plugin", "extension_point", "status"],
            buckets=exponential_buckets(0.00001, 1.5, 20), registry=r)
        self.algorithm_duration = Histogram(
            "scheduler_scheduling_algorithm_duration_seconds", "Scheduling algorithm latency in seconds",
            buckets=exponential_buckets(0.001, 2, 15), registry=r)
        self.sli_duration = Histogram(
            "scheduler_pod_scheduling_sli_duration_seconds",
            "E2e latency for a pod being scheduled, from the time the pod enters the scheduling queue and might "
            "involve multiple scheduling attempts.", ["attempts"],
            buckets=exponential_buckets(0.01, 2, 20), registry=r)
        self.scheduled_after_flush = Counter(
            "scheduler_pod_scheduled_after_flush", "Number of pods that were successfully scheduled after being "
            "flushed from unschedulablePods due to timeout. This metric helps detect potential queueing hint "
            "misconfigurations or event handling issues.", registry=r)
        self.pod_attempts = Histogram(
            "scheduler_pod_scheduling_attempts", "Number of attempts to successfully schedule a pod.",
            buckets=exponential_buckets(1, 2, 5), registry=r)
        self.extension_point_duration = Histogram(
            "scheduler_framework_extension_point_duration_seconds",
            "Latency for running all plugins of a specific extension point.", ["extension_point", "status", "profile"],
            buckets=exponential_buckets(0.0001, 2, 12), registry=r)
        self.permit_wait_duration = Histogram(
            "scheduler_permit_wait_duration_seconds", "Duration of waiting on permit.", ["result"],
            buckets=exponential_buckets(0.001, 2, 15), registry=r)
        self.event_handling_duration = Histogram(
            "scheduler_event_handling_duration_seconds", "Event handling latency in seconds.", ["event"],
            buckets=exponential_buckets(0.0001, 2, 12), registry=r)
        self.queueing_hint_duration = Histogram(
            "scheduler_queueing_hint_execution_duration_seconds",
            "Duration for running a queueing hint function of a plugin.", ["plugin", "event", "hint"],
            buckets=exponential_buckets(0.00001, 1.5, 20), registry=r)
        self.node_hint_duration = Histogram(
            "scheduler_get_node_hint_duration_seconds", "Latency for getting a node hint.", ["hinted", "profile"],
            buckets=exponential_buckets(0.00001, 2, 12), registry=r)
        self.store_results_duration = Histogram(
            "scheduler_store_schedule_results_duration_seconds", "Latency for getting a no.", ["profile"],
            buckets=exponential_buckets(0.00001, 2, 12), registry=r)
        self.goroutines = Gauge(
            "scheduler_goroutines", "Number of running goroutines split by the work they do such as binding.",
            ["operation"], registry=r)
        self.goroutines.labels("binding").set(0)
        # client-go's leader-election metric (component-base clientgo/leaderelection), set by the runner
        self.leader_status = Gauge(
            "leader_election_master_status", "Gauge of if the reporting system is master of the relevant lease, "
            "0 indicates backup, 1 indicates master. 'name' is the string used to identify the lease. Please make "
            "sure to group by name.", ["name"], registry=r)
        #: the pod-group cycle's metrics (gate GenericWorkload; None without it, as upstream registers them)
        self.pod_group_attempts: Counter | None = None
        self.pod_group_attempt_duration: Histogram | None = None
        self.pod_group_algorithm_duration: Histogram | None = None
        if generic_workload:
            self.pod_group_attempts = Counter(
                "scheduler_podgroup_schedule_attempts", "Number of attempts to schedule pod group, by the result. "
                "'unschedulable' means a pod group could not be scheduled, while 'error' means an internal "
                "scheduler problem.", ["result", "profile"], registry=r)
            self.pod_group_attempt_duration = Histogram(
                "scheduler_podgroup_scheduling_attempt_duration_seconds",
                "Pod group scheduling attempt latency in seconds (scheduling algorithm + binding)",
                ["result", "profile"], buckets=exponential_buckets(0.001, 2, 15), registry=r)
            self.pod_group_algorithm_duration = Histogram(
                "scheduler_podgroup_scheduling_algorithm_duration_seconds",
                "Pod group scheduling algorithm latency in seconds", buckets=exponential_buckets(0.001, 2, 15),
                registry=r)
        #: the latest copy of the scheduler's own counts (replaced whole, read by the collector)
        self.published: dict[str, Any] = {}
        r.register(_PublishedCollector(self))
        for queue in ("active", "backoff", "unschedulable", "gated"):
            self.pending_pods.labels(queue).set(0)

    # ------------------------------------------------------------------ what the scheduler reports
    def cycle_started(self, uid: str) -> bool:
        """A pod was popped: its attempt's clock starts. Returns whether this cycle records
        plugin durations (10% of cycles: upstream's ShouldRecordPluginMetrics)."""
        self._starts[uid] = self._clock()
        if len(self._starts) > MAX_OPEN_ATTEMPTS:  # pods popped and then skipped (deleting) never end
            del self._starts[next(iter(self._starts))]
        return self._rng.randrange(100) < PLUGIN_METRICS_SAMPLE_PERCENT

    def attempt(self, uid: str, result: str, profile: str) -> None:
        """An attempt ended: ``result`` is upstream's "scheduled", "unschedulable" or "error"."""
        self.schedule_attempts.labels(result, profile).inc()
        start = self._starts.pop(uid, None)
        if start is not None:
            self.attempt_duration.labels(result, profile).observe(self._clock() - start)

    def pod_group_algorithm_ran(self, seconds: float) -> None:
        """The pod-group cycle's algorithm (every pod tried in memory, placements included) took
        ``seconds``."""
        if self.pod_group_algorithm_duration is not None:
            self.pod_group_algorithm_duration.observe(seconds)

    def pod_group_attempt(self, result: str, profile: str, seconds: float) -> None:
        """A pod group's attempt ended, ``seconds`` after its cycle began: ``result`` is upstream's
        "scheduled", "unschedulable", "waiting_on_preemption" or "error"."""
        if self.pod_group_attempts is not None and self.pod_group_attempt_duration is not None:
            self.pod_group_attempts.labels(result, profile).inc()
            self.pod_group_attempt_duration.labels(result, profile).observe(seconds)

    def set_pending(self, pending: Mapping[str, int]) -> None:
        for queue, count in pending.items():
            self.pending_pods.labels(queue).set(count)

    def queueing_hint_ran(self, plugin: str, event: str, hint: str, seconds: float) -> None:
        """The queue ran a plugin's queueing hint (``hint``: Queue, QueueSkip or Error)."""
        self.queueing_hint_duration.labels(plugin, event, hint).observe(seconds)

    def now(self) -> float:
        """The clock durations are measured with."""
        return self._clock()

    def pod_scheduled(self, qpi: "QueuedPodInfo", now: float) -> None:
        """A pod was bound (upstream bindingCycle's end): its attempts, and the SLI latency from
        its first attempt (``now`` on the queue's clock, as ``initial_attempt_timestamp``)."""
        self.pod_attempts.observe(qpi.attempts)
        if qpi.initial_attempt_timestamp is not None:
            self.sli_duration.labels(attempts_label(qpi.attempts)).observe(now - qpi.initial_attempt_timestamp)
        if qpi.was_flushed_from_unschedulable:
            self.scheduled_after_flush.inc()

    def publish(self, scheduler: MetricSource) -> None:
        """Copy the counts the scheduler keeps (on its thread); served until the next copy."""
        pending, self.published = scheduler.metric_counts()
        self.set_pending(pending)

    def preemption_attempt(self) -> None:
        """DefaultPreemption's PostFilter ran (upstream counts every call)."""
        self.preemption_attempts.inc()

    def preemption_victims_chosen(self, victims: int) -> None:
        """The chosen candidate's victims are being evicted (upstream observes at preparation)."""
        self.preemption_victims.observe(victims)

    # ------------------------------------------------------------------ durations (Instrumentation)
    def plugin_observer(self, plugin: str, point: str) -> "Observe":
        """Observes ``plugin``'s calls at ``point`` by status (each series made on first use)."""
        series = self.plugin_duration.series
        children: dict[str, Callable[[float], None]] = {}  # status -> its observe, looked up once

        def observe(code: str, seconds: float) -> None:
            child = children.get(code)
            if child is None:
                child = children[code] = series(plugin, point, code)
            child(seconds)
        return observe

    def extension_point_observer(self, point: str, profile: str) -> "Observe":
        """Observes the runs of ``point`` in ``profile`` by status."""
        labels = self.extension_point_duration.labels
        children: dict[str, Any] = {}  # status -> its histogram, looked up once

        def observe(code: str, seconds: float) -> None:
            child = children.get(code)
            if child is None:
                child = children[code] = labels(point, code, profile)
            child.observe(seconds)
        return observe

    def node_hint_observer(self, profile: str) -> Callable[[bool, float], None]:
        """upstream's batching latency of getting a hint, labelled by whether there was one."""
        labels = self.node_hint_duration.labels
        hinted: dict[bool, Any] = {}  # series made on first use, as upstream's

        def observe(hint: bool, seconds: float) -> None:
            child = hinted.get(hint)
            if child is None:
                child = hinted[hint] = labels("hint" if hint else "no_hint", profile)
            child.observe(seconds)
        return observe

    def store_results_observer(self, profile: str) -> Callable[[float], None]:
        """upstream's batching latency of storing a cycle's results (the series made on first use)."""
        labels = self.store_results_duration.labels

        def observe(seconds: float) -> None:
            labels(profile).observe(seconds)
        return observe

    def render(self) -> bytes:
        """The text exposition format."""
        return generate_latest(self.registry)


class LeanHistogram:
    """A labelled histogram for observations made per node (sampled plugin durations): a bisect
    into plain counts under one lock, rendered as a histogram family at scrape time. The same
    exposition as prometheus-client's Histogram, whose observe takes a lock for the sum and for
    every bucket it fills, which was most of a sampled cycle's metrics cost."""

    def __init__(self, name: str, documentation: str, labelnames: list[str], *, buckets: list[float],
                 registry: CollectorRegistry) -> None:
        self.name = name
        self.documentation = documentation
        self.labelnames = list(labelnames)
        self._bounds = list(buckets)
        # prometheus_client leaves floatToGoString unannotated (it returns str)
        self._les: list[str] = [floatToGoString(b) for b in buckets] + ["+Inf"]  # type: ignore[no-untyped-call]
        self._series: dict[tuple[str, ...], list[float]] = {}  # per-bucket counts, then the sum
        self._lock = threading.Lock()
        registry.register(self)

    def series(self, *labels: str) -> Callable[[float], None]:
        """The observe function of one label combination (look it up once, call it often)."""
        with self._lock:
            counts = self._series.setdefault(tuple(labels), [0.0] * (len(self._bounds) + 2))
        bounds, lock, total = self._bounds, self._lock, len(self._bounds) + 1

        def observe(value: float) -> None:
            index = bisect.bisect_left(bounds, value)  # the first bucket whose bound (le) >= value
            with lock:
                counts[index] += 1
                counts[total] += value
        return observe

    def describe(self) -> list[Metric]:
        return [HistogramMetricFamily(self.name, self.documentation, labels=self.labelnames)]

    def collect(self) -> list[Metric]:
        family = HistogramMetricFamily(self.name, self.documentation, labels=self.labelnames)
        with self._lock:
            copies = [(labels, list(counts)) for labels, counts in self._series.items()]
        for labels, counts in copies:
            cumulative = itertools.accumulate(counts[:-1])
            family.add_metric(list(labels), list(zip(self._les, cumulative)), sum_value=counts[-1])
        return [family]


class _PublishedCollector:
    """Serves :attr:`SchedulerMetrics.published` (the last copy; one dict read, thread-safe)."""

    def __init__(self, metrics: SchedulerMetrics) -> None:
        self.metrics = metrics

    def describe(self) -> list[Metric]:
        return []

    def collect(self) -> list[Metric]:
        published = self.metrics.published
        incoming = CounterMetricFamily("scheduler_queue_incoming_pods",
                                       "Number of pods added to scheduling queues by event and queue type.",
                                       labels=["queue", "event"])
        for (queue, event), count in sorted(published.get("incoming", {}).items()):
            incoming.add_metric([queue, event], count)
        unschedulable = GaugeMetricFamily(
            "scheduler_unschedulable_pods", "The number of unschedulable pods broken down by plugin name. A pod "
            "will increment the gauge for all plugins that caused it to not schedule and so this metric have "
            "meaning only when broken down by plugin.", labels=["plugin", "profile"])
        for (plugin, profile), count in sorted(published.get("unschedulable", {}).items()):
            unschedulable.add_metric([plugin, profile], count)
        cache = GaugeMetricFamily("scheduler_cache_size",
                                  "Number of nodes, pods, and assumed (bound) pods in the scheduler cache.",
                                  labels=["type"])
        for kind, count in sorted(published.get("cache", {}).items()):
            cache.add_metric([kind], count)
        inflight = GaugeMetricFamily("scheduler_inflight_events",
                                     "Number of events currently tracked in the scheduling queue.", labels=["event"])
        for event, count in sorted(published.get("inflight", {}).items()):
            inflight.add_metric([event], count)
        attempts = CounterMetricFamily("scheduler_batch_attempts", "Counts of results when we attempt to use batching.",
                                       labels=["profile", "result"])
        for (profile, result), count in sorted(published.get("batch_attempts", {}).items()):
            attempts.add_metric([profile, result], count)
        flushed = CounterMetricFamily("scheduler_batch_cache_flushed", "Counts of cache flushes by reason.",
                                      labels=["profile", "reason"])
        for (profile, reason), count in sorted(published.get("batch_flushed", {}).items()):
            flushed.add_metric([profile, reason], count)
        return [incoming, unschedulable, cache, inflight, attempts, flushed]
