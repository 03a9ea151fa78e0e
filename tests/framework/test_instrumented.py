"""Instrumentation is compiled into the engine, never patched onto it.

A profile instrumented with ``Framework.instrument`` runs its plain plan, the plugins' own
methods, in a cycle whose CycleState does not record plugin metrics, and its timed plan in one
that does (upstream ``CycleState.ShouldRecordPluginMetrics``). Nothing in ``kschedfw/`` assigns
to a method of the engine's objects or classes (an AST scan of every module, and a grep for the
type-checker waiver such an assignment needs), and a run with metrics on, every cycle sampled,
leaves the engine's classes and objects as they were built.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import kschedfw
from kschedfw.cycle import ScheduleAlgorithm
from kschedfw.framework.batch import OpportunisticBatch
from kschedfw.fwk.cycle_state import CycleState
from kschedfw.framework.filtering import NodeFiltering
from kschedfw.framework.points import ExtensionPoints
from kschedfw.framework.runtime import Framework
from kschedfw.framework.scoring import NodeScoring
from kschedfw.plugins.noderesources.fit import NodeResourcesFit
from kschedfw.plugins.tainttoleration import TaintToleration
from kschedfw.scheduler import Scheduler
from kschedfw.scheduler.binding import BindingCycle
from kschedfw.scheduler.eventhandlers import EventHandlers
from kschedfw.scheduler.schedule_one import SchedulingCycle
from kschedfw.testing import PluginHarness, make_node, make_pod

ENGINE = (Framework, ExtensionPoints, NodeFiltering, NodeScoring, ScheduleAlgorithm, Scheduler, SchedulingCycle,
          BindingCycle, EventHandlers, OpportunisticBatch)
PACKAGE = Path(kschedfw.__file__).parent


def _engine_classes() -> list[type]:
    return [klass for cls in ENGINE for klass in cls.__mro__ if klass is not object]


def _method_names() -> set[str]:
    return {name for klass in _engine_classes() for name, value in vars(klass).items()
            if callable(value) or isinstance(value, (staticmethod, classmethod, property))}


class _Recording:
    """An Instrumentation that keeps what it observes."""

    def __init__(self) -> None:
        self.plugins: list[tuple[str, str, str]] = []
        self.points: list[tuple[str, str, str]] = []

    def now(self) -> float:
        return 0.0

    def plugin_observer(self, plugin, point):
        return lambda code, seconds: self.plugins.append((plugin, point, code))

    def extension_point_observer(self, point, profile):
        return lambda code, seconds: self.points.append((point, code, profile))

    def node_hint_observer(self, profile):
        return lambda hint, seconds: None

    def store_results_observer(self, profile):
        return lambda seconds: None


@pytest.mark.parametrize("record", [False, True])
def test_a_cycle_runs_the_timed_plan_only_when_its_state_records_plugin_metrics(record):
    nodes = [make_node(f"n{i}", cpu="2") for i in range(20)]
    harness = PluginHarness(NodeResourcesFit, TaintToleration, nodes=nodes)
    fwk = harness.framework
    plain = fwk.plans
    recording = _Recording()
    fwk.instrument(recording)
    assert fwk.plans is plain  # the plain plans are still the plugins' own methods
    state = CycleState()
    state.record_plugin_metrics = record
    pod = make_pod("p", cpu="100m")
    fwk.run_pre_filter_plugins(state, pod, harness.snapshot.node_infos())
    feasible, _, failure = fwk.filter_nodes(state, pod, harness.snapshot.node_infos(), 0, 20)
    fwk.run_pre_score_plugins(state, pod, feasible)
    totals, status = fwk.run_score_plugins_totals(state, pod, feasible)
    assert failure is None and status is None and len(totals) == 20
    observed = {(plugin, point) for plugin, point, _ in recording.plugins}
    if record:  # every node's Filter and Score timed, whole-list forms left out
        assert [p for p in recording.plugins if p[:2] == ("TaintToleration", "Filter")] == \
            [("TaintToleration", "Filter", "Success")] * 20
        assert {("NodeResourcesFit", "PreFilter"), ("NodeResourcesFit", "Filter"), ("TaintToleration", "Score"),
                ("NodeResourcesFit", "Score")} <= observed
    else:
        assert not observed
    # extension points are observed on every run, sampled or not
    assert [point for point, _, _ in recording.points] == ["PreFilter", "PreScore", "Score"]


def _violations(path: Path) -> list[str]:
    """Assignments to, and setattr calls naming, an engine method in one module. A class's own
    ``self.x = ...`` counts only inside an engine class (elsewhere ``x`` is that class's own)."""
    methods = _method_names()
    engine = {klass.__name__ for klass in _engine_classes()}
    found: list[str] = []

    def visit(node: ast.AST, owner: str) -> None:
        if isinstance(node, ast.ClassDef):
            owner = node.name
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign):
            targets = list(node.targets)
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
            targets = [node.target]
        for target in targets:
            for item in ast.walk(target):
                if isinstance(item, ast.Attribute) and isinstance(item.ctx, ast.Store) and item.attr in methods:
                    on_self = isinstance(item.value, ast.Name) and item.value.id == "self"
                    if not on_self or owner in engine:
                        found.append(f"{path.name}:{node.lineno}: assigns {ast.unparse(item)}")
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "setattr" \
                and len(node.args) >= 2:
            name = node.args[1]
            if isinstance(name, ast.Constant) and name.value in methods:
                found.append(f"{path.name}:{node.lineno}: setattr of {name.value}")
            elif not isinstance(name, ast.Constant):
                target = ast.unparse(node.args[0]).lower()
                if any(word in target for word in ("framework", "fwk", "algorithm", "scheduler", "batch")):
                    found.append(f"{path.name}:{node.lineno}: setattr on {target}")
        for child in ast.iter_child_nodes(node):
            visit(child, owner)

    visit(ast.parse(path.read_text(), str(path)), "")
    return found


def test_no_module_assigns_to_an_engine_method():
    modules = sorted(PACKAGE.rglob("*.py"))
    assert len(modules) > 100
    found = [v for path in modules for v in _violations(path)]
    assert found == []
    waived = [f"{path.relative_to(PACKAGE)}:{n}" for path in modules
              for n, line in enumerate(path.read_text().splitlines(), 1) if "method-assign" in line]
    assert waived == []


def test_the_scan_finds_each_way_of_replacing_a_method(tmp_path):
    """The scan is not vacuous: a method replaced through ``setattr``, by assignment to an
    attribute or from inside a method is each found (the five replacements below)."""
    patched = tmp_path / "patched.py"
    patched.write_text(
        "def instrument(framework, algorithm, batch, timed, method):\n"
        "    setattr(framework, method, timed)\n"
        "    algorithm._find_nodes_that_pass_filters = timed\n"
        "    batch.get_node_hint = timed\n"
        "    setattr(framework, 'run_bind_plugins', timed)\n"
        "class Framework:\n"
        "    def instrument(self, timed):\n"
        "        self.run_filter_plugins = timed\n"
        "class Other:\n"
        "    def __init__(self, plan):\n"
        "        self._plan = plan\n")
    assert len(_violations(patched)) == 5


def test_a_metrics_run_leaves_the_engine_as_built():
    from tests.test_metrics import FixedRng, simulate_with_late_node
    from kschedfw.metrics import SchedulerMetrics
    methods = _method_names()
    before = {klass: dict(vars(klass)) for klass in _engine_classes()}
    sim = simulate_with_late_node(SchedulerMetrics(rng=FixedRng(0)))  # every cycle sampled
    scheduler = sim.scheduler
    frameworks = list(scheduler.frameworks.values())
    assert all(fwk.batch is not None for fwk in frameworks)
    for obj in (scheduler, scheduler.algorithm, *frameworks, *(fwk.batch for fwk in frameworks)):
        assert set(getattr(obj, "__dict__", {})) & methods == set(), type(obj).__name__
    for klass, members in before.items():
        after = vars(klass)
        assert set(after) == set(members), klass.__name__
        assert all(after[name] is value for name, value in members.items()), klass.__name__


def test_metrics_import_nothing_of_the_engine_they_observe():
    """The engine imports the metrics' types, never the other way round: no import cycle."""
    tree = ast.parse((PACKAGE / "metrics.py").read_text())
    imported = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module} | \
        {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
    assert not {name for name in imported if name.startswith("kschedfw.")} - {"kschedfw.framework.instrumented",
                                                                              "kschedfw.fwk.types"}
