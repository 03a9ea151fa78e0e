"""The extender wire format (``k8s.io/kube-scheduler/extender/v1``), both ways.

Upstream's types carry no JSON tags, so Go writes the field names as they are spelled in Go
(``Pod``, ``Nodes``, ``NodeNames``, ``FailedNodes``, ``Host``, ``Score``...) and reads them back
case-insensitively, ignoring unknown fields. Requests are built here exactly as Go encodes them
(a nil pointer or map is ``null``); answers are decoded with Go's rules and Go's error messages,
so an extender written against kube-scheduler works unchanged.
"""

from __future__ import annotations

import json
from typing import Any, Iterable, Mapping

__all__ = [
    "MAX_EXTENDER_PRIORITY", "MIN_EXTENDER_PRIORITY", "WireError", "as_sent",
    "filter_args", "binding_args", "preemption_args", "meta_victims",
    "decode", "decode_filter_result", "decode_host_priority_list", "decode_binding_result",
    "decode_preemption_result",
]

MIN_EXTENDER_PRIORITY = 0
MAX_EXTENDER_PRIORITY = 10
_INT64 = (-(1 << 63), (1 << 63) - 1)


class WireError(ValueError):
    """An answer Go's ``encoding/json`` would refuse; the text is Go's."""


# ------------------------------------------------------------------------------------ requests

def as_sent(manifest: Mapping[str, Any]) -> dict[str, Any]:
    """An object as kube-scheduler sends it: informer copies carry no ``apiVersion``/``kind``."""
    return {k: v for k, v in manifest.items() if k not in ("apiVersion", "kind")}


def filter_args(pod_manifest: Mapping[str, Any], node_manifests: Iterable[Mapping[str, Any]] | None,
                node_names: Iterable[str] | None) -> dict[str, Any]:
    """``ExtenderArgs``: the pod, and either the candidate nodes as a ``NodeList`` or their names
    (only one is set; the other is ``null``)."""
    nodes = None if node_manifests is None else {"metadata": {}, "items": [as_sent(n) for n in node_manifests]}
    names = None if node_names is None else list(node_names)
    return {"Pod": as_sent(pod_manifest), "Nodes": nodes, "NodeNames": names}


def binding_args(name: str, namespace: str, uid: str, node: str) -> dict[str, Any]:
    """``ExtenderBindingArgs``."""
    return {"PodName": name, "PodNamespace": namespace, "PodUID": uid, "Node": node}


def meta_victims(pod_uids: Iterable[str], num_pdb_violations: int) -> dict[str, Any]:
    """``MetaVictims``: victims named by uid only."""
    return {"Pods": [{"UID": uid} for uid in pod_uids], "NumPDBViolations": num_pdb_violations}


def preemption_args(pod_manifest: Mapping[str, Any], victims: Mapping[str, Mapping[str, Any]] | None,
                    meta: Mapping[str, Mapping[str, Any]] | None) -> dict[str, Any]:
    """``ExtenderPreemptionArgs``: ``NodeNameToVictims`` (full pods) or ``NodeNameToMetaVictims``
    (uids, for a node-cache-capable extender); the other is ``null``. Go sorts map keys."""
    def ordered(m: Mapping[str, Mapping[str, Any]] | None) -> dict[str, Mapping[str, Any]] | None:
        return None if m is None else {k: m[k] for k in sorted(m)}
    return {"Pod": as_sent(pod_manifest), "NodeNameToVictims": ordered(victims),
            "NodeNameToMetaVictims": ordered(meta)}


# ------------------------------------------------------------------------------------ answers

class _Number(float):
    """A JSON number that keeps its text, for Go's ``cannot unmarshal number 1.5`` message."""

    text: str

    def __new__(cls, text: str) -> "_Number":
        obj = super().__new__(cls, text)
        obj.text = text
        return obj


def decode(body: bytes) -> Any:
    """The first JSON value of ``body``, as Go's ``json.Decoder.Decode`` reads it (trailing data
    is not looked at; an empty body is ``EOF``)."""
    text = body.decode("utf-8", errors="replace").lstrip(" \t\r\n")
    if not text:
        raise WireError("EOF")
    try:
        value, _ = json.JSONDecoder(parse_float=_Number, parse_constant=_reject_constant).raw_decode(text)
    except json.JSONDecodeError as exc:
        raise WireError(f"invalid JSON at offset {exc.pos}: {exc.msg}") from None
    return value


def _reject_constant(name: str) -> Any:
    raise WireError(f"invalid character '{name[0]}' looking for beginning of value")


def _json_kind(value: Any, go_type: str = "") -> str:
    """Go's name for the JSON value; a number that does not fit an integer field is quoted."""
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, (int, float)):
        if go_type.startswith("int"):
            return "number " + (value.text if isinstance(value, _Number) else str(value))
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


class _Ctx:
    """Where a value sits, for Go's ``Go struct field S.F of type T`` messages: ``S`` is the
    innermost struct type, ``F`` the JSON path from the top (map keys and indices left out)."""

    __slots__ = ("struct", "path")

    def __init__(self, struct: str, path: str = "") -> None:
        self.struct = struct
        self.path = path

    def at(self, field: str) -> "_Ctx":
        return _Ctx(self.struct, f"{self.path}.{field}" if self.path else field)

    def inside(self, struct: str) -> "_Ctx":
        return _Ctx(struct, self.path)

    def mismatch(self, value: Any, go_type: str) -> WireError:
        if not self.path:
            return WireError(f"json: cannot unmarshal {_json_kind(value)} into Go value of type {go_type}")
        return WireError(f"json: cannot unmarshal {_json_kind(value, go_type)} into Go struct field "
                         f"{self.struct}.{self.path} of type {go_type}")


def _fields(obj: Mapping[str, Any], names: Iterable[str]) -> dict[str, Any]:
    """Go's field matching: an exact name first, else a case-insensitive one; later keys win."""
    names = tuple(names)
    folded = {n.casefold(): n for n in names}
    out: dict[str, Any] = {}
    for key, value in obj.items():
        name = key if key in names else folded.get(key.casefold())
        if name is not None:
            out[name] = value
    return out


def _string(value: Any, ctx: _Ctx) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        raise ctx.mismatch(value, "string")
    return value


def _int64(value: Any, ctx: _Ctx) -> int:
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, int) or not _INT64[0] <= value <= _INT64[1]:
        raise ctx.mismatch(value, "int64")
    return value


def _object(value: Any, ctx: _Ctx, go_type: str) -> Mapping[str, Any] | None:
    if value is None:
        return None
    if not isinstance(value, dict):
        raise ctx.mismatch(value, go_type)
    return value


def _array(value: Any, ctx: _Ctx, go_type: str) -> list[Any] | None:
    if value is None:
        return None
    if not isinstance(value, list):
        raise ctx.mismatch(value, go_type)
    return value


def _string_map(value: Any, ctx: _Ctx) -> dict[str, str]:
    obj = _object(value, ctx, "v1.FailedNodesMap")
    return {k: _string(v, ctx) for k, v in (obj or {}).items()}


def decode_filter_result(body: bytes) -> dict[str, Any]:
    """``ExtenderFilterResult`` as ``{"Nodes": [node manifests] | None, "NodeNames": [names] | None,
    "FailedNodes": {}, "FailedAndUnresolvableNodes": {}, "Error": ""}``."""
    ctx = _Ctx("ExtenderFilterResult")
    top = _object(decode(body), ctx, "v1.ExtenderFilterResult")
    f = _fields(top or {}, ("Nodes", "NodeNames", "FailedNodes", "FailedAndUnresolvableNodes", "Error"))
    nodes: list[dict[str, Any]] | None = None
    node_list = _object(f.get("Nodes"), ctx.at("Nodes"), "v1.NodeList")
    if node_list is not None:
        items_ctx = ctx.at("Nodes").inside("NodeList").at("items")
        items = _array(_fields(node_list, ("items",)).get("items"), items_ctx, "[]v1.Node")
        nodes = [_node(item, items_ctx) for item in items or ()]
    names_raw = _array(f.get("NodeNames"), ctx.at("NodeNames"), "[]string")
    names = None if names_raw is None else [_string(n, ctx.at("NodeNames")) for n in names_raw]
    return {"Nodes": nodes, "NodeNames": names,
            "FailedNodes": _string_map(f.get("FailedNodes"), ctx.at("FailedNodes")),
            "FailedAndUnresolvableNodes": _string_map(f.get("FailedAndUnresolvableNodes"),
                                                      ctx.at("FailedAndUnresolvableNodes")),
            "Error": _string(f.get("Error"), ctx.at("Error"))}


def _node(item: Any, ctx: _Ctx) -> dict[str, Any]:
    """One ``NodeList`` item, its name checked as Go would decode it."""
    node = _object(item, ctx, "v1.Node") or {}
    meta_ctx = ctx.inside("Node").at("metadata")
    meta = _object(_fields(node, ("metadata",)).get("metadata"), meta_ctx, "v1.ObjectMeta") or {}
    _string(_fields(meta, ("name",)).get("name"), meta_ctx.inside("ObjectMeta").at("name"))
    return dict(node)


def decode_host_priority_list(body: bytes) -> list[tuple[str, int]]:
    """``HostPriorityList`` as ``[(host, score)]``."""
    items = _array(decode(body), _Ctx(""), "v1.HostPriorityList")
    out: list[tuple[str, int]] = []
    ctx = _Ctx("HostPriority")
    for item in items or ():
        f = _fields(_object(item, ctx, "v1.HostPriority") or {}, ("Host", "Score"))
        out.append((_string(f.get("Host"), ctx.at("Host")), _int64(f.get("Score"), ctx.at("Score"))))
    return out


def decode_binding_result(body: bytes) -> str:
    """``ExtenderBindingResult``: its ``Error`` text ("" when the extender bound the pod)."""
    ctx = _Ctx("ExtenderBindingResult")
    top = _object(decode(body), ctx, "v1.ExtenderBindingResult") or {}
    return _string(_fields(top, ("Error",)).get("Error"), ctx.at("Error"))


def decode_preemption_result(body: bytes) -> dict[str, tuple[list[str], int]]:
    """``ExtenderPreemptionResult``: node name -> (victim pod uids in order, PDB violations).
    A ``null`` entry counts as no victims."""
    ctx = _Ctx("ExtenderPreemptionResult")
    top = _object(decode(body), ctx, "v1.ExtenderPreemptionResult") or {}
    ctx = ctx.at("NodeNameToMetaVictims")
    raw = _object(_fields(top, ("NodeNameToMetaVictims",)).get("NodeNameToMetaVictims"), ctx,
                  "map[string]*v1.MetaVictims")
    out: dict[str, tuple[list[str], int]] = {}
    vctx = ctx.inside("MetaVictims")
    for node, victims in (raw or {}).items():
        vf = _fields(_object(victims, ctx, "v1.MetaVictims") or {}, ("Pods", "NumPDBViolations"))
        pods = _array(vf.get("Pods"), vctx.at("Pods"), "[]*v1.MetaPod") or []
        uids = [_meta_pod_uid(p, vctx.at("Pods")) for p in pods]
        out[node] = (uids, _int64(vf.get("NumPDBViolations"), vctx.at("NumPDBViolations")))
    return out


def _meta_pod_uid(item: Any, ctx: _Ctx) -> str:
    f = _fields(_object(item, ctx, "v1.MetaPod") or {}, ("UID",))
    return _string(f.get("UID"), ctx.inside("MetaPod").at("UID"))
