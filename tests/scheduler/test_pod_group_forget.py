"""What the pod-group cycle keeps per group (its last attempt, which the reports read, and the
PodGroupScheduled condition it last wrote, which keeps a written True from being taken back)
lasts as long as the PodGroup: the PodGroup's delete event drops both, so a long run does not
keep every group it ever saw. A group still there is reported as before."""

from __future__ import annotations

import pytest

from kschedfw.api.load import parse_manifests
from kschedfw.api.workload import POD_GROUP_KIND, PodGroup
from kschedfw.config.validate import default_config
from kschedfw.framework.registry import default_registry
from kschedfw.fwk.features import FeatureGates
from kschedfw.simulation import Simulation

from .test_pod_group_cycle import GATES, cluster

KEEP = """\
---
apiVersion: scheduling.k8s.io/v1alpha2
kind: PodGroup
metadata: {name: keep}
spec: {schedulingPolicy: {basic: {}}}
---
apiVersion: v1
kind: Pod
metadata: {name: keep-0}
spec:
  schedulingGroup: {podGroupName: keep}
  containers: [{name: c, image: busybox, resources: {requests: {cpu: 100m}}}]
"""


@pytest.mark.parametrize("cpu, outcome", [("500m", "scheduled"), ("1500m", "unschedulable")])
def test_a_deleted_pod_group_leaves_nothing_behind_in_the_cycle(cpu, outcome):
    """Gang "train" of 4 pods on two nodes of 2 CPUs: 4 x 500m fits, 4 x 1500m does not. Once
    its PodGroup is deleted, neither its last attempt nor its written condition is kept; group
    "keep" (scheduled) keeps both, and its report is the same as before the deletion."""
    gates = FeatureGates.parse(GATES)
    registry = default_registry()
    sim = Simulation(default_config(registry, gates), registry, parse_manifests(cluster(cpu) + KEEP),
                     feature_gates=gates)
    result = sim.run()
    cycle = sim.scheduler.scheduling.pod_groups
    assert cycle is not None
    train, keep = (sim.cluster.get(POD_GROUP_KIND, name, "default") for name in ("train", "keep"))
    assert isinstance(train, PodGroup) and isinstance(keep, PodGroup)
    assert cycle.last_attempts["default/train"].result == outcome
    assert set(cycle.last_attempts) == {"default/train", "default/keep"}
    assert set(cycle.written) == {train.uid, keep.uid}
    keep_report = next(g for g in result.pod_groups() if g.key == "default/keep")

    sim.cluster.delete(POD_GROUP_KIND, "train", "default")
    sim.cluster.deliver()

    assert set(cycle.last_attempts) == {"default/keep"}
    assert set(cycle.written) == {keep.uid}
    assert [g for g in sim.result().pod_groups() if g.key == "default/keep"] == [keep_report]
