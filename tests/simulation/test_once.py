"""`Simulation(once=True)` (`kschedfw simulate --once`): each pending pod gets exactly one attempt."""

from __future__ import annotations

import json

from kschedfw.cli.main import main
from kschedfw.cluster.inputs.scenario import Step
from kschedfw.config.validate import default_config
from kschedfw.framework.registry import default_registry
from kschedfw.simulation import Simulation
from kschedfw.testing import make_node, make_pod

INSUFFICIENT_CPU = ("0/1 nodes are available: 1 Insufficient cpu. no new claims to deallocate, "
                    "preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod.")


def objects():
    """``big`` does not fit beside ``busy`` (which came bound); ``small``, queued after it, does.
    At 10 s ``busy`` is deleted, which would make room for ``big``."""
    return [make_node("n1", cpu="2", memory="4Gi"),
            make_pod("busy", cpu="1500m", node_name="n1"),
            make_pod("big", cpu="1"), make_pod("small", cpu="250m")]


DELETE_BUSY = Step(10, "delete", target={"kind": "Pod", "name": "busy"})


def simulate(once):
    registry = default_registry()
    return Simulation(default_config(registry), registry, objects(), [DELETE_BUSY], once=once).run()


def attempts_of(result, key):
    return [a.result for a in result.scheduler.attempts if a.pod == key and a.result != "Assumed"]


def test_a_pod_that_does_not_fit_is_attempted_once_and_reported_pending():
    result = simulate(once=True)
    outcomes = {p.key: p for p in result.pods}
    big = outcomes["default/big"]
    assert (big.status, big.reason, big.message) == ("Pending", "Unschedulable", INSUFFICIENT_CPU)
    assert outcomes["default/small"].status == "Bound" and outcomes["default/small"].node == "n1"
    # the room made at 10 s does not bring it back
    assert attempts_of(result, "default/big") == ["Unschedulable"]
    assert result.summary()["total"] == {"Bound": 1, "Pending": 1, "Deleted": 1}  # busy, by the step
    assert result.scheduler.queue.pending_pods() == {"active": 0, "backoff": 0, "unschedulable": 1, "gated": 0}


def test_without_once_the_same_pod_is_retried_and_bound():
    result = simulate(once=False)
    outcomes = {p.key: p for p in result.pods}
    assert outcomes["default/big"].status == "Bound"
    assert attempts_of(result, "default/big") == ["Unschedulable", "Scheduled"]


def test_a_set_aside_pod_that_is_deleted_is_gone_from_the_queue():
    registry = default_registry()
    steps = [Step(10, "delete", target={"kind": "Pod", "name": "big"})]
    result = Simulation(default_config(registry), registry, objects(), steps, once=True).run()
    big = {p.key: p for p in result.pods}["default/big"]  # reported, as deleted
    assert (big.status, big.node, big.deleted_by) == ("Deleted", "", "scenario step at 10s")
    assert result.scheduler.queue.pending_pods()["unschedulable"] == 0


def test_cli_once(capsys, tmp_path):
    path = tmp_path / "cluster.yaml"
    path.write_text("""\
apiVersion: v1
kind: List
items:
- {apiVersion: v1, kind: Node, metadata: {name: n1}, status: {allocatable: {cpu: "2", memory: 4Gi, pods: "110"}}}
- apiVersion: v1
  kind: Pod
  metadata: {name: big, namespace: default}
  spec: {containers: [{name: c, image: x, resources: {requests: {cpu: "3"}}}]}
- apiVersion: v1
  kind: Pod
  metadata: {name: small, namespace: default}
  spec: {containers: [{name: c, image: x, resources: {requests: {cpu: "1"}}}]}
""")
    assert main(["simulate", str(path), "--once", "-o", "json"]) == 0
    pods = {p["pod"]: p for p in json.loads(capsys.readouterr().out)["pods"]}
    assert pods["default/big"]["status"] == "Pending"
    assert pods["default/big"]["message"].startswith("0/1 nodes are available: 1 Insufficient cpu.")
    assert pods["default/small"]["status"] == "Bound"
    # explain says the pod is not retried instead of naming the events that would retry it
    assert main(["simulate", str(path), "--once", "--explain", "default/big"]) == 0
    text = capsys.readouterr().out
    assert "not retried: one attempt per pod (--once)" in text
    assert "would be retried" not in text
    assert main(["simulate", str(path), "--explain", "default/big"]) == 0
    assert "would be retried on NodeResourcesFit" in capsys.readouterr().out
