"""KubeBackend's writes against a real API server, in the cases a live race produces: the pod
was bound by someone else, or deleted and recreated under the same name, during our bind."""

from __future__ import annotations

import pytest

from kschedfw.cluster.kube.backend import KubeBackend
from kschedfw.cluster.kube.client import KubeClient
from kschedfw.cluster.kube.credentials import load_connection
from kschedfw.cluster.kube.resources import BY_KIND, parse_api_object
from kschedfw.fwk.interface import Conflict, NotFound
from tests.kube.helpers import pod_manifest


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
    assert backend.statuses.flush(10)
    got = control_plane.api("GET", f"/api/v1/namespaces/{namespace}/pods/p")
    cond = [c for c in got["status"]["conditions"] if c["type"] == "PodScheduled"][0]
    assert (cond["status"], cond["reason"], cond["message"]) == ("False", "Unschedulable", "0/3 nodes are available: x.")
    assert got["status"]["nominatedNodeName"] == "n1"
    current = parse_api_object(BY_KIND["Pod"], got)
    backend.patch_pod_scheduling_failure(current, "Unschedulable", "0/3 nodes are available: x.", "")
    assert backend.statuses.flush(10)
    got = control_plane.api("GET", f"/api/v1/namespaces/{namespace}/pods/p")
    assert "nominatedNodeName" not in got["status"]


def test_preemption_delete_uses_uid_precondition(control_plane, namespace, backend):
    old = create_pod(control_plane, namespace, "v")
    control_plane.api("DELETE", f"/api/v1/namespaces/{namespace}/pods/v")
    create_pod(control_plane, namespace, "v")
    with pytest.raises(NotFound):  # never the same-named successor
        backend.delete_pod(old)
    assert control_plane.api("GET", f"/api/v1/namespaces/{namespace}/pods/v")["metadata"].get("deletionTimestamp") is None


# ---------------------------------------------------------------------- faults on the wire

class _LostAnswer:
    """Wraps a client: the first POST pods/binding is sent (``sent=True``) or not, and then the
    connection 'breaks': the caller gets a TransportError that says it may have been sent."""

    def __init__(self, client, *, sent: bool) -> None:
        self.client = client
        self.sent = sent
        self.faults = 0

    def request(self, method, path, **kwargs):
        from kschedfw.cluster.kube.client import TransportError
        if path.endswith("/binding") and self.faults == 0:
            self.faults += 1
            if self.sent:
                self.client.request(method, path, **kwargs)
            raise TransportError(method, path, ConnectionResetError("reset by peer"), maybe_sent=True)
        return self.client.request(method, path, **kwargs)


@pytest.mark.parametrize("sent", [True, False], ids=["bound-but-answer-lost", "never-arrived"])
def test_bind_with_an_unknown_outcome_is_settled_not_failed(control_plane, namespace, backend, sent):
    # the bind's answer was lost: the pod must end up bound to the chosen node, and the bind
    # reported as a success (its slot stays taken), whether or not the first request landed
    pod = create_pod(control_plane, namespace, "p")
    backend.client = _LostAnswer(backend.client, sent=sent)
    backend.bind(pod, "n1")
    assert backend.client.faults == 1
    got = control_plane.api("GET", f"/api/v1/namespaces/{namespace}/pods/p")
    assert got["spec"]["nodeName"] == "n1"


class _WarmingUp:
    """Wraps a client: the first POST pods/binding lands but its answer is lost; then, as a
    restarted API server does while its authorizer syncs, the next ``refusals`` requests are
    answered 403 Forbidden (the re-sent binding and the reads alike)."""

    def __init__(self, client, refusals: int) -> None:
        self.client = client
        self.refusals = refusals
        self.calls: list[str] = []

    def request(self, method, path, **kwargs):
        from kschedfw.cluster.kube.client import ApiError, TransportError
        self.calls.append(method)
        if len(self.calls) == 1:
            self.client.request(method, path, **kwargs)
            raise TransportError(method, path, ConnectionResetError("reset by peer"), maybe_sent=True)
        if self.refusals:
            self.refusals -= 1
            raise ApiError(403, f"{path} is forbidden: the authorizer is not ready", "Forbidden")
        return self.client.request(method, path, **kwargs)


def test_a_refusal_while_settling_an_unknown_bind_does_not_fail_it(control_plane, namespace, backend):
    # the first bind landed, its answer was lost; the server restarts and refuses (403) both the
    # re-sent binding and the read for a while: the outcome stays unknown until a read tells,
    # so the bind succeeds (failing it would free the slot of a pod the server has bound there)
    pod = create_pod(control_plane, namespace, "p")
    backend.client = _WarmingUp(backend.client, refusals=3)
    backend.bind(pod, "n1")
    assert backend.client.calls == ["POST", "POST", "GET", "POST", "GET"]
    got = control_plane.api("GET", f"/api/v1/namespaces/{namespace}/pods/p")
    assert got["spec"]["nodeName"] == "n1"


def test_bind_with_an_unknown_outcome_to_a_pod_bound_elsewhere_fails(control_plane, namespace, backend):
    pod = create_pod(control_plane, namespace, "p")
    control_plane.api("POST", f"/api/v1/namespaces/{namespace}/pods/p/binding",
                      {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "p"},
                       "target": {"kind": "Node", "name": "other"}})
    backend.client = _LostAnswer(backend.client, sent=False)
    with pytest.raises(Conflict):
        backend.bind(pod, "n1")


def test_a_bind_that_could_not_connect_fails_at_once(control_plane, namespace):
    # nothing was sent (connection refused): an ordinary failure, the pod is retried with backoff
    from kschedfw.cluster.kube.client import TransportError
    from kschedfw.testing.controlplane import free_port
    connection = load_connection(control_plane.kubeconfig)
    connection.server = f"https://127.0.0.1:{free_port()}"
    client = KubeClient(connection, timeout=2)
    backend = KubeBackend(client)
    try:
        pod = create_pod(control_plane, namespace, "p")
        with pytest.raises(TransportError) as err:
            backend.bind(pod, "n1")
        assert not err.value.maybe_sent
        # a status write to an unreachable server is queued, tried, dropped: never raised
        backend.patch_pod_scheduling_failure(pod, "Unschedulable", "0/1 nodes are available.", None)
        assert backend.statuses.flush(10)
        assert backend.statuses.dropped == 1 and backend.statuses.sent == 0
        assert client.reachability.unreachable_for() > 0
    finally:
        backend.stop()
        client.close()


def test_a_bound_pod_is_never_reported_unschedulable(control_plane, namespace, backend):
    pod = create_pod(control_plane, namespace, "p")
    backend._apply("ADDED", "Pod", pod.with_node("n1"))  # the informer saw it bound
    backend.patch_pod_scheduling_failure(pod, "SchedulerError", "binding rejected: EOF", None)
    assert backend.statuses.flush(10)
    got = control_plane.api("GET", f"/api/v1/namespaces/{namespace}/pods/p")
    assert not (got["status"].get("conditions") or [])


def test_nothing_is_written_once_leadership_is_lost(control_plane, namespace, backend):
    from kschedfw.cluster.kube.backend import LeadershipLost
    pod = create_pod(control_plane, namespace, "p")
    backend.write_fence = lambda: False
    with pytest.raises(LeadershipLost):
        backend.bind(pod, "n1")
    with pytest.raises(LeadershipLost):
        backend.delete_pod(pod)
    backend.patch_pod_scheduling_failure(pod, "Unschedulable", "0/1 nodes are available.", "n1")
    backend.record_event(pod, "Warning", "FailedScheduling", "0/1 nodes are available.")
    assert backend.statuses.flush(10)
    backend.events.close()
    got = control_plane.api("GET", f"/api/v1/namespaces/{namespace}/pods/p")
    assert "nodeName" not in got["spec"] and not got["status"].get("conditions")
    assert control_plane.api("GET", f"/apis/events.k8s.io/v1/namespaces/{namespace}/events")["items"] == []
    assert backend.events.written == 0


def test_a_refused_bind_is_logged_naming_the_verb_and_resource(control_plane, namespace, backend, caplog):
    # the ApiError reaches the Bind plugin (an Error status, retried); the operator sees why, once
    pod = create_pod(control_plane, namespace, "p")
    backend.client = _Refusing(backend.client)
    for _ in range(3):
        with pytest.raises(Exception, match="forbidden"):
            backend.bind(pod, "n1")
    lines = [r.getMessage() for r in caplog.records if "pods/binding" in r.getMessage()]
    assert len(lines) == 1 and "create pods/binding" in lines[0] and "forbidden" in lines[0]


class _Refusing:
    def __init__(self, client) -> None:
        self.client = client

    def request(self, method, path, **kwargs):
        from kschedfw.cluster.kube.client import ApiError
        if path.endswith("/binding"):
            raise ApiError(403, 'pods "p" is forbidden: User "s" cannot create resource "pods/binding"', "Forbidden")
        return self.client.request(method, path, **kwargs)
