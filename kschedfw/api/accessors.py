"""Reading any Kubernetes object the same way, typed or not.

The typed API objects (:class:`~kschedfw.api.Pod`, ``Node``, ``PersistentVolumeClaim``, ...) carry
the fields read most as attributes; everything else is in the manifest kept in ``raw``. Kinds
without a typed class come as :class:`~kschedfw.api.GenericObject` or plain dicts. These accessors
take all of them, attribute first, then the manifest.
"""

from __future__ import annotations

from typing import Any, Mapping

__all__ = ["raw_of", "metadata_of", "spec_of", "status_of", "name_of", "namespace_of", "uid_of",
           "annotations_of", "labels_of", "resource_version_of", "is_being_deleted", "controller_ref"]



def raw_of(obj: Any) -> dict[str, Any]:
    if isinstance(obj, dict):
        return obj
    raw = getattr(obj, "raw", None)
    return raw if isinstance(raw, dict) else {}


def _section(obj: Any, key: str) -> dict[str, Any]:
    value = raw_of(obj).get(key)
    return value if isinstance(value, dict) else {}


def metadata_of(obj: Any) -> dict[str, Any]:
    return _section(obj, "metadata")


def spec_of(obj: Any) -> dict[str, Any]:
    spec = getattr(obj, "spec", None)
    if isinstance(spec, dict) and not isinstance(obj, dict):
        return spec
    return _section(obj, "spec")


def status_of(obj: Any) -> dict[str, Any]:
    return _section(obj, "status")


def name_of(obj: Any) -> str:
    name = getattr(obj, "name", None)
    if isinstance(name, str) and not isinstance(obj, dict):
        return name
    return str(metadata_of(obj).get("name") or "")


def namespace_of(obj: Any) -> str:
    ns = getattr(obj, "namespace", None)
    if isinstance(ns, str) and not isinstance(obj, dict):
        return ns
    return str(metadata_of(obj).get("namespace") or "")


def uid_of(obj: Any) -> str:
    uid = getattr(obj, "uid", None)
    if isinstance(uid, str) and not isinstance(obj, dict):
        return uid
    return str(metadata_of(obj).get("uid") or "")


def annotations_of(obj: Any) -> Mapping[str, str]:
    ann = getattr(obj, "annotations", None)
    if isinstance(ann, dict) and not isinstance(obj, dict):
        return ann
    ann = metadata_of(obj).get("annotations")
    return ann if isinstance(ann, dict) else {}


def labels_of(obj: Any) -> Mapping[str, str]:
    labels = getattr(obj, "labels", None)
    if isinstance(labels, dict) and not isinstance(obj, dict):
        return labels
    labels = metadata_of(obj).get("labels")
    return labels if isinstance(labels, dict) else {}


def resource_version_of(obj: Any) -> str:
    rv = getattr(obj, "resource_version", None)
    if isinstance(rv, str) and rv and not isinstance(obj, dict):
        return rv
    rv = metadata_of(obj).get("resourceVersion")
    return "" if rv is None else str(rv)


def is_being_deleted(obj: Any) -> bool:
    if getattr(obj, "deletion_timestamp", None) is not None:
        return True
    return metadata_of(obj).get("deletionTimestamp") is not None


def controller_ref(obj: Any) -> dict[str, Any] | None:
    """The owner reference with ``controller: true`` (upstream ``GetControllerOf``)."""
    for ref in metadata_of(obj).get("ownerReferences") or ():
        if isinstance(ref, dict) and ref.get("controller") is True:
            return ref
    return None
