"""The events that would wake a pending pod name only their resource's own actions.

Upstream's ``ActionType`` (``staging/src/k8s.io/kube-scheduler/framework/types.go``) has node
update flags and pod update flags; ``pkg/scheduler/framework/types.go`` lists which apply to a
node (``nodeActionTypes``) and to a pod (``podActionTypes``); every other resource has only Add,
Delete and Update (``basicActionTypes``). NodeResourcesFit registers ``DeviceClass``
``Add|Update`` (``fit.go``, ``EventsToRegister``): that is a device class added or updated, not
a node's allocatable or a pod's labels.
"""

from __future__ import annotations

import json
import textwrap

import pytest

from kschedfw.cli.main import main
from kschedfw.fwk.events import ActionType as A
from kschedfw.fwk.events import ClusterEvent
from kschedfw.fwk.events import EventResource as R

CLUSTER = textwrap.dedent("""\
    apiVersion: v1
    kind: List
    items:
    - {apiVersion: v1, kind: Node, metadata: {name: n1, labels: {kubernetes.io/hostname: n1}},
       status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}}
    - apiVersion: v1
      kind: Pod
      metadata: {name: big}
      spec: {containers: [{name: c, image: busybox, resources: {requests: {cpu: "8"}}}]}
    """)


def test_a_pending_pods_wake_up_events_name_each_resources_own_actions(capsys, tmp_path):
    cluster = tmp_path / "cluster.yaml"
    cluster.write_text(CLUSTER)
    assert main(["simulate", "-o", "json", str(cluster), "--explain", "default/big"]) == 0
    (big,) = json.loads(capsys.readouterr().out)["explain"]
    (fit,) = big["wakeUpEvents"]
    assert fit == {"plugin": "NodeResourcesFit",
                   "events": ["PodDelete|UpdatePodScaleDown", "NodeAdd|UpdateNodeAllocatable",
                              "resource.k8s.io/DeviceClassAdd|Update"]}


@pytest.mark.parametrize("event, described", [
    pytest.param(ClusterEvent(R.DeviceClass, A.Add | A.Update), "resource.k8s.io/DeviceClassAdd|Update",
                 id="a general update of another resource is Update"),
    pytest.param(ClusterEvent(R.PersistentVolumeClaim, A.Update), "PersistentVolumeClaimUpdate",
                 id="another resource's update alone"),
    pytest.param(ClusterEvent(R.DeviceClass, A.All), "resource.k8s.io/DeviceClassAll", id="All"),
    pytest.param(ClusterEvent(R.Node, A.Add | A.Update), "NodeAdd|Update",
                 id="every node update is Update, without the pod flags"),
    pytest.param(ClusterEvent(R.Node, A.Add | A.UpdateNodeLabel | A.UpdateNodeTaint),
                 "NodeAdd|UpdateNodeLabel|UpdateNodeTaint", id="some node updates by name"),
    pytest.param(ClusterEvent(R.Pod, A.Delete | A.UpdatePodLabel), "PodDelete|UpdatePodLabel",
                 id="a pod update by name"),
    pytest.param(ClusterEvent(R.AssignedPod, A.Add | A.Update), "AssignedPodAdd|Update",
                 id="every pod update is Update, without the node flags"),
    pytest.param(ClusterEvent("scheduling.k8s.io/PodGroup", A.Add | A.Update),
                 "scheduling.k8s.io/PodGroupAdd|Update", id="a custom resource"),
    pytest.param(ClusterEvent(R.Wildcard, A.Add | A.UpdateNodeLabel), "*Add|UpdateNodeLabel",
                 id="the wildcard resource names any flag"),
])
def test_describe_names_the_resources_own_actions(event, described):
    assert event.describe() == described
