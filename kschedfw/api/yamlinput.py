"""The one door for YAML input (manifests, scenarios, configurations): which loader, and the caps.

Everything kschedfw reads as YAML goes through here, so every reader has the same two caps and the
same loader, whatever PyYAML version is installed:

- :data:`MAX_DEPTH`: nesting. libyaml's composer and our tree builders recurse once per level, so a
  few kilobytes of ``[[[[...`` would crash the interpreter. The depth is measured first, on the
  event stream (libyaml's event parser keeps its own stack).
- :data:`MAX_ALIAS_VALUES`: values that aliases may add to one document once expanded, so an alias
  bomb ends in an error, not in memory. Counted on top of the document's own values, since a
  cluster List may legitimately hold millions of them.

Passing either cap raises :class:`YamlLimit`; the commands turn it into exit status 2 (the input
cannot be used at all). Syntax errors stay ``yaml.YAMLError`` for the caller to locate and word.

The loader is PyYAML's safe loader (libyaml's when present) except that timestamps stay strings,
as Kubernetes' YAML decoding leaves them: ``creationTimestamp`` and date-like values are text.

The path :data:`STDIN` (``-``, as in ``kubectl apply -f -``) means standard input, read here
(:func:`read_stdin`) and named :data:`STDIN_SOURCE` in every message about it.
"""

from __future__ import annotations

import sys
from typing import Any, Iterator

import yaml
from yaml.constructor import SafeConstructor
from yaml.events import MappingEndEvent, MappingStartEvent, SequenceEndEvent, SequenceStartEvent
from yaml.nodes import MappingNode, Node, SequenceNode

from kschedfw.api import yamlevents

__all__ = ["Loader", "MAX_DEPTH", "MAX_ALIAS_VALUES", "YamlLimit", "too_deep", "compose_documents",
           "plain_documents", "load_first", "STDIN", "STDIN_SOURCE", "read_stdin"]

#: Nesting any input may have: manifests stay under 30 levels, configurations under 15, and code
#: that walks objects recursively (copies, dumps, the position builder) stays well within the
#: interpreter's recursion limit.
MAX_DEPTH = 200
#: Values that aliases may add to one document once expanded.
MAX_ALIAS_VALUES = 50_000

#: The path that means standard input.
STDIN = "-"
#: How messages name standard input (``<stdin>:12: ...``).
STDIN_SOURCE = "<stdin>"

_BaseLoader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def read_stdin() -> str:
    """All of standard input as text: UTF-8, a leading byte-order mark dropped, as files are
    read. Raises ``UnicodeDecodeError`` (or ``OSError``) for the caller to word."""
    stream = sys.stdin
    data = stream.buffer.read() if hasattr(stream, "buffer") else stream.read().encode("utf-8")
    return data.decode("utf-8-sig")


class Loader(_BaseLoader):  # type: ignore[misc]
    """Safe YAML loading with timestamps kept as strings (see the module docstring)."""


Loader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in _BaseLoader.yaml_implicit_resolvers.items()
}

_OPEN = (SequenceStartEvent, MappingStartEvent)
_CLOSE = (SequenceEndEvent, MappingEndEvent)


class YamlLimit(Exception):
    """The input passes one of the caps: it cannot be used at all. ``line`` and ``column`` are
    1-based, where the offending collection or document starts."""

    def __init__(self, message: str, line: int, column: int) -> None:
        super().__init__(message)
        self.message = message
        self.line = line
        self.column = column


def too_deep(text: str) -> tuple[int, int] | None:
    """The 1-based (line, column) where ``text`` first nests more than :data:`MAX_DEPTH`
    collections deep, or None. Syntax errors are left to the real parse, which reports them.

    libyaml 0.2.6 (bundled from PyYAML 6.0.4) has a nesting guard of its own in the scanner,
    which reads a whole flow line ahead of the events: it refuses ``[[[...`` past 1000 levels
    before the first event reaches us. The pure-Python parser has no such guard and no
    recursion either, so on that error the depth is measured again with it."""
    try:
        return _first_too_deep(text, Loader)
    except yaml.YAMLError as exc:
        if _BaseLoader is yaml.SafeLoader or "nesting depth" not in str(exc):
            return None
    try:
        return _first_too_deep(text, yaml.SafeLoader)
    except yaml.YAMLError:
        return None


def _first_too_deep(text: str, loader: type) -> tuple[int, int] | None:
    depth = 0
    for event in yaml.parse(text, Loader=loader):
        if isinstance(event, _OPEN):
            depth += 1
            if depth > MAX_DEPTH:
                mark = event.start_mark
                return (mark.line + 1, mark.column + 1) if mark is not None else (1, 1)
        elif isinstance(event, _CLOSE):
            depth -= 1
    return None


def _check_depth(text: str) -> None:
    deep = too_deep(text)
    if deep is not None:
        raise YamlLimit(f"nested more than {MAX_DEPTH} levels deep", *deep)


def compose_documents(text: str) -> Iterator[Node]:
    """The node tree of each document of ``text``, in order, each within the caps.

    Raises :class:`YamlLimit` before a document past a cap (or holding a recursive alias, which
    would expand forever) is yielded, ``yaml.YAMLError`` at a syntax error (the documents before it
    have been yielded)."""
    _check_depth(text)
    loader = Loader(text)
    with_aliases = "*" in text
    try:
        while loader.check_node():
            node = loader.get_node()
            if node is None:
                continue
            if with_aliases:
                _check_aliases(node)
            yield node
    finally:
        loader.dispose()


def load_first(text: str) -> Any:
    """The first document of ``text`` as plain data (None when there is none), within the caps:
    for small files read whole, such as a kubeconfig. Raises as :func:`compose_documents`."""
    for node in compose_documents(text):
        return SafeConstructor().construct_document(node)
    return None


def plain_documents(text: str) -> list[yamlevents.PlainDocument] | None:
    """Every document of ``text`` built straight from the event stream (the fast path for
    manifests, see :mod:`kschedfw.api.yamlevents`), or None when it needs :func:`compose_documents`
    (which then gives the same data, the same error or the cap)."""
    return yamlevents.plain_documents(text, Loader, MAX_DEPTH)


def _check_aliases(root: Node) -> None:
    """Raise :class:`YamlLimit` when aliases expand the document under ``root`` by more than
    :data:`MAX_ALIAS_VALUES` values, or when a node contains itself.

    Sizes are computed once per node (aliases share nodes), so this is linear in the text even
    for an alias bomb."""
    sizes: dict[int, int] = {}
    open_nodes: set[int] = set()
    stack: list[tuple[Node, bool]] = [(root, False)]
    while stack:
        node, children_done = stack.pop()
        key = id(node)
        if children_done:
            open_nodes.discard(key)
            sizes[key] = 1 + sum(sizes[id(c)] for c in _children(node))
            continue
        if key in sizes:
            continue
        if key in open_nodes:
            mark = node.start_mark
            raise YamlLimit("recursive alias", mark.line + 1, mark.column + 1)
        open_nodes.add(key)
        stack.append((node, True))
        stack.extend((c, False) for c in _children(node) if id(c) not in sizes)
    extra = sizes[id(root)] - len(sizes)
    if extra > MAX_ALIAS_VALUES:
        mark = root.start_mark
        raise YamlLimit(f"aliases expand this document by {extra} values, more than the {MAX_ALIAS_VALUES} "
                        "allowed (an alias bomb?)", mark.line + 1, mark.column + 1)


def _children(node: Node) -> list[Node]:
    if isinstance(node, SequenceNode):
        return list(node.value)
    if isinstance(node, MappingNode):
        return [n for pair in node.value for n in pair]
    return []
