"""Both backends hand a change to the plugins' subscriptions and the scheduler's watchers in the
order they registered, as framework.interface.Subscriber promises: a plugin that subscribed while
the profiles were built has its own state up to date before the scheduler's handlers (and the
QueueingHints they run) see the change."""

from __future__ import annotations

import types

import pytest

from kschedfw.cluster.kube.backend import KubeBackend
from kschedfw.cluster.memory import MemoryCluster
from kschedfw.testing import make_node, make_pod


def memory_backend():
    return MemoryCluster(), lambda cluster, obj: (cluster.create(obj), cluster.deliver()), lambda cluster: None


def kube_backend():
    backend = KubeBackend(types.SimpleNamespace(timeout=1.0))  # type: ignore[arg-type]  # never sends here
    return backend, lambda b, obj: b._apply("ADDED", type(obj).__name__, obj), lambda b: b.stop()


@pytest.mark.parametrize("make", [memory_backend, kube_backend], ids=["embedded", "kube"])
def test_subscriptions_and_watchers_hear_a_change_in_registration_order(make):
    backend, add, close = make()
    heard: list[str] = []
    try:
        backend.subscribe("Pod", lambda e: heard.append(f"plugin-a {e.kind}"))
        backend.subscribe("Node", lambda e: heard.append(f"plugin-b {e.kind}"))
        backend.watch(lambda e: heard.append(f"scheduler {e.kind}"))
        late = backend.subscribe("Pod", lambda e: heard.append(f"plugin-late {e.kind}"))
        add(backend, make_node("n1"))
        add(backend, make_pod("p"))
        late()
        add(backend, make_pod("q"))
    finally:
        close(backend)
    assert heard == ["plugin-b Node", "scheduler Node",
                     "plugin-a Pod", "scheduler Pod", "plugin-late Pod",
                     "plugin-a Pod", "scheduler Pod"]
