"""The objects a backend holds and who hears of their changes: one store for both backends.

Objects are kept by Kind and by upstream's ``cache.MetaNamespaceKeyFunc`` key
(``namespace/name``, or ``name`` for a cluster-scoped object). The embedded cluster writes into
the store as it accepts a write; the real backend applies its informers' watch events to it in
``deliver()``. Either way the store does not decide *when* a change is heard of: the backend
hands each change to :meth:`ObjectStore.emit` from its ``deliver()``, so no handler runs inside a
write.

The scheduler's handlers (``watch``) and the plugins' per-Kind subscriptions (``subscribe``) are
called in the order they were registered. Plugins subscribe while the profiles are built, before
the scheduler starts watching, so a plugin's own state is up to date when the scheduler's
QueueingHints (which may read it) run: the order :class:`~kschedfw.fwk.interface.Subscriber`
promises.
"""

from __future__ import annotations

import builtins
from typing import Any

from kschedfw.fwk.interface import ADDED, DELETED, MODIFIED, Unsubscribe, WatchCallback, WatchEvent

__all__ = ["ObjectStore", "kind_of", "key_of", "object_key"]


def kind_of(obj: Any) -> str:
    """The object's Kind (its class name when it has no ``kind``)."""
    kind: str = getattr(obj, "kind", None) or type(obj).__name__
    return kind


def object_key(name: str, namespace: str = "") -> str:
    """upstream's MetaNamespaceKeyFunc: ``namespace/name``, ``name`` when cluster-scoped."""
    return f"{namespace}/{name}" if namespace else name


def key_of(obj: Any) -> str:
    """The store key of ``obj``."""
    return object_key(obj.name, getattr(obj, "namespace", "") or "")


class ObjectStore:
    """Objects by Kind and key, and the callbacks that hear of their changes.

    Reads (``get``, ``list``) are the :class:`~kschedfw.fwk.interface.ObjectLister` a backend
    offers; ``put`` and ``pop`` change the store without telling anyone; ``emit`` tells."""

    def __init__(self) -> None:
        self._objects: dict[str, dict[str, Any]] = {}
        self._callbacks: builtins.list[tuple[str | None, WatchCallback]] = []

    # ------------------------------------------------------------------ reads
    def get(self, kind: str, name: str, namespace: str = "") -> Any:
        objects = self._objects.get(kind)
        if objects is None:
            return None
        return objects.get(f"{namespace}/{name}" if namespace else name)

    def list(self, kind: str, namespace: str | None = None) -> builtins.list[Any]:
        """Every object of ``kind`` in the order first stored; of one namespace (``""``: the
        cluster-scoped ones) when ``namespace`` is given."""
        objects = self._objects.get(kind)
        if not objects:
            return []
        if namespace is None:
            return builtins.list(objects.values())
        if not namespace:
            return [o for key, o in objects.items() if "/" not in key]
        prefix = namespace + "/"
        return [o for key, o in objects.items() if key.startswith(prefix)]

    def kinds(self) -> builtins.list[str]:
        return builtins.list(self._objects)

    def all_objects(self) -> builtins.list[Any]:
        return [o for objects in self._objects.values() for o in objects.values()]

    # ------------------------------------------------------------------ writes (nobody is told)
    def put(self, kind: str, obj: Any) -> Any:
        """Store ``obj`` under its key; the object it replaces (None if new)."""
        objects = self._objects.get(kind)
        if objects is None:
            objects = self._objects[kind] = {}
        namespace = getattr(obj, "namespace", "") or ""
        key = f"{namespace}/{obj.name}" if namespace else obj.name
        old = objects.get(key)
        objects[key] = obj
        return old

    def pop(self, kind: str, name: str, namespace: str = "") -> Any:
        """Remove and return the object (None if there is none)."""
        objects = self._objects.get(kind)
        if objects is None:
            return None
        return objects.pop(object_key(name, namespace), None)

    def apply(self, type_: str, kind: str, obj: Any) -> WatchEvent | None:
        """An informer's event applied to the store: the change it makes, as a watch event
        (ADDED or MODIFIED by whether the key was known; None for the deletion of an unknown
        object)."""
        if type_ == DELETED:
            old = self.pop(kind, obj.name, getattr(obj, "namespace", "") or "")
            return None if old is None else WatchEvent(DELETED, kind, old, None)
        old = self.put(kind, obj)
        return WatchEvent(ADDED if old is None else MODIFIED, kind, old, obj)

    # ------------------------------------------------------------------ fan-out
    def watch(self, callback: WatchCallback) -> None:
        """Every change, of every Kind."""
        self._callbacks.append((None, callback))

    def subscribe(self, kind: str, callback: WatchCallback) -> Unsubscribe:
        """Changes of ``kind`` only, in the same order as to ``watch`` callbacks."""
        entry = (kind, callback)
        self._callbacks.append(entry)

        def unsubscribe() -> None:
            if entry in self._callbacks:
                self._callbacks.remove(entry)
        return unsubscribe

    def emit(self, event: WatchEvent) -> None:
        """Hand ``event`` to the callbacks for its Kind, in registration order."""
        kind = event.kind
        for wanted, callback in builtins.list(self._callbacks):
            if wanted is None or wanted == kind:
                callback(event)
