"""Small typed readers for manifest dicts: each one names the field it rejects.

Errors raised here carry only the field path; :func:`kschedfw.api.load.parse_object` adds the
source, line and object name before the error reaches the user.
"""

from __future__ import annotations

import datetime as _dt
import uuid
from typing import Any, Callable, TypeVar, overload

from kschedfw.api.field import ManifestError

_T = TypeVar("_T")

_EMPTY: dict[str, Any] = {}


def describe(value: Any) -> str:
    """A short, user-facing name for the JSON type of ``value``."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, (list, tuple)):
        return "a list"
    return type(value).__name__


def fail(field: str, message: str) -> ManifestError:
    return ManifestError(message, field=field)


def mapping(value: Any, field: str) -> dict[str, Any]:
    """A mapping, with null/absent read as empty (as Go decodes a null struct)."""
    if value is None:
        return _EMPTY
    if type(value) is dict or isinstance(value, dict):
        return value
    raise fail(field, f"expected a mapping, got {describe(value)}")


def seq(value: Any, field: str) -> list[Any] | tuple[Any, ...]:
    if value is None:
        return ()
    if isinstance(value, (list, tuple)):
        return value
    raise fail(field, f"expected a list, got {describe(value)}")


def string(value: Any, field: str, default: str = "") -> str:
    if value is None:
        return default
    if isinstance(value, str):
        return value
    raise fail(field, f"expected a string, got {describe(value)} ({value!r})")


def opt_string(value: Any, field: str) -> str | None:
    if value is None:
        return None
    return string(value, field)


@overload
def integer(value: Any, field: str, default: int) -> int: ...
@overload
def integer(value: Any, field: str, default: None = None) -> int | None: ...


def integer(value: Any, field: str, default: int | None = None) -> int | None:
    """An integer (a float with no fraction counts); null/absent gives ``default``."""
    if value is None:
        return default
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    raise fail(field, f"expected an integer, got {describe(value)} ({value!r})")


def boolean(value: Any, field: str, default: bool = False) -> bool:
    if value is None:
        return default
    if isinstance(value, bool):
        return value
    raise fail(field, f"expected true or false, got {describe(value)} ({value!r})")


def string_map(value: Any, field: str) -> dict[str, str]:
    """labels / annotations / nodeSelector: string keys to string values."""
    if value is None:
        return {}
    d = mapping(value, field)
    for k, v in d.items():
        if type(v) is not str or type(k) is not str:
            if not isinstance(k, str):
                raise fail(field, f"keys must be strings, got {describe(k)} ({k!r})")
            if not isinstance(v, str):
                raise fail(f"{field}.{k}", f"values must be strings (quote it in YAML), "
                                           f"got {describe(v)} ({v!r})")
    return dict(d)


def string_tuple(value: Any, field: str) -> tuple[str, ...]:
    items = seq(value, field)
    for i, v in enumerate(items):
        if not isinstance(v, str):
            raise fail(f"{field}[{i}]", f"expected a string, got {describe(v)} ({v!r})")
    return tuple(items)


def int_or_string(value: Any, field: str) -> int | str | None:
    """IntOrString (``maxUnavailable: 50%`` or ``minAvailable: 1``)."""
    if value is None:
        return None
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str):
        return value
    raise fail(field, f"expected an integer or a string, got {describe(value)} ({value!r})")


def timestamp(value: Any, field: str) -> _dt.datetime | None:
    """RFC 3339 time (``2024-01-01T00:00:00Z``) as an aware datetime; naive values are UTC."""
    if value is None or value == "":
        return None
    if isinstance(value, _dt.datetime):
        result = value
    elif isinstance(value, _dt.date):
        result = _dt.datetime(value.year, value.month, value.day)
    elif isinstance(value, str):
        try:
            result = _dt.datetime.fromisoformat(value)
        except ValueError:
            raise fail(field, f"invalid RFC 3339 time {value!r} "
                              f"(expected e.g. 2024-01-01T00:00:00Z)") from None
    else:
        raise fail(field, f"expected an RFC 3339 time string, got {describe(value)}")
    if result.tzinfo is None:
        result = result.replace(tzinfo=_dt.timezone.utc)
    return result


# --------------------------------------------------------------------------- object metadata

_NAMESPACE_UID = uuid.UUID("6f1c3b52-3c1e-4d0a-9a57-0c4b6f3d2a11")


def derived_uid(kind: str, namespace: str, name: str) -> str:
    """A stable uid for objects written without one (same kind/namespace/name -> same uid)."""
    return str(uuid.uuid5(_NAMESPACE_UID, f"{kind}/{namespace}/{name}"))


class Meta:
    """The ``metadata`` fields the scheduler reads, already type-checked."""

    __slots__ = ("name", "generate_name", "namespace", "uid", "labels", "annotations",
                 "resource_version", "creation_timestamp", "deletion_timestamp",
                 "deletion_grace_period_seconds", "owner_references", "finalizers")

    name: str
    generate_name: str
    namespace: str
    uid: str
    labels: dict[str, str]
    annotations: dict[str, str]
    resource_version: str
    creation_timestamp: _dt.datetime | None
    deletion_timestamp: _dt.datetime | None
    deletion_grace_period_seconds: int | None
    owner_references: tuple[dict[str, Any], ...]
    finalizers: tuple[str, ...]


def metadata(obj: dict[str, Any], kind: str, *, namespaced: bool, template: bool = False) -> Meta:
    """Read ``obj["metadata"]``. A name (or a generateName) is required unless ``template``."""
    d = mapping(obj.get("metadata"), "metadata")
    m = Meta()
    m.name = string(d.get("name"), "metadata.name")
    m.generate_name = string(d.get("generateName"), "metadata.generateName")
    if not m.name and not m.generate_name and not template:
        raise fail("metadata.name", "Required value: name or generateName is required")
    m.namespace = (string(d.get("namespace"), "metadata.namespace") or "default") if namespaced else ""
    m.uid = string(d.get("uid"), "metadata.uid") or derived_uid(kind, m.namespace,
                                                                m.name or m.generate_name)
    m.labels = string_map(d.get("labels"), "metadata.labels")
    m.annotations = string_map(d.get("annotations"), "metadata.annotations")
    rv = d.get("resourceVersion")
    m.resource_version = str(rv) if isinstance(rv, int) and not isinstance(rv, bool) \
        else string(rv, "metadata.resourceVersion")
    m.creation_timestamp = timestamp(d.get("creationTimestamp"), "metadata.creationTimestamp")
    m.deletion_timestamp = timestamp(d.get("deletionTimestamp"), "metadata.deletionTimestamp")
    m.deletion_grace_period_seconds = integer(d.get("deletionGracePeriodSeconds"),
                                              "metadata.deletionGracePeriodSeconds")
    refs = seq(d.get("ownerReferences"), "metadata.ownerReferences")
    for i, ref in enumerate(refs):
        mapping(ref, f"metadata.ownerReferences[{i}]")
    m.owner_references = tuple(refs)
    m.finalizers = string_tuple(d.get("finalizers"), "metadata.finalizers")
    return m


# Kinds without a namespace (anything else defaults to ``default`` when none is given).
CLUSTER_SCOPED_KINDS = frozenset((
    "Node", "Namespace", "PriorityClass", "PersistentVolume", "StorageClass", "CSINode",
    "CSIDriver", "VolumeAttachment", "RuntimeClass", "CustomResourceDefinition", "ClusterRole",
    "ClusterRoleBinding", "APIService", "MutatingWebhookConfiguration",
    "ValidatingWebhookConfiguration", "ValidatingAdmissionPolicy",
    "ValidatingAdmissionPolicyBinding", "DeviceClass", "ResourceSlice", "IngressClass",
    "PriorityLevelConfiguration", "FlowSchema", "CertificateSigningRequest", "ComponentStatus",
    "NodeResourceTopology", "NetworkTopology", "AppGroup",
))


def describe_object(obj: Any, kind: str = "") -> str:
    """``Pod default/web-1`` (namespaced), ``Node node-1``, ``Pod default/pod-*`` (generateName)."""
    if not isinstance(obj, dict):
        return kind
    kind = kind or (obj.get("kind") if isinstance(obj.get("kind"), str) else "") or "object"
    meta = obj.get("metadata")
    if not isinstance(meta, dict):
        return kind
    name = meta.get("name")
    if not isinstance(name, str) or not name:
        gen = meta.get("generateName")
        name = f"{gen}*" if isinstance(gen, str) and gen else ""
    if not name:
        return kind
    if kind in CLUSTER_SCOPED_KINDS or kind == "object":
        return f"{kind} {name}"
    ns = meta.get("namespace")
    return f"{kind} {ns if isinstance(ns, str) and ns else 'default'}/{name}"


def with_context(exc: ManifestError, *, source: str = "", line: int | None = None,
                 obj: str = "") -> ManifestError:
    """The same error with the source, line and object filled in where still missing."""
    return ManifestError(exc.detail, source=exc.source or source, line=exc.line or line,
                         obj=exc.obj or obj, field=exc.field)


def parse_in_context(parse: Callable[..., _T], kind: str, d: dict[str, Any], *, source: str = "",
                     line: int | None = None, template: bool = False) -> _T:
    """``parse(d)``, its error naming the file, line and object (the shared body of every
    ``from_dict``)."""
    try:
        return parse(d, template=template)
    except ManifestError as exc:
        raise with_context(exc, source=source, line=line, obj=describe_object(d, kind)) from None
