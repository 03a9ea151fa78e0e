"""Writing objects back out as a ``kind: List`` YAML document (``simulate --write-out``).

libyaml's emitter (``CSafeDumper``) writes the same YAML as PyYAML's pure-Python one about
ten times faster; the pure one is the fallback when PyYAML was built without libyaml. What
PyYAML does in Python before the emitter (a node per value through the representer, a
serializer pass, two Python tag resolutions per scalar) is skipped for manifests made of
dicts, lists, strings, ints, booleans and nulls: :func:`_emit_plain` hands the emitter the
events the serializer would, resolving each distinct scalar text once. Anything else (floats,
other types, a dict or list met twice, which PyYAML writes as an anchor and alias) is written
by ``yaml.dump`` itself.
"""

from __future__ import annotations

import io
from typing import IO, Any, Iterable

import yaml
from yaml.events import (DocumentEndEvent, DocumentStartEvent, MappingEndEvent,
                         MappingStartEvent, ScalarEvent, SequenceEndEvent, SequenceStartEvent)
from yaml.nodes import ScalarNode

from kschedfw.gcpause import paused

__all__ = ["dump_list", "write_list"]

_Dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)

_STR = "tag:yaml.org,2002:str"
_INT = "tag:yaml.org,2002:int"
_BOOL = "tag:yaml.org,2002:bool"
_NULL = "tag:yaml.org,2002:null"
_MAP = "tag:yaml.org,2002:map"
_SEQ = "tag:yaml.org,2002:seq"
_OPTIONS: dict[str, Any] = {"sort_keys": False, "allow_unicode": False, "default_flow_style": False}


class _NotPlain(Exception):
    """A value :func:`_emit_plain` leaves to ``yaml.dump``."""


def dump_list(manifests: Iterable[dict[str, Any]], stream: IO[str], *,
              dumper: type = _Dumper) -> None:
    """Write ``manifests`` to ``stream`` as one ``apiVersion: v1, kind: List`` document, keys
    in their original order: ``yaml.dump(document, Dumper=dumper, sort_keys=False,
    allow_unicode=False, default_flow_style=False)``, byte for byte."""
    document = {"apiVersion": "v1", "kind": "List", "items": list(manifests)}
    with paused():  # builds no reference cycles
        text = io.StringIO()
        try:
            _emit_plain(dumper(text, **_OPTIONS), document)
        except _NotPlain:
            text = io.StringIO()
            yaml.dump(document, text, Dumper=dumper, **_OPTIONS)
        stream.write(text.getvalue())


def _emit_plain(dumper: Any, document: Any) -> None:
    """The events PyYAML's serializer would emit for ``document`` (block style, implicit tags
    where the text resolves back to the value's type), straight to the emitter."""
    emit = dumper.emit
    plain_tags: dict[str, str] = {}
    met: set[int] = set()

    def plain_tag(text: str) -> str:
        tag = plain_tags.get(text)
        if tag is None:
            tag = plain_tags[text] = dumper.resolve(ScalarNode, text, (True, False))
        return tag

    def write(value: Any) -> None:
        cls = value.__class__
        if cls is str:
            emit(ScalarEvent(None, _STR, (plain_tag(value) == _STR, True), value))
        elif cls is dict or cls is list:
            if id(value) in met:
                raise _NotPlain  # PyYAML anchors it
            met.add(id(value))
            if cls is dict:
                emit(MappingStartEvent(None, _MAP, True, flow_style=False))
                for k, v in value.items():
                    write(k)
                    write(v)
                emit(MappingEndEvent())
            else:
                emit(SequenceStartEvent(None, _SEQ, True, flow_style=False))
                for v in value:
                    write(v)
                emit(SequenceEndEvent())
        elif cls is bool:
            text = "true" if value else "false"
            emit(ScalarEvent(None, _BOOL, (plain_tag(text) == _BOOL, False), text))
        elif cls is int:
            text = str(value)
            emit(ScalarEvent(None, _INT, (plain_tag(text) == _INT, False), text))
        elif value is None:
            emit(ScalarEvent(None, _NULL, (plain_tag("null") == _NULL, False), "null"))
        else:
            raise _NotPlain

    try:
        dumper.open()
        emit(DocumentStartEvent())  # implicit, no directives: no such options are given
        write(document)
        emit(DocumentEndEvent())
        dumper.close()
    finally:
        dumper.dispose()


def write_list(path: str, objects: Iterable[Any]) -> None:
    """Write the manifest (``raw``) of every object that has one to the file ``path``."""
    manifests = [o.raw for o in objects if getattr(o, "raw", None)]
    with open(path, "w", encoding="utf-8") as fh:
        dump_list(manifests, fh)
