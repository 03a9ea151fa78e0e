"""Pods decoded from the API server's JSON into only the fields the scheduler reads.

A pod as the server sends it carries managedFields, container commands, env, probes, mounts and
container statuses; none of that is read by the scheduler, its plugins (in-tree or contrib), the
status patches or the events. :data:`POD_FIELDS` lists what is kept; everything else is never
built. With msgspec installed the JSON is decoded straight into Structs generated from that table
(unknown fields are skipped by the C decoder); without it, ``json`` decodes the whole object and
:func:`prune` keeps the same fields. Both give the same dict, which parses to the same
:class:`~kschedfw.api.Pod` as the full object.

Extenders receive the pod's manifest as the cache holds it: a scheduler with extenders keeps full
pods (``lean=False`` in :class:`~kschedfw.cluster.kube.backend.KubeBackend`).
"""

from __future__ import annotations

import json
from typing import Any, Callable

__all__ = ["POD_FIELDS", "prune", "pod_decoder", "pod_list_decoder", "pod_event_decoder", "HAVE_MSGSPEC"]

# None: keep the value whole; a dict: an object, of which only these keys are kept; [dict]: a list
# of such objects.
_CONTAINER: dict[str, Any] = {"name": None, "image": None, "resources": None, "ports": None,
                              "restartPolicy": None}
POD_FIELDS: dict[str, Any] = {
    "kind": None,
    "apiVersion": None,
    "metadata": {k: None for k in (
        "name", "generateName", "namespace", "uid", "resourceVersion", "labels", "annotations",
        "ownerReferences", "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds",
        "finalizers")},
    "spec": {
        **{k: None for k in (
            "nodeName", "schedulerName", "priority", "priorityClassName", "preemptionPolicy", "overhead",
            "nodeSelector", "affinity", "tolerations", "topologySpreadConstraints", "schedulingGates",
            "volumes", "resourceClaims", "hostNetwork", "terminationGracePeriodSeconds", "resources",
            "runtimeClassName")},
        "containers": [_CONTAINER],
        "initContainers": [_CONTAINER],
    },
    "status": {k: None for k in (
        "phase", "conditions", "nominatedNodeName", "startTime", "resourceClaimStatuses",
        "extendedResourceClaimStatus")},
}


def prune(value: Any, fields: Any = POD_FIELDS) -> Any:
    """``value`` with only the keys ``fields`` lists (shapes other than expected are kept as
    they are, for the parser to report)."""
    if fields is None:
        return value
    if isinstance(fields, list):
        return [prune(v, fields[0]) for v in value] if isinstance(value, list) else value
    if not isinstance(value, dict):
        return value
    return {k: prune(v, fields[k]) for k, v in value.items() if k in fields}


def _plain_pod(data: bytes) -> Any:
    return prune(json.loads(data))


def _plain_list(data: bytes) -> Any:
    page = json.loads(data)
    if isinstance(page, dict) and isinstance(page.get("items"), list):
        page["items"] = [prune(item) for item in page["items"]]
    return page


def _plain_event(data: bytes) -> Any:
    event = json.loads(data)
    if isinstance(event, dict) and event.get("type") != "ERROR":
        event["object"] = prune(event.get("object"))
    return event


try:
    import msgspec
except ImportError:  # pragma: no cover - msgspec is a dependency; this keeps a source install working
    msgspec = None  # type: ignore[assignment]

HAVE_MSGSPEC = msgspec is not None


def _struct_type(name: str, fields: Any) -> Any:
    """The msgspec type decoding one level of :data:`POD_FIELDS` (absent fields stay UNSET,
    which ``to_builtins`` leaves out)."""
    if fields is None:
        return Any
    if isinstance(fields, list):
        return list[_struct_type(name, fields[0])]  # type: ignore[misc]
    return msgspec.defstruct(name, [(key, _struct_type(name + "_" + key, sub) | msgspec.UnsetType,
                                     msgspec.UNSET) for key, sub in fields.items()])


def _msgspec_decoders() -> tuple[Callable[[bytes], Any], Callable[[bytes], Any], Callable[[bytes], Any]]:
    pod_type = _struct_type("LeanPod", POD_FIELDS)
    page_type = msgspec.defstruct("LeanPodList", [
        ("kind", Any, msgspec.UNSET), ("apiVersion", Any, msgspec.UNSET), ("metadata", Any, msgspec.UNSET),
        ("items", list[pod_type] | msgspec.UnsetType, msgspec.UNSET)])  # type: ignore[valid-type]
    event_type = msgspec.defstruct("LeanPodEvent", [("type", Any, msgspec.UNSET),
                                                    ("object", msgspec.Raw, msgspec.Raw(b"null"))])
    pod_decoder = msgspec.json.Decoder(pod_type)
    page_decoder = msgspec.json.Decoder(page_type)
    event_decoder = msgspec.json.Decoder(event_type)
    to_builtins = msgspec.to_builtins
    decode_whole = msgspec.json.decode
    errors = (msgspec.ValidationError, msgspec.DecodeError)

    def pod(data: bytes) -> Any:
        try:
            return to_builtins(pod_decoder.decode(data))
        except errors:  # a shape the Structs do not take (or bad JSON): let json and the parser say why
            return _plain_pod(data)

    def page(data: bytes) -> Any:
        try:
            return to_builtins(page_decoder.decode(data))
        except errors:
            return _plain_list(data)

    def event(data: bytes) -> Any:
        try:
            decoded: Any = event_decoder.decode(data)
        except errors:
            return _plain_event(data)
        if decoded.type == "ERROR":  # a Status, kept whole
            return {"type": decoded.type, "object": decode_whole(decoded.object)}
        return {"type": decoded.type, "object": pod(decoded.object)}

    return pod, page, event


if HAVE_MSGSPEC:
    _decode_pod, _decode_page, _decode_event = _msgspec_decoders()
else:  # pragma: no cover
    _decode_pod, _decode_page, _decode_event = _plain_pod, _plain_list, _plain_event


def pod_list_decoder(fast: bool = True) -> Callable[[bytes], Any]:
    """Decodes one page of a pod list (``fast=False``: the json + :func:`prune` path)."""
    return _decode_page if fast else _plain_list


def pod_event_decoder(fast: bool = True) -> Callable[[bytes], Any]:
    """Decodes one line of a pod watch: ``{"type", "object"}`` with the object lean (an ERROR
    event's Status whole)."""
    return _decode_event if fast else _plain_event


def pod_decoder(fast: bool = True) -> Callable[[bytes], Any]:
    """Decodes one pod (e.g. the answer to a status patch)."""
    return _decode_pod if fast else _plain_pod
