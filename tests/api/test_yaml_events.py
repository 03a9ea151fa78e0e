"""Manifests are read from libyaml's event stream in one pass (kschedfw/api/yamlevents.py). That
pass must give exactly what PyYAML's SafeLoader gives (with timestamps left as strings, as
Kubernetes reads them): the same values of the same types, and the objects at the same lines;
anything it does not handle (anchors, merge keys, tags, odd keys, deep nesting, bad syntax) is
left to the complete parse, so the result or the error stays the same."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
import yaml

from kschedfw.api import load, yamlinput
from kschedfw.api.yamlevents import plain_documents
from kschedfw.api.field import ManifestError

ROOT = Path(__file__).resolve().parents[2]
FILES = sorted(p for folder in ("tests", "profiles", "kschedfw", "benchmarks", "contrib-plugins")
               for pattern in ("*.yaml", "*.yml", "*.json")
               for p in (ROOT / folder).rglob(pattern))

SCALARS = """
ints: [1, -1, +1, 0, -0, 0x1f, 0o17, -0o17, 017, 0b101, 1_000, 1:30, 190:20:30, 0x_1F]
floats: [1.5, -1.5, 1e3, 1.0e+3, 6.8523015e+5, 685_230.15, 190:20:30.15, .5, +.5, -.inf, .Inf, .NAN, 1.]
bools: [yes, Yes, YES, no, No, NO, true, True, TRUE, false, False, FALSE, on, On, ON, off, Off, OFF]
not bools: [y, n, Y, N, yEs, tRUE, oN]
nulls: [~, null, Null, NULL, "", '']
empty value:
times: [2001-12-14t21:59:43.10-05:00, 2002-12-14, 2024-01-02T03:04:05Z, "2024-01-02"]
quoted: ["1", '1', "yes", 'null', "~", "0x1f", "1.5", "", "\\u00e9\\t", 'it''s']
plain text: [abc, a b c, -a, .a, +x, 1a, 0x, 1_, 12:x, node-1, n1, Nope, nullable, oneoff, 10Gi, 100m]
block: |
  line one
   line two
folded: >
  a
  b

  c
keep: |+
  kept

strip: |-
  stripped
explicit str: !!str 123
explicit seq: !!seq [1]
explicit map: !!map {a: 1}
"true": quoted key
"1": quoted number key
"": empty key
dup: first
dup: second
unicode: "ünïcode ✓ 日本"
flow: {a: [1, {b: [c, {d: e}]}], "f": []}
empty map: {}
empty seq: []
nested:
- - - deep
  - [x]
- {}
"""

DOCUMENTS = [
    SCALARS,
    "a: 1\n---\nb: 2\n...\n---\n# only a comment\n---\n",
    "---\n---\n...\n",
    "",
    "# nothing\n",
    "- a\n- b: 1\n  c: [2]\n-\n- ~\n",
    "just a string\n",
    "42\n",
    "apiVersion: v1\nkind: List\nitems:\n- kind: Node\n  metadata: {name: n1}\n"
    "- {kind: Pod, metadata: {name: p, namespace: default}}\n"
    "- kind: List\n  items:\n  - kind: Node\n    metadata:\n      name: n2\n",
    "%YAML 1.1\n---\na: 1\n",
    "%TAG !k! tag:yaml.org,2002:\n---\na: !k!str 5\n",
    "a:\n  b:\n    c:\n      d: [1, 2, {e: f}]\n",
    "? a\n: 1\n? b\n",
    "'key with: colon': v\n",
]

LEFT_TO_PYYAML = [
    "base: &b {x: 1}\nderived:\n  <<: *b\n  y: 2\n",      # anchors, alias, merge key
    "a: &x 1\n",                                          # an anchor alone
    "a: &x [1]\nb: *x\n",
    "<<: {a: 1}\n",                                        # merge key without alias
    "1: one\n",                                           # non-string keys
    "true: v\n",
    "~: v\n",
    ": v\n",
    "? [a, b]\n: v\n",                                    # a collection as a key
    "? {a: 1}\n: v\n",
    "x: !!binary aGVsbG8=\n",                              # other tags
    "x: !!int '12'\n",
    "x: !!float 1\n",
    "x: !custom 1\n",
    "x: ! 1\n",
    "x: !!set {a, b}\n",
    "x: !!omap [a: 1]\n",
    "x: =\n",                                             # the value tag
    "a: [1\n",                                            # bad syntax
    "a: b: c\n",
    "\t- x\n",
    "[" * 201 + "]" * 201 + "\n",                         # deeper than MAX_DEPTH
    "a:\n" + "".join("  " * i + f"k{i}:\n" for i in range(1, 202)) + "  " * 202 + "v\n",
]


def _same(a, b):
    """Equal values of the same types all the way down (NaN equal to NaN)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, float) and math.isnan(a):
        return math.isnan(b)
    return a == b


def _pyyaml(text):
    return list(yaml.load_all(text, Loader=yamlinput.Loader))


def _object_lines(text):
    """The 1-based start line of every mapping that is a document or a sequence item, in order,
    from PyYAML's node tree."""
    out = []

    def walk(node, record):
        if isinstance(node, yaml.MappingNode):
            if record:
                out.append(node.start_mark.line + 1)
            for k, v in node.value:
                walk(k, False)
                walk(v, False)
        elif isinstance(node, yaml.SequenceNode):
            for child in node.value:
                walk(child, True)

    for document in yaml.compose_all(text, Loader=yamlinput.Loader):
        walk(document, True)
    return out


def _event_lines(documents):
    out = []

    def walk(value, lines, record):
        if isinstance(value, dict):
            if record:
                out.append(lines[id(value)])
            for v in value.values():
                walk(v, lines, False)
        elif isinstance(value, list):
            for child in value:
                walk(child, lines, True)

    for data, lines in documents:
        walk(data, lines, True)
    return out


def _check_equal(text, where=""):
    documents = plain_documents(text, yamlinput.Loader, yamlinput.MAX_DEPTH)
    assert documents is not None, where
    expected = _pyyaml(text)
    assert len(documents) == len(expected), where
    for (data, _), standard in zip(documents, expected):
        assert _same(data, standard), where
    assert _event_lines(documents) == _object_lines(text), where


@pytest.mark.parametrize("text", DOCUMENTS, ids=range(len(DOCUMENTS)))
def test_event_pass_equals_pyyaml(text):
    _check_equal(text)


def test_scalars_of_every_yaml_1_1_type_keep_their_types():
    (data, _), = plain_documents(SCALARS, yamlinput.Loader, yamlinput.MAX_DEPTH)
    assert data["ints"][:6] == [1, -1, 1, 0, 0, 31] and data["ints"][11] == 90
    assert data["bools"] == [True] * 3 + [False] * 3 + [True] * 3 + [False] * 3 + [True] * 3 + [False] * 3
    assert data["not bools"] == ["y", "n", "Y", "N", "yEs", "tRUE", "oN"]
    assert data["nulls"] == [None] * 4 + ["", ""] and data["empty value"] is None
    assert all(isinstance(t, str) for t in data["times"])  # as Kubernetes reads them
    assert data["quoted"][:3] == ["1", "1", "yes"] and data["explicit str"] == "123"
    assert data["dup"] == "second" and data["true"] == "quoted key"


@pytest.mark.parametrize("text", LEFT_TO_PYYAML, ids=range(len(LEFT_TO_PYYAML)))
def test_what_the_event_pass_does_not_handle_is_left_to_pyyaml(text):
    assert plain_documents(text, yamlinput.Loader, yamlinput.MAX_DEPTH) is None


def test_event_pass_equals_pyyaml_on_every_manifest_of_the_repository():
    checked = 0
    for path in FILES:
        text = path.read_text(encoding="utf-8-sig")
        try:
            _pyyaml(text)
        except yaml.YAMLError:
            assert plain_documents(text, yamlinput.Loader, yamlinput.MAX_DEPTH) is None, path
            continue
        if plain_documents(text, yamlinput.Loader, yamlinput.MAX_DEPTH) is None:
            continue  # anchors, tags...: the complete parse reads it
        _check_equal(text, path)
        checked += 1
    assert checked > 50


def _complete_parse(text, source, template=False):
    out = []
    for node, data in load.yaml_documents(text, source):
        load._emit(load._NodeLines(), node, data, source, None, template, out)
    return out


def test_objects_and_lines_equal_the_complete_parse_on_every_manifest():
    compared = 0
    for path in FILES:
        text = path.read_text(encoding="utf-8-sig")
        for template in (False, True):
            try:
                expected = _complete_parse(text, str(path), template)
            except ManifestError as exc:
                with pytest.raises(ManifestError) as got:
                    load._parse_located(text, str(path), template)
                assert str(got.value) == str(exc), path
                continue
            got = load._parse_located(text, str(path), template)
            assert [(x.line, x.source) for x in got] == [(x.line, x.source) for x in expected], path
            assert [x.obj for x in got] == [x.obj for x in expected], path
            compared += len(got)
    assert compared > 200


@pytest.mark.parametrize("text", [
    "kind: List\nitems:\n- kind: Node\n  metadata: {name: ok}\n- 5\n",
    "kind: List\nitems: 5\n",
    "kind: List\nitems:\n- kind: Node\n  metadata:\n    name: [bad]\n",
    "- kind: Pod\n  metadata: {name: p}\n  spec:\n    containers: 3\n",
    "kind: Pod\n",
    "just text\n",
])
def test_errors_name_the_same_line_as_the_complete_parse(text):
    with pytest.raises(ManifestError) as expected:
        _complete_parse(text, "x.yaml")
    with pytest.raises(ManifestError) as got:
        load.parse_manifests(text, source="x.yaml")
    assert (got.value.line, str(got.value)) == (expected.value.line, str(expected.value))


class _PureLoader(yaml.SafeLoader):
    """yamlinput.Loader's rules on PyYAML's pure-Python parser (installs without libyaml)."""


_PureLoader.yaml_implicit_resolvers = yamlinput.Loader.yaml_implicit_resolvers


@pytest.mark.parametrize("text", DOCUMENTS + LEFT_TO_PYYAML, ids=range(len(DOCUMENTS + LEFT_TO_PYYAML)))
def test_pure_python_parser_gives_the_same_documents(text):
    pure = plain_documents(text, _PureLoader, yamlinput.MAX_DEPTH)
    fast = plain_documents(text, yamlinput.Loader, yamlinput.MAX_DEPTH)
    assert (pure is None) == (fast is None)
    if fast is not None:
        assert all(_same(a, b) for (a, _), (b, _) in zip(pure, fast)) and len(pure) == len(fast)
        assert _event_lines(pure) == _event_lines(fast)
