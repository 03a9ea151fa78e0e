"""The docs site's generated reference covers the code it is generated from: every hook of the
extension-point table has its section (so a new hook cannot go undocumented), every hook the
runtime calls names its upstream interface and shows an example that takes only arguments of
its spec, every field of the configuration schema has its row and every in-tree plugin is on
the plugin-args page. Cheap: the pages' text, without building the site."""

from __future__ import annotations

import ast
import builtins
import importlib.util
import inspect
import re
import textwrap
import tomllib
from pathlib import Path
from types import ModuleType
from typing import Any, Iterator

import pytest

import kschedfw

from kschedfw.config.schema import CONFIG_SCHEMA
from kschedfw.fwk import hookspecs
from kschedfw.fwk.extension_points import HOOK_NAMES, HOOKS

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"


def reference() -> ModuleType:
    spec = importlib.util.spec_from_file_location("kschedfw_reference", DOCS / "_ext" / "kschedfw_reference.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_hookspec_is_a_row_of_the_table_and_a_section_of_the_hook_page():
    specs = {name for name, fn in inspect.getmembers(hookspecs, inspect.isfunction)
             if hasattr(fn, "kschedfw_spec")}
    assert specs == set(HOOK_NAMES)
    page = reference().hook_reference()
    for name in HOOK_NAMES:
        assert f".. _hook-{name}:" in page and f".. autofunction:: kschedfw.fwk.hookspecs.{name}\n" in page, name
    assert ".. include:: ../_generated/hooks.rst" in (DOCS / "reference" / "hooks.rst").read_text()


def examples(doc: str) -> list[str]:
    """The code of each ``Example::`` block of a docstring."""
    blocks = re.findall(r"Example::\n\n((?:(?: {8}.*)?\n)+)", doc + "\n")
    return [textwrap.dedent(block) for block in blocks]


@pytest.mark.parametrize("row", HOOKS, ids=lambda h: h.name)
def test_each_called_hook_names_its_upstream_interface_and_shows_an_example(row):
    spec = getattr(hookspecs, row.name)
    doc = inspect.getdoc(spec) or ""
    assert row.interface in doc
    (code,) = examples(spec.__doc__ or "")
    functions = {f.name: f for f in ast.walk(ast.parse(code)) if isinstance(f, ast.FunctionDef)}
    assert row.name in functions, f"the example of {row.name} does not implement it"
    taken = [a.arg for a in functions[row.name].args.args][1:]  # after self
    assert set(taken) <= set(inspect.signature(spec).parameters), taken
    # every name it reads is kschedfw's (what the hook page says the examples import), its own or a builtin
    tree = list(ast.walk(ast.parse(code)))
    bound = ({a.arg for f in functions.values() for a in f.args.args} | set(functions)
             | {n.id for n in tree if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
             | {n.name for n in tree if isinstance(n, ast.ExceptHandler) and n.name})
    read = {n.id for n in tree if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    assert read - bound - set(kschedfw.__all__) - set(dir(builtins)) <= {"log"}


def schema_fields(schema: dict[str, Any]) -> Iterator[str]:
    """Every property name of ``schema``, through nested objects and lists."""
    if schema.get("type") == "array":
        yield from schema_fields(schema.get("items", {}))
    for name, sub in (schema.get("properties") or {}).items():
        yield name
        yield from schema_fields(sub)


def test_every_field_of_the_configuration_schema_has_a_row():
    page = reference().config_reference()
    for name in set(schema_fields(CONFIG_SCHEMA)):
        assert f"   * - ``{name}``\n" in page, name


def test_every_in_tree_plugin_is_on_the_plugin_args_page():
    entry_points = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["entry-points"]["kschedfw.plugins"]
    page = reference().plugin_args_reference()
    without = page[page.index("Plugins without args"):]
    for name in entry_points:
        assert f"{name}Args\n" in page or f"``{name}``" in without, name
