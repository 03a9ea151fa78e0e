"""The engine knows no plugin, the author contract knows no engine, the cluster's packages
import downwards only, and no kschedfw module imports itself back.

Every module under ``kschedfw/`` is parsed; its imports are those at module level and inside
functions alike (a late import is still a dependency), but not those under ``if TYPE_CHECKING:``,
which never run. Upstream's split is the model: plugins import the framework, the framework
(``pkg/scheduler/framework/runtime``) never imports a plugin; only the composition roots (the
command line and the testing kit) may name in-tree plugins.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "kschedfw"
PLUGINS = "kschedfw.plugins"
#: the packages that may import in-tree plugins: the plugins themselves and the composition roots
MAY_IMPORT_PLUGINS = ("kschedfw.plugins", "kschedfw.cli", "kschedfw.testing")


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def all_modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or \
        (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _runtime_nodes(tree: ast.AST) -> list[ast.AST]:
    """Every node of ``tree`` except those inside the body of an ``if TYPE_CHECKING:``."""
    out: list[ast.AST] = []
    stack: list[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        out.append(node)
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            stack.extend(node.orelse)
            continue
        stack.extend(ast.iter_child_nodes(node))
    return out


def _resolve(module: str | None, level: int, importer: str, is_package: bool) -> str:
    """The absolute name of a (possibly relative) ``from`` import made by ``importer``."""
    if level == 0:
        return module or ""
    base = importer.split(".")
    if not is_package:
        base = base[:-1]
    base = base[:len(base) - (level - 1)]
    return ".".join([*base, *([module] if module else [])])


def runtime_imports(source: str, importer: str, is_package: bool, known: set[str]) -> set[str]:
    """The kschedfw modules ``importer`` imports when it runs: ``from package import name`` counts
    as importing ``package.name`` when that is a module, else ``package``; names given to
    ``importlib.import_module`` or ``__import__`` as a literal count too."""
    found: set[str] = set()
    for node in _runtime_nodes(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = _resolve(node.module, node.level, importer, is_package)
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                found.add(sub if sub in known else base)
        elif isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant) \
                and isinstance(node.args[0].value, str):
            func = node.func
            called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if called in ("import_module", "__import__"):
                found.add(node.args[0].value)
    return {name for name in found if name == "kschedfw" or name.startswith("kschedfw.")}


def import_graph() -> dict[str, set[str]]:
    modules = all_modules()
    known = set(modules)
    return {name: runtime_imports(path.read_text(encoding="utf-8"), name, path.name == "__init__.py", known)
            for name, path in modules.items()}


def _within(name: str, package: str) -> bool:
    return name == package or name.startswith(package + ".")


def plugin_imports_outside_plugins(graph: dict[str, set[str]]) -> list[str]:
    return sorted(f"{importer} imports {imported}" for importer, imported_set in graph.items()
                  if not any(_within(importer, p) for p in MAY_IMPORT_PLUGINS)
                  for imported in imported_set if _within(imported, PLUGINS))


def import_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    cycles: list[list[str]] = []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.get(root, ()))))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            advanced = False
            for child in children:
                if child not in graph:
                    continue
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                    advanced = True
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            if advanced:
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    cycles.append(sorted(component))
    return sorted(cycles)


def test_the_scan_sees_the_engine_and_the_plugins():
    graph = import_graph()
    assert "kschedfw.framework.registry" in graph and "kschedfw.plugins.defaultpreemption" in graph
    assert "kschedfw.fwk.status" in graph["kschedfw.plugins.defaultpreemption"]


def test_no_module_outside_plugins_cli_and_testing_imports_a_plugin():
    assert plugin_imports_outside_plugins(import_graph()) == []


def contract_imports_outside_api(modules: dict[str, Path]) -> list[str]:
    """What the contract (``kschedfw.fwk``) imports of kschedfw besides ``api`` and itself, type
    annotations included: an author's types must not lead into the engine."""
    out = []
    for name, path in modules.items():
        if not _within(name, "kschedfw.fwk"):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                imported = [_resolve(node.module, node.level, name, path.name == "__init__.py")]
            elif isinstance(node, ast.Import):
                imported = [alias.name for alias in node.names]
            else:
                continue
            out.extend(f"{name} imports {i}" for i in imported
                       if _within(i, "kschedfw") and not (_within(i, "kschedfw.api") or _within(i, "kschedfw.fwk")))
    return sorted(out)


def test_the_contract_imports_only_the_api():
    assert "kschedfw.fwk.hookspecs" in all_modules()
    assert contract_imports_outside_api(all_modules()) == []


def test_no_import_cycles():
    assert import_cycles(import_graph()) == []


CLUSTER = "kschedfw.cluster"
#: the cluster's packages by job, each with the cluster packages it may import besides itself:
#: the shared store and timers below everything, the API server and controller-manager emulations
#: below the embedded cluster, the real backend beside it needing none of the emulation, and the
#: simulation inputs on top
CLUSTER_LAYERS: dict[str, tuple[str, ...]] = {
    "store": (),
    "timers": (),
    "apiserver": (),
    "controllers": (),
    "memory": ("store", "timers", "apiserver", "controllers"),
    "kube": ("store", "timers", "controllers"),
    "inputs": ("apiserver", "kube"),
}
#: what the cluster may import of kschedfw outside itself: the objects, the contract, the clocks
CLUSTER_MAY_IMPORT = ("kschedfw.api", "kschedfw.fwk", "kschedfw.clock")


def cluster_layer(name: str) -> str | None:
    """The cluster package ``name`` belongs to (None outside the cluster or for the cluster's
    own ``__init__``)."""
    if not _within(name, CLUSTER) or name == CLUSTER:
        return None
    return name[len(CLUSTER) + 1:].split(".")[0]


def cluster_layer_violations(graph: dict[str, set[str]]) -> list[str]:
    out = []
    for importer, imported_set in graph.items():
        layer = cluster_layer(importer)
        if layer is None:
            continue
        if layer not in CLUSTER_LAYERS:
            out.append(f"{importer} is in no cluster package")
            continue
        for imported in imported_set:
            target = cluster_layer(imported)
            if target is None:
                if not any(_within(imported, p) for p in CLUSTER_MAY_IMPORT):
                    out.append(f"{importer} imports {imported}")
            elif target != layer and target not in CLUSTER_LAYERS[layer]:
                out.append(f"{importer} imports {imported}")
    return sorted(out)


def test_the_cluster_packages_import_downwards_only():
    """Each cluster package imports only the packages below it, and nothing of the engine."""
    graph = import_graph()
    assert {cluster_layer(name) for name in graph} - {None} == set(CLUSTER_LAYERS)
    assert cluster_layer_violations(graph) == []


def test_the_cluster_check_finds_what_it_looks_for():
    graph = {"kschedfw.cluster.kube.backend": {"kschedfw.cluster.memory.cluster", "kschedfw.cluster.store",
                                               "kschedfw.fwk.interface"},
             "kschedfw.cluster.store": {"kschedfw.scheduler"},
             "kschedfw.cluster.extra": set(),
             "kschedfw.cluster.memory.cluster": {"kschedfw.cluster.apiserver.admission",
                                                 "kschedfw.cluster.memory.stepped_binding"}}
    assert cluster_layer_violations(graph) == [
        "kschedfw.cluster.extra is in no cluster package",
        "kschedfw.cluster.kube.backend imports kschedfw.cluster.memory.cluster",
        "kschedfw.cluster.store imports kschedfw.scheduler",
    ]


KNOWN = {"kschedfw.a", "kschedfw.b", "kschedfw.pkg", "kschedfw.pkg.mod", "kschedfw.plugins",
         "kschedfw.plugins.x"}


@pytest.mark.parametrize("source, importer, is_package, expected", [
    pytest.param("import kschedfw.a", "kschedfw.b", False, {"kschedfw.a"}, id="import"),
    pytest.param("from kschedfw.pkg import mod", "kschedfw.a", False, {"kschedfw.pkg.mod"}, id="submodule"),
    pytest.param("from kschedfw.pkg import name", "kschedfw.a", False, {"kschedfw.pkg"}, id="name-of-a-package"),
    pytest.param("def f():\n    from kschedfw.a import x", "kschedfw.b", False, {"kschedfw.a"}, id="in-a-function"),
    pytest.param("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from kschedfw.a import x\n",
                 "kschedfw.b", False, set(), id="type-checking-only"),
    pytest.param("import typing\nif typing.TYPE_CHECKING:\n    import kschedfw.a\nelse:\n    import kschedfw.b\n",
                 "kschedfw.pkg", True, {"kschedfw.b"}, id="type-checking-else-runs"),
    pytest.param("from . import mod", "kschedfw.pkg", True, {"kschedfw.pkg.mod"}, id="relative-in-package"),
    pytest.param("from ..a import x", "kschedfw.pkg.mod", False, {"kschedfw.a"}, id="relative-up"),
    pytest.param("import importlib\nimportlib.import_module('kschedfw.plugins.x')", "kschedfw.a", False,
                 {"kschedfw.plugins.x"}, id="importlib"),
    pytest.param("import json", "kschedfw.a", False, set(), id="not-ours"),
])
def test_the_scan_finds_runtime_imports(source, importer, is_package, expected):
    assert runtime_imports(source, importer, is_package, KNOWN) == expected


def test_the_checks_find_what_they_look_for():
    graph = {"kschedfw.framework.x": {"kschedfw.plugins.y"}, "kschedfw.plugins.y": {"kschedfw.framework.x"},
             "kschedfw.cli.z": {"kschedfw.plugins.y"}, "kschedfw.a": {"kschedfw.b"}, "kschedfw.b": set()}
    assert plugin_imports_outside_plugins(graph) == ["kschedfw.framework.x imports kschedfw.plugins.y"]
    assert import_cycles(graph) == [["kschedfw.framework.x", "kschedfw.plugins.y"]]
