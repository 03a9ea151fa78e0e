"""`kschedfw run --dry-run` output: simulate's table columns and JSON pod fields, one decision a line."""

from __future__ import annotations

import io
import json

import pytest

from kschedfw.cluster.kube.decisions import Decision, DecisionPrinter

DECISIONS = [
    Decision("ns/a", "prof", "Bound", node="n1"),
    Decision("ns/b", "prof", "Pending", reason="Unschedulable", message="0/2 nodes are available: 2 Insufficient cpu.",
             nominated_node="n2"),
    Decision("ns/low", "default-scheduler", "Preempted", node="n2", reason="Preempted",
             message="Preempted by pod ns/b on node n2"),
]


def printed(output: str) -> list[str]:
    out = io.StringIO()
    printer = DecisionPrinter(output, out)
    for d in DECISIONS:
        printer(d)
    printer.summary()
    return out.getvalue().splitlines()


def test_json_lines_carry_simulates_pod_fields_then_a_summary():
    lines = [json.loads(line) for line in printed("json")]
    assert lines[1] == {"pod": "ns/b", "schedulerName": "prof", "status": "Pending", "node": "",
                        "reason": "Unschedulable", "message": "0/2 nodes are available: 2 Insufficient cpu.",
                        "nominatedNodeName": "n2"}
    assert lines[-1] == {"summary": {"default-scheduler": {"Preempted": 1}, "prof": {"Bound": 1, "Pending": 1}}}


def test_a_pending_decision_with_a_structured_reason_adds_it_to_the_json_line():
    reason = {"type": "NotAttempted"}
    line = Decision("ns/b", "prof", "Pending", message="not attempted yet", pending_reason=reason).as_json()
    assert line["pendingReason"] == reason and line["message"] == "not attempted yet"


def test_table_rows_use_simulates_columns_and_summary():
    lines = printed("table")
    assert lines[0].split() == ["POD", "SCHEDULER", "STATUS", "NODE", "REASON"]
    # nothing was written: a dry run's table says what would have been done
    assert lines[1].split() == ["ns/a", "prof", "would", "bind", "n1"]  # a bind needs no reason
    assert lines[2].split()[:7] == ["ns/b", "prof", "would", "stay", "pending", "(nominated", "n2)"]
    assert lines[2].endswith("0/2 nodes are available: 2 Insufficient cpu.")
    assert lines[3].split()[:6] == ["ns/low", "default-scheduler", "would", "be", "preempted", "n2"]
    assert lines[-2:] == ["default-scheduler: 1 would be preempted",
                          "prof: 1 would bind, 1 would stay pending"]


def test_unknown_format_is_refused():
    with pytest.raises(ValueError, match="unknown output format 'yaml'"):
        DecisionPrinter("yaml")
