"""The two backends behind one driver, so one contract suite runs on both.

A *world* is a backend under test plus what the test needs around it: an outside client that
changes the cluster (``kubectl`` for the real API server, the store's own writes for the embedded
cluster), a way to let the backend hear of those changes (:meth:`settle`: a real backend's
informers cross threads and the network; the embedded cluster hears at once), the server's own
view of an object and of the Events, and a way to let time pass on the backend's clock.
"""

from __future__ import annotations

import itertools
import time
from typing import Any, Callable

from kschedfw.api.load import parse_object
from kschedfw.cluster.kube.backend import KubeBackend
from kschedfw.cluster.kube.client import KubeClient
from kschedfw.cluster.kube.credentials import load_connection
from kschedfw.cluster.kube.resources import BY_KIND, parse_api_object
from kschedfw.cluster.memory import MemoryCluster
from kschedfw.testing.builders import container, make_node, make_pod
from kschedfw.testing.controlplane import APIError, ControlPlane

_names = itertools.count(1)

#: the kinds the contract suite touches (a real backend watches only these)
KINDS = ["Pod", "Node", "Namespace", "PriorityClass"]


def pod_manifest(name: str, namespace: str, *, grace: int = 30, uid: str = "", **spec: Any) -> dict[str, Any]:
    """A pod; ``uid`` sets it in the embedded cluster, which keeps what it is given (its uids are
    otherwise derived from the name), where an API server always makes a new one."""
    manifest = make_pod(name, namespace=namespace, uid=uid or None, terminationGracePeriodSeconds=grace,
                        containers=[container("c", requests={"cpu": "100m", "memory": "64Mi"})]).raw
    manifest["spec"].update(spec)  # as written: not through the builder's own parameters
    return manifest


def node_manifest(name: str, pods: str = "110", **labels: str) -> dict[str, Any]:
    """A Ready node of 4 cpus and 8Gi with exactly ``labels`` (no hostname label)."""
    return make_node(name, cpu="4", memory="8Gi", pods=pods, labels=labels, hostname_label=False).raw


class EmbeddedWorld:
    """The embedded cluster: a change is queued and heard once :meth:`settle` hands it out
    (``deliver``, as the scheduler's loop does), with nothing to wait for."""

    def __init__(self) -> None:
        self.backend = MemoryCluster()
        self.namespace = f"c{next(_names)}"
        self.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": self.namespace}})
        self.settle(lambda: self.backend.get("Namespace", self.namespace), "the namespace")

    def create(self, manifest: dict[str, Any]) -> Any:
        return self.backend.create(parse_object(manifest))

    def relabel(self, kind: str, name: str, labels: dict[str, str], namespace: str = "") -> None:
        current = self.backend.get(kind, name, namespace)
        raw = {**current.raw, "metadata": {**current.raw["metadata"], "labels": labels}}
        self.backend.update(parse_object(raw))

    def delete(self, kind: str, name: str, namespace: str = "") -> None:
        self.backend.remove(kind, name, namespace)

    def settle(self, until: Callable[[], Any] = lambda: True, what: str = "the change") -> None:
        self.backend.deliver()
        assert until(), f"{what} was not heard once delivered"

    def server(self, kind: str, name: str, namespace: str = "") -> Any:
        return self.backend.get(kind, name, namespace)

    def events(self, name: str) -> list[tuple[str, str, str]]:
        return [(e.type, e.reason, e.message) for e in self.backend.events if e.object_key.endswith(f"/{name}")]

    def wait_events(self, name: str, count: int) -> list[tuple[str, str, str]]:
        return self.events(name)

    def advance(self, seconds: float) -> None:
        self.backend.clock.advance(seconds)

    def close(self) -> None:
        pass


class KubeWorld:
    """A KubeBackend on a real API server, started and synced; :meth:`settle` runs its
    ``deliver`` on the test's thread, as the scheduler's loop does."""

    def __init__(self, control_plane: ControlPlane) -> None:
        self.cp = control_plane
        self.client = KubeClient(load_connection(control_plane.kubeconfig))
        self.backend = KubeBackend(self.client, kinds=KINDS)
        self.namespace = f"c{next(_names)}"
        self.cp.api("POST", "/api/v1/namespaces", {"metadata": {"name": self.namespace}})
        self.backend.start()
        assert self.backend.wait_for_sync(30), self.backend.unsynced()
        self.settle(lambda: self.backend.get("Namespace", self.namespace), "the namespace")
        self._nodes: list[str] = []

    def create(self, manifest: dict[str, Any]) -> Any:
        resource = BY_KIND[manifest["kind"]]
        namespace = manifest["metadata"].get("namespace", "")
        path = resource.object_path("", namespace).rstrip("/")
        if manifest["kind"] == "Node":
            self._nodes.append(manifest["metadata"]["name"])
        return parse_api_object(resource, self.cp.api("POST", path, manifest))

    def relabel(self, kind: str, name: str, labels: dict[str, str], namespace: str = "") -> None:
        self.cp.api("PATCH", BY_KIND[kind].object_path(name, namespace), {"metadata": {"labels": labels}},
                    content_type="application/merge-patch+json")

    def delete(self, kind: str, name: str, namespace: str = "") -> None:
        self.cp.api("DELETE", BY_KIND[kind].object_path(name, namespace), {"gracePeriodSeconds": 0})

    def settle(self, until: Callable[[], Any] = lambda: True, what: str = "the change", timeout: float = 15.0) -> None:
        deadline = time.monotonic() + timeout
        while True:
            self.backend.deliver(0.02)
            if until():
                return
            assert time.monotonic() < deadline, f"timed out waiting for {what}"

    def server(self, kind: str, name: str, namespace: str = "") -> Any:
        try:
            return parse_api_object(BY_KIND[kind], self.cp.api("GET", BY_KIND[kind].object_path(name, namespace)))
        except APIError as exc:
            if exc.status == 404:
                return None
            raise

    def events(self, name: str) -> list[tuple[str, str, str]]:
        items = self.cp.api("GET", f"/apis/events.k8s.io/v1/namespaces/{self.namespace}/events")["items"]
        return [(e["type"], e["reason"], e["note"]) for e in items if e["regarding"]["name"] == name]

    def wait_events(self, name: str, count: int) -> list[tuple[str, str, str]]:
        """The Events of ``name`` once ``count`` have been written (the event writer is a thread)."""
        deadline = time.monotonic() + 15
        while len(found := self.events(name)) < count and time.monotonic() < deadline:
            time.sleep(0.05)
        return found

    def advance(self, seconds: float) -> None:
        time.sleep(seconds)

    def close(self) -> None:
        self.backend.stop()
        self.client.close()
        self.cp.delete_pods(self.namespace)
        for node in self._nodes:
            self.delete("Node", node)
