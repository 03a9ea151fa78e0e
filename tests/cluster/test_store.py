"""The object store both backends read from: objects by Kind and upstream's MetaNamespaceKeyFunc
key, lists by namespace, informer events applied as changes, and the fan-out to watchers and
per-Kind subscribers in the order they registered."""

from __future__ import annotations

import attrs
import pytest

from kschedfw.cluster.store import ObjectStore, key_of, object_key
from kschedfw.fwk.interface import ADDED, DELETED, MODIFIED, WatchEvent


@attrs.frozen
class Obj:
    kind: str
    name: str
    namespace: str = ""
    version: int = 0


@pytest.mark.parametrize("name, namespace, key", [
    pytest.param("web-0", "default", "default/web-0", id="namespaced"),
    pytest.param("node-a", "", "node-a", id="cluster-scoped"),
])
def test_keys_are_upstream_meta_namespace_keys(name, namespace, key):
    """namespace/name, or the bare name for a cluster-scoped object."""
    assert object_key(name, namespace) == key
    assert key_of(Obj("Pod", name, namespace)) == key


def test_get_and_list_by_kind_and_namespace():
    """list(kind) keeps the order objects were first stored; a namespace selects its objects
    only, "" the cluster-scoped ones; a prefix of a namespace's name is another namespace."""
    store = ObjectStore()
    a, b, c = Obj("Pod", "a", "ns"), Obj("Pod", "b", "ns-2"), Obj("Pod", "c", "ns")
    node = Obj("Pod", "cluster-wide")
    for obj in (a, b, c, node):
        assert store.put(obj.kind, obj) is None
    assert store.get("Pod", "a", "ns") is a and store.get("Pod", "a") is None
    assert store.get("Node", "a", "ns") is None
    assert store.list("Pod") == [a, b, c, node]
    assert store.list("Pod", "ns") == [a, c]
    assert store.list("Pod", "") == [node]
    assert store.list("Node") == [] and store.list("Node", "ns") == []
    newer = attrs.evolve(a, version=1)
    assert store.put("Pod", newer) is a and store.list("Pod") == [newer, b, c, node]
    assert store.pop("Pod", "a", "ns") is newer and store.pop("Pod", "a", "ns") is None
    assert store.all_objects() == [b, c, node]


def test_apply_turns_informer_events_into_changes():
    """An event for an unknown key adds, for a known one modifies (old and new), a deletion
    removes; deleting what the store never held is no change."""
    store = ObjectStore()
    first, second = Obj("Pod", "p", "ns"), Obj("Pod", "p", "ns", 1)
    assert store.apply(ADDED, "Pod", first) == WatchEvent(ADDED, "Pod", None, first)
    assert store.apply(ADDED, "Pod", second) == WatchEvent(MODIFIED, "Pod", first, second)
    assert store.apply(DELETED, "Pod", first) == WatchEvent(DELETED, "Pod", second, None)
    assert store.apply(DELETED, "Pod", first) is None
    assert store.list("Pod") == []


def test_callbacks_hear_changes_in_registration_order():
    """Watchers hear every Kind, subscribers theirs only, all in the order they registered;
    an unsubscribed callback hears nothing more; storing alone tells nobody."""
    store = ObjectStore()
    heard: list[tuple[str, str]] = []
    store.subscribe("Pod", lambda e: heard.append(("pods-1", e.new.name)))
    store.watch(lambda e: heard.append(("all", e.new.name)))
    unsubscribe = store.subscribe("Pod", lambda e: heard.append(("pods-2", e.new.name)))
    store.subscribe("Node", lambda e: heard.append(("nodes", e.new.name)))
    pod = Obj("Pod", "p", "ns")
    store.put("Pod", pod)
    assert heard == []
    store.emit(WatchEvent(ADDED, "Pod", None, pod))
    assert heard == [("pods-1", "p"), ("all", "p"), ("pods-2", "p")]
    heard.clear()
    unsubscribe()
    store.emit(WatchEvent(ADDED, "Node", None, Obj("Node", "n")))
    store.emit(WatchEvent(MODIFIED, "Pod", pod, pod))
    assert heard == [("all", "n"), ("nodes", "n"), ("pods-1", "p"), ("all", "p")]
