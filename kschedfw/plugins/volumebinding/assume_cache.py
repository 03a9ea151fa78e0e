"""Assume caches for PVs and PVCs (upstream ``volumebinding/passive_assume_cache.go``).

An assumed object is an in-memory update not yet written to the API server (a PV pre-bound to a
claim in Reserve, a PVC annotated with the selected node). It shadows the lister's object while
both have the same resourceVersion; as soon as the API object changes (a newer version arrives)
the assumed copy is dropped, exactly as the informer update does upstream.

Against a real API server PreBind runs on a binding worker while Filter and Reserve run on the
scheduler's thread, so the assumptions are kept under a lock, as upstream's cache keeps them.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Callable, Generic, Protocol, TypeVar

from kschedfw.api.accessors import resource_version_of
from kschedfw.plugins.volumebinding.storagehelpers import NotFoundError, pv_class

if TYPE_CHECKING:
    from kschedfw.api import PersistentVolume, PersistentVolumeClaim
    from kschedfw.fwk.interface import ObjectLister


class _Named(Protocol):
    @property
    def name(self) -> str: ...


_Obj = TypeVar("_Obj", bound=_Named)


class OutOfSyncError(Exception):
    pass


class PassiveAssumeCache(Generic[_Obj]):
    """Assumed objects over a lister, keyed by ``name`` (cluster scoped) or ``namespace/name``.

    Objects written without a resourceVersion (manifests loaded into the embedded cluster) are
    compared by identity instead: an assumption holds while the lister still returns the very
    object it was made against.
    """

    def __init__(self, lister: Callable[[], ObjectLister], kind: str, namespaced: bool,
                 resource: str) -> None:
        self._lister = lister
        self.kind = kind
        self.resource = resource
        self.namespaced = namespaced
        self._assumed: dict[str, tuple[_Obj, _Obj]] = {}   # key -> (assumed, API object then)
        self._lock = threading.RLock()

    def key_of(self, obj: _Obj) -> str:
        return obj.name

    def _split(self, key: str) -> tuple[str, str]:
        if self.namespaced:
            ns, _, name = key.partition("/")
            return ns, name
        return "", key

    def get_api_obj(self, key: str) -> _Obj:
        """The lister's version of the object, or :class:`NotFoundError`."""
        ns, name = self._split(key)
        obj: _Obj | None = self._lister().get(self.kind, name, ns)
        if obj is None:
            raise NotFoundError(self.kind, key, self.resource)
        return obj

    def _pick(self, key: str, api: _Obj) -> _Obj:
        entry = self._assumed.get(key)
        if entry is None:
            return api
        assumed, base = entry
        rv = resource_version_of(api)
        if resource_version_of(assumed) != rv or (not rv and base is not api):
            with self._lock:  # the API object moved on: it overrides the assumption
                if self._assumed.get(key) is entry:
                    del self._assumed[key]
            return api
        return assumed

    def get(self, key: str) -> _Obj:
        try:
            api = self.get_api_obj(key)
        except NotFoundError:
            with self._lock:
                self._assumed.pop(key, None)
            raise
        return self._pick(key, api)

    def list(self, predicate: Callable[[_Obj], bool] | None = None) -> list[_Obj]:
        out: list[_Obj] = []
        for obj in self._lister().list(self.kind):
            if predicate is not None and not predicate(obj):
                continue
            out.append(self._pick(self.key_of(obj), obj))
        return out

    def assume(self, obj: _Obj) -> None:
        """Record an in-memory update; its version must equal the API object's."""
        key = self.key_of(obj)
        stored = self.get_api_obj(key)
        stored_rv, rv = resource_version_of(stored), resource_version_of(obj)
        if stored_rv != rv:
            raise OutOfSyncError(f'"{key}" is out of sync (stored: {stored_rv}, assume: {rv})')
        with self._lock:
            self._assumed[key] = (obj, stored)

    def restore(self, obj: _Obj) -> None:
        """Drop the assumed version of ``obj`` (if it is still the one assumed)."""
        key = self.key_of(obj)
        with self._lock:
            entry = self._assumed.get(key)
            if entry is not None and resource_version_of(entry[0]) == resource_version_of(obj):
                del self._assumed[key]

    def forget(self, obj: _Obj) -> None:
        with self._lock:
            self._assumed.pop(self.key_of(obj), None)

    def assumed(self) -> dict[str, _Obj]:
        with self._lock:
            return {key: entry[0] for key, entry in self._assumed.items()}


class PVAssumeCache(PassiveAssumeCache["PersistentVolume"]):
    def __init__(self, lister: Callable[[], ObjectLister]) -> None:
        super().__init__(lister, "PersistentVolume", namespaced=False, resource="persistentvolumes")

    def list_pvs(self, storage_class_name: str) -> list[PersistentVolume]:
        """PVs of a storage class, assumed versions included (so a PV chosen for one pod is seen
        as pre-bound by the next)."""
        return self.list(lambda pv: pv_class(pv) == storage_class_name)


class PVCAssumeCache(PassiveAssumeCache["PersistentVolumeClaim"]):
    def __init__(self, lister: Callable[[], ObjectLister]) -> None:
        super().__init__(lister, "PersistentVolumeClaim", namespaced=True,
                         resource="persistentvolumeclaims")

    def key_of(self, obj: PersistentVolumeClaim) -> str:
        return f"{obj.namespace}/{obj.name}"
