"""KubeBackend's writes against a real API server, in the cases a live race produces: the pod
was bound by someone else, or deleted and recreated under the same name, during our bind."""

from __future__ import annotations

import pytest

from kschedfw.cluster.kube.backend import KubeBackend
from kschedfw.cluster.kube.client import KubeClient
from kschedfw.cluster.kube.credentials import load_connection
from kschedfw.cluster.kube.resources import BY_KIND, parse_api_object
from kschedfw.framework.interface import Conflict, NotFound
from tests.kube.helpers import pod_manifest


@pytest.fixture
def backend(control_plane):
    client = KubeClient(load_connection(control_plane.kubeconfig))
    backend = KubeBackend(client)
    yield backend
    backend.stop()
    client.close()


def create_pod(cp, namespace, name, **spec):
    return parse_api_object(BY_KIND["Pod"], cp.api("POST", f"/api/v1/namespaces/{namespace}/pods",
                                                   pod_manifest(name, namespace, **spec)))


def test_bind_succeeds_on_201_status_body(control_plane, namespace, backend):
    pod = create_pod(control_plane, namespace, "p")
    backend.bind(pod, "some-node")  # the server answers 201 with a Status, not a Binding
    assert control_plane.api("GET", f"/api/v1/namespaces/{namespace}/pods/p")["spec"]["nodeName"] == "some-node"


def test_bind_of_a_pod_bound_meanwhile_is_a_conflict(control_plane, namespace, backend):
    pod = create_pod(control_plane, namespace, "p")
    backend.bind(pod, "first")
    with pytest.raises(Conflict, match="already assigned"):
        backend.bind(pod, "second")
    assert control_plane.api("GET", f"/api/v1/namespaces/{namespace}/pods/p")["spec"]["nodeName"] == "first"


def test_bind_carries_the_uid_so_a_recreated_pod_is_not_bound(control_plane, namespace, backend):
    old = create_pod(control_plane, namespace, "p")
    control_plane.api("DELETE", f"/api/v1/namespaces/{namespace}/pods/p")
    create_pod(control_plane, namespace, "p")
    with pytest.raises(Conflict, match="UID"):
        backend.bind(old, "node")
    assert not control_plane.api("GET", f"/api/v1/namespaces/{namespace}/pods/p")["spec"].get("nodeName")


def test_bind_of_a_deleted_pod_is_not_found(control_plane, namespace, backend):
    pod = create_pod(control_plane, namespace, "p")
    control_plane.api("DELETE", f"/api/v1/namespaces/{namespace}/pods/p")
    with pytest.raises(NotFound):
        backend.bind(pod, "node")


def test_scheduling_failure_patch_sets_condition_and_nomination_then_clears(control_plane, namespace, backend):
    pod = create_pod(control_plane, namespace, "p")
    backend.patch_pod_scheduling_failure(pod, "Unschedulable", "0/3 nodes are available: x.", "n1")
    got = control_plane.api("GET", f"/api/v1/namespaces/{namespace}/pods/p")
    cond = [c for c in got["status"]["conditions"] if c["type"] == "PodScheduled"][0]
    assert (cond["status"], cond["reason"], cond["message"]) == ("False", "Unschedulable", "0/3 nodes are available: x.")
    assert got["status"]["nominatedNodeName"] == "n1"
    current = parse_api_object(BY_KIND["Pod"], got)
    backend.patch_pod_scheduling_failure(current, "Unschedulable", "0/3 nodes are available: x.", "")
    got = control_plane.api("GET", f"/api/v1/namespaces/{namespace}/pods/p")
    assert "nominatedNodeName" not in got["status"]


def test_preemption_delete_uses_uid_precondition(control_plane, namespace, backend):
    old = create_pod(control_plane, namespace, "v")
    control_plane.api("DELETE", f"/api/v1/namespaces/{namespace}/pods/v")
    create_pod(control_plane, namespace, "v")
    with pytest.raises(NotFound):  # never the same-named successor
        backend.delete_pod(old)
    assert control_plane.api("GET", f"/api/v1/namespaces/{namespace}/pods/v")["metadata"].get("deletionTimestamp") is None
