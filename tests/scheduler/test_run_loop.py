"""One loop: the Scheduler owns its run loop over the backend's timers."""

from __future__ import annotations

import inspect

from kschedfw.clock import SimulatedClock
from kschedfw.cluster.memory import MemoryCluster
from kschedfw.cluster.inputs.scenario import Step
from kschedfw.framework.registry import Registry
from kschedfw.scheduler import Scheduler
from kschedfw.testing import config_for, simulate_with

from .plugins import BASE, CpuFit, Quorum


def _scheduler(objects, classes=(*BASE, CpuFit)):
    clock = SimulatedClock()
    cluster = MemoryCluster(clock)
    scheduler = Scheduler(config_for(list(classes)), Registry.from_classes(list(classes)), cluster)
    cluster.load(objects)
    return scheduler, cluster, clock


def test_idle_hook_can_wait_for_an_event_like_a_real_backend(node, pod):
    # a backend whose events arrive from outside blocks in the idle hook; here the "event" is a
    # node appearing while the scheduler waits, after which the pending pod is scheduled
    scheduler, cluster, clock = _scheduler([pod("p")])
    seen = []

    def idle(deadline):
        seen.append(deadline)
        assert deadline == scheduler.next_wakeup()
        if len(seen) == 1:
            clock.set(clock.now() + 2.0)
            cluster.create(node("n1"))
            return True
        return False

    scheduler.run(idle=idle)
    assert cluster.get("Pod", "p", "default").node_name == "n1"
    assert len(seen) == 2 and seen[0] is not None


def test_until_stops_before_a_later_deadline_without_moving_the_clock(node, pod):
    scheduler, cluster, clock = _scheduler([pod("p")])
    scheduler.run(until=0.5)
    assert clock.now() == 0.0
    assert scheduler.next_wakeup() > 0.5
    assert cluster.get("Pod", "p", "default").condition("PodScheduled").reason == "Unschedulable"


def test_permit_timeouts_and_backend_timers_are_deadlines_of_the_loop(node, pod):
    scheduler, cluster, clock = _scheduler([node("n1"), pod("g0")], classes=(*BASE, Quorum))
    fired = []
    cluster.call_at(4.0, lambda: fired.append(clock.now()))
    deadlines = []

    def idle(deadline):
        deadlines.append(deadline)
        if deadline is None:
            return False
        clock.set(deadline)
        return True

    scheduler.run(until=12.0, idle=idle)
    assert fired == [4.0]
    assert deadlines[:2] == [4.0, Quorum.timeout]  # the timer, then the Permit timeout


def test_scenario_steps_run_as_timers_and_the_run_settles(node, pod):
    steps = [Step(at=30.0, action="create", objects=[node("n1")])]
    result = simulate_with([*BASE, CpuFit], [pod("p")], steps)
    assert result.pods[0].status == "Bound" and result.pods[0].node == "n1"
    assert result.end_time == 30.0


def test_no_module_drives_the_simulation_through_its_private_functions():
    from benchmarks.perf import runner
    source = inspect.getsource(runner)
    assert "sim._" not in source and "scheduler._" not in source
