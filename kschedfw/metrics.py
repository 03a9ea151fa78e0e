"""Upstream kube-scheduler's metrics (``pkg/scheduler/metrics``): same names, labels and buckets,
in a registry of their own, served on ``/metrics`` by ``kschedfw run``.

The scheduler holds a :class:`SchedulerMetrics` only when metrics are wanted (``Scheduler.metrics``
is None otherwise), so the embedded simulation pays one ``is None`` test per attempt. Plugin
durations are observed for a sample of cycles (upstream: 10%): for those the profiles run timed
copies of their plugin lists (made by :meth:`SchedulerMetrics.instrument`), for the others their
plain lists, so unsampled cycles call the plugins directly. As upstream's MetricAsyncRecorder,
durations go into a buffer of 1000 flushed into the histogram about once a second; what does not
fit until the next flush is dropped (and then not even timed).
"""

from __future__ import annotations

import collections
import random
import threading
import time
from typing import TYPE_CHECKING, Any, Callable, Mapping

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, disable_created_metrics, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_LATEST

if TYPE_CHECKING:
    from kschedfw.framework.runtime import Framework

__all__ = ["SchedulerMetrics", "CONTENT_TYPE_LATEST", "PLUGIN_METRICS_SAMPLE_PERCENT"]

PLUGIN_METRICS_SAMPLE_PERCENT = 10  # upstream pluginMetricsSamplePercent
PLUGIN_METRICS_BUFFER = 1000  # upstream NewMetricsAsyncRecorder(1000, time.Second, ...)
PLUGIN_METRICS_FLUSH_INTERVAL = 1.0  # seconds
MAX_OPEN_ATTEMPTS = 100_000  # start times kept for attempts not yet ended (oldest dropped beyond)
_RAISED = object()  # a buffered plugin call that raised (status label "Error")


def exponential_buckets(start: float, factor: float, count: int) -> list[float]:
    """component-base's ExponentialBuckets."""
    return [start * factor ** i for i in range(count)]


#: Framework attribute -> upstream extension_point label (plugin lists are (name, fn, ...) tuples)
_EXTENSION_POINTS = {
    "pre_filter_plugins": "PreFilter", "filter_plugins": "Filter",
    "add_pod_plugins": "PreFilterExtensionAddPod", "remove_pod_plugins": "PreFilterExtensionRemovePod",
    "post_filter_plugins": "PostFilter", "pre_score_plugins": "PreScore", "score_plugins": "Score",
    "reserve_plugins": "Reserve", "unreserve_plugins": "Unreserve", "permit_plugins": "Permit",
    "pre_bind_plugins": "PreBind", "bind_plugins": "Bind", "post_bind_plugins": "PostBind",
}


def _status_label(returned: Any) -> str:
    """The plugin's Status code name as upstream labels it ("Success" for None or a score)."""
    if isinstance(returned, tuple) and returned:  # PreFilter/PostFilter return (result, status)
        returned = returned[-1]
    code = getattr(returned, "code", None)
    return code.name if code is not None else "Success"


class SchedulerMetrics:
    def __init__(self, *, rng: random.Random | None = None,
                 clock: Callable[[], float] = time.perf_counter) -> None:
        disable_created_metrics()  # upstream exposes no *_created series (a process-wide switch)
        self.registry = CollectorRegistry(auto_describe=True)
        self._rng = rng or random.Random()
        self._clock = clock
        self._starts: dict[str, float] = {}
        self._plugin_lists: list[tuple[Any, dict[str, tuple[tuple, tuple]]]] = []
        #: whether the current cycle's plugin durations are observed
        self.sampling = False
        # (plugin, extension point, what the plugin returned or _RAISED, seconds); deque: bind workers append too
        self._plugin_buffer: collections.deque[tuple[str, str, Any, float]] = collections.deque()
        self._next_flush = clock() + PLUGIN_METRICS_FLUSH_INTERVAL
        self._flush_lock = threading.Lock()  # the scheduler's thread and /metrics may both flush
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
        self.plugin_duration = Histogram(
            "scheduler_plugin_execution_duration_seconds",
            "Duration for running a plugin at a specific extension point.", ["plugin", "extension_point", "status"],
            buckets=exponential_buckets(0.00001, 1.5, 20), registry=r)
        for queue in ("active", "backoff", "unschedulable", "gated"):
            self.pending_pods.labels(queue).set(0)

    # ------------------------------------------------------------------ what the scheduler reports
    def cycle_started(self, uid: str) -> None:
        """A pod was popped: its attempt's clock starts; 10% of cycles sample plugin durations
        (the frameworks run their timed plugin lists for those, their plain ones otherwise)."""
        now = self._starts[uid] = self._clock()
        if now >= self._next_flush:
            self.flush_plugin_durations()
        if len(self._starts) > MAX_OPEN_ATTEMPTS:  # pods popped and then skipped (deleting) never end
            del self._starts[next(iter(self._starts))]
        sampling = self._rng.randrange(100) < PLUGIN_METRICS_SAMPLE_PERCENT
        if sampling != self.sampling:
            self.sampling = sampling
            for framework, lists in self._plugin_lists:
                for attribute, (plain, timed) in lists.items():
                    setattr(framework, attribute, timed if sampling else plain)

    def attempt(self, uid: str, result: str, profile: str) -> None:
        """An attempt ended: ``result`` is upstream's "scheduled", "unschedulable" or "error"."""
        self.schedule_attempts.labels(result, profile).inc()
        start = self._starts.pop(uid, None)
        if start is not None:
            self.attempt_duration.labels(result, profile).observe(self._clock() - start)

    def set_pending(self, pending: Mapping[str, int]) -> None:
        for queue, count in pending.items():
            self.pending_pods.labels(queue).set(count)

    def preemption_attempt(self) -> None:
        """DefaultPreemption's PostFilter ran (upstream counts every call)."""
        self.preemption_attempts.inc()

    def preemption_victims_chosen(self, victims: int) -> None:
        """The chosen candidate's victims are being evicted (upstream observes at preparation)."""
        self.preemption_victims.observe(victims)

    # ------------------------------------------------------------------ plugin durations
    def instrument(self, framework: "Framework") -> None:
        """Prepare timed copies of ``framework``'s plugin lists for the sampled cycles."""
        lists: dict[str, tuple[tuple, tuple]] = {}
        for attribute, point in _EXTENSION_POINTS.items():
            entries = getattr(framework, attribute, None)
            if entries:
                lists[attribute] = (entries, tuple((entry[0], self._timed(entry[0], point, entry[1]), *entry[2:])
                                                   for entry in entries))
        self._plugin_lists.append((framework, lists))

    def _timed(self, plugin: str, point: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        clock = self._clock
        buffer = self._plugin_buffer
        append = buffer.append

        def timed(*args: Any, **kwargs: Any) -> Any:
            if len(buffer) >= PLUGIN_METRICS_BUFFER:  # upstream drops what its buffer cannot take
                return fn(*args, **kwargs)
            start = clock()
            try:
                returned = fn(*args, **kwargs)
            except Exception:
                append((plugin, point, _RAISED, clock() - start))
                raise
            append((plugin, point, returned, clock() - start))
            return returned
        return timed

    def flush_plugin_durations(self) -> None:
        """Move the buffered plugin durations into the histogram (the status label is worked out
        here, off the plugin call's path)."""
        self._next_flush = self._clock() + PLUGIN_METRICS_FLUSH_INTERVAL
        buffer = self._plugin_buffer
        children: dict[tuple[str, str, str], Any] = {}
        with self._flush_lock:
            for _ in range(len(buffer)):
                plugin, point, returned, seconds = buffer.popleft()
                label = "Error" if returned is _RAISED else _status_label(returned)
                key = (plugin, point, label)
                child = children.get(key)
                if child is None:
                    child = children[key] = self.plugin_duration.labels(plugin, point, label)
                child.observe(seconds)

    def render(self) -> bytes:
        """The text exposition format."""
        self.flush_plugin_durations()
        return generate_latest(self.registry)
