"""Test doubles shared by the plugin tests."""

from __future__ import annotations


class FakeLister:
    """Cluster objects by kind, namespace and name: the read side of the Handle."""

    def __init__(self, *objects):
        self._objects = {}
        for obj in objects:
            self.add(obj)

    def add(self, obj):
        kind = getattr(obj, "kind", None) or type(obj).__name__
        self._objects[(kind, getattr(obj, "namespace", "") or "", obj.name)] = obj

    def get(self, kind, name, namespace=""):
        return self._objects.get((kind, namespace or "", name))

    def list(self, kind, namespace=None):
        return [o for (k, ns, _), o in self._objects.items()
                if k == kind and (namespace is None or ns == namespace)]
