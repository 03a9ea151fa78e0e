"""ClusterEvent labels: the ``event`` label of the scheduler's metrics and logs, as upstream v1.36's
``ClusterEvent.Label()``: the resource followed by ``ActionType.String()``, which names one flag,
``All`` or ``Update``, and is blank for any other combination of flags."""

from __future__ import annotations

import pytest

from kschedfw.fwk.events import (BACKOFF_COMPLETE, FORCE_ACTIVATE, UNSCHEDULABLE_TIMEOUT, WILDCARD_EVENT,
                                 ActionType, ClusterEvent, EventResource, pod_scheduling_properties_change)
from kschedfw.queue import BACKOFF_Q
from tests.queue.queue_testlib import hint_map, queue_pod, new_queue, queue_hint_return_queue, with_annotation

A = ActionType
R = EventResource


@pytest.mark.parametrize("event, label", [
    (ClusterEvent(R.Node, A.Add), "NodeAdd"),
    (ClusterEvent(R.Node, A.UpdateNodeTaint), "NodeUpdateNodeTaint"),
    (ClusterEvent(R.AssignedPod, A.Delete), "AssignedPodDelete"),
    (ClusterEvent(R.UnschedulablePod, A.UpdatePodSchedulingGatesEliminated),
     "UnschedulablePodUpdatePodSchedulingGatesEliminated"),
    (ClusterEvent(R.Pod, A.UpdatePodGeneratedResourceClaim), "PodUpdatePodGeneratedResourceClaim"),
    (ClusterEvent(R.PersistentVolume, A.Update), "PersistentVolumeUpdate"),
    (ClusterEvent(R.StorageClass, A.All), "storage.k8s.io/StorageClassAll"),
    (ClusterEvent("example.com/Widget", A.Add), "example.com/WidgetAdd"),
    # upstream's String() has no case for a combination of flags, nor for None: blank
    (ClusterEvent(R.Node, A.Add | A.UpdateNodeLabel), "Node"),
    (ClusterEvent(R.Node, A.Add | A.UpdateNodeLabel | A.UpdateNodeTaint), "Node"),
    (ClusterEvent(R.Pod, A.Add | A.Delete), "Pod"),
    (ClusterEvent(R.Pod, A.Nothing), "Pod"),
    # kschedfw's UpdatePodOther is upstream's general Update (PodSchedulingPropertiesChange's fallback)
    (ClusterEvent(R.UnschedulablePod, A.UpdatePodOther), "UnschedulablePodUpdate"),
    (ClusterEvent(R.AssignedPod, A.UpdatePodOther), "AssignedPodUpdate"),
    # upstream's Update and All lack kschedfw's UpdatePodOther bit, and are still Update and All
    (ClusterEvent(R.Pod, A.Update & ~A.UpdatePodOther), "PodUpdate"),
    (ClusterEvent(R.Pod, A.All & ~A.UpdatePodOther), "PodAll"),
    (ClusterEvent(R.Pod, A.Add | A.Update), "Pod"),
    (WILDCARD_EVENT, "*All"),
    (UNSCHEDULABLE_TIMEOUT, "UnschedulableTimeout"),
    (FORCE_ACTIVATE, "ForceActivate"),
    (BACKOFF_COMPLETE, "BackoffComplete"),
])
def test_label_is_upstreams(event, label):
    assert event.label == label


def test_describe_names_every_flag_of_a_registration():
    """Explain's wake-up events: a readable form where upstream's label is blank."""
    assert ClusterEvent(R.Node, A.Add | A.UpdateNodeLabel).describe() == "NodeAdd|UpdateNodeLabel"
    assert ClusterEvent(R.Pod, A.Update).describe() == "PodUpdate"
    assert ClusterEvent(R.Node, A.Add).describe() == ClusterEvent(R.Node, A.Add).label
    assert UNSCHEDULABLE_TIMEOUT.describe() == "UnschedulableTimeout"


def test_a_plain_pod_update_requeues_under_upstreams_label():
    """An update with no specific sub-event (an annotation) is upstream's UnschedulablePod/Update:
    scheduler_queue_incoming_pods_total counts it as event="UnschedulablePodUpdate"."""
    pod_update = ClusterEvent(R.Pod, A.Update)
    q, _, _ = new_queue(hints=hint_map((pod_update, [("P", queue_hint_return_queue)])))
    pod = queue_pod("a")
    q.add(pod)
    qpi = q.pop()
    qpi.unschedulable_plugins = {"P"}
    q.add_unschedulable_if_not_present(qpi, q.scheduling_cycle)
    updated = with_annotation(pod, "k", "v")
    assert [e.label for e in pod_scheduling_properties_change(updated, pod)] == ["UnschedulablePodUpdate"]
    q.update(pod, updated)
    assert q.incoming_pods[(BACKOFF_Q, "UnschedulablePodUpdate")] == 1
