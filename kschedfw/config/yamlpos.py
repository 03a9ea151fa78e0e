"""YAML loading that remembers where every value came from.

The text is composed into PyYAML's node tree once; plain Python data is then built by walking that
tree, which also records, per field path (``("profiles", 0, "plugins", "score", "enabled", 1,
"weight")``), the 1-based line and column of the value node and of its key. Duplicate keys and
syntax errors become diagnostics, never exceptions.
"""

from __future__ import annotations

from typing import Any

import attrs
import yaml
from yaml.constructor import SafeConstructor
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from kschedfw.api.yamlinput import YamlLimit, compose_documents
from kschedfw.config.diagnostics import DOCUMENT, SYNTAX, UNUSABLE, Diagnostic
from kschedfw.api.field import DUPLICATE, FieldError, format_path

Path = tuple[Any, ...]
Pos = tuple[int, int]

_STR = "tag:yaml.org,2002:str"
_NULL = "tag:yaml.org,2002:null"
_BOOL = "tag:yaml.org,2002:bool"
_INT = "tag:yaml.org,2002:int"
_FLOAT = "tag:yaml.org,2002:float"
_MERGE = "tag:yaml.org,2002:merge"
#: Standard scalar tags kept as their source text (JSON has no timestamp or binary type).
_AS_TEXT = frozenset({"tag:yaml.org,2002:timestamp", "tag:yaml.org,2002:binary",
                      "tag:yaml.org,2002:value", "tag:yaml.org,2002:yaml"})


class Positions:
    """Where each field path sits in the source. Lines and columns are 1-based."""

    __slots__ = ("values", "keys", "plain")

    def __init__(self) -> None:
        self.values: dict[Path, Pos] = {}
        self.keys: dict[Path, Pos] = {}
        #: Source text of plain scalars that YAML resolved to something other than a string
        #: (``on`` -> True, ``010`` -> 8): used to suggest quoting.
        self.plain: dict[Path, str] = {}

    def value(self, path: Path) -> Pos | None:
        return self.values.get(tuple(path))

    def key(self, path: Path) -> Pos | None:
        return self.keys.get(tuple(path))

    def locate(self, path: Path, anchor: str = "value") -> Pos:
        """The most precise position for ``path``: ``anchor`` is ``value``, ``key`` or ``parent``.

        A path that does not exist in the source (a defaulted field, a missing key) falls back to
        its nearest ancestor that does.
        """
        path = tuple(path)
        if anchor == "key" and path in self.keys:
            return self.keys[path]
        if anchor == "parent":
            path = path[:-1]
        while path:
            pos = self.values.get(path)
            if pos is not None:
                return pos
            path = path[:-1]
        return self.values.get((), (1, 1))


class YamlDocument:
    __slots__ = ("data", "positions", "start")

    def __init__(self, data: Any, positions: Positions, start: Pos) -> None:
        self.data = data
        self.positions = positions
        self.start = start


def _pos(node: Node) -> Pos:
    mark = node.start_mark
    return (mark.line + 1, mark.column + 1)


class _Builder:
    """Turns one composed document into plain data plus positions."""

    def __init__(self, filename: str) -> None:
        self.filename = filename
        self.positions = Positions()
        self.diagnostics: list[Diagnostic] = []
        self._constructor = SafeConstructor()

    def problem(self, path: Path, pos: Pos, kind: str, message: str) -> None:
        self.diagnostics.append(Diagnostic(file=self.filename, line=pos[0], column=pos[1],
                                           path=format_path(path), kind=kind, message=message))

    def build(self, node: Node, path: Path) -> Any:
        """Plain data for ``node`` (within yamlinput's caps, so neither recursive nor huge)."""
        self.positions.values.setdefault(path, _pos(node))
        if isinstance(node, ScalarNode):
            return self._scalar(node, path)
        if isinstance(node, SequenceNode):
            return [self.build(item, (*path, i)) for i, item in enumerate(node.value)]
        assert isinstance(node, MappingNode)  # the composer builds only these three kinds
        return self._mapping(node, path)

    def _scalar(self, node: ScalarNode, path: Path) -> Any:
        tag = node.tag
        if tag == _STR:
            return node.value
        if tag in (_NULL, _BOOL, _INT, _FLOAT):
            try:
                value = self._constructor.construct_object(node)
            except (yaml.YAMLError, ValueError, OverflowError):
                return node.value
            if not node.style:  # plain scalar (None with PyYAML, "" with libyaml)
                self.positions.plain[path] = node.value
            return value
        if tag not in _AS_TEXT and not tag.startswith("tag:yaml.org,2002:"):
            self.problem(path, _pos(node), DOCUMENT,
                         f"{DOCUMENT}: unsupported YAML tag {tag!r}; remove the tag")
        return node.value

    def _key_text(self, node: Node) -> str | None:
        if isinstance(node, ScalarNode):
            text: str = node.value  # a scalar's value is its text (the stubs say Any)
            return text
        return None

    def _mapping(self, node: MappingNode, path: Path) -> dict[str, Any]:
        out: dict[str, Any] = {}
        first_line: dict[str, int] = {}
        merges: list[Node] = []
        for key_node, value_node in node.value:
            if key_node.tag == _MERGE:
                merges.append(value_node)
                continue
            key = self._key_text(key_node)
            if key is None:
                self.problem(path, _pos(key_node), DOCUMENT,
                             f"{DOCUMENT}: a mapping key must be a string, not a collection")
                continue
            kpos = _pos(key_node)
            child = (*path, key)
            if key in first_line:
                err = FieldError(child, DUPLICATE, f"duplicate key (first at line {first_line[key]})",
                                 key)
                self.problem(child, kpos, err.kind, err.body())
                continue
            first_line[key] = kpos[0]
            self.positions.keys[child] = kpos
            out[key] = self.build(value_node, child)
        for merge in merges:
            sources = merge.value if isinstance(merge, SequenceNode) else [merge]
            for src in sources:
                if not isinstance(src, MappingNode):
                    self.problem(path, _pos(src), DOCUMENT,
                                 f"{DOCUMENT}: a merge key (<<) needs a mapping or a list of mappings")
                    continue
                merged = self._mapping(src, path)
                for k, v in merged.items():
                    out.setdefault(k, v)
        return out


def load_yaml(text: str, filename: str) -> tuple[list[YamlDocument], list[Diagnostic]]:
    """Parse every document in ``text``; syntax errors come back as diagnostics, not exceptions.

    The documents before a syntax error are returned. Diagnostics about a document after the
    first carry its 1-based index in ``document`` (0 means the first document).
    """
    nodes: list[Node] = []
    try:
        for node in compose_documents(text):
            nodes.append(node)
    except YamlLimit as exc:
        # the input is unusable (exit 2): nothing of it is checked
        return [], [Diagnostic(file=filename, line=exc.line, column=exc.column, path="", kind=UNUSABLE,
                               message=f"{UNUSABLE}: {exc.message}")]
    except yaml.YAMLError as exc:
        error = _syntax_error(exc, text, filename)
        if nodes:
            error = attrs.evolve(error, document=len(nodes) + 1)
        docs, diagnostics = _build(nodes, filename)
        return docs, [*diagnostics, error]
    return _build(nodes, filename)


def _syntax_error(exc: yaml.YAMLError, text: str, filename: str) -> Diagnostic:
    if isinstance(exc, yaml.MarkedYAMLError):
        mark = exc.problem_mark or exc.context_mark
        line, col = (mark.line + 1, mark.column + 1) if mark is not None else (1, 1)
        problem = exc.problem or "invalid YAML"
        if exc.context and exc.context_mark is not None and exc.context_mark is not mark:
            problem += f" ({exc.context} at line {exc.context_mark.line + 1})"
        return Diagnostic(file=filename, line=line, column=col, path="", kind=SYNTAX,
                          message=f"{SYNTAX}: {problem}")
    # reader errors: invalid characters, bad encoding
    line, col = (1, 1)
    position = getattr(exc, "position", None)
    if isinstance(position, int) and 0 <= position <= len(text):
        before = text[:position]
        line = before.count("\n") + 1
        col = position - (before.rfind("\n") + 1) + 1
    reason = getattr(exc, "reason", None)
    character = getattr(exc, "character", None)
    if reason and isinstance(character, int):
        problem = f"unacceptable character #x{character:04x}: {reason}"
    else:
        problem = str(exc).splitlines()[0]
    return Diagnostic(file=filename, line=line, column=col, path="", kind=SYNTAX,
                      message=f"{SYNTAX}: {problem}")


def _build(nodes: list[Node], filename: str) -> tuple[list[YamlDocument], list[Diagnostic]]:
    docs: list[YamlDocument] = []
    diagnostics: list[Diagnostic] = []
    for index, node in enumerate(nodes):
        builder = _Builder(filename)
        data = builder.build(node, ())
        docs.append(YamlDocument(data, builder.positions, _pos(node)))
        diagnostics.extend(attrs.evolve(d, document=index + 1) if index else d
                           for d in builder.diagnostics)
    return docs, diagnostics
