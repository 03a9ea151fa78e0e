"""Nodes."""

from __future__ import annotations

import datetime as _dt
from typing import Any, Iterable, Mapping

import attrs

from kschedfw.api import _parse
from kschedfw.api.resources import parse_resource_list
from kschedfw.api.field import ManifestError

__all__ = ["Taint", "ContainerImage", "NodeCondition", "Node", "parse_node", "TAINT_EFFECTS"]

TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")


@attrs.frozen(slots=True)
class Taint:
    key: str
    value: str = ""
    effect: str = ""
    time_added: _dt.datetime | None = attrs.field(default=None, eq=False)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"key": self.key, "effect": self.effect}
        if self.value:
            out["value"] = self.value
        if self.time_added is not None:
            out["timeAdded"] = self.time_added.strftime("%Y-%m-%dT%H:%M:%SZ")
        return out


@attrs.frozen(slots=True)
class ContainerImage:
    names: tuple[str, ...]
    size_bytes: int = 0


@attrs.frozen(slots=True)
class NodeCondition:
    type: str
    status: str
    reason: str = ""
    message: str = ""


def _parse_taint(d: Any, field: str) -> Taint:
    d = _parse.mapping(d, field)
    key = _parse.string(d.get("key"), f"{field}.key")
    if not key:
        raise _parse.fail(f"{field}.key", "Required value: a taint needs a key")
    effect = _parse.string(d.get("effect"), f"{field}.effect")
    if effect not in TAINT_EFFECTS:
        raise _parse.fail(f"{field}.effect", f"Unsupported value: {effect!r}: supported values: "
                                             + ", ".join(f'"{e}"' for e in TAINT_EFFECTS))
    return Taint(key, _parse.string(d.get("value"), f"{field}.value"), effect,
                 _parse.timestamp(d.get("timeAdded"), f"{field}.timeAdded"))


@attrs.frozen(slots=True, unsafe_hash=False)
class Node:
    """A node. ``allocatable`` falls back to ``capacity`` when the manifest has none.
    Hash is the name; equality compares every field except ``raw``."""

    name: str
    uid: str = ""
    labels: dict[str, str] = attrs.field(factory=dict)
    annotations: dict[str, str] = attrs.field(factory=dict)
    unschedulable: bool = False
    taints: tuple[Taint, ...] = ()
    allocatable: dict[str, int] = attrs.field(factory=dict)
    capacity: dict[str, int] = attrs.field(factory=dict)
    images: tuple[ContainerImage, ...] = ()
    conditions: tuple[NodeCondition, ...] = ()
    resource_version: str = ""
    raw: dict[str, Any] = attrs.field(factory=dict, eq=False, repr=False)
    # additions
    generate_name: str = ""
    creation_timestamp: _dt.datetime | None = None

    def __hash__(self) -> int:
        return hash(self.name)

    def condition(self, type_: str) -> NodeCondition | None:
        for c in self.conditions:
            if c.type == type_:
                return c
        return None

    @property
    def is_ready(self) -> bool:
        c = self.condition("Ready")
        return c is not None and c.status == "True"

    # -- changes (``raw`` is updated too, shallowly, so the object can be written back)
    def _with_raw(self, section: str, key: str, value: Any, **changes: Any) -> "Node":
        raw = dict(self.raw)
        part = dict(raw.get(section) or {})
        if value is None:
            part.pop(key, None)
        else:
            part[key] = value
        raw[section] = part
        return attrs.evolve(self, raw=raw, **changes)

    def with_labels(self, labels: Mapping[str, str]) -> "Node":
        return self._with_raw("metadata", "labels", dict(labels), labels=dict(labels))

    def with_taints(self, taints: Iterable[Taint]) -> "Node":
        taints = tuple(taints)
        return self._with_raw("spec", "taints", [t.to_dict() for t in taints] or None, taints=taints)

    def with_unschedulable(self, unschedulable: bool = True) -> "Node":
        return self._with_raw("spec", "unschedulable", True if unschedulable else None,
                              unschedulable=unschedulable)

    def with_allocatable(self, allocatable: Mapping[str, int]) -> "Node":
        from kschedfw.api.quantity import format_quantity
        return self._with_raw("status", "allocatable",
                              {k: format_quantity(k, v) for k, v in allocatable.items()},
                              allocatable=dict(allocatable))

    @classmethod
    def from_dict(cls, d: dict[str, Any], *, source: str = "", line: int | None = None,
                  template: bool = False) -> "Node":
        try:
            return parse_node(d, template=template)
        except ManifestError as exc:
            raise _parse.with_context(exc, source=source, line=line,
                                      obj=_parse.describe_object(d, "Node")) from None


def parse_node(d: dict[str, Any], *, template: bool = False) -> Node:
    """Build a :class:`Node` from a manifest dict. Errors name the field but not the object."""
    m = _parse.metadata(d, "Node", namespaced=False, template=template)
    spec = _parse.mapping(d.get("spec"), "spec")
    status = _parse.mapping(d.get("status"), "status")
    capacity = parse_resource_list(status.get("capacity"), field="status.capacity")
    if status.get("allocatable") is not None:
        allocatable = parse_resource_list(status.get("allocatable"), field="status.allocatable")
    else:
        allocatable = capacity
    images = []
    for i, img in enumerate(_parse.seq(status.get("images"), "status.images")):
        f = f"status.images[{i}]"
        img = _parse.mapping(img, f)
        images.append(ContainerImage(_parse.string_tuple(img.get("names"), f"{f}.names"),
                                     _parse.integer(img.get("sizeBytes"), f"{f}.sizeBytes", 0)))
    conditions = []
    for i, c in enumerate(_parse.seq(status.get("conditions"), "status.conditions")):
        f = f"status.conditions[{i}]"
        c = _parse.mapping(c, f)
        conditions.append(NodeCondition(_parse.string(c.get("type"), f"{f}.type"),
                                        _parse.string(c.get("status"), f"{f}.status"),
                                        _parse.string(c.get("reason"), f"{f}.reason"),
                                        _parse.string(c.get("message"), f"{f}.message")))
    return Node(
        name=m.name,
        uid=m.uid,
        labels=m.labels,
        annotations=m.annotations,
        unschedulable=_parse.boolean(spec.get("unschedulable"), "spec.unschedulable"),
        taints=tuple(_parse_taint(t, f"spec.taints[{i}]")
                     for i, t in enumerate(_parse.seq(spec.get("taints"), "spec.taints"))),
        allocatable=allocatable,
        capacity=capacity,
        images=tuple(images),
        conditions=tuple(conditions),
        resource_version=m.resource_version,
        raw=d,
        generate_name=m.generate_name,
        creation_timestamp=m.creation_timestamp,
    )
