"""Record while kube-scheduler v1.36.2 schedules a scripted workload (arrivals, a pod that waits
for a node, a deletion, a node drain, a preemption), then replay the trace: with kube-scheduler's
own configuration kschedfw agrees on every node choice that was not a score tie and on every
verdict; with another profile the replay ends as `simulate` of a Scenario built from the same
events. The nodes and pods are fenced off the shared server's other tests (a taint, a node
selector); only this test's pods are compared."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from kschedfw.cli.main import main
from kschedfw.testing.controlplane import ControlPlane
from kschedfw.trace.reader import initial_objects, read_lines

from tests.kube.helpers import pod_manifest
from tests.kube.test_record import Recording, kube_scheduler  # noqa: F401  (the fixture)

NODES = {"rp-a": "2", "rp-b": "3"}  # rp-c joins during the recording
HIGH = "replay-high"


def _fence(namespace: str) -> tuple[dict[str, str], dict[str, str]]:
    return {"kschedfw.test/replay": namespace}, {"key": "kschedfw.test/replay", "value": namespace,
                                                 "effect": "NoSchedule"}


def _pod(name: str, namespace: str, cpu: str, **spec: Any) -> dict[str, Any]:
    fence, taint = _fence(namespace)
    return pod_manifest(name, namespace, cpu=cpu, nodeSelector=fence, terminationGracePeriodSeconds=0,
                        tolerations=[{"key": taint["key"], "operator": "Equal", "value": namespace,
                                      "effect": "NoSchedule"}], **spec)


def _workload(cp: ControlPlane, namespace: str, rec: Recording) -> list[str]:
    """Returns the pods the drain evicted."""
    pods = f"/api/v1/namespaces/{namespace}/pods"
    fence, taint = _fence(namespace)

    def create(name: str, cpu: str, **spec: Any) -> None:
        cp.api("POST", pods, _pod(name, namespace, cpu, **spec))

    def decided(name: str, decision: str = "Bound") -> None:
        rec.wait_until(lambda line: line.get("decision") == decision and line["pod"] == f"{namespace}/{name}",
                       f"{decision} of {name}")

    for i, cpu in enumerate(("500m", "700m", "300m", "900m", "400m")):  # arrivals, one after another
        create(f"w{i}", cpu)
        decided(f"w{i}")
    create("wide", "2500m")  # fits no node until rp-c joins
    decided("wide", "FailedScheduling")
    cp.create_ready_node("rp-c", cpu="4", labels=fence, taints=[taint])
    decided("wide")
    cp.api("DELETE", f"{pods}/w1?gracePeriodSeconds=0")
    # drain rp-a: cordon it, evict what runs there, and the replacements go elsewhere
    cp.api("PATCH", "/api/v1/nodes/rp-a", {"spec": {"unschedulable": True}},
           content_type="application/merge-patch+json")
    listed = cp.api("GET", pods)["items"]
    drained = [p["metadata"]["name"] for p in listed if p["spec"].get("nodeName") == "rp-a"]
    for name in drained:
        cp.api("DELETE", f"{pods}/{name}?gracePeriodSeconds=0")
    for name in drained:
        create(f"{name}-again", "300m")
        decided(f"{name}-again")
    # fill what is left, then a high-priority pod that fits only by preempting
    create("filler", "1")
    decided("filler")
    create("urgent", "2", priorityClassName=HIGH)
    decided("urgent", "FailedScheduling")
    decided("urgent")
    return drained


def _record(cp: ControlPlane, namespace: str, trace: Path) -> list[str]:
    fence, taint = _fence(namespace)
    cp.api("POST", "/apis/scheduling.k8s.io/v1/priorityclasses",
           {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": HIGH}, "value": 1000})
    try:
        for name, cpu in NODES.items():
            cp.create_ready_node(name, cpu=cpu, labels=fence, taints=[taint])
        with Recording(cp, trace) as rec:
            return _workload(cp, namespace, rec)
    finally:
        for pod in cp.api("GET", f"/api/v1/namespaces/{namespace}/pods")["items"]:
            cp.api("DELETE", f"/api/v1/namespaces/{namespace}/pods/{pod['metadata']['name']}?gracePeriodSeconds=0")
        for name in (*NODES, "rp-c"):
            try:
                cp.api("DELETE", f"/api/v1/nodes/{name}")
            except Exception:
                pass
        cp.api("DELETE", f"/apis/scheduling.k8s.io/v1/priorityclasses/{HIGH}")


def _json(capsys: Any, argv: list[str]) -> dict[str, Any]:
    main(argv)
    out: dict[str, Any] = json.loads(capsys.readouterr().out)
    return out


def _outcomes(report: dict[str, Any], namespace: str) -> dict[str, tuple[str, str]]:
    return {p["pod"]: (p["status"], p["node"]) for p in report["pods"] if p["pod"].startswith(namespace + "/")}


def _scenario(trace: Path, namespace: str) -> dict[str, Any]:
    """The same events as a Scenario: each pod created, each node created or changed, each pod
    deleted by a user (not the recorded scheduler's victims), at its time after the first list."""
    lines = list(read_lines(trace))
    synced = next(line["t"] for line in lines if line["type"] == "synced")
    after = lines[[line["type"] for line in lines].index("synced") + 1:]
    victims = {line["object"]["metadata"]["uid"] for line in after if line["type"] == "event"
               and any(c.get("reason") == "PreemptionByScheduler"
                       for c in (line["object"].get("status") or {}).get("conditions") or [])}
    steps: list[dict[str, Any]] = []
    for line in after:
        if line["type"] != "event":
            continue
        obj, at = line["object"], round(line["t"] - synced, 6)
        meta = obj["metadata"]
        if obj["kind"] == "Node" and meta["name"] in (*NODES, "rp-c"):
            if line["event"] == "DELETED":
                steps.append({"at": at, "delete": {"kind": "Node", "name": meta["name"]}})
            else:
                steps.append({"at": at, ("create" if line["event"] == "ADDED" else "update"): obj})
        elif obj["kind"] == "Pod" and meta.get("namespace") == namespace:
            if line["event"] == "ADDED":
                steps.append({"at": at, "create": obj})
            elif line["event"] == "DELETED" and meta["uid"] not in victims:
                steps.append({"at": at, "delete": {"kind": "Pod", "namespace": namespace, "name": meta["name"]}})
    return {"kind": "Scenario", "steps": steps}


def test_a_replay_agrees_with_the_recorded_kube_scheduler_and_a_what_if_matches_its_scenario(
        control_plane, namespace, kube_scheduler, tmp_path, capsys):  # noqa: F811
    trace = tmp_path / "trace.jsonl.gz"
    drained = _record(control_plane, namespace, trace)
    report = _json(capsys, ["simulate", "--replay", str(trace), "-o", "json"])
    ours = [p for p in report["agreement"]["pods"] if p["pod"].startswith(namespace + "/")]
    assert drained and len(ours) == 8 + len(drained)
    for entry in ours:  # every verdict
        assert entry["kschedfw"]["verdict"] == entry["recorded"]["verdict"], entry
        assert bool(entry["kschedfw"]["node"]) == bool(entry["recorded"]["node"]), entry
    disagreements = [d for d in report["agreement"]["disagreements"] if d["pod"].startswith(namespace + "/")]
    # not one: the recorded node taken where it tied kschedfw's best, and the same elsewhere
    assert disagreements == [], json.dumps(disagreements, indent=1)
    outcomes = _outcomes(report, namespace)
    assert outcomes[f"{namespace}/urgent"][0] == "Bound"
    assert any(status == "Preempted" for status, _ in outcomes.values())
    assert outcomes[f"{namespace}/w1"][0] == "Deleted" and outcomes[f"{namespace}/wide"][1] == "rp-c"

    # another profile: the replay is the simulation of a Scenario of the same events
    config = tmp_path / "most.yaml"
    config.write_text(yaml.safe_dump({
        "apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
        "profiles": [{"schedulerName": "default-scheduler", "pluginConfig": [
            {"name": "NodeResourcesFit", "args": {"scoringStrategy": {"type": "MostAllocated"}}}]}]}))
    cluster = tmp_path / "cluster.json"
    cluster.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": initial_objects(read_lines(trace))}))
    scenario = tmp_path / "scenario.yaml"
    scenario.write_text(yaml.safe_dump(_scenario(trace, namespace)))
    replayed = _json(capsys, ["simulate", "--replay", str(trace), "-c", str(config), "-o", "json", "--ties", "name"])
    simulated = _json(capsys, ["simulate", str(cluster), str(scenario), "-c", str(config), "-o", "json",
                               "--ties", "name"])
    assert _outcomes(replayed, namespace) == _outcomes(simulated, namespace)
    assert len(_outcomes(replayed, namespace)) == 8 + len(drained)
