"""Plain manifests straight from the YAML event stream: one pass, no node tree.

Composing libyaml's node tree calls PyYAML's Python resolver for every scalar and every
collection, and the depth guard needs a separate event pass before it: together most of the
time spent loading a large cluster. Manifests use a small part of YAML (mappings with string
keys, sequences, scalars), so :func:`plain_documents` builds them from the events the guard
reads anyway, resolves each distinct plain scalar once (with the loader's own resolvers and
constructors, so the values are exactly what the loader gives), and measures depth as it goes.

Anything else (anchors, aliases, tags other than ``!!str``/``!!map``/``!!seq``, merge keys,
non-string or complex keys, nesting deeper than the limit, a syntax error) returns None, and
the caller parses the text the complete way, which gives the same data or the same error.
"""

from __future__ import annotations

from typing import Any

import yaml
from yaml.events import (DocumentEndEvent, MappingEndEvent, MappingStartEvent, ScalarEvent,
                         SequenceEndEvent, SequenceStartEvent, StreamEndEvent)

__all__ = ["plain_documents", "PlainDocument"]

_STR_TAG = "tag:yaml.org,2002:str"
_MAP_TAGS = (None, "tag:yaml.org,2002:map")
_SEQ_TAGS = (None, "tag:yaml.org,2002:seq")
_VALUE_TAGS = frozenset({_STR_TAG, "tag:yaml.org,2002:int", "tag:yaml.org,2002:float",
                         "tag:yaml.org,2002:bool", "tag:yaml.org,2002:null"})

#: (document, lines): ``lines`` maps ``id()`` of every mapping that is a document or a sequence
#: item to the 1-based line it starts on (where the objects of a file are).
PlainDocument = tuple[Any, dict[int, int]]


class _NotPlain(Exception):
    """Something :func:`plain_documents` leaves to the complete parse."""


class _Resolved(dict):  # type: ignore[type-arg]
    """Plain scalar text -> its value, computed on first use as the loader would."""

    def __init__(self, loader: Any) -> None:
        super().__init__()
        self.loader = loader

    def __missing__(self, text: str) -> Any:
        loader = self.loader
        tag = loader.resolve(yaml.ScalarNode, text, (True, False))
        if tag == _STR_TAG:
            value: Any = text
        elif tag in _VALUE_TAGS:
            value = loader.yaml_constructors[tag](loader, yaml.ScalarNode(tag, text))
        else:
            raise _NotPlain
        self[text] = value
        return value


def plain_documents(text: str, loader_class: type, max_depth: int) -> list[PlainDocument] | None:
    """Every document of ``text`` as ``loader_class`` (a SafeLoader) would construct it, with
    the lines of its mappings; None when the text needs the complete parse (see the module)."""
    loader = loader_class(text)
    try:
        return _build(loader, max_depth)
    except (_NotPlain, yaml.YAMLError):
        return None
    finally:
        loader.dispose()


def _build(loader: Any, max_depth: int) -> list[PlainDocument]:
    resolved = _Resolved(loader)
    next_event = loader.get_event
    documents: list[PlainDocument] = []
    lines: dict[int, int] = {}
    stack: list[tuple[Any, Any, bool]] = []  # the enclosing (container, pending key, is mapping)
    current: Any = None  # the open collection (None between documents)
    key: Any = None  # the key awaiting its value, None when a mapping awaits a key
    in_map = False
    root: Any = None
    while True:
        event = next_event()
        cls = event.__class__
        if cls is ScalarEvent:
            if event.anchor is not None:
                raise _NotPlain
            tag = event.tag
            if tag is None:
                value = resolved[event.value] if event.implicit[0] else event.value
            elif tag == _STR_TAG:
                value = event.value
            else:
                raise _NotPlain
        elif cls is MappingStartEvent or cls is SequenceStartEvent:
            if event.anchor is not None or event.tag not in (_MAP_TAGS if cls is MappingStartEvent
                                                             else _SEQ_TAGS):
                raise _NotPlain
            if in_map and key is None:
                raise _NotPlain  # a collection as a key
            if len(stack) >= max_depth:
                raise _NotPlain
            collection: Any
            if cls is MappingStartEvent:
                collection = {}
                if current is None or not in_map:
                    lines[id(collection)] = event.start_mark.line + 1
            else:
                collection = []
            stack.append((current, key, in_map))
            current, key, in_map = collection, None, cls is MappingStartEvent
            continue
        elif cls is MappingEndEvent or cls is SequenceEndEvent:
            value = current
            current, key, in_map = stack.pop()
        elif cls is DocumentEndEvent:
            documents.append((root, lines))
            lines, root = {}, None
            continue
        elif cls is StreamEndEvent:
            return documents
        elif event.__class__ is yaml.AliasEvent:
            raise _NotPlain
        else:  # stream and document starts
            continue
        # a value is complete: put it where it belongs
        if current is None:
            root = value
        elif not in_map:
            current.append(value)
        elif key is None:
            if value.__class__ is not str:
                raise _NotPlain  # a key that is not a string (true, 1, <<: merge)
            key = value
        else:
            current[key] = value
            key = None
