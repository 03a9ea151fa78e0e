"""kube-scheduler-simulator's recorder files replay as traces: records become events at their
times, a pod update that sets its node is the recorded binding, a Delete that names only the
object deletes the one last recorded; no first verdict is compared (the file has none)."""

from __future__ import annotations

import json
from typing import Any

from kschedfw.cli.main import main

from tests.trace.builder import NAMESPACE, node, pod


def record(second: int, event: str, obj: dict[str, Any]) -> str:
    return json.dumps({"time": f"2026-01-02T03:04:{second:02d}.123456789+09:00", "event": event, "resource": obj})


def test_a_recorder_file_replays_with_its_bindings_compared(tmp_path, capsys):
    bare = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "a", "namespace": "default"}}
    lines = [record(0, "Add", NAMESPACE), record(0, "Add", node("n1", "2")), record(0, "Add", node("n2", "8")),
             record(1, "Add", pod("a", "1")), record(1, "Update", pod("a", "1", node_name="n2")),
             record(2, "Add", pod("b", "1")), record(2, "Update", pod("b", "1", node_name="n1")),
             record(3, "Delete", bare), record(4, "Add", pod("c", "7"))]
    path = tmp_path / "record.jsonl"
    path.write_text("\n".join(lines) + "\n")
    assert main(["simulate", "--replay", str(path), "-o", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    got = {p["pod"]: (p["status"], p["node"]) for p in report["pods"]}
    assert got == {"default/a": ("Deleted", "n2"), "default/b": ("Bound", "n2"), "default/c": ("Bound", "n2")}
    agreement = report["agreement"]
    assert (agreement["node"]["agreed"], agreement["node"]["compared"]) == (1, 2)  # b: recorded n1
    assert agreement["firstVerdict"]["compared"] == 0
    assert [d["pod"] for d in agreement["disagreements"]] == ["default/b"]
    path.write_text(lines[0] + "\n{broken\n")
    assert main(["simulate", "--replay", str(path)]) == 2
    assert f"{path}:2: not a JSON line" in capsys.readouterr().err
