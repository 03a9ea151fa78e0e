"""Port of upstream schedulinggates/scheduling_gates_test.go."""

import pytest

from kschedfw.fwk.events import ActionType, ClusterEvent, EventResource, QueueingHint
from kschedfw.fwk.status import Code
from kschedfw.plugins.schedulinggates import SchedulingGates
from kschedfw.testing import make_pod


@pytest.mark.parametrize("p,want", [
    pytest.param(make_pod("p"), None, id="pod does not carry scheduling gates"),
    pytest.param(make_pod("p", scheduling_gates=["foo", "bar"]),
                 (Code.UnschedulableAndUnresolvable, "waiting for scheduling gates: [foo bar]"),
                 id="pod carries scheduling gates"),
])
def test_pre_enqueue(p, want):
    got = SchedulingGates({}, None).pre_enqueue(p)
    if want is None:
        assert got is None
    else:
        assert (got.code, got.message()) == want


@pytest.mark.parametrize("p,old,new,expected", [
    pytest.param(make_pod("p"), "not-a-pod", None, TypeError, id="backoff-wrong-old-object"),
    pytest.param(make_pod("p"), None, "not-a-pod", TypeError, id="backoff-wrong-new-object"),
    pytest.param(make_pod("p", scheduling_gates=["foo", "bar"], uid="uid0"),
                 make_pod("p1", scheduling_gates=["foo", "bar"], uid="uid1"),
                 make_pod("p1", scheduling_gates=["foo"], uid="uid1"), QueueingHint.QueueSkip,
                 id="skip-queue-on-other-pod-updated"),
    pytest.param(make_pod("p", scheduling_gates=["foo"]), make_pod("p", scheduling_gates=["foo"]),
                 make_pod("p", scheduling_gates=[]), QueueingHint.Queue,
                 id="queue-on-the-unsched-pod-updated"),
])
def test_is_schedulable_after_pod_change(p, old, new, expected):
    pl = SchedulingGates({}, None)
    if expected is TypeError:
        # Upstream returns (Queue, err); here the hint raises and the queue treats that as Queue.
        with pytest.raises(TypeError):
            pl.is_schedulable_after_update_pod_scheduling_gates_eliminated(p, old, new)
        return
    assert pl.is_schedulable_after_update_pod_scheduling_gates_eliminated(p, old, new) is expected


def test_events_to_register():
    events = SchedulingGates({}, None).events_to_register()
    assert [e.event for e in events] == [ClusterEvent(EventResource.Pod, ActionType.UpdatePodSchedulingGatesEliminated)]
    assert events[0].queueing_hint_fn is not None
