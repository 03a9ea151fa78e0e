"""Plugins are written against the contract a pip-installed plugin gets (upstream plugins import
``k8s.io/kube-scheduler/framework``, the API types and the ``framework/preemption`` library, never
the scheduler, a client implementation or the configuration API).

Every module of the in-tree plugins and of the contrib packages is parsed; every import naming a
kschedfw module (also under ``if TYPE_CHECKING:``, also through importlib) must be of the contract
(``kschedfw.fwk``, or ``kschedfw`` itself for a name it exports), ``kschedfw.api``, or the
preemption library (``kschedfw.preemption``); an in-tree plugin may also import the other in-tree
plugins' modules (its own package). The standard library and third-party packages are the
plugin's own business.
"""

from __future__ import annotations

import ast
import re
import tomllib
from pathlib import Path

import pytest

import kschedfw
from kschedfw import fwk
from kschedfw.fwk import interface

ROOT = Path(__file__).resolve().parents[2]
#: what any plugin may import of kschedfw: the contract, the API types, the preemption library
CONTRACT = ("kschedfw.fwk", "kschedfw.api", "kschedfw.preemption")
IN_TREE = "kschedfw.plugins"


def applications() -> dict[str, Path]:
    """The packages behind the contrib packages' console scripts (``[project.scripts]``), by dotted
    name: their own composition roots, which run simulations as kschedfw's ``cli/`` does, not plugins."""
    found = {}
    for pyproject in sorted(ROOT.glob("contrib-plugins/*/pyproject.toml")):
        scripts = tomllib.loads(pyproject.read_text(encoding="utf-8")).get("project", {}).get("scripts", {})
        for target in scripts.values():
            package = target.partition(":")[0].split(".")[:-1]
            found[".".join(package)] = pyproject.parent.joinpath("src", *package)
    return found


def plugin_modules() -> list[Path]:
    files = sorted((ROOT / "kschedfw" / "plugins").rglob("*.py"))
    apps = applications().values()
    files += [f for f in sorted(ROOT.glob("contrib-plugins/*/src/**/*.py"))
              if not any(f.is_relative_to(app) for app in apps)]
    return files


def _absolute(module: str | None, level: int, path: Path) -> str:
    """The absolute name of a (possibly relative) ``from`` import in the file at ``path``."""
    if level == 0:
        return module or ""
    parts = list(path.relative_to(_package_root(path)).with_suffix("").parts)
    base = parts[:-level] if len(parts) >= level else []
    return ".".join([*base, *([module] if module else [])])


def _package_root(path: Path) -> Path:
    root = path.parent
    while (root / "__init__.py").exists():
        root = root.parent
    return root


def _within(name: str, package: str) -> bool:
    return name == package or name.startswith(package + ".")


def _is_forbidden(name: str, in_tree: bool) -> bool:
    if not _within(name, "kschedfw"):
        return False
    allowed = (*CONTRACT, IN_TREE) if in_tree else CONTRACT
    return not any(_within(name, package) for package in allowed)


def _is_in_tree(path: Path) -> bool:
    return path.is_relative_to(ROOT / "kschedfw" / "plugins")


def forbidden_imports(source: str, path: Path) -> list[str]:
    """``line: module`` for every import of ``source`` (the file at ``path``) that is not of the
    contract: ``from kschedfw import X`` is fine only for a name ``kschedfw`` exports."""
    in_tree = _is_in_tree(path)
    found: list[str] = []
    for node in ast.walk(ast.parse(source, filename=str(path))):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names if alias.name != "kschedfw"]
        elif isinstance(node, ast.ImportFrom):
            module = _absolute(node.module, node.level, path)
            if module == "kschedfw":
                names = [f"kschedfw.{alias.name}" for alias in node.names if alias.name not in kschedfw.__all__]
            else:
                names = [module]
        elif isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant) \
                and isinstance(node.args[0].value, str):
            func = node.func
            called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if called in ("import_module", "__import__"):
                names = [node.args[0].value]
        found += [f"{node.lineno}: {name}" for name in names if _is_forbidden(name, in_tree)]
    return found


def test_the_scan_sees_plugins():
    files = plugin_modules()
    assert any(p.name == "defaultpreemption.py" for p in files)
    assert any("kschedfw_trimaran" in p.parts for p in files)
    assert any(p.name == "fgdscore.py" for p in files)
    assert not any(p.name == "procedure.py" for p in files)  # kschedfw-gpushare's experiment driver


@pytest.mark.parametrize("path", plugin_modules(), ids=lambda p: str(p.relative_to(ROOT)))
def test_plugin_does_not_import_an_application(path):
    """A plugin module does not reach into its package's command-line application either."""
    apps = applications()
    tree = ast.parse(path.read_text(encoding="utf-8"))
    imported = [n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module] + \
        [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
    assert not [m for m in imported if any(m == app or m.startswith(app + ".") for app in apps)]


@pytest.mark.parametrize("path", plugin_modules(), ids=lambda p: str(p.relative_to(ROOT)))
def test_plugin_imports_only_the_contract(path):
    assert forbidden_imports(path.read_text(encoding="utf-8"), path) == []


@pytest.mark.parametrize("source, expected", [
    pytest.param("from kschedfw.cluster.memory import NotFound", ["1: kschedfw.cluster.memory"], id="from-module"),
    pytest.param("import kschedfw.simulation", ["1: kschedfw.simulation"], id="import"),
    pytest.param("from kschedfw import scheduler", ["1: kschedfw.scheduler"], id="from-package"),
    pytest.param("def f():\n    from kschedfw.cluster.memory import EPOCH", ["2: kschedfw.cluster.memory"],
                 id="inside-a-function"),
    pytest.param("import importlib\nimportlib.import_module('kschedfw.cluster.memory')",
                 ["2: kschedfw.cluster.memory"], id="importlib"),
    pytest.param("from kschedfw.config.pluginargs import IN_TREE_ARGS", ["1: kschedfw.config.pluginargs"],
                 id="the-configuration-api"),
    pytest.param("from kschedfw.extenders.cycle import build_extenders", ["1: kschedfw.extenders.cycle"],
                 id="the-extender-clients"),
    pytest.param("from kschedfw.scheduler import Scheduler", ["1: kschedfw.scheduler"], id="the-engine"),
    pytest.param("from kschedfw.clock import rfc3339", ["1: kschedfw.clock"], id="the-engine's-clock"),
    pytest.param("if TYPE_CHECKING:\n    from kschedfw.cache.label_index import PodLabelIndex",
                 ["2: kschedfw.cache.label_index"], id="cache-internals-even-for-types"),
    pytest.param("from kschedfw.config.schema import V1_ARGS_PLUGINS", ["1: kschedfw.config.schema"],
                 id="the-configuration-schema"),
    pytest.param("from kschedfw.fwkx import y", ["1: kschedfw.fwkx"], id="similar-name-is-not-the-contract"),
    pytest.param("from kschedfw import hookimpl, Status\nimport kschedfw", [], id="the-top-level-exports"),
    pytest.param("from kschedfw.fwk.interface import NotFound", [], id="the-contract-is-fine"),
    pytest.param("from kschedfw.api.field import FieldError", [], id="the-api-is-fine"),
    pytest.param("from kschedfw.preemption import Evaluator", [], id="the-preemption-library-is-fine"),
    pytest.param("import attrs\nfrom collections import abc", [], id="stdlib-and-third-party-are-fine"),
    pytest.param("from kschedfw.plugins.helper import as_objects", [], id="another-in-tree-plugin"),
])
def test_the_scan_finds_forbidden_imports(source, expected):
    assert forbidden_imports(source, ROOT / "kschedfw" / "plugins" / "example.py") == expected


def test_a_contrib_plugin_may_not_import_in_tree_plugins():
    """Out of tree, the in-tree plugins are not the contract: a contrib plugin copies, not imports."""
    path = ROOT / "contrib-plugins" / "kschedfw-example-plugin" / "src" / "kschedfw_example_plugin" / "x.py"
    assert forbidden_imports("from kschedfw.plugins.helper import as_objects", path) == \
        ["1: kschedfw.plugins.helper"]


def test_relative_imports_are_resolved():
    path = ROOT / "kschedfw" / "plugins" / "interpodaffinity" / "example.py"
    assert forbidden_imports("from ...cluster import memory", path) == ["1: kschedfw.cluster"]
    assert forbidden_imports("from ... import simulation", path) == ["1: kschedfw.simulation"]
    assert forbidden_imports("from . import filtering", path) == []


def test_the_preemption_library_imports_only_the_contract():
    """Upstream's ``framework/preemption`` depends on the framework interfaces only: PostFilter
    plugins, in-tree and out of tree, import it the same way."""
    library = sorted((ROOT / "kschedfw" / "preemption").rglob("*.py"))
    assert library
    found = {str(p.relative_to(ROOT)): forbidden_imports(p.read_text(encoding="utf-8"), p) for p in library}
    assert {path: bad for path, bad in found.items() if bad} == {}


#: the names the plugin guide (docs/guides/write-a-plugin.md) lists as exported by ``kschedfw``
#: (in the paragraph on the contract)
def guide_contract_names() -> list[str]:
    text = (ROOT / "docs" / "guides" / "write-a-plugin.md").read_text(encoding="utf-8")
    section = text[text.index("<!-- contract-exports -->"):text.index("<!-- /contract-exports -->")]
    return re.findall(r"`([A-Za-z_][A-Za-z0-9_]*)`", section)


def test_every_contract_name_is_exported_from_kschedfw_once():
    """``kschedfw`` exports the contract's list itself, and every name on it resolves."""
    assert kschedfw.__all__ is fwk.__all__ or kschedfw.__all__ == fwk.__all__
    assert len(set(fwk.__all__)) == len(fwk.__all__) and set(fwk.__all__) == set(fwk.EXPORTS)
    missing = [name for name in fwk.__all__ if getattr(kschedfw, name, None) is None]
    assert missing == []


def test_the_plugin_guide_lists_what_kschedfw_exports():
    listed = guide_contract_names()
    assert listed and sorted(listed) == sorted(fwk.__all__)


#: what the concrete Handle and the runtime hold for themselves: a plugin uses the Handle protocol
#: (``run_filter_plugins_with_nominated_pods``, ``filter_plugins_to_run``, the nominator's methods...)
ENGINE_INTERNALS = frozenset({"framework", "nominator", "filter_plan", "add_pod_plugins", "remove_pod_plugins"})
HANDLE_MEMBERS = frozenset(name for name in dir(interface.Handle) if not name.startswith("_"))
#: what a snapshot offers a plugin: the SharedLister protocol; its optional indexes are read with
#: ``snapshot_label_index`` / ``snapshot_term_index``, not by attribute name
SNAPSHOT_MEMBERS = frozenset(name for name in dir(interface.SharedLister) if not name.startswith("_"))


def reach_arounds(source: str) -> list[str]:
    """``line: what`` for every attribute of the engine's own a plugin reads, by name or through
    ``getattr(handle, "...")`` / ``getattr(snapshot, "...")`` of a name the Handle or SharedLister
    protocol does not offer."""
    found: list[str] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Attribute) and node.attr in ENGINE_INTERNALS:
            found.append(f"{node.lineno}: .{node.attr}")
        elif isinstance(node, ast.Call) and getattr(node.func, "id", "") == "getattr" and len(node.args) >= 2 \
                and "handle" in ast.unparse(node.args[0]) and isinstance(node.args[1], ast.Constant) \
                and node.args[1].value not in HANDLE_MEMBERS:
            found.append(f"{node.lineno}: getattr({ast.unparse(node.args[0])}, {node.args[1].value!r})")
        elif isinstance(node, ast.Call) and getattr(node.func, "id", "") == "getattr" and len(node.args) >= 2 \
                and "snapshot" in ast.unparse(node.args[0]) and isinstance(node.args[1], ast.Constant) \
                and node.args[1].value not in SNAPSHOT_MEMBERS:
            found.append(f"{node.lineno}: getattr({ast.unparse(node.args[0])}, {node.args[1].value!r})")
    return found


@pytest.mark.parametrize("path", plugin_modules(), ids=lambda p: str(p.relative_to(ROOT)))
def test_plugin_uses_only_the_handle_protocol(path):
    assert reach_arounds(path.read_text(encoding="utf-8")) == []


@pytest.mark.parametrize("source, expected", [
    pytest.param("fw = getattr(self.handle, 'framework', None)", ["1: getattr(self.handle, 'framework')"],
                 id="getattr-on-the-handle"),
    pytest.param("plan = state.filter_plan", ["1: .filter_plan"], id="the-runtime's-plan"),
    pytest.param("n = handle.nominator.nominated_pods_for_node('a')", ["1: .nominator"], id="the-nominator"),
    pytest.param("n = handle.nominated_pods_for_node('a')", [], id="the-protocol-is-fine"),
    pytest.param("s = getattr(handle, 'snapshot', None)", [], id="getattr-of-a-protocol-member-is-fine"),
    pytest.param("i = getattr(self.handle.snapshot, 'label_index', None)",
                 ["1: getattr(self.handle.snapshot, 'label_index')"], id="an-undeclared-snapshot-attribute"),
    pytest.param("i = snapshot_label_index(self.handle.snapshot)", [], id="the-typed-accessor-is-fine"),
])
def test_the_scan_finds_reach_arounds(source, expected):
    assert reach_arounds(source) == expected
