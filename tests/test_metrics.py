"""kschedfw.metrics: upstream's scheduler metrics, reported by the scheduler through one optional
recorder. Names, labels and buckets follow pkg/scheduler/metrics/metrics.go (v1.36)."""

from __future__ import annotations

import random

import pytest
from prometheus_client.parser import text_string_to_metric_families

from kschedfw.config.validate import default_config
from kschedfw.fwk.features import FeatureGates
from kschedfw import Code, Status, hookimpl
from kschedfw.framework.registry import default_registry
from kschedfw.metrics import PLUGIN_METRICS_SAMPLE_PERCENT, SchedulerMetrics, exponential_buckets
from kschedfw.simulation import Simulation
from kschedfw.testing import make_node, make_pod
from kschedfw.testing.priorities import with_priority_classes


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
    registry = default_registry()
    sim = Simulation(default_config(registry, FeatureGates()), registry,
                     with_priority_classes([*(make_node(f"n{i}", cpu="1") for i in range(1, nodes + 1)), *pods]),
                     metrics=metrics)
    sim.run()
    return sim


def test_the_embedded_simulation_has_no_metrics_unless_asked():
    sim = simulate(None, [make_pod("p")])
    assert not sim.scheduler.metrics.enabled


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
    assert all(hasattr(fn, "__self__") for _, fn in sim.scheduler.frameworks["default-scheduler"].plans.filter)
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


# ---------------------------------------------------------------------- the metrics added for `run`
def by_labels(metrics: SchedulerMetrics, name: str, *labels: str) -> dict:
    return {tuple(s.labels[label] for label in labels): s.value for s in samples(metrics) if s.name == name}


def simulate_with_late_node(metrics: SchedulerMetrics) -> Simulation:
    """'fits' binds at once; 'later' fails (no room) until n2 is created at 10 s, then binds on
    its second attempt."""
    from kschedfw.cluster.inputs.scenario import Step
    registry = default_registry()
    sim = Simulation(default_config(registry, FeatureGates()), registry,
                     [make_node("n1", cpu="1"), make_pod("fits", cpu="600m"), make_pod("later", cpu="600m")],
                     [Step(at=10.0, action="create", objects=(make_node("n2", cpu="1"),))], metrics=metrics)
    sim.run()
    metrics.publish(sim.scheduler)
    return sim


def test_algorithm_duration_is_observed_once_per_cycle():
    metrics = SchedulerMetrics(rng=FixedRng(99))
    simulate_with_late_node(metrics)
    # upstream observes scheduling_algorithm_duration_seconds in every cycle that ran the algorithm
    assert by_labels(metrics, "scheduler_scheduling_algorithm_duration_seconds_count") == {(): 3}


def test_pod_scheduling_attempts_and_sli_by_attempts_label():
    metrics = SchedulerMetrics(rng=FixedRng(99))
    simulate_with_late_node(metrics)
    # two pods bound: 'fits' on its first attempt, 'later' on its second (both <= 2 -> bucket le=2)
    assert by_labels(metrics, "scheduler_pod_scheduling_attempts_count") == {(): 2}
    assert by_labels(metrics, "scheduler_pod_scheduling_attempts_sum") == {(): 3}
    assert by_labels(metrics, "scheduler_pod_scheduling_attempts_bucket", "le")[("1.0",)] == 1
    sli = by_labels(metrics, "scheduler_pod_scheduling_sli_duration_seconds_count", "attempts")
    assert sli == {("1",): 1, ("2",): 1}
    # 'later' waited from its first attempt (t=0) until n2 came at 10 s (simulated clock)
    later = by_labels(metrics, "scheduler_pod_scheduling_sli_duration_seconds_sum", "attempts")[("2",)]
    assert 10.0 <= later < 12.0


def test_extension_point_durations_carry_status_and_profile():
    metrics = SchedulerMetrics(rng=FixedRng(99))
    simulate_with_late_node(metrics)
    counts = by_labels(metrics, "scheduler_framework_extension_point_duration_seconds_count",
                       "extension_point", "status", "profile")
    profile = "default-scheduler"
    assert counts[("PreFilter", "Success", profile)] == 3
    # Filter once per cycle over all nodes; 'later''s first cycle found no node, but the Filter
    # run itself succeeded (upstream's status there is the filtering's error status, not the fit)
    assert counts[("Filter", "Success", profile)] == 3
    assert counts[("PostFilter", "Unschedulable", profile)] == 1
    assert counts[("Reserve", "Success", profile)] == 2
    assert counts[("Permit", "Success", profile)] == 2
    assert counts[("PreBind", "Success", profile)] == 2
    assert counts[("Bind", "Success", profile)] == 2
    assert counts[("PostBind", "Success", profile)] == 2
    # no plugin had anything to do before binding (upstream's PreBindPreFlight answers Skip)
    assert counts[("PreBindPreFlight", "Skip", profile)] == 2
    # PreEnqueue runs on every way into activeQ: both pods' first adds (metrics are kept from the
    # first object created) and 'later' coming back on n2's NodeAdd
    assert counts[("PreEnqueue", "Success", profile)] == 3
    # one feasible node each time: upstream skips scoring then, so PreScore/Score never ran
    assert ("Score", "Success", profile) not in counts


def test_published_counts_incoming_pods_cache_and_goroutines():
    metrics = SchedulerMetrics(rng=FixedRng(99))
    simulate_with_late_node(metrics)
    incoming = by_labels(metrics, "scheduler_queue_incoming_pods_total", "queue", "event")
    # both pods entered activeQ when added, 'later' went to the pool after its failure and came
    # back to activeQ on n2's NodeAdd (its backoff long over)
    assert incoming == {("active", "UnschedulablePodAdd"): 2, ("unschedulable", "ScheduleAttemptFailure"): 1,
                        ("active", "NodeAdd"): 1}
    assert by_labels(metrics, "scheduler_cache_size", "type") == {("assumed_pods",): 0, ("nodes",): 2, ("pods",): 2}
    assert by_labels(metrics, "scheduler_goroutines", "operation") == {("binding",): 0}  # every bind ended
    assert by_labels(metrics, "scheduler_unschedulable_pods", "plugin", "profile") == {}  # none left
    assert by_labels(metrics, "scheduler_inflight_events", "event") == {}


def test_event_handling_is_labelled_as_upstreams_handlers():
    metrics = SchedulerMetrics(rng=FixedRng(99))
    simulate_with_late_node(metrics)  # metrics kept from the first object created
    events = by_labels(metrics, "scheduler_event_handling_duration_seconds_count", "event")
    # n1 loaded and n2 created; both pods added; 'later''s PodScheduled condition written; two
    # binds, each of which upstream v1.36's updatePod hands to addAssignedPodToCache and
    # deletePodFromSchedulingQueue (checked against kube-scheduler's /metrics: a bind counts
    # AssignedPodAdd and UnschedulablePodDelete)
    assert events == {("NodeAdd",): 2, ("UnschedulablePodAdd",): 2, ("UnschedulablePodUpdate",): 1,
                      ("AssignedPodAdd",): 2, ("UnschedulablePodDelete",): 2}


def test_unschedulable_pods_by_plugin_while_pending():
    metrics = SchedulerMetrics(rng=FixedRng(99))
    sim = simulate(metrics, [make_pod("huge", cpu="4")])
    metrics.publish(sim.scheduler)
    assert by_labels(metrics, "scheduler_unschedulable_pods", "plugin", "profile") == {
        ("NodeResourcesFit", "default-scheduler"): 1}
    assert by_labels(metrics, "scheduler_pending_pods", "queue")[("unschedulable",)] == 1


def test_queueing_hints_are_timed_by_plugin_event_and_result():
    metrics = SchedulerMetrics(rng=FixedRng(99))
    simulate_with_late_node(metrics)
    # 'later' was rejected by NodeResourcesFit only; n2's creation ran its hint, which said Queue
    assert by_labels(metrics, "scheduler_queueing_hint_execution_duration_seconds_count", "plugin", "event",
                     "hint") == {("NodeResourcesFit", "NodeAdd", "Queue"): 1}


def test_a_node_update_is_observed_per_changed_property():
    from kschedfw.cluster.inputs.scenario import Step
    registry = default_registry()
    metrics = SchedulerMetrics(rng=FixedRng(99))
    sim = Simulation(default_config(registry, FeatureGates()), registry, [make_node("n1", cpu="1")],
                     [Step(at=1.0, action="update", objects=(make_node("n1", cpu="2", labels={"zone": "a"}),))],
                     metrics=metrics)
    sim.run()
    # upstream updateNodeInCache: one observation per NodeSchedulingPropertiesChange event (and
    # one for n1's creation)
    assert by_labels(metrics, "scheduler_event_handling_duration_seconds_count", "event") == {
        ("NodeAdd",): 1, ("NodeUpdateNodeAllocatable",): 1, ("NodeUpdateNodeLabel",): 1}


class _WaitAtPermit:
    """Holds every pod at Permit for 10 s; the wait then times out (upstream: Unschedulable)."""

    name = "WaitAtPermit"

    def __init__(self, args, handle):
        pass

    @hookimpl
    def permit(self, state, pod, node_name):
        return Status(Code.Wait), 10.0


def test_permit_waits_are_timed_by_their_result():
    from kschedfw.framework.registry import Registry
    from kschedfw.plugins.defaultbinder import DefaultBinder
    from kschedfw.plugins.noderesources.fit import NodeResourcesFit
    from kschedfw.plugins.queuesort import PrioritySort
    from kschedfw.testing import config_for
    classes = [PrioritySort, NodeResourcesFit, _WaitAtPermit, DefaultBinder]
    registry = Registry.from_classes(classes)
    metrics = SchedulerMetrics(rng=FixedRng(99))
    sim = Simulation(config_for(classes, registry=registry), registry, [make_node("n1"), make_pod("p")],
                     metrics=metrics)
    sim.run(until=15.0)
    # the first wait timed out after its 10 s (simulated clock): one Unschedulable observation
    assert by_labels(metrics, "scheduler_permit_wait_duration_seconds_count", "result") == {("Unschedulable",): 1}
    assert by_labels(metrics, "scheduler_permit_wait_duration_seconds_sum", "result")[("Unschedulable",)] == \
        pytest.approx(10.0)
    assert by_labels(metrics, "scheduler_framework_extension_point_duration_seconds_count", "extension_point",
                     "status", "profile")[("Permit", "Wait", "default-scheduler")] >= 1


def test_lean_histogram_renders_exactly_as_prometheus_clients_histogram():
    """The per-node plugin durations use LeanHistogram: same exposition as Histogram for the same
    observations, bucket bounds included (a value equal to a bound counts in that bucket)."""
    from prometheus_client import CollectorRegistry, Histogram, disable_created_metrics, generate_latest
    from kschedfw.metrics import LeanHistogram
    disable_created_metrics()  # as SchedulerMetrics does: upstream has no *_created series
    buckets = exponential_buckets(0.00001, 1.5, 20)
    values = [0.0, 0.000005, buckets[0], buckets[3], buckets[3] * 1.0000001, 0.0042, buckets[-1], 1.0, 123.4]
    values += random.Random(7).choices([random.Random(8).uniform(0, 0.05) for _ in range(50)], k=200)
    plain_registry, lean_registry = CollectorRegistry(), CollectorRegistry()
    plain = Histogram("h_seconds", "help text", ["plugin", "status"], buckets=buckets, registry=plain_registry)
    lean = LeanHistogram("h_seconds", "help text", ["plugin", "status"], buckets=buckets, registry=lean_registry)
    assert generate_latest(lean_registry) == generate_latest(plain_registry)  # no series yet: HELP and TYPE
    for i, value in enumerate(values):
        labels = ("A" if i % 3 else "B", "Success" if i % 5 else "Unschedulable")
        plain.labels(*labels).observe(value)
        lean.series(*labels)(value)
    assert generate_latest(lean_registry) == generate_latest(plain_registry)


def test_batching_latencies_by_whether_a_hint_was_given():
    metrics = SchedulerMetrics(rng=FixedRng(99))
    simulate_with_late_node(metrics)
    # three cycles asked for a hint (none compatible: each time a different pod or a failed cycle);
    # the two that chose a node stored their results
    assert by_labels(metrics, "scheduler_get_node_hint_duration_seconds_count", "hinted", "profile") == {
        ("no_hint", "default-scheduler"): 3}
    assert by_labels(metrics, "scheduler_store_schedule_results_duration_seconds_count", "profile") == {
        ("default-scheduler",): 2}
    assert by_labels(metrics, "scheduler_batch_attempts_total", "profile", "result") == {
        ("default-scheduler", "no_hint"): 3}


def test_a_pod_bound_after_the_leftover_flush_is_counted():
    """upstream: flushUnschedulablePodsLeftover marks the pod, a failed attempt clears the mark,
    and a bind of a marked pod counts in scheduler_pod_scheduled_after_flush_total."""
    registry = default_registry()
    sim = Simulation(default_config(registry, FeatureGates()), registry,
                     [make_node("small", cpu="500m"), make_pod("waits", cpu="600m")])
    queue = sim.scheduler.queue
    sim.run()  # unschedulable: the run ends with only the 5-minute flush left
    qpi = queue.get_pod("default/waits")
    assert qpi is not None and qpi.attempts == 1 and not qpi.was_flushed_from_unschedulable
    sim.clock.set(200.0)
    queue.flush_unschedulable_pods_leftover()  # not yet 5 minutes in the pool
    assert not qpi.was_flushed_from_unschedulable
    sim.clock.set(400.0)
    queue.flush_unschedulable_pods_leftover()
    assert qpi.was_flushed_from_unschedulable
    assert sim.scheduler.scheduling.schedule_one()  # flushed, tried again, failed again: the mark is gone
    assert qpi.attempts == 2 and not qpi.was_flushed_from_unschedulable
    sim.clock.set(800.0)
    queue.flush_unschedulable_pods_leftover()
    assert qpi.was_flushed_from_unschedulable
    metrics = SchedulerMetrics(rng=FixedRng(99))
    metrics.pod_scheduled(qpi, 800.0)
    assert by_labels(metrics, "scheduler_pod_scheduled_after_flush_total") == {(): 1}
    qpi.was_flushed_from_unschedulable = False
    metrics.pod_scheduled(qpi, 800.0)
    assert by_labels(metrics, "scheduler_pod_scheduled_after_flush_total") == {(): 1}


# ---------------------------------------------------------------------- the pod-group cycle's metrics
def simulate_gang(metrics: SchedulerMetrics, cpu: str) -> Simulation:
    """Two nodes of 2 CPUs and a gang of 4 (minCount 4) pods of ``cpu`` each."""
    from kschedfw.api.load import parse_manifests
    from tests.scheduler.test_pod_group_cycle import GATES, cluster
    gates = FeatureGates.parse(GATES)
    registry = default_registry()
    sim = Simulation(default_config(registry, gates), registry, parse_manifests(cluster(cpu)),
                     feature_gates=gates, metrics=metrics)
    sim.run()
    return sim


def test_pod_group_metrics_are_registered_only_with_the_generic_workload_gate():
    """Upstream Register(): podgroup_schedule_attempts_total and the two podgroup latency
    histograms are registered when GenericWorkload is on, and not otherwise."""
    names = {"scheduler_podgroup_schedule_attempts", "scheduler_podgroup_scheduling_attempt_duration_seconds",
             "scheduler_podgroup_scheduling_algorithm_duration_seconds"}
    off = {f.name for f in text_string_to_metric_families(SchedulerMetrics().render().decode())}
    on = {f.name for f in text_string_to_metric_families(
        SchedulerMetrics(generic_workload=True).render().decode())}
    assert not names & off
    assert names <= on


def test_a_scheduled_gang_counts_one_pod_group_attempt_by_result_and_profile():
    """Upstream submitPodGroupAlgorithmResult: one PodGroupScheduled(profile, duration) per
    group cycle that succeeds, the algorithm's latency observed once per cycle; the pods' own
    attempts are counted as well (their binding cycles)."""
    metrics = SchedulerMetrics(rng=FixedRng(99), generic_workload=True)
    simulate_gang(metrics, "1")
    assert by_labels(metrics, "scheduler_podgroup_schedule_attempts_total", "result", "profile") == {
        ("scheduled", "default-scheduler"): 1}
    assert by_labels(metrics, "scheduler_podgroup_scheduling_attempt_duration_seconds_count", "result",
                     "profile") == {("scheduled", "default-scheduler"): 1}
    assert by_labels(metrics, "scheduler_podgroup_scheduling_algorithm_duration_seconds_count") == {(): 1}
    assert by_labels(metrics, "scheduler_schedule_attempts_total", "result") == {("scheduled",): 4}


def test_an_unschedulable_gang_counts_unschedulable_pod_group_attempts():
    """A gang of which only 2 of minCount 4 fit: every group cycle is counted 'unschedulable'
    (upstream PodGroupUnschedulable), never 'scheduled'."""
    metrics = SchedulerMetrics(rng=FixedRng(99), generic_workload=True)
    sim = simulate_gang(metrics, "1500m")
    counted = by_labels(metrics, "scheduler_podgroup_schedule_attempts_total", "result", "profile")
    assert set(counted) == {("unschedulable", "default-scheduler")}
    cycles = counted[("unschedulable", "default-scheduler")]
    assert cycles >= 1
    assert by_labels(metrics, "scheduler_podgroup_scheduling_algorithm_duration_seconds_count") == {(): cycles}
    assert sim.scheduler.scheduling.pod_groups.last_attempts["default/train"].result == "unschedulable"


def test_pod_group_buckets_are_upstreams():
    """ExponentialBuckets(0.001, 2, 15) for both pod-group histograms."""
    metrics = SchedulerMetrics(rng=FixedRng(99), generic_workload=True)
    simulate_gang(metrics, "1")
    les = {s.labels["le"] for s in samples(metrics)
           if s.name == "scheduler_podgroup_scheduling_algorithm_duration_seconds_bucket"}
    assert les == {str(b) for b in exponential_buckets(0.001, 2, 15)} | {"+Inf"}
