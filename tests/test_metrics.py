"""kschedfw.metrics: upstream's scheduler metrics, reported by the scheduler through one optional
recorder. Names, labels and buckets follow pkg/scheduler/metrics/metrics.go (v1.36)."""

from __future__ import annotations

import random

import pytest

pytest.importorskip("prometheus_client")

from prometheus_client.parser import text_string_to_metric_families  # noqa: E402

from kschedfw.config.validate import default_config  # noqa: E402
from kschedfw.features import FeatureGates  # noqa: E402
from kschedfw.framework.registry import default_catalog  # noqa: E402
from kschedfw.metrics import PLUGIN_METRICS_SAMPLE_PERCENT, SchedulerMetrics, exponential_buckets  # noqa: E402
from kschedfw.simulation import Simulation  # noqa: E402
from kschedfw.testing import make_node, make_pod  # noqa: E402


class FixedRng(random.Random):
    """randrange always returns ``value``: every cycle sampled (0) or none (99)."""

    def __init__(self, value: int) -> None:
        super().__init__(0)
        self.value = value

    def randrange(self, *args, **kwargs) -> int:  # type: ignore[override]
        return self.value


def samples(metrics: SchedulerMetrics) -> list:
    return [s for family in text_string_to_metric_families(metrics.render().decode()) for s in family.samples]


def simulate(metrics: SchedulerMetrics | None, pods: list, nodes: int = 1) -> Simulation:
    registry = default_catalog()
    sim = Simulation(default_config(registry, FeatureGates()), registry,
                     [*(make_node(f"n{i}", cpu="1") for i in range(1, nodes + 1)), *pods])
    if metrics is not None:
        sim.scheduler.enable_metrics(metrics)
    sim.run()
    return sim


def test_the_embedded_simulation_has_no_metrics_unless_asked():
    sim = simulate(None, [make_pod("p")])
    assert sim.scheduler.metrics is None


def test_attempts_are_counted_by_result_and_profile():
    metrics = SchedulerMetrics(rng=FixedRng(99))
    simulate(metrics, [make_pod("fits", cpu="500m"), make_pod("huge", cpu="4")])
    counted = {(s.labels["result"], s.labels["profile"]): s.value for s in samples(metrics)
               if s.name == "scheduler_schedule_attempts_total"}
    assert counted == {("scheduled", "default-scheduler"): 1, ("unschedulable", "default-scheduler"): 1}
    durations = [s for s in samples(metrics) if s.name == "scheduler_scheduling_attempt_duration_seconds_count"]
    assert sorted(s.labels["result"] for s in durations) == ["scheduled", "unschedulable"]


def test_buckets_are_upstreams():
    assert exponential_buckets(0.001, 2, 15)[-1] == pytest.approx(16.384)
    buckets = {s.labels["le"] for s in samples(SchedulerMetrics()) if s.name == "scheduler_preemption_victims_bucket"}
    assert buckets == {"1.0", "2.0", "4.0", "8.0", "16.0", "32.0", "64.0", "+Inf"}
    pending = {s.labels["queue"] for s in samples(SchedulerMetrics()) if s.name == "scheduler_pending_pods"}
    assert pending == {"active", "backoff", "unschedulable", "gated"}


def test_plugin_durations_are_observed_only_in_sampled_cycles():
    assert PLUGIN_METRICS_SAMPLE_PERCENT == 10
    never = SchedulerMetrics(rng=FixedRng(99))
    sim = simulate(never, [make_pod("p")])
    # unsampled cycles run the plugins' own bound methods, no timing wrapper in between
    assert all(hasattr(fn, "__self__") for _, fn in sim.scheduler.frameworks["default-scheduler"].filter_plugins)
    assert not [s for s in samples(never) if s.name.startswith("scheduler_plugin_execution_duration_seconds")]
    always = SchedulerMetrics(rng=FixedRng(0))
    simulate(always, [make_pod("p"), make_pod("huge", cpu="4")], nodes=2)
    observed = {(s.labels["plugin"], s.labels["extension_point"], s.labels["status"]) for s in samples(always)
                if s.name == "scheduler_plugin_execution_duration_seconds_count"}
    assert ("NodeResourcesFit", "Filter", "Success") in observed
    assert ("NodeResourcesFit", "Filter", "UnschedulableAndUnresolvable") in observed  # more than allocatable
    assert ("NodeResourcesFit", "Score", "Success") in observed
    assert ("DefaultBinder", "Bind", "Success") in observed
    assert ("DefaultPreemption", "PostFilter", "Unschedulable") in observed


def test_plugin_durations_beyond_the_buffer_are_dropped_until_the_next_flush(monkeypatch):
    """Upstream's MetricAsyncRecorder: a 1000-entry buffer flushed once a second; observations
    that do not fit are dropped. A clock that never moves means no flush before render()."""
    import kschedfw.metrics as module
    monkeypatch.setattr(module, "PLUGIN_METRICS_BUFFER", 5)
    metrics = SchedulerMetrics(rng=FixedRng(0), clock=lambda: 0.0)
    simulate(metrics, [make_pod("a"), make_pod("b")], nodes=3)
    counts = [s.value for s in samples(metrics) if s.name == "scheduler_plugin_execution_duration_seconds_count"]
    assert sum(counts) == 5
    assert not metrics._plugin_buffer  # render() flushed what was buffered


def test_preemption_attempts_and_victims():
    metrics = SchedulerMetrics(rng=FixedRng(99))
    simulate(metrics, [make_pod("low", cpu="800m", node_name="n1", priority=1),
                       make_pod("high", cpu="800m", priority=100)])
    values = {s.name: s.value for s in samples(metrics) if not s.labels or s.name.endswith("_count")}
    assert values["scheduler_preemption_attempts_total"] == 1
    assert values["scheduler_preemption_victims_count"] == 1


def test_start_times_of_attempts_that_never_end_are_bounded(monkeypatch):
    import kschedfw.metrics as module
    monkeypatch.setattr(module, "MAX_OPEN_ATTEMPTS", 3)
    metrics = SchedulerMetrics(rng=FixedRng(99))
    for uid in "abcde":
        metrics.cycle_started(uid)
    assert list(metrics._starts) == ["c", "d", "e"]
