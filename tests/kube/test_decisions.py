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


def test_table_rows_use_simulates_columns_and_summary():
    lines = printed("table")
    assert lines[0].split() == ["POD", "SCHEDULER", "STATUS", "NODE", "REASON"]
    assert lines[1].split() == ["ns/a", "prof", "Bound", "n1"]  # a bind needs no reason, as in simulate
    assert lines[2].split()[:5] == ["ns/b", "prof", "Pending", "(nominated", "n2)"]
    assert lines[2].endswith("0/2 nodes are available: 2 Insufficient cpu.")
    assert lines[-2:] == ["default-scheduler: 1 preempted", "prof: 1 bound, 1 pending"]


def test_unknown_format_is_refused():
    with pytest.raises(ValueError, match="unknown output format 'yaml'"):
        DecisionPrinter("yaml")
