"""scheduler_event_handling_duration_seconds labels of pod changes, as upstream v1.36's pod
handlers observe them (checked against kube-scheduler's /metrics: a bind counts AssignedPodAdd and
UnschedulablePodDelete, a label change of an assigned pod AssignedPodUpdate and
AssignedPodUpdatePodLabel, a pod of another scheduler nothing)."""

from __future__ import annotations

import attrs
import pytest

from kschedfw.scheduler.event_labels import pod_event_labels
from kschedfw.testing import make_pod

OURS = make_pod("p", uid="u")
OTHER = make_pod("q", uid="v", scheduler_name="other")


def ours(pod) -> bool:
    return pod.scheduler_name == "default-scheduler"


def changed(pod, **kw):
    return attrs.evolve(pod, resource_version=str(int(pod.resource_version or 0) + 1), **kw)


@pytest.mark.parametrize("old, new, labels", [
    (None, OURS, ["UnschedulablePodAdd"]),
    (None, OTHER, []),
    (None, attrs.evolve(OTHER, node_name="n"), ["AssignedPodAdd"]),
    (OURS, None, ["UnschedulablePodDelete"]),
    (OTHER, None, []),
    (attrs.evolve(OTHER, node_name="n"), None, ["AssignedPodDelete"]),
    (OURS, changed(OURS, node_name="n"), ["AssignedPodAdd", "UnschedulablePodDelete"]),
    (OTHER, changed(OTHER, node_name="n"), ["AssignedPodAdd"]),
    (OURS, changed(OURS, annotations={"a": "b"}), ["UnschedulablePodUpdate"]),
    (OURS, changed(OURS, labels={"x": "y"}), ["UnschedulablePodUpdate", "UnschedulablePodUpdatePodLabel"]),
    # the same resourceVersion: bypassed (simulated objects without one are always handled)
    (attrs.evolve(OURS, resource_version="5"), attrs.evolve(OURS, resource_version="5", labels={"x": "y"}), []),
    (OTHER, changed(OTHER, labels={"x": "y"}), []),
    (attrs.evolve(OTHER, node_name="n"), changed(OTHER, node_name="n", labels={"x": "y"}),
     ["AssignedPodUpdate", "AssignedPodUpdatePodLabel"]),
    (attrs.evolve(OURS, node_name="n"), changed(OURS, node_name="n", annotations={"a": "b"}),
     ["AssignedPodUpdate", "AssignedPodUpdate"]),  # the general Update is observed again
])
def test_pod_event_labels_as_upstreams_handlers(old, new, labels):
    assert pod_event_labels(old, new, ours) == labels
