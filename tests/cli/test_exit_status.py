"""The exit status says what happened: a pod whose last attempt failed with an error (upstream's
PodScheduled reason SchedulerError, a Status of code Error) fails the run; a pod no node fits
(reason Unschedulable) does not."""

from __future__ import annotations

import io
import json

import pytest

from kschedfw import hookimpl
from kschedfw.cli.main import main
from kschedfw.cluster.kube.decisions import Decision, DecisionPrinter
from kschedfw.scheduler.pending_reason import message_of
from tests.scheduler.plugins import FailingPreBind

CLUSTER = """\
apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Node
  metadata: {name: n1}
  status: {allocatable: {cpu: "2", memory: 4Gi, pods: "110"}}
- apiVersion: v1
  kind: Node
  metadata: {name: n2}
  status: {allocatable: {cpu: "2", memory: 4Gi, pods: "110"}}
- apiVersion: v1
  kind: Pod
  metadata: {name: web, namespace: default}
  spec: {containers: [{name: c, image: x}]}
- apiVersion: v1
  kind: Pod
  metadata: {name: huge, namespace: default}
  spec: {containers: [{name: c, image: x, resources: {requests: {cpu: "8"}}}]}
"""


class ExplodingScore:
    """Raises in every Score call: every cycle that reaches Score fails with an error."""

    name = "ExplodingScore"

    def __init__(self, args, handle):
        pass

    @hookimpl
    def score(self, state, pod, node_info):
        raise RuntimeError("kaboom")


def config_enabling(tmp_path, point: str, plugin: str) -> str:
    path = tmp_path / f"{plugin}.yaml"
    path.write_text("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
                    "profiles:\n- schedulerName: default-scheduler\n  plugins:\n"
                    f"    {point}:\n      enabled: [{{name: {plugin}}}]\n")
    return str(path)


@pytest.fixture(autouse=True)
def out_of_tree_plugins(monkeypatch):
    from kschedfw.framework import registry as registry_module

    def with_test_plugins():
        registry = registry_module.Registry.discover()
        registry.add_class(ExplodingScore)
        registry.add_class(FailingPreBind)
        return registry

    monkeypatch.setattr(registry_module, "default_registry", with_test_plugins)


@pytest.fixture
def cluster(tmp_path):
    path = tmp_path / "cluster.yaml"
    path.write_text(CLUSTER)
    return str(path)


def run(capsys, *args):
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_a_plugin_that_raises_in_every_cycle_exits_1_naming_it(capsys, tmp_path, cluster):
    """Upstream handleSchedulingFailure: a Status that is not Unschedulable sets PodScheduled
    False with reason SchedulerError; the run reports it and fails (exit 1, as for rejected
    objects), while the pod no node fits stays a plain Pending."""
    config = config_enabling(tmp_path, "score", "ExplodingScore")
    code, out, err = run(capsys, "simulate", cluster, "-c", config)
    assert code == 1
    rows = {line.split()[0]: line for line in out.splitlines() if line.startswith("default/")}
    assert rows["default/web"].split()[2] == "Pending"
    assert rows["default/web"].endswith('SchedulerError: running Score plugins: plugin "ExplodingScore" '
                                        "failed with: RuntimeError: kaboom")
    assert "SchedulerError" not in rows["default/huge"] and "Insufficient cpu" in rows["default/huge"]
    assert ("kschedfw simulate: 1 pod failed with an error (SchedulerError), not for want of a node: "
            "default/web; exit status 1") in err
    assert "Traceback" not in err

    code, out, err = run(capsys, "simulate", cluster, "-c", config, "-o", "json")
    assert code == 1
    pods = {p["pod"]: p for p in json.loads(out)["pods"]}
    assert (pods["default/web"]["status"], pods["default/web"]["reason"]) == ("Pending", "SchedulerError")
    assert "ExplodingScore" in pods["default/web"]["message"]
    assert (pods["default/huge"]["status"], pods["default/huge"]["reason"]) == ("Pending", "Unschedulable")
    # the structured reason names the plugin and the error, and gives the message back
    web = pods["default/web"]["pendingReason"]
    assert (web["type"], web["code"], web["plugin"]) == ("SchedulerError", "Error", "ExplodingScore")
    assert message_of(web) == pods["default/web"]["message"]
    assert pods["default/huge"]["pendingReason"]["type"] == "Unschedulable"


def test_an_error_status_from_prebind_fails_the_run_too(capsys, tmp_path, cluster):
    """A binding cycle that fails with an Error Status is a SchedulerError as well (no plugin
    fault involved: the plugin returned a valid Status)."""
    code, out, err = run(capsys, "simulate", cluster, "-c", config_enabling(tmp_path, "preBind", "FailingPreBind"),
                         "--once")
    assert code == 1
    assert "SchedulerError: " in out and "volume attach timed out" in out
    assert "1 pod failed with an error (SchedulerError)" in err


def test_merely_unschedulable_pods_exit_0(capsys, cluster):
    """Unschedulable is an answer, not an error: exit 0 as before."""
    code, out, err = run(capsys, "simulate", cluster)
    assert code == 0, err
    assert "failed with an error" not in err and "SchedulerError" not in out


def test_sweep_counts_a_run_whose_pods_failed_with_an_error_as_failed(capsys, tmp_path, cluster):
    """`sweep` exits 1 for the runs `simulate` exits 1 for: here no plugin raised, the PreBind
    returned an Error Status, and the row's error says which pods failed."""
    import csv
    out = tmp_path / "results.csv"
    code = main(["sweep", "--config", config_enabling(tmp_path, "preBind", "FailingPreBind"), "--cluster", cluster,
                 "--once", "--workers", "1", "-o", str(out)])
    err = capsys.readouterr().err
    assert code == 1, err
    (row,) = list(csv.DictReader(out.open()))
    assert "1 pod failed with an error (SchedulerError), not for want of a node: default/web" in row["error"]
    assert row["Pending"] == "2"


def test_dry_run_decisions_tell_errors_from_unschedulable_pods():
    """Shadow mode reports as simulate: the table leads the message with SchedulerError, and a
    pod whose latest decision is such a failure is what makes `run --dry-run` exit 1 (one bound
    after an earlier error is not)."""
    out = io.StringIO()
    printer = DecisionPrinter("table", out)
    error = "running Score plugins: plugin \"ExplodingScore\" failed with: RuntimeError: kaboom"
    printer(Decision("ns/a", "prof", "Pending", reason="SchedulerError", message=error))
    printer(Decision("ns/b", "prof", "Pending", reason="SchedulerError", message=error))
    printer(Decision("ns/c", "prof", "Pending", reason="Unschedulable", message="0/2 nodes are available"))
    printer(Decision("ns/b", "prof", "Bound", node="n1"))
    assert out.getvalue().splitlines()[1].endswith(f"SchedulerError: {error}")
    assert printer.failed_with_error() == ["ns/a"]
