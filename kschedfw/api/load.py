"""Reading manifests: YAML/JSON files or folders -> typed objects, with errors naming file:line,
the object and the field."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator

import attrs
import yaml
from yaml.constructor import SafeConstructor

from kschedfw.api import _parse
from kschedfw.api.node import parse_node
from kschedfw.api.other import _PARSERS, parse_generic_object
from kschedfw.api.pod import parse_pod
from kschedfw.api.workload_names import is_workload_api
from kschedfw.api.yamlinput import YamlLimit, compose_documents, plain_documents
from kschedfw.api.field import ManifestError
from kschedfw.gcpause import paused

__all__ = ["parse_object", "load_manifests", "load_located", "load_located_text", "parse_manifests",
           "yaml_documents", "Located", "UnusableInput", "MANIFEST_SUFFIXES"]

MANIFEST_SUFFIXES = (".yaml", ".yml", ".json")


class UnusableInput(ManifestError):
    """Input that cannot be used at all, so a command cannot run (exit status 2): an alias
    bomb, YAML nested too deeply, an empty file or folder, no objects."""


@attrs.frozen
class Located:
    """An object and where it was written: ``source`` (the file) and its 1-based ``line``."""

    obj: Any
    source: str
    line: int | None

    @property
    def where(self) -> str:
        return self.source + (f":{self.line}" if self.line else "")


_KIND_PARSERS: dict[str, Callable[..., Any]] = {"Pod": parse_pod, "Node": parse_node, **_PARSERS}
#: kinds whose parser depends on the API group: ``scheduling.k8s.io``'s Workload and PodGroup;
#: the same names in another group (the coscheduling plugin's) stay generic objects.
#: the scheduling.k8s.io kinds, parsed by :mod:`kschedfw.api.workload` (imported on the first one)
_WORKLOAD_KINDS = ("Workload", "PodGroup")


def _workload_parser(kind: str) -> Callable[..., Any]:
    from kschedfw.api.workload import parse_pod_group, parse_workload
    return parse_workload if kind == "Workload" else parse_pod_group

def parse_object(d: Any, *, source: str = "", line: int | None = None,
                 default_kind: str | None = None, template: bool = False) -> Any:
    """Build the typed object for one manifest dict, chosen by its ``kind``.

    Pod, Node, PriorityClass, PodDisruptionBudget, Namespace, PersistentVolumeClaim,
    PersistentVolume, StorageClass, CSINode and RuntimeClass get their own classes; anything else becomes a
    :class:`~kschedfw.api.other.GenericObject`. ``default_kind`` is used when the dict has no
    ``kind`` (items of a ``PodList`` as the API server returns them). A ``metadata.name`` (or
    ``generateName``) is required unless ``template`` is true (scheduler_perf templates, whose
    names are filled in later). Every problem raises :class:`~kschedfw.api.field.ManifestError`.
    """
    if not isinstance(d, dict):
        raise ManifestError(f"expected a Kubernetes object (a mapping), got {_parse.describe(d)}",
                            source=source, line=line)
    kind = d.get("kind")
    if kind is None or kind == "":
        if not default_kind:
            raise ManifestError("Required value: every object needs a kind (e.g. kind: Pod)",
                                source=source, line=line, obj=_parse.describe_object(d, "object"),
                                field="kind")
        kind = default_kind
    elif not isinstance(kind, str):
        raise ManifestError(f"expected a string, got {_parse.describe(kind)}", source=source,
                            line=line, field="kind")
    api_version = d.get("apiVersion")
    if isinstance(api_version, str) and api_version.startswith("kubescheduler.config.k8s.io/"):
        raise ManifestError(f"{kind} is a scheduler configuration, not a cluster object: "
                            f"give it to the scheduler as its configuration file",
                            source=source, line=line, field="kind")
    parser = _KIND_PARSERS.get(kind)
    if kind in _WORKLOAD_KINDS and isinstance(api_version, str) and is_workload_api(api_version):
        parser = _workload_parser(kind)
    try:
        if parser is not None:
            return parser(d, template=template)
        if d.get("kind") != kind:
            d = {**d, "kind": kind}
        return parse_generic_object(d, template=template)
    except ManifestError as exc:
        raise _parse.with_context(exc, source=source, line=line,
                                  obj=_parse.describe_object(d, kind)) from None
    except (TypeError, ValueError, AttributeError, KeyError) as exc:  # defensive: odd shapes
        raise ManifestError(f"cannot read this object: {exc}", source=source, line=line,
                            obj=_parse.describe_object(d, kind)) from None


def _is_list(data: dict[str, Any]) -> bool:
    kind = data.get("kind")
    return isinstance(kind, str) and (kind == "List" or (kind.endswith("List") and "items" in data))


class _NodeLines:
    """Where the parts of a document are, from PyYAML's node tree."""

    @staticmethod
    def line(node: Any) -> int | None:
        return node.start_mark.line + 1 if node is not None else None

    @staticmethod
    def children(node: Any, data: list[Any]) -> list[Any]:
        return node.value if isinstance(node, yaml.SequenceNode) else [None] * len(data)

    @staticmethod
    def member(node: Any, key: str) -> Any:
        if isinstance(node, yaml.MappingNode):
            for k, v in node.value:
                if isinstance(k, yaml.ScalarNode) and k.value == key:
                    return v
        return None


class _PlainLines:
    """Where the objects of a document are, from :func:`plain_documents`' lines: the "node" of
    a value is the value itself. Only the lines of mappings are known, so an error found this
    way is found again by the complete parse, which names its line."""

    def __init__(self, lines: dict[int, int]) -> None:
        self.lines = lines

    def line(self, node: Any) -> int | None:
        return self.lines.get(id(node)) if node is not None else None

    @staticmethod
    def children(node: Any, data: list[Any]) -> list[Any]:
        return data

    @staticmethod
    def member(node: Any, key: str) -> Any:
        return node.get(key) if isinstance(node, dict) else None


def _line(node: Any) -> int | None:
    return _NodeLines.line(node)


def _emit(where: _NodeLines | _PlainLines, node: Any, data: Any, source: str,
          default_kind: str | None,
          template: bool, out: list[Any], malformed: list[ManifestError] | None = None) -> None:
    """Append the objects in ``data`` (a document, a list item...) to ``out``, flattening lists;
    ``where`` finds the line of ``node``, the part of the document ``data`` was read from.
    With ``malformed``, an object that cannot be read goes there and the others are still read;
    without, it is raised."""
    if data is None:
        return
    if isinstance(data, list):
        for child_node, child in zip(where.children(node, data), data):
            _emit(where, child_node, child, source, default_kind, template, out, malformed)
        return
    if isinstance(data, dict) and _is_list(data):
        items = data.get("items")
        if items is None:
            return
        items_node = where.member(node, "items")
        if not isinstance(items, list):
            error = ManifestError(f"expected a list, got {_parse.describe(items)}",
                                  source=source, line=where.line(items_node) or where.line(node),
                                  obj=str(data.get("kind")), field="items")
            if malformed is None:
                raise error
            malformed.append(error)
            return
        kind = data["kind"]
        item_kind = kind[:-4] if kind != "List" else None
        for child_node, child in zip(where.children(items_node, items), items):
            if child is None:
                continue
            if isinstance(child, dict) and _is_list(child):
                _emit(where, child_node, child, source, None, template, out, malformed)
            else:
                _parse_into(out, malformed, child, source, where.line(child_node) or where.line(node),
                            item_kind, template)
        return
    _parse_into(out, malformed, data, source, where.line(node), default_kind, template)


def _parse_into(out: list[Any], malformed: list[ManifestError] | None, data: Any, source: str,
                line: int | None, default_kind: str | None, template: bool) -> None:
    try:
        obj = parse_object(data, source=source, line=line, default_kind=default_kind,
                           template=template)
    except ManifestError as exc:
        if malformed is None:
            raise
        malformed.append(exc)
        return
    out.append(Located(obj, source, line))


_STR_TAG = "tag:yaml.org,2002:str"
_MAP_TAG = "tag:yaml.org,2002:map"
_SEQ_TAG = "tag:yaml.org,2002:seq"
_PLAIN_SCALAR_TAGS = frozenset({"tag:yaml.org,2002:int", "tag:yaml.org,2002:float",
                                "tag:yaml.org,2002:bool", "tag:yaml.org,2002:null"})


class _NotPlain(Exception):
    """The document holds something :func:`_construct_plain` leaves to PyYAML."""


def _construct_plain(constructor: SafeConstructor, node: Any) -> Any:
    """What ``constructor.construct_document(node)`` returns, for a document without aliases made of
    maps with string keys, sequences and str/int/float/bool/null scalars (every Kubernetes
    manifest), in a fraction of the time: PyYAML's constructor is pure Python with per-node
    bookkeeping. Anything else (merge keys, non-string keys, other tags) raises _NotPlain."""
    kind = type(node)
    if kind is yaml.ScalarNode:
        tag = node.tag
        if tag == _STR_TAG:
            return node.value
        if tag in _PLAIN_SCALAR_TAGS:
            return constructor.yaml_constructors[tag](constructor, node)
        raise _NotPlain
    if kind is yaml.MappingNode:
        if node.tag != _MAP_TAG:
            raise _NotPlain
        out = {}
        for key_node, value_node in node.value:
            if type(key_node) is not yaml.ScalarNode or key_node.tag != _STR_TAG:
                raise _NotPlain
            out[key_node.value] = _construct_plain(constructor, value_node)
        return out
    if kind is yaml.SequenceNode:
        if node.tag != _SEQ_TAG:
            raise _NotPlain
        return [_construct_plain(constructor, child) for child in node.value]
    raise _NotPlain


def _construct(constructor: SafeConstructor, node: Any, plain: bool) -> Any:
    if plain:
        try:
            return _construct_plain(constructor, node)
        except _NotPlain:
            pass
    return constructor.construct_document(node)


def yaml_documents(text: str, source: str) -> Iterator[tuple[Any, Any]]:
    """(node, data) for each YAML document, so every object keeps its line number.

    Input past :mod:`~kschedfw.api.yamlinput`'s caps (an alias bomb, a recursive alias, nesting
    too deep) is :class:`UnusableInput`."""
    constructor = SafeConstructor()
    documents = compose_documents(text)
    plain = "*" not in text
    while True:
        try:
            node = next(documents, None)
            if node is None:
                return
            data = _construct(constructor, node, plain)
        except YamlLimit as exc:
            raise UnusableInput(f"invalid YAML: {exc.message}", source=source, line=exc.line) from None
        except yaml.MarkedYAMLError as exc:
            mark = exc.problem_mark or exc.context_mark
            problem = exc.problem or exc.context or "malformed YAML"
            if exc.context and exc.problem:
                problem = f"{exc.context}: {exc.problem}"
            raise ManifestError(f"invalid YAML: {problem}", source=source,
                                line=mark.line + 1 if mark is not None else None) from None
        except yaml.YAMLError as exc:
            raise ManifestError(f"invalid YAML: {exc}", source=source) from None
        except RecursionError:
            raise UnusableInput("invalid YAML: nested too deeply", source=source) from None
        yield node, data


def parse_manifests(text: str, *, source: str = "", template: bool = False) -> list[Any]:
    """Objects in YAML/JSON ``text`` (several documents, ``kind: List``, nested lists)."""
    return [x.obj for x in _parse_located(text, source, template)]


def _parse_located(text: str, source: str, template: bool,
                   malformed: list[ManifestError] | None = None) -> list[Located]:
    documents = plain_documents(text)
    if documents is not None:
        out: list[Located] = []
        try:
            for data, lines in documents:
                _emit(_PlainLines(lines), data, data, source, None, template, out)
            return out
        except ManifestError:
            pass  # the complete parse below reports it, with the line of the very value
    out = []
    for node, data in yaml_documents(text, source):
        _emit(_NodeLines(), node, data, source, None, template, out, malformed)
    return out


def _load_json_fallback(text: str, source: str, template: bool,
                        malformed: list[ManifestError] | None) -> list[Located] | None:
    import json
    try:
        data = json.loads(text)
    except ValueError:
        return None
    out: list[Located] = []
    _emit(_NodeLines(), None, data, source, None, template, out, malformed)
    return out


def _load_file(path: Path, source: str, template: bool,
               malformed: list[ManifestError] | None = None) -> list[Located]:
    try:
        text = path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ManifestError(f"not UTF-8 text ({exc.reason} at byte {exc.start})",
                            source=source) from None
    except OSError as exc:
        raise ManifestError(f"cannot read file: {exc.strerror or exc}", source=source) from None
    return _load_text(text, source, template, malformed, as_json=path.suffix.lower() == ".json")


def load_located_text(text: str, source: str, *, malformed: list[ManifestError] | None = None
                      ) -> list[Located]:
    """As :func:`load_located`, for manifests already read (standard input): ``source`` names
    them in errors. Text that starts as JSON does (``{`` or ``[``) is read as a ``.json`` file."""
    with paused():
        return _load_text(text, source, False, malformed, as_json=text.lstrip().startswith(("{", "[")))


def _load_text(text: str, source: str, template: bool, malformed: list[ManifestError] | None,
               *, as_json: bool) -> list[Located]:
    found: list[ManifestError] | None = None if malformed is None else []
    try:
        objs = _parse_located(text, source, template, found)
    except UnusableInput:
        raise
    except ManifestError as exc:
        # JSON that PyYAML's YAML 1.1 reader rejects (tabs, some escapes): use the JSON parser.
        if not (as_json and exc.detail.startswith("invalid YAML")):
            raise
        found = None if malformed is None else []
        json_objs = _load_json_fallback(text, source, template, found)
        if json_objs is None:
            raise
        objs = json_objs
    if malformed is not None and found:
        malformed.extend(found)
    return objs


def manifest_files(path: Path) -> list[Path]:
    """``path`` itself, or the manifests of a folder (recursively, sorted by relative path)."""
    if path.is_dir():
        found = [p for p in path.rglob("*") if p.suffix.lower() in MANIFEST_SUFFIXES and p.is_file()]
        return sorted(found, key=lambda p: p.relative_to(path).as_posix())
    return [path]


def _paths(path_or_paths: str | os.PathLike[str] | Iterable[str | os.PathLike[str]]
           ) -> list[str | os.PathLike[str]]:
    if isinstance(path_or_paths, (str, os.PathLike)):
        return [path_or_paths]
    return list(path_or_paths)


def load_located(path_or_paths: str | os.PathLike[str] | Iterable[str | os.PathLike[str]], *,
                 template: bool = False,
                 malformed: list[ManifestError] | None = None) -> list[Located]:
    """As :func:`load_manifests`, each object with the file and line it was written at.

    With a ``malformed`` list, each object that cannot be read (a type error in a field, a
    missing kind...) is appended to it and the others are still read, so one run reports them
    all; YAML that cannot be parsed at all still raises."""
    out: list[Located] = []
    with paused():  # parsing builds no reference cycles
        for p in _paths(path_or_paths):
            path = Path(p)
            if not path.exists():
                raise ManifestError("no such file or directory", source=str(p))
            for f in manifest_files(path):
                out.extend(_load_file(f, str(f), template, malformed))
    return out


def load_manifests(path_or_paths: str | os.PathLike[str] | Iterable[str | os.PathLike[str]], *,
                   template: bool = False) -> list[Any]:
    """Load every object from a file, a folder (``*.yaml``, ``*.yml``, ``*.json``, recursively,
    sorted by path) or several of those, in order.

    A file may hold several YAML documents and ``kind: List`` / ``*List`` objects (as
    ``kubectl get -o yaml`` writes them; nested lists are flattened). Empty documents are skipped.
    Errors are :class:`~kschedfw.api.field.ManifestError` naming ``file:line``, the object and the
    field (:class:`UnusableInput` for an alias bomb). ``template``: accept objects without a
    name (see :func:`parse_object`).
    """
    return [x.obj for x in load_located(path_or_paths, template=template)]
