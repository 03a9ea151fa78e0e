"""Manifests are built from libyaml's node tree by a plain constructor (kschedfw/api/load.py):
it must return exactly what PyYAML's SafeConstructor returns (timestamps kept as strings), and
leave anything else (merge keys, non-string keys, other tags) to PyYAML."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from yaml.constructor import SafeConstructor

from kschedfw.api import load, yamlinput

ROOT = Path(__file__).resolve().parents[2]
FILES = sorted(p for folder in ("tests", "profiles", "kschedfw") for p in (ROOT / folder).rglob("*.yaml"))

EDGE_CASES = """
a: 1
b: 0x1f
c: 1_000
d: 1:30
e: 3.5
f: .inf
g: yes
h: ~
i: 2024-01-02T03:04:05Z
j: "quoted"
k: 'single'
l: [1, "2", three, {x: null}]
m: |
  block
  text
n: !!str 123
o: ""
p: -0o17
"""


def _both(text):
    out = []
    for document in yaml.compose_all(text, Loader=yamlinput.Loader):
        if document is None:
            continue
        loader = SafeConstructor()
        try:
            plain = load._construct_plain(loader, document)
        except load._NotPlain:
            plain = "not plain"
        standard = loader.construct_document(document)
        out.append((plain, standard))
    return out


@pytest.mark.parametrize("text", [EDGE_CASES])
def test_plain_constructor_equals_pyyaml(text):
    for plain, standard in _both(text):
        assert plain == standard
        assert type(plain) is type(standard)


def test_plain_constructor_on_every_yaml_file_of_the_repository():
    checked = 0
    for path in FILES:
        text = path.read_text(encoding="utf-8")
        if "*" in text:
            continue  # aliases: yaml_documents uses PyYAML's constructor
        try:
            pairs = _both(text)
        except yaml.YAMLError:
            continue  # fixtures of invalid YAML
        for plain, standard in pairs:
            if plain != "not plain":
                assert plain == standard, path
                checked += 1
    assert checked > 20


@pytest.mark.parametrize("text", [
    "base: &b {x: 1}\nderived:\n  <<: *b\n  y: 2\n",  # merge key (and an alias)
    "1: one\n",                                       # non-string key
    "true: v\n",                                      # boolean key
    "x: !!binary aGVsbG8=\n",                         # another tag
    "s: !!set {a, b}\n",
])
def test_other_documents_are_left_to_pyyaml(text):
    for plain, standard in _both(text):
        assert plain == "not plain"
    node_data = [data for _, data in load.yaml_documents(text, "x.yaml")]
    assert node_data == [yaml.load(text, Loader=yamlinput.Loader)]
