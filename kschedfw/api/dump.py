"""Writing objects back out as a ``kind: List`` YAML document (``simulate --write-out``).

libyaml's emitter (``CSafeDumper``) writes the same YAML as PyYAML's pure-Python one about
ten times faster; the pure one is the fallback when PyYAML was built without libyaml. What
PyYAML does in Python around it is made cheap: the node tree of a manifest (dicts, lists,
strings, ints, booleans, nulls) is built by :func:`_node_tree` without the representer's
per-value dispatch, and the emitter's two tag resolutions per scalar are remembered by value.
"""

from __future__ import annotations

from typing import IO, Any, Iterable

import yaml
from yaml.nodes import MappingNode, ScalarNode, SequenceNode

from kschedfw.gcpause import paused

__all__ = ["dump_list", "write_list"]

_BaseDumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)

_STR = "tag:yaml.org,2002:str"
_INT = "tag:yaml.org,2002:int"
_BOOL = "tag:yaml.org,2002:bool"
_NULL = "tag:yaml.org,2002:null"
_MAP = "tag:yaml.org,2002:map"
_SEQ = "tag:yaml.org,2002:seq"


class _Dumper(_BaseDumper):  # type: ignore[misc, valid-type]
    """The safe dumper, remembering which tag a plain scalar's text resolves to (the emitter
    asks twice per scalar, and manifests repeat the same few values)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._plain_tags: dict[str, str] = {}

    def resolve(self, kind: Any, value: Any, implicit: Any) -> Any:
        if kind is ScalarNode:  # (no path resolvers: only a plain scalar's text matters)
            if not implicit[0]:
                return _STR
            tag = self._plain_tags.get(value)
            if tag is None:
                tag = self._plain_tags[value] = super().resolve(kind, value, implicit)
            return tag
        return super().resolve(kind, value, implicit)


def _node_tree(dumper: Any, data: Any) -> Any:
    """What ``dumper.represent_data(data)`` returns (block style, keys in their order, the
    same node for a dict or list met twice, so the emitter anchors it as before); values of
    other types go through the representer itself."""
    represented = dumper.represented_objects
    keep = dumper.object_keeper.append

    def node_of(value: Any) -> Any:
        cls = value.__class__
        if cls is str:
            return ScalarNode(_STR, value)
        if cls is dict or cls is list:
            key = id(value)
            if key in represented:
                return represented[key]
            keep(value)
            if cls is dict:
                pairs: list[tuple[Any, Any]] = []
                node = represented[key] = MappingNode(_MAP, pairs, flow_style=False)
                for k, v in value.items():
                    pairs.append((node_of(k), node_of(v)))
            else:
                items: list[Any] = []
                node = represented[key] = SequenceNode(_SEQ, items, flow_style=False)
                for v in value:
                    items.append(node_of(v))
            return node
        if cls is bool:
            return ScalarNode(_BOOL, "true" if value else "false")
        if cls is int:
            return ScalarNode(_INT, str(value))
        if value is None:
            return ScalarNode(_NULL, "null")
        return dumper.represent_data(value)

    return node_of(data)


def dump_list(manifests: Iterable[dict[str, Any]], stream: IO[str], *,
              dumper: type = _Dumper) -> None:
    """Write ``manifests`` to ``stream`` as one ``apiVersion: v1, kind: List`` document, keys
    in their original order."""
    document = {"apiVersion": "v1", "kind": "List", "items": list(manifests)}
    with paused():  # the nodes hold no reference cycles
        _dump(document, stream, dumper)


def _dump(document: Any, stream: IO[str], dumper_class: type) -> None:
    """``yaml.dump(document, stream, Dumper=dumper_class, sort_keys=False, allow_unicode=False,
    default_flow_style=False)``, with the node tree built by :func:`_node_tree`."""
    dumper = dumper_class(stream, default_flow_style=False, allow_unicode=False, sort_keys=False)
    try:
        dumper.open()
        dumper.serialize(_node_tree(dumper, document))
        dumper.close()
    finally:
        dumper.dispose()


def write_list(path: str, objects: Iterable[Any]) -> None:
    """Write the manifest (``raw``) of every object that has one to the file ``path``."""
    manifests = [o.raw for o in objects if getattr(o, "raw", None)]
    with open(path, "w", encoding="utf-8") as fh:
        dump_list(manifests, fh)
