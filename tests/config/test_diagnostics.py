"""The one reporter: gcc-style lines, JSON form, ordering, summary."""

from __future__ import annotations

import json

import pytest

from kschedfw.config.diagnostics import (Diagnostic, did_you_mean, render_text, sort_unique,
                                         summary_line)
from kschedfw.api.field import INVALID, FieldError


def test_render_gcc_style():
    err = FieldError(("profiles", 0, "plugins", "score", "enabled", 1, "weight"), INVALID,
                     "must be positive", 0)
    d = Diagnostic.from_field_error(err, file="cfg.yaml", line=14, column=11)
    assert d.render() == ("cfg.yaml:14:11: profiles[0].plugins.score.enabled[1].weight: "
                          "Invalid value: 0: must be positive")
    assert d.kind == "Invalid value" and d.severity == "error"


def test_render_with_hint_and_warning():
    d = Diagnostic(file="f", line=1, column=2, path="a.b", kind=INVALID,
                   message='Invalid value: "x": nope', severity="warning",
                   hint=did_you_mean("y"))
    assert d.render() == 'f:1:2: warning: a.b: Invalid value: "x": nope (did you mean "y"?)'


def test_render_without_path():
    d = Diagnostic(file="f", line=3, column=1, path="", kind="YAML syntax error",
                   message="YAML syntax error: boom")
    assert d.render() == "f:3:1: YAML syntax error: boom"


def test_json_form_has_every_field():
    d = Diagnostic(file="f", line=1, column=1, path="p", kind=INVALID, message="m",
                   plugin="dist[X]")
    assert json.loads(json.dumps(d.to_json())) == {
        "file": "f", "line": 1, "column": 1, "path": "p", "kind": INVALID, "message": "m",
        "severity": "error", "hint": "", "plugin": "dist[X]"}


def test_sorted_by_file_line_column_without_duplicates():
    mk = lambda f, l, c: Diagnostic(file=f, line=l, column=c, path="", kind="k", message="m")  # noqa: E731
    diags = [mk("b", 1, 1), mk("a", 2, 1), mk("a", 1, 5), mk("a", 1, 5), mk("a", 10, 1)]
    assert [(d.file, d.line, d.column) for d in sort_unique(diags)] == [
        ("a", 1, 5), ("a", 2, 1), ("a", 10, 1), ("b", 1, 1)]
    assert render_text(diags).count("\n") == 3


@pytest.mark.parametrize("args, want", [
    pytest.param((2, 1, 1, 2, 0), "2 files checked: 1 valid, 1 invalid (2 errors)", id="brief"),
    pytest.param((1, 1, 0, 0, 0), "1 file checked: 1 valid, 0 invalid (0 errors)", id="one file"),
    pytest.param((1, 0, 1, 1, 3), "1 file checked: 0 valid, 1 invalid (1 error, 3 warnings)",
                 id="warnings"),
    pytest.param((3, 1, 1, 1, 0, 1),
                 "3 files checked: 1 valid, 1 invalid (1 error); 1 could not be checked",
                 id="not checked"),
])
def test_summary_line(args, want):
    assert summary_line(*args) == want
