"""Plugins reach the world only through their Handle (upstream plugins import
``framework``, never the scheduler or a client implementation).

Every module of the in-tree plugins and of the contrib packages is parsed; importing a backend,
the engine, the scheduler or a composition root (or asking importlib for them) fails here: a
plugin is written against the contract (``kschedfw.fwk``) and ``kschedfw.api``.
"""

from __future__ import annotations

import ast
import tomllib
from pathlib import Path

import pytest

from kschedfw.fwk import interface

ROOT = Path(__file__).resolve().parents[2]
#: the backends, the engine (upstream's framework/runtime, the algorithm, the queue, the metrics) and
#: the composition roots: a plugin sees them only through its Handle
FORBIDDEN = ("kschedfw.cluster", "kschedfw.scheduler", "kschedfw.simulation", "kschedfw.kube_runner",
             "kschedfw.framework", "kschedfw.cycle", "kschedfw.queue", "kschedfw.metrics")


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


def _is_forbidden(name: str) -> bool:
    return any(name == bad or name.startswith(bad + ".") for bad in FORBIDDEN)


def forbidden_imports(source: str, path: Path) -> list[str]:
    """``line: module`` for every import of a forbidden module in ``source``."""
    found: list[str] = []
    for node in ast.walk(ast.parse(source, filename=str(path))):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            module = _absolute(node.module, node.level, path)
            names = [module] if _is_forbidden(module) else [f"{module}.{alias.name}" for alias in node.names]
        elif isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant) \
                and isinstance(node.args[0].value, str):
            func = node.func
            called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if called in ("import_module", "__import__"):
                names = [node.args[0].value]
        found += [f"{node.lineno}: {name}" for name in names if _is_forbidden(name)]
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
def test_plugin_does_not_import_the_backend_or_the_scheduler(path):
    assert forbidden_imports(path.read_text(encoding="utf-8"), path) == []


@pytest.mark.parametrize("source, expected", [
    pytest.param("from kschedfw.cluster.memory import NotFound", ["1: kschedfw.cluster.memory"], id="from-module"),
    pytest.param("import kschedfw.simulation", ["1: kschedfw.simulation"], id="import"),
    pytest.param("from kschedfw import scheduler", ["1: kschedfw.scheduler"], id="from-package"),
    pytest.param("def f():\n    from kschedfw.cluster.memory import EPOCH", ["2: kschedfw.cluster.memory"],
                 id="inside-a-function"),
    pytest.param("import importlib\nimportlib.import_module('kschedfw.cluster.memory')",
                 ["2: kschedfw.cluster.memory"], id="importlib"),
    pytest.param("from kschedfw.scheduler_events import resource_for_kind", [], id="similar-name-is-fine"),
    pytest.param("from kschedfw.fwk.interface import NotFound", [], id="the-contract-is-fine"),
])
def test_the_scan_finds_forbidden_imports(source, expected):
    assert forbidden_imports(source, ROOT / "kschedfw" / "plugins" / "example.py") == expected


def test_relative_imports_are_resolved():
    path = ROOT / "kschedfw" / "plugins" / "preemption" / "example.py"
    assert forbidden_imports("from ...cluster import memory", path) == ["1: kschedfw.cluster"]
    assert forbidden_imports("from ... import simulation", path) == ["1: kschedfw.simulation"]


#: what the concrete Handle and the runtime hold for themselves: a plugin uses the Handle protocol
#: (``run_filter_plugins_with_nominated_pods``, ``filter_plugins_to_run``, the nominator's methods...)
ENGINE_INTERNALS = frozenset({"framework", "nominator", "filter_plan", "add_pod_plugins", "remove_pod_plugins"})
HANDLE_MEMBERS = frozenset(name for name in dir(interface.Handle) if not name.startswith("_"))


def reach_arounds(source: str) -> list[str]:
    """``line: what`` for every attribute of the engine's own a plugin reads, by name or through
    ``getattr(handle, "...")`` of a name the Handle protocol does not offer."""
    found: list[str] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Attribute) and node.attr in ENGINE_INTERNALS:
            found.append(f"{node.lineno}: .{node.attr}")
        elif isinstance(node, ast.Call) and getattr(node.func, "id", "") == "getattr" and len(node.args) >= 2 \
                and "handle" in ast.unparse(node.args[0]) and isinstance(node.args[1], ast.Constant) \
                and node.args[1].value not in HANDLE_MEMBERS:
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
])
def test_the_scan_finds_reach_arounds(source, expected):
    assert reach_arounds(source) == expected
