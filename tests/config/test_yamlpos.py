"""YAML loading with positions: every value and key keeps its 1-based line and column."""

from __future__ import annotations

import pytest

from kschedfw.api.yamlinput import MAX_ALIAS_VALUES
from kschedfw.config.yamlpos import Positions, load_yaml


def load(text):
    docs, diags = load_yaml(text, "f.yaml")
    return docs, [d.render() for d in diags]


def test_values_and_keys_are_located():
    text = "a: 1\nlist:\n- x\n- {k: v, n: [1, 2]}\nnested:\n  deep:\n    - name: é\n      w: 3\n"
    [doc], diags = load(text)
    assert diags == []
    p = doc.positions
    assert p.value(("a",)) == (1, 4) and p.key(("a",)) == (1, 1)
    assert p.value(("list", 0)) == (3, 3)
    assert p.value(("list", 1)) == (4, 3)
    assert p.value(("list", 1, "n", 1)) == (4, 17) and p.key(("list", 1, "n")) == (4, 10)
    assert p.value(("nested", "deep", 0, "name")) == (7, 13)
    assert p.value(("nested", "deep", 0, "w")) == (8, 10)
    assert doc.data == {"a": 1, "list": ["x", {"k": "v", "n": [1, 2]}],
                        "nested": {"deep": [{"name": "é", "w": 3}]}}


@pytest.mark.parametrize("path, anchor, want", [
    pytest.param(("b", "c"), "value", (3, 6), id="value"),
    pytest.param(("b", "c"), "key", (3, 3), id="key"),
    pytest.param(("b", "missing"), "value", (3, 3), id="missing falls back to the parent mapping"),
    pytest.param(("b", "c"), "parent", (3, 3), id="parent"),
    pytest.param(("zzz", 3, "y"), "value", (1, 1), id="nothing matches: the document"),
])
def test_locate(path, anchor, want):
    [doc], _ = load("a: 0\nb:\n  c: 1\n")
    assert doc.positions.locate(path, anchor) == want


def test_column_counts_characters_not_bytes():
    [doc], _ = load("ü: é\nx: [ä, ö]\n")
    assert doc.positions.value(("ü",)) == (1, 4)
    assert doc.positions.value(("x", 1)) == (2, 8)


@pytest.mark.parametrize("text, want", [
    pytest.param("a: 1\nb: [1, 2\n", ["f.yaml:3:1: YAML syntax error: did not find expected ',' "
                                      "or ']' (while parsing a flow sequence at line 2)"],
                 id="unclosed flow sequence"),
    pytest.param("a:\n  b: 1\n   c: 2\n", ["f.yaml:3:5: YAML syntax error: mapping values are not "
                                          "allowed in this context"], id="bad indentation"),
    pytest.param("a: 'x\n", ["f.yaml:2:1: YAML syntax error: found unexpected end of stream "
                             "(while scanning a quoted scalar at line 1)"], id="open quote"),
    pytest.param("a: b\nx: \x00", ["f.yaml:2:4: YAML syntax error: unacceptable character "
                                   "#x0000: control characters are not allowed"],
                 id="control character"),
])
def test_syntax_errors_are_diagnostics(text, want):
    docs, diags = load(text)
    assert docs == [] and diags == want


def test_duplicate_keys_name_both_lines_and_keep_the_first():
    [doc], diags = load("a: 1\nb: 2\na: 3\n")
    assert diags == ['f.yaml:3:1: a: Duplicate value: "a": duplicate key (first at line 1)']
    assert doc.data == {"a": 1, "b": 2}


def test_multiple_documents_are_all_returned():
    docs, _ = load("a: 1\n---\nb: 2\n")
    assert [d.data for d in docs] == [{"a": 1}, {"b": 2}]
    assert docs[1].start == (3, 1)


def test_empty_stream():
    assert load("") == ([], [])
    assert load("# only a comment\n") == ([], [])


def test_a_recursive_alias_makes_the_input_unusable():
    docs, diags = load("a: &x [*x]\n")
    assert diags == ["f.yaml:1:4: Unusable input: recursive alias"]
    assert docs == []


def test_alias_bomb_is_bounded():
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    for i in range(1, 8):
        prev = f"*a{i - 1}"
        lines.append(f"a{i}: &a{i} [{', '.join([prev] * 10)}]")
    docs, diags = load("\n".join(lines) + "\n")
    assert docs == []
    assert diags == [f"f.yaml:1:1: Unusable input: aliases expand this document by 123456770 values, more than "
                     f"the {MAX_ALIAS_VALUES} allowed (an alias bomb?)"]


def test_merge_keys():
    [doc], diags = load("base: &b {x: 1, y: 2}\nobj:\n  <<: *b\n  y: 3\n")
    assert diags == [] and doc.data["obj"] == {"y": 3, "x": 1}


def test_unknown_tags_and_collection_keys():
    [doc], diags = load("k: !custom v\n? [a]\n: 1\n")
    assert diags == ["f.yaml:1:4: k: Invalid document: unsupported YAML tag '!custom'; remove the "
                     "tag", "f.yaml:2:3: Invalid document: a mapping key must be a string, not a "
                     "collection"]
    assert doc.data == {"k": "v"}


def test_timestamps_and_binary_stay_text():
    [doc], _ = load("t: 2001-12-14\nb: !!binary aGVsbG8=\n")
    assert doc.data == {"t": "2001-12-14", "b": "aGVsbG8="}


def test_plain_scalars_that_are_not_strings_are_remembered():
    [doc], _ = load("a: on\nb: 'on'\nc: 010\nd: ~\ne: text\n")
    assert doc.data == {"a": True, "b": "on", "c": 8, "d": None, "e": "text"}
    assert doc.positions.plain == {("a",): "on", ("c",): "010", ("d",): "~"}


def test_non_string_scalar_keys_keep_their_text():
    [doc], _ = load("1: a\ntrue: b\nnull: c\n")
    assert doc.data == {"1": "a", "true": "b", "null": "c"}


def test_positions_object_defaults():
    p = Positions()
    assert p.locate(("x",)) == (1, 1)
