"""One event discipline on every backend. Upstream's informers run their handlers on their own
goroutine, which enqueue into the scheduling queue; a bind's result (the binding goroutine's
FinishBinding, PostBind) and the watch event that later confirms the bound pod are distinct steps.
So no handler runs inside a write or a plugin call, and the embedded cluster hands the scheduler
the same sequence as a real API server (tests/kube/test_event_order.py)."""

from __future__ import annotations

import attrs

from kschedfw.cluster.memory import MemoryCluster
from kschedfw.config.validate import default_config
from kschedfw.fwk.features import FeatureGates
from kschedfw.framework.registry import default_registry
from kschedfw.testing import make_node, make_pod
from tests.scheduler.event_order import BIND_FINISHED, EXPECTED_EVENTS, RecordingScheduler


def test_the_embedded_cluster_hands_a_scripted_sequence_to_the_handlers_in_order():
    """Create node, create pod (the scheduler binds it), update, delete: the handlers get each
    change once, in order, and the bind's outcome before the event confirming it."""
    cluster = MemoryCluster()
    registry = default_registry()
    scheduler = RecordingScheduler(default_config(registry, FeatureGates()), registry, cluster)
    cluster.create(make_node("n1"))
    cluster.create(make_pod("p", cpu="100m"))
    scheduler.run(until=cluster.clock.now())
    pod = cluster.get("Pod", "p", "default")
    assert pod.node_name == "n1"
    cluster.update(attrs.evolve(pod, labels={"step": "updated"}, raw={
        **pod.raw, "metadata": {**pod.raw["metadata"], "labels": {"step": "updated"}}}))
    scheduler.run(until=cluster.clock.now())
    cluster.delete_pod(cluster.get("Pod", "p", "default"), 0)
    scheduler.run(until=cluster.clock.now())
    assert scheduler.log == [*EXPECTED_EVENTS[:2], BIND_FINISHED, *EXPECTED_EVENTS[2:]]
    assert scheduler.inside_bind == []


def test_no_handler_runs_inside_a_write():
    """A write queues its change; the handlers get it when the loop hands changes out."""
    cluster = MemoryCluster()
    heard: list[str] = []
    cluster.watch(lambda event: heard.append(event.new.name))
    cluster.create(make_node("n1"))
    cluster.create(make_node("n2"))
    assert heard == []
    assert cluster.deliver() == 2
    assert heard == ["n1", "n2"]
    assert cluster.deliver() == 0


def test_what_a_handler_writes_is_handed_out_after_the_change_it_handles():
    """Every watcher gets one change before any gets the next, even one a handler made."""
    cluster = MemoryCluster()
    heard: list[str] = []

    def first(event):
        heard.append(f"first {event.new.name}")
        if event.new.name == "n1":
            cluster.create(make_node("n2"))

    cluster.watch(first)
    cluster.watch(lambda event: heard.append(f"second {event.new.name}"))
    cluster.create(make_node("n1"))
    cluster.deliver()
    assert heard == ["first n1", "second n1", "first n2", "second n2"]
