"""Informers against a real kube-apiserver: list+watch as client-go's reflector does."""

from __future__ import annotations

import threading

import pytest

from kschedfw.cluster.kube.client import KubeClient
from kschedfw.cluster.kube.credentials import load_connection
from kschedfw.cluster.kube.informer import Informer
from kschedfw.cluster.kube.resources import BY_KIND
from kschedfw.testing.controlplane import ControlPlane
from tests.kube.helpers import pod_manifest, wait_for


class Recorder:
    def __init__(self, namespace: str | None = None) -> None:
        self.namespace = namespace
        self.events: list[tuple[str, str, str]] = []
        self.lock = threading.Lock()

    def __call__(self, type_, kind, old, new) -> None:
        obj = new if new is not None else old
        if self.namespace is not None and getattr(obj, "namespace", "") != self.namespace:
            return
        with self.lock:
            self.events.append((type_, kind, obj.name))

    def names(self, type_: str) -> list[str]:
        with self.lock:
            return [n for t, _, n in self.events if t == type_]


@pytest.fixture
def client(control_plane: ControlPlane):
    c = KubeClient(load_connection(control_plane.kubeconfig))
    yield c
    c.close()


@pytest.fixture
def pod_informer(client, namespace):
    recorder = Recorder(namespace)
    informer = Informer(client, BY_KIND["Pod"], recorder, initial_backoff=0.1, max_backoff=0.5)
    informer.start()
    yield informer, recorder
    informer.stop()


def test_list_then_watch_sees_creates_updates_and_deletes(control_plane, namespace, pod_informer):
    informer, recorder = pod_informer
    control_plane.api("POST", f"/api/v1/namespaces/{namespace}/pods", pod_manifest("before", namespace))
    assert informer.synced.wait(20)
    control_plane.api("POST", f"/api/v1/namespaces/{namespace}/pods", pod_manifest("after", namespace))
    control_plane.api("PATCH", f"/api/v1/namespaces/{namespace}/pods/after", {"metadata": {"labels": {"a": "b"}}},
                      content_type="application/merge-patch+json")
    control_plane.api("DELETE", f"/api/v1/namespaces/{namespace}/pods/before")  # unbound: gone at once
    wait_for(lambda: "before" in recorder.names("DELETED"), what="DELETED before")
    assert sorted(recorder.names("ADDED")) == ["after", "before"]
    # the label change; deleting an unbound pod first sets its deletionTimestamp (MODIFIED)
    assert recorder.names("MODIFIED") == ["after", "before"]


def test_terminated_pods_are_filtered_out_as_upstream(control_plane, namespace, pod_informer):
    """The pod informer's fieldSelector drops Succeeded/Failed pods: the watch reports DELETED."""
    informer, recorder = pod_informer
    assert informer.synced.wait(20)
    control_plane.api("POST", f"/api/v1/namespaces/{namespace}/pods", pod_manifest("done", namespace))
    wait_for(lambda: "done" in recorder.names("ADDED"), what="ADDED done")
    control_plane.api("PATCH", f"/api/v1/namespaces/{namespace}/pods/done/status",
                      {"status": {"phase": "Succeeded"}}, content_type="application/merge-patch+json")
    wait_for(lambda: "done" in recorder.names("DELETED"), what="DELETED done")


def test_expired_resource_version_relists_without_losing_changes(control_plane, client, namespace):
    """A watch from a version the watch cache no longer holds gets HTTP 200 then an ERROR event
    with code 410 (Expired); the reflector relists and carries on."""
    recorder = Recorder(namespace)
    informer = Informer(client, BY_KIND["Pod"], recorder)
    informer._list()
    assert informer.lists == 1
    control_plane.api("POST", f"/api/v1/namespaces/{namespace}/pods", pod_manifest("while-stale", namespace))
    informer.resource_version = "1"  # far older than anything the server's watch cache holds
    informer.start()
    try:
        wait_for(lambda: informer.lists >= 2, what="a relist")
        wait_for(lambda: "while-stale" in recorder.names("ADDED"), what="ADDED while-stale")
    finally:
        informer.stop()


def test_restarting_the_api_server_loses_nothing(control_plane, namespace, pod_informer):
    informer, recorder = pod_informer
    assert informer.synced.wait(20)
    control_plane.api("POST", f"/api/v1/namespaces/{namespace}/pods", pod_manifest("old", namespace))
    wait_for(lambda: "old" in recorder.names("ADDED"), what="ADDED old")
    control_plane.restart_apiserver()
    control_plane.api("POST", f"/api/v1/namespaces/{namespace}/pods", pod_manifest("new", namespace))
    control_plane.api("DELETE", f"/api/v1/namespaces/{namespace}/pods/old")
    wait_for(lambda: "new" in recorder.names("ADDED"), timeout=40, what="ADDED new after restart")
    wait_for(lambda: "old" in recorder.names("DELETED"), timeout=40, what="DELETED old after restart")
    assert recorder.names("ADDED").count("old") == 1  # a re-watch, not a duplicate add


def test_a_silent_watch_is_reopened_from_the_same_version(control_plane, client):
    """A connection that carries nothing for the inactivity timeout may be dead: the reflector
    opens a new watch from the last version (no relist), and still sees later changes."""
    recorder = Recorder()
    informer = Informer(client, BY_KIND["PriorityClass"], recorder, inactivity_timeout=0.5)
    informer.start()
    try:
        assert informer.synced.wait(20)
        wait_for(lambda: informer.watches >= 3, what="watches reopened after silence")
        control_plane.api("POST", "/apis/scheduling.k8s.io/v1/priorityclasses",
                          {"metadata": {"name": "after-silence"}, "value": 5})
        wait_for(lambda: "after-silence" in recorder.names("ADDED"), what="ADDED after-silence")
        assert informer.lists == 1
    finally:
        informer.stop()
        control_plane.api("DELETE", "/apis/scheduling.k8s.io/v1/priorityclasses/after-silence")
