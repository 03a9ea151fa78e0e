"""Every plugin call is guarded (hookspecs.py's promise): a wrong return type, a
non-integer or out-of-range score, or an exception becomes an Error status naming the plugin,
the extension point and what came back, logged once per cause without a traceback."""

from __future__ import annotations

import logging

import pytest

from kschedfw import Status, hookimpl
from kschedfw.framework.guard import PluginFaults
from kschedfw.testing import simulate_with

from .plugins import BASE


def _plugin(point, value):
    def hook(self, state, pod, node_info):
        return value
    hook.__name__ = point
    return type("Bad", (), {"name": "Bad", "__init__": lambda self, args, handle: None,
                            point: hookimpl(hook)})


def _run(node, pod, point, value):
    objects = [node(f"n{i}") for i in range(3)] + [pod(f"p{i}") for i in range(4)]
    return simulate_with([*BASE, _plugin(point, value)], objects)


@pytest.mark.parametrize("point, value, message", [
    pytest.param("filter", "no", 'running "Bad" filter plugin: plugin "Bad" Filter returned str \'no\'; '
                 "want Status or None", id="filter-str"),
    pytest.param("filter", True, 'running "Bad" filter plugin: plugin "Bad" Filter returned bool True; '
                 "want Status or None", id="filter-bool"),
    pytest.param("score", "high", 'running Score plugins: plugin "Bad" failed with: plugin "Bad" Score returned '
                 "str 'high'; want int or (int, Status | None)", id="score-str"),
    pytest.param("score", None, 'running Score plugins: plugin "Bad" failed with: plugin "Bad" Score returned '
                 "None; want int or (int, Status | None)", id="score-none"),
    pytest.param("score", 99.9, 'running Score plugins: plugin "Bad" failed with: plugin "Bad" Score returned '
                 "float 99.9; want int or (int, Status | None)", id="score-float-not-truncated"),
    pytest.param("score", True, 'running Score plugins: plugin "Bad" failed with: plugin "Bad" Score returned '
                 "bool True; want int or (int, Status | None)", id="score-bool"),
])
def test_bad_return_is_an_error_naming_plugin_point_and_value(node, pod, caplog, capsys, point, value, message):
    with caplog.at_level(logging.WARNING):
        result = _run(node, pod, point, value)
    assert {p.status for p in result.pods} == {"Pending"}
    assert {(p.reason, p.message) for p in result.pods} == {("SchedulerError", message)}
    warnings = [r for r in caplog.records if r.levelno >= logging.WARNING]
    # every pod failed many times over (retries with backoff) on every node: one line for the cause
    assert len(warnings) == 1, [r.getMessage() for r in warnings]
    assert warnings[0].exc_info is None
    assert "Traceback" not in capsys.readouterr().err
    fwk = result.scheduler.frameworks["default-scheduler"]
    ((key, count),) = fwk.faults.counts.items()
    assert key[0] == "Bad" and count > 4


def test_exception_logged_once_with_first_traceback_at_debug(node, pod, caplog):
    def boom(self, state, pod, node_info):
        raise KeyError(node_info.name)
    cls = type("Boom", (), {"name": "Boom", "__init__": lambda self, args, handle: None, "filter": hookimpl(boom)})
    objects = [node(f"n{i}") for i in range(3)] + [pod(f"p{i}") for i in range(4)]
    with caplog.at_level(logging.DEBUG, logger="kschedfw.framework.guard"):
        result = simulate_with([*BASE, cls], objects)
    assert result.pods[0].message.startswith('running "Boom" filter plugin: KeyError: ')
    records = [r for r in caplog.records if r.name == "kschedfw.framework.guard"]
    assert [r.levelno for r in records] == [logging.WARNING, logging.DEBUG]
    assert records[0].exc_info is None and records[1].exc_info is not None


@pytest.mark.filterwarnings("ignore::kschedfw.framework.guard.DeprecatedShapeWarning")  # the old (score, status) shape
def test_score_tuple_with_failed_status_and_normalize_returning_floats(node, pod):
    class Tuple:
        name = "Tuple"

        def __init__(self, args, handle):
            pass

        @hookimpl
        def score(self, state, pod, node_info):
            return 5, Status.as_status("metrics unavailable")

    class FloatNormalize:
        name = "FloatNormalize"

        def __init__(self, args, handle):
            pass

        @hookimpl
        def score(self, state, pod, node_info):
            return 5

        @hookimpl
        def normalize_score(self, state, pod, scores):
            for s in scores:
                s.score = s.score / 2

    objects = [node("n1"), node("n2"), pod("p")]
    result = simulate_with([*BASE, Tuple], objects, until=0)
    assert result.pods[0].message == 'running Score plugins: plugin "Tuple" failed with: metrics unavailable'
    result = simulate_with([*BASE, FloatNormalize], objects, until=0)
    assert result.pods[0].message == (
        'running Normalize on Score plugins: plugin "FloatNormalize" failed with: plugin "FloatNormalize" '
        "NormalizeScore returned float 2.5; want int in NodeScore.score")


def test_other_points_check_their_return_type(node, pod):
    def reserve(self, state, pod, node_name):
        return "ok"
    cls = type("R", (), {"name": "R", "__init__": lambda self, args, handle: None, "reserve": hookimpl(reserve)})
    result = simulate_with([*BASE, cls], [node("n1"), pod("p")], until=0)
    assert result.pods[0].message == ('running Reserve plugin "R": plugin "R" Reserve returned str \'ok\'; '
                                      "want Status or None")


def test_fault_summary_counts_each_cause():
    faults = PluginFaults()
    for _ in range(3):
        faults.wrong_type("X", "Filter", "no", "Status or None")
    faults.exception("X", "Score", ValueError("v"))
    assert faults.summary() == ['plugin "X" Filter: returned str (3 times)',
                                'plugin "X" Score: ValueError (1 times)']


_CLI_SCRIPT = '''
import sys
from kschedfw import Status, hookimpl
from kschedfw.framework import registry
from kschedfw.cli.main import main

MODE = sys.argv[1]

class Bad:
    name = "Bad"

    def __init__(self, args, handle):
        pass

    @hookimpl
    def filter(self, state, pod, node_info):
        if MODE == "raise":
            raise ValueError("broken on " + node_info.name)
        return "no" if MODE == "no" else None

    @hookimpl
    def score(self, state, pod, node_info):
        return {"high": "high", "none": None, "float": 99.9}.get(MODE, 0)

    @hookimpl
    def events_to_register(self):
        return []

discover = registry.default_registry

def with_bad():
    reg = discover()
    reg.add_class(Bad)
    return reg

registry.default_registry = with_bad
sys.exit(main(sys.argv[2:]))
'''

_CONFIG = """\
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  plugins:
    filter:
      enabled: [{name: Bad}]
    score:
      enabled: [{name: Bad}]
"""


def _cluster(tmp_path):
    items = [{"apiVersion": "v1", "kind": "Node", "metadata": {"name": f"n{i}"},
              "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}} for i in range(3)]
    items += [{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"p{i}", "namespace": "default"},
               "spec": {"containers": [{"name": "c", "image": "busybox"}]}} for i in range(4)]
    import yaml
    path = tmp_path / "cluster.yaml"
    path.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": items}))
    config = tmp_path / "config.yaml"
    config.write_text(_CONFIG)
    return str(path), str(config)


def _cli(tmp_path, *args):
    import os
    import pathlib
    import subprocess
    import sys
    root = pathlib.Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": str(root)}
    return subprocess.run([sys.executable, "-c", _CLI_SCRIPT, *args], capture_output=True, text=True,
                          env=env, timeout=120)


@pytest.mark.parametrize("mode, fault", [
    ("no", 'plugin "Bad" Filter returned str \'no\'; want Status or None'),
    ("high", 'plugin "Bad" Score returned str \'high\'; want int or (int, Status | None)'),
    ("none", 'plugin "Bad" Score returned None; want int or (int, Status | None)'),
    ("float", 'plugin "Bad" Score returned float 99.9; want int or (int, Status | None)'),
])
def test_cli_names_the_plugin_and_value_once_on_stderr_without_traceback(tmp_path, mode, fault):
    """A plugin returning the wrong type fails each pod's cycle with an Error naming it: logged
    once (no traceback, not once per cycle), every pod's reason, and exit status 1, as for any
    pod whose last attempt ended in a SchedulerError."""
    cluster, config = _cluster(tmp_path)
    done = _cli(tmp_path, mode, "simulate", cluster, "--config", config)
    assert done.returncode == 1, done.stderr
    assert done.stdout.count(fault) == 4  # every pod's reason
    assert "Traceback" not in done.stderr
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert lines == [f"{fault} (logged once; later occurrences are only counted)",
                     "kschedfw simulate: 4 pods failed with an error (SchedulerError), not for want of a "
                     "node: default/p0, default/p1, default/p2, ...; exit status 1"]


def test_debug_shows_the_first_traceback_once(tmp_path):
    cluster, config = _cluster(tmp_path)
    done = _cli(tmp_path, "raise", "--debug", "simulate", cluster, "--config", config)
    assert done.returncode in (0, 1), done.stderr
    assert done.stderr.count("Traceback") == 1
    assert "ValueError: broken on n" in done.stderr
    done = _cli(tmp_path, "raise", "simulate", "--debug", cluster, "--config", config)
    assert done.stderr.count("Traceback") == 1


def test_scheduler_lists_plugin_faults_with_counts(node, pod):
    result = _run(node, pod, "filter", "no")
    (line,) = result.scheduler.plugin_faults()
    assert line.startswith('default-scheduler: plugin "Bad" Filter: returned str (') and line.endswith(" times)")
