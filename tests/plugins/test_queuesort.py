"""Port of upstream queuesort/priority_sort_test.go (TestLess)."""

import pytest

from kschedfw.fwk.types import QueuedPodInfo
from kschedfw.plugins.queuesort import PrioritySort
from kschedfw.testing import make_pod

LOW, HIGH = 10, 100
T1 = 1_000.0
T2 = T1 + 1.0


def qpi(priority, timestamp=0.0):
    return QueuedPodInfo(pod=make_pod("p", priority=priority), timestamp=timestamp)


@pytest.mark.parametrize("p1,p2,expected", [
    pytest.param(qpi(LOW), qpi(HIGH), False, id="p1.priority less than p2.priority"),
    pytest.param(qpi(HIGH), qpi(LOW), True, id="p1.priority greater than p2.priority"),
    pytest.param(qpi(HIGH, T1), qpi(HIGH, T2), True, id="equal priority. p1 is added to schedulingQ earlier than p2"),
    pytest.param(qpi(HIGH, T2), qpi(HIGH, T1), False, id="equal priority. p2 is added to schedulingQ earlier than p1"),
])
def test_less(p1, p2, expected):
    assert PrioritySort({}, None).less(p1, p2) is expected


def test_missing_priority_counts_as_zero():
    no_priority = QueuedPodInfo(pod=make_pod("p"), timestamp=T1)
    assert PrioritySort({}, None).less(qpi(1, T2), no_priority)
    assert not PrioritySort({}, None).less(no_priority, qpi(1, T2))
    assert PrioritySort({}, None).less(qpi(-1, T1), no_priority) is False
