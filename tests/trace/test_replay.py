"""`simulate --replay`: a trace's first list is the starting cluster, its events come at their
recorded times, kschedfw makes its own bindings and preemptions, and the report says how often
they agreed with the recorded scheduler's."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest

from kschedfw.cli.main import main
from kschedfw.trace.reader import TraceError
from kschedfw.trace.replay import load_replay, parse_instant

from tests.trace.builder import NAMESPACE, binding, event, failed, listed, node, pod, write


def replay(capsys: Any, path: Path, *args: str) -> tuple[int, dict[str, Any]]:
    code = main(["simulate", "--replay", str(path), "-o", "json", *args])
    return code, json.loads(capsys.readouterr().out)


def placements(report: dict[str, Any]) -> dict[str, tuple[str, str]]:
    return {p["pod"]: (p["status"], p["node"]) for p in report["pods"]}


def test_recorded_bindings_and_status_updates_do_not_overwrite_kschedfws_own(tmp_path, capsys):
    """The recorded scheduler put a on n1; kschedfw (LeastAllocated) puts it on the emptier n2, and
    the recorded binding and kubelet update after it leave it there: a disagreement, listed with
    both decisions and the scores that made kschedfw's choice."""
    trace = write(tmp_path / "t.gz", [*listed(NAMESPACE, node("n1", "2"), node("n2", "8")),
                                      event("ADDED", pod("a", "1")), *binding("a", "n1", "1")])
    code, report = replay(capsys, trace)
    assert code == 0
    assert placements(report) == {"default/a": ("Bound", "n2")}
    agreement = report["agreement"]
    assert agreement["node"] == {"agreed": 0, "compared": 1, "ties": 0, "tiesFollowed": 0,
                                 "percent": 0.0}
    assert agreement["firstVerdict"]["percent"] == 100.0 and agreement["scheduled"]["percent"] == 100.0
    [d] = agreement["disagreements"]
    assert (d["pod"], d["measure"], d["recorded"], d["kschedfw"]) == ("default/a", "node", "Bound n1", "Bound n2")
    assert d["detail"].startswith("n1 total score ")


def test_a_replay_that_matches_agrees_on_every_node_and_verdict(tmp_path, capsys):
    """A pod too big for every node fails (recorded FailedScheduling, kschedfw unschedulable), then
    fits once a node grows at its recorded time; the other pod fits the only node with room;
    one is deleted, the other runs on. Text and JSON carry the agreement."""
    grown = node("n2", "16", rv="2")
    trace = write(tmp_path / "t.gz", [
        *listed(NAMESPACE, node("n1", "2"), node("n2", "4")),
        event("ADDED", pod("big", "8")), failed("big", "0/2 nodes are available: 2 Insufficient cpu."),
        event("ADDED", pod("small", "3")), *binding("small", "n2", "3"),
        event("MODIFIED", grown), *binding("big", "n2", "8"),
        event("DELETED", pod("small", "3", node_name="n2", phase="Running")),
    ])
    code, report = replay(capsys, trace)
    assert code == 0
    assert placements(report) == {"default/big": ("Bound", "n2"), "default/small": ("Deleted", "n2")}
    agreement = report["agreement"]
    assert [agreement[m]["percent"] for m in ("node", "firstVerdict", "scheduled")] == [100.0] * 3
    assert agreement["node"]["compared"] == 2 and agreement["disagreements"] == []
    pods = {p["pod"]: p for p in agreement["pods"]}
    assert pods["default/big"]["recorded"] == {"verdict": "unschedulable", "node": "n2"}
    assert pods["default/big"]["kschedfw"] == {"verdict": "unschedulable", "node": "n2"}
    assert main(["simulate", "--replay", str(trace)]) == 0
    out = capsys.readouterr().out
    assert "agreement with the recorded scheduler: node 2/2 (100%), first verdict 2/2 (100%)" in out


def test_a_node_choice_among_equal_best_scores_follows_the_recorded_one_or_is_a_tie(tmp_path, capsys):
    """Two identical nodes, each pod deleted before the next: the recorded scheduler's seed picked
    among equals, and the replay takes its pick; with --ties name kschedfw picks n1 each time, and
    the recorded n2 counts as a tie, not a disagreement."""
    lines = [*listed(NAMESPACE, node("n1"), node("n2"))]
    for i in range(6):
        lines += [event("ADDED", pod(f"p{i}")), *binding(f"p{i}", "n1" if i % 2 else "n2"),
                  event("DELETED", pod(f"p{i}", node_name="n1" if i % 2 else "n2"))]
    trace = write(tmp_path / "t.gz", lines)
    code, report = replay(capsys, trace)
    assert report["agreement"]["node"] == {"agreed": 6, "compared": 6, "ties": 0, "tiesFollowed": 6,
                                           "percent": 100.0}
    assert {p["node"] for p in report["pods"]} == {"n1", "n2"}
    code, report = replay(capsys, trace, "--ties", "name")
    assert report["agreement"]["node"] == {"agreed": 3, "compared": 3, "ties": 3, "tiesFollowed": 3,
                                           "percent": 100.0}
    assert {p["node"] for p in report["pods"]} == {"n1"} and report["agreement"]["disagreements"] == []


HIGH = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "high"}, "value": 1000}


def test_the_recorded_schedulers_preemption_is_not_replayed_but_a_users_deletion_is(tmp_path, capsys):
    """low is the recorded scheduler's victim (its DisruptionTarget condition names it): the replay
    drops that deletion and kschedfw preempts on its own; other's deletion by a user is applied."""
    victim_condition = {"conditions": [{
        "type": "DisruptionTarget", "status": "True", "reason": "PreemptionByScheduler",
        "message": "default-scheduler: preempting to accommodate a higher priority pod"}]}
    trace = write(tmp_path / "t.gz", [
        *listed(NAMESPACE, HIGH, node("n1", "2")),
        event("ADDED", pod("low", "1500m")), *binding("low", "n1", "1500m"),
        event("ADDED", pod("other", "100m")), *binding("other", "n1"),
        event("DELETED", pod("other", node_name="n1", phase="Running")),
        event("ADDED", pod("high", "1500m", priority=1000, priorityClassName="high")),
        failed("high", "0/1 nodes are available: 1 Insufficient cpu."),
        event("MODIFIED", pod("low", "1500m", node_name="n1", phase="Running", status=victim_condition)),
        event("DELETED", pod("low", "1500m", node_name="n1", phase="Running", status=victim_condition)),
        *binding("high", "n1", "1500m", priority=1000, priorityClassName="high"),
    ])
    code, report = replay(capsys, trace)
    assert code == 0
    got = {p["pod"]: p for p in report["pods"]}
    assert got["default/low"]["status"] == "Preempted" and got["default/low"]["deletedBy"] == "default/high"
    assert got["default/other"]["status"] == "Deleted" and got["default/other"]["deletedBy"].startswith("trace line ")
    assert (got["default/high"]["status"], got["default/high"]["node"]) == ("Bound", "n1")
    assert report["agreement"]["firstVerdict"] == {"agreed": 3, "compared": 3, "ties": 0, "tiesFollowed": 0,
                                                      "percent": 100.0}


def test_pods_of_a_scheduler_the_replay_has_no_profile_for_keep_their_recorded_binding(tmp_path, capsys):
    trace = write(tmp_path / "t.gz", [*listed(NAMESPACE, node("n1"), node("n2")),
                                      event("ADDED", pod("theirs", scheduler="other-scheduler")),
                                      event("MODIFIED", pod("theirs", scheduler="other-scheduler", node_name="n1"))])
    code, report = replay(capsys, trace)
    assert placements(report) == {"default/theirs": ("Running", "n1")}
    assert report["agreement"]["scheduled"]["compared"] == 0  # not kschedfw's to decide


def test_a_window_starts_from_the_cluster_as_it_was_then(tmp_path, capsys):
    """--from 3s: the pod bound before it is part of the starting cluster (Running, not compared);
    --until ends the replay before the last pod arrives."""
    lines = [*listed(NAMESPACE, node("n1")), event("ADDED", pod("early")), *binding("early", "n1"),
             event("ADDED", pod("mid")), *binding("mid", "n1"), event("ADDED", pod("late"))]
    trace = write(tmp_path / "t.gz", lines)  # synced at 1002.0; early's binding 1003.0, mid added 1004.0
    code, report = replay(capsys, trace, "--from", "2.5s", "--until", "4s")
    assert placements(report) == {"default/early": ("Running", "n1"), "default/mid": ("Bound", "n1")}
    assert [p["pod"] for p in report["agreement"]["pods"]] == ["default/mid"]
    assert parse_instant("2026-01-02T03:04:05Z", "--from") == ("at", 1767323045.0)
    with pytest.raises(ValueError, match="--until 'soon'"):
        parse_instant("soon", "--until")


def test_a_broken_trace_is_refused_with_its_file_and_line(tmp_path, capsys):
    good = write(tmp_path / "good.gz", [*listed(NAMESPACE, node("n1"))])
    lines = gzip.open(good).read().splitlines()
    broken = tmp_path / "broken.gz"
    broken.write_bytes(gzip.compress(b"\n".join([*lines[:2], b"{not json", *lines[2:]]) + b"\n"))
    assert main(["simulate", "--replay", str(broken)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"kschedfw simulate: {broken}:3: not a JSON line") and "Traceback" not in err
    newer = tmp_path / "newer.gz"
    newer.write_bytes(gzip.compress(lines[0].replace(b'"format_version":1', b'"format_version":9') + b"\n"))
    assert main(["simulate", "--replay", str(newer)]) == 2
    assert f"{newer}:1: trace format version 9 is newer" in capsys.readouterr().err
    assert main(["simulate", "--replay", str(good), str(good)]) == 2
    assert "give one of CLUSTER files, --kubeconfig or --replay" in capsys.readouterr().err
    assert main(["simulate", "--from", "1s"]) == 2
    with pytest.raises(TraceError, match="without an object"):
        load_replay(write(tmp_path / "bad.gz", [{"type": "list", "object": "x"}, {"type": "synced"}]))


MOST_ALLOCATED = """\
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  pluginConfig:
  - name: NodeResourcesFit
    args: {scoringStrategy: {type: MostAllocated}}
"""


def test_diff_replays_the_trace_on_both_sides_and_says_how_each_agreed(tmp_path, capsys):
    """The recorded scheduler bin-packed (a on the fuller n1): MostAllocated (B) reproduces it,
    the default LeastAllocated (A) moves a to n2; the diff and each side's agreement say so."""
    config = tmp_path / "most.yaml"
    config.write_text(MOST_ALLOCATED)
    trace = write(tmp_path / "t.gz", [*listed(NAMESPACE, node("n1", "2"), node("n2", "8")),
                                      event("ADDED", pod("a", "1")), *binding("a", "n1", "1")])
    assert main(["diff", "--replay", str(trace), "-c", "", "-c", str(config), "-o", "json"]) == 1
    report = json.loads(capsys.readouterr().out)
    [change] = report["changes"]
    assert (change["pod"], change["a"]["node"], change["b"]["node"]) == ("default/a", "n2", "n1")
    assert report["agreement"]["a"]["node"]["agreed"] == 0 and report["agreement"]["b"]["node"]["agreed"] == 1
    assert main(["diff", "--replay", str(trace), "-c", "", "-c", str(config)]) == 1
    out = capsys.readouterr().out
    assert "A agreement with the recorded scheduler: node 0/1 (0%)" in out
    assert "B agreement with the recorded scheduler: node 1/1 (100%)" in out
