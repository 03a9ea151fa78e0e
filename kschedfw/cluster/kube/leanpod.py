"""Pods decoded from the API server's JSON into only the fields the scheduler reads.

A pod as the server sends it carries managedFields, container commands, env, probes, mounts and
container statuses; none of that is read by the scheduler, its plugins (in-tree or contrib), the
status patches or the events. :data:`POD_FIELDS` lists what is kept; everything else is never
built. The JSON is decoded straight into msgspec Structs generated from that table (unknown
fields are skipped by the C decoder); what they do not take is decoded by ``json`` whole and
:func:`prune` keeps the same fields (also the ``fast=False`` path). Both give the same dict,
which parses to the same :class:`~kschedfw.api.Pod` as the full object. Any valid JSON decodes, whatever its shape (a
bookmark's ``"containers": null``, a Status, a field of an unexpected type: the parser or the
informer judges it); only bad JSON raises, as ``ValueError``.

Extenders receive the pod's manifest as the cache holds it: a scheduler with extenders keeps full
pods (``lean=False`` in :class:`~kschedfw.cluster.kube.backend.KubeBackend`).
"""

from __future__ import annotations

import json
from typing import Any, Callable

import msgspec

__all__ = ["POD_FIELDS", "prune", "pod_decoder", "pod_list_decoder", "pod_event_decoder"]

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
            "runtimeClassName", "schedulingGroup")},
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


_PAGE_KEYS = ("kind", "apiVersion", "metadata", "items")
_EVENT_KEYS = ("type", "object")


def _plain_list(data: bytes) -> Any:
    page = json.loads(data)
    if not isinstance(page, dict):
        return page  # not a list at all: the informer reports it
    lean = {k: page[k] for k in _PAGE_KEYS if k in page}
    if isinstance(lean.get("items"), list):
        lean["items"] = [prune(item) for item in lean["items"]]
    return lean


def _plain_event(data: bytes) -> Any:
    event = json.loads(data)
    if not isinstance(event, dict):
        return event  # not an event at all: the informer reports it
    lean = {k: event[k] for k in _EVENT_KEYS if k in event}
    if "object" in lean and lean.get("type") != "ERROR":
        lean["object"] = prune(lean["object"])
    return lean



def _struct_type(name: str, fields: Any) -> Any:
    """The msgspec type decoding one level of :data:`POD_FIELDS`. Every field may be null (the
    server sends ``"containers": null`` in bookmarks) or absent (left UNSET, which
    ``to_builtins`` leaves out)."""
    if fields is None:
        return Any
    if isinstance(fields, list):
        return list[_struct_type(name, fields[0])] | None  # type: ignore[misc]
    return msgspec.defstruct(name, [(key, _struct_type(name + "_" + key, sub) | None | msgspec.UnsetType,
                                     msgspec.UNSET) for key, sub in fields.items()])


def _msgspec_decoders() -> tuple[Callable[[bytes], Any], Callable[[bytes], Any], Callable[[bytes], Any]]:
    """Decoders that give what the plain ones give: whatever the Structs do not take (a field of
    another type, numbers out of range, bad JSON) is decoded again by the plain path, which
    either agrees on valid JSON or raises ValueError on bad JSON."""
    pod_type = _struct_type("LeanPod", POD_FIELDS)
    unset = msgspec.UNSET
    page_type = msgspec.defstruct("LeanPodList", [
        ("kind", Any, unset), ("apiVersion", Any, unset), ("metadata", Any, unset),
        ("items", list[pod_type] | None | msgspec.UnsetType, unset)])  # type: ignore[valid-type]
    event_type = msgspec.defstruct("LeanPodEvent", [("type", Any, unset),
                                                    ("object", msgspec.Raw | msgspec.UnsetType, unset)])
    pod_decoder = msgspec.json.Decoder(pod_type)
    page_decoder = msgspec.json.Decoder(page_type)
    event_decoder = msgspec.json.Decoder(event_type)
    to_builtins = msgspec.to_builtins
    decode_whole = msgspec.json.decode
    errors = (msgspec.ValidationError, msgspec.DecodeError)

    def pod(data: bytes) -> Any:
        try:
            return to_builtins(pod_decoder.decode(data))
        except errors:
            return _plain_pod(data)

    def page(data: bytes) -> Any:
        try:
            return to_builtins(page_decoder.decode(data))
        except errors:
            return _plain_list(data)

    def event(data: bytes) -> Any:
        try:
            decoded: Any = event_decoder.decode(data)
            lean = {} if decoded.type is unset else {"type": decoded.type}
            if decoded.object is not unset:
                lean["object"] = (decode_whole(decoded.object) if decoded.type == "ERROR"  # a Status, kept whole
                                  else to_builtins(pod_decoder.decode(decoded.object)))
            return lean
        except errors:
            return _plain_event(data)

    return pod, page, event


_decode_pod, _decode_page, _decode_event = _msgspec_decoders()


def pod_list_decoder(fast: bool = True) -> Callable[[bytes], Any]:
    """Decodes one page of a pod list (``fast=False``: the json + :func:`prune` path)."""
    return _decode_page if fast else _plain_list


def pod_event_decoder(fast: bool = True) -> Callable[[bytes], Any]:
    """Decodes one line of a pod watch: its ``type`` and ``object`` (those present), the object
    lean (an ERROR event's Status whole)."""
    return _decode_event if fast else _plain_event


def pod_decoder(fast: bool = True) -> Callable[[bytes], Any]:
    """Decodes one pod (e.g. the answer to a status patch)."""
    return _decode_pod if fast else _plain_pod
