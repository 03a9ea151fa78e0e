"""The trace file: what the writer streams, what the reader accepts, the cluster a trace starts
with, the fields dropped from recorded objects, and the decisions read from pod updates and
Events. Every line written validates against the shipped JSON Schema."""

from __future__ import annotations

import copy
import gzip
import json
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from kschedfw.cluster.kube.leanpod import POD_FIELDS
from kschedfw.trace.format import FORMAT_VERSION, NODE_STATUS_DROPPED, slim
from kschedfw.trace.inputs import snapshot_inputs, trace_inputs
from kschedfw.trace.reader import TraceError, initial_objects, read_lines
from kschedfw.trace.recorder import event_decision, pod_decisions
from kschedfw.trace.writer import TraceWriter

SCHEMA = json.loads((resources.files("kschedfw") / "trace/trace.schema.json").read_text())


def node(name: str, rv: str = "1", **status: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "resourceVersion": rv},
            "status": {"allocatable": {"cpu": "4", "pods": "110"}, **status}}


def pod(name: str, *, node_name: str = "", nominated: str = "", scheduled_at: str = "") -> dict[str, Any]:
    status: dict[str, Any] = {"phase": "Pending"}
    if nominated:
        status["nominatedNodeName"] = nominated
    if scheduled_at:
        status["conditions"] = [{"type": "PodScheduled", "status": "True", "lastTransitionTime": scheduled_at}]
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}"},
            "spec": {"schedulerName": "default-scheduler", "containers": [{"name": "c", "image": "i"}],
                     **({"nodeName": node_name} if node_name else {})},
            "status": status}


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        self.now += 0.5
        return self.now


def write_trace(path: Path, lines: list[dict[str, Any]]) -> TraceWriter:
    writer = TraceWriter(path, server="v1.36.2", resources=[{"apiVersion": "v1", "kind": "Node"}], clock=Clock())
    for line in lines:
        writer.write(line)
    writer.close()
    return writer


LINES = [
    {"type": "list", "object": node("a")},
    {"type": "list", "object": node("b")},
    {"type": "event", "event": "MODIFIED", "object": node("a", "2", phase="x")},
    {"type": "event", "event": "DELETED", "object": node("b")},
    {"type": "event", "event": "ADDED", "object": node("c")},
    {"type": "synced"},
    {"type": "event", "event": "ADDED", "object": node("d")},
    {"type": "event", "event": "DELETED", "object": node("a", "2")},
    {"type": "decision", "decision": "Bound", "pod": "default/p", "uid": "u", "scheduler": "default-scheduler",
     "node": "c", "at": 999.0},
]


def test_written_lines_read_back_in_order_with_times_between_a_header_and_an_end(tmp_path):
    """The header first (format version, server, resources), each line as written with a
    rising time, the end line counting what was listed, the events and the decisions."""
    path = tmp_path / "t.jsonl.gz"
    writer = write_trace(path, LINES)
    lines = list(read_lines(path))
    assert lines[0] == {"type": "header", "format_version": FORMAT_VERSION, "started": 1000.5,
                        "server": "v1.36.2", "resources": [{"apiVersion": "v1", "kind": "Node"}]}
    assert [{k: v for k, v in line.items() if k != "t"} for line in lines[1:-1]] == LINES
    times = [line["t"] for line in lines[1:]]
    assert times == sorted(times) and len(set(times)) == len(times)
    assert lines[-1]["type"] == "end" and lines[-1]["counts"] == {"listed": 2, "events": 5, "decisions": 1}
    assert writer.bytes_written == path.stat().st_size
    writer.write({"type": "synced"})  # after close: an informer still stopping
    assert len(list(read_lines(path))) == len(lines)


def test_every_line_written_validates_against_the_schema(tmp_path):
    path = tmp_path / "t.jsonl.gz"
    write_trace(path, [*LINES, {"type": "decision", "decision": "FailedScheduling", "pod": "default/p", "uid": "u",
                                "scheduler": "default-scheduler", "message": "0/1 nodes are available"}])
    for line in read_lines(path):
        jsonschema.validate(line, SCHEMA)


@pytest.mark.parametrize("line", [
    {"type": "list", "t": 1.0, "object": {"apiVersion": "v1", "kind": "Node",
                                          "metadata": {"name": "a", "managedFields": []}}},
    {"type": "event", "t": 1.0, "event": "BOOKMARK", "object": node("a")},
    {"type": "decision", "t": 1.0, "decision": "Bound", "pod": "default/p", "uid": "u", "scheduler": "s"},
    {"type": "decision", "t": 1.0, "decision": "FailedScheduling", "pod": "p", "uid": "u", "scheduler": "s",
     "message": "m"},
], ids=["managedFields kept", "a bookmark event", "a binding without its node", "a pod without namespace"])
def test_the_schema_refuses_lines_the_format_does_not_allow(line):
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(line, SCHEMA)


def test_the_initial_cluster_is_the_list_with_the_events_before_synced_applied(tmp_path):
    """a changed, b deleted, c added before synced; d and a's deletion after it do not count."""
    path = tmp_path / "t.jsonl.gz"
    write_trace(path, LINES)
    objects = initial_objects(read_lines(path))
    assert [(o["metadata"]["name"], o["metadata"]["resourceVersion"]) for o in objects] == [("a", "2"), ("c", "1")]
    inputs = trace_inputs(path)
    assert [o.name for o in inputs.objects] == ["a", "c"] and not inputs.malformed


def test_a_trace_without_synced_has_no_initial_cluster(tmp_path):
    path = tmp_path / "t.jsonl.gz"
    write_trace(path, LINES[:3])
    with pytest.raises(TraceError, match="no synced line"):
        initial_objects(read_lines(path))


def test_a_trace_cut_short_reads_to_its_last_whole_line(tmp_path):
    """A recorder killed mid-write leaves a gzip stream without its end: every whole line
    before the cut is read, no error."""
    path = tmp_path / "t.jsonl.gz"
    write_trace(path, LINES)
    data = path.read_bytes()
    cut = tmp_path / "cut.jsonl.gz"
    cut.write_bytes(data[:len(data) * 2 // 3])
    lines = list(read_lines(cut))
    assert lines[0]["type"] == "header" and 1 < len(lines) < len(LINES) + 2
    assert [{k: v for k, v in line.items() if k != "t"} for line in lines[1:]] == LINES[:len(lines) - 1]


@pytest.mark.parametrize("content,message", [
    (b"not gzip", "not gzip-compressed"),
    (gzip.compress(b'{"type": "list"}\n'), "no header line"),
    (gzip.compress(json.dumps({"type": "header", "format_version": FORMAT_VERSION + 1}).encode() + b"\n"),
     "newer than this kschedfw reads"),
    (gzip.compress(b'{"type": "header", "format_version": 1}\n{oops\n'), "not a JSON line"),
], ids=["not gzip", "no header", "newer version", "bad JSON"])
def test_what_is_not_a_readable_trace_says_why(tmp_path, content, message):
    path = tmp_path / "t.gz"
    path.write_bytes(content)
    with pytest.raises(TraceError, match=message):
        list(read_lines(path))


def test_slim_drops_what_the_scheduler_never_reads_and_leaves_the_input_alone():
    full = pod("p", node_name="n")
    full["metadata"]["managedFields"] = [{"manager": "kubectl"}]
    full["metadata"]["annotations"] = {"kubectl.kubernetes.io/last-applied-configuration": "{}", "keep": "me"}
    full["spec"]["containers"][0].update(command=["sleep"], env=[{"name": "A", "value": "1"}])
    full["spec"]["serviceAccountName"] = "default"
    full["status"]["containerStatuses"] = [{"name": "c"}]
    before = copy.deepcopy(full)
    lean = slim(full)
    assert full == before
    assert "managedFields" not in lean["metadata"] and lean["metadata"]["annotations"] == {"keep": "me"}
    assert lean["spec"]["containers"] == [{"name": "c", "image": "i"}]
    assert set(lean["spec"]) <= set(POD_FIELDS["spec"]) and "containerStatuses" not in lean["status"]
    assert lean["spec"]["nodeName"] == "n"

    kubelet = node("n", addresses=[{"type": "InternalIP"}], nodeInfo={"osImage": "x"}, daemonEndpoints={},
                   images=[{"names": ["i"], "sizeBytes": 1}], conditions=[{"type": "Ready", "status": "True"}])
    lean_node = slim(kubelet)
    assert not set(NODE_STATUS_DROPPED) & set(lean_node["status"])
    assert set(lean_node["status"]) == {"allocatable", "images", "conditions"}  # ImageLocality reads images
    other = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "x", "managedFields": []}}
    assert slim(other) == {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "x"}}


@pytest.mark.parametrize("old,new,expected", [
    (pod("p"), pod("p", node_name="n1", scheduled_at="2026-01-01T00:00:10Z"),
     [{"decision": "Bound", "node": "n1", "at": 1767225610.0}]),
    (pod("p"), pod("p", node_name="n1"), [{"decision": "Bound", "node": "n1"}]),
    (pod("p"), pod("p", nominated="n2"), [{"decision": "Nominated", "node": "n2"}]),
    (pod("p", nominated="n2"), pod("p", node_name="n2"), [{"decision": "Bound", "node": "n2"},
                                                          {"decision": "Nominated", "node": ""}]),
    (pod("p", node_name="n1"), pod("p", node_name="n1"), []),
    (None, pod("p", node_name="n1"), []),
], ids=["bound, at PodScheduled", "bound, no condition", "nominated", "bound on its nominated node",
        "no change", "created bound"])
def test_pod_updates_give_bindings_and_nomination_changes(old, new, expected):
    got = pod_decisions(old, new)
    assert [{k: v for k, v in d.items() if k in ("decision", "node", "at")} for d in got] == expected
    assert all(d["pod"] == "default/p" and d["uid"] == "uid-p" and d["scheduler"] == "default-scheduler"
               for d in got)


def test_a_failed_scheduling_event_is_a_decision_at_its_last_occurrence():
    event = {"regarding": {"kind": "Pod", "namespace": "ns", "name": "web", "uid": "u1"},
             "note": "0/3 nodes are available: 3 Insufficient cpu.", "reason": "FailedScheduling",
             "reportingController": "default-scheduler", "eventTime": "2026-01-01T00:00:00.000000Z",
             "series": {"count": 2, "lastObservedTime": "2026-01-01T00:01:00.000000Z"}}
    assert event_decision(event) == {"type": "decision", "decision": "FailedScheduling", "pod": "ns/web",
                                     "uid": "u1", "scheduler": "default-scheduler",
                                     "message": "0/3 nodes are available: 3 Insufficient cpu.",
                                     "at": 1767225660.0}


def test_the_informers_keep_objects_encoded_and_give_them_back_whole():
    """What the recorder's informers keep between events is the slimmed JSON, read back whole
    (a deleted object's last version is written from it), a pod's node and nomination beside it
    for the next update's decisions; of Events only FailedScheduling ones, as decisions."""
    from kschedfw.cluster.kube.resources import BY_KIND
    from kschedfw.trace.recorder import _recorded
    from kschedfw.trace.resources import EVENTS

    pod = {"metadata": {"name": "p", "namespace": "default", "uid": "uid-p", "resourceVersion": "7",
                        "managedFields": [{"manager": "kubectl"}]},
           "spec": {"nodeName": "n1", "containers": [{"name": "c", "image": "i"}]},
           "status": {"nominatedNodeName": "n2", "phase": "Pending"}}
    kept = _recorded(BY_KIND["Pod"], copy.deepcopy(pod))
    assert kept is not None and isinstance(kept.encoded, bytes)
    assert kept.raw == slim({"kind": "Pod", "apiVersion": "v1", **pod}) and "managedFields" not in kept.raw["metadata"]
    assert (kept.name, kept.namespace, kept.resource_version, kept.placement) == ("p", "default", "7", ("n1", "n2"))
    event = {"metadata": {"name": "e", "namespace": "ns", "resourceVersion": "3"}, "reason": "FailedScheduling",
             "regarding": {"kind": "Pod", "namespace": "ns", "name": "web", "uid": "u1"},
             "note": "0/3 nodes are available: 3 Insufficient cpu.", "reportingController": "default-scheduler"}
    recorded = _recorded(EVENTS, event)
    assert recorded is not None and event_decision(recorded.raw)["message"] == event["note"]
    assert _recorded(EVENTS, {**event, "reason": "Scheduled"}) is None


def test_snapshot_objects_that_cannot_be_read_are_malformed_and_the_others_used():
    bad = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "bad"}, "spec": {"taints": "oops"}}
    inputs = snapshot_inputs([node("a"), bad, pod("p")], "the cluster")
    assert [o.name for o in inputs.objects] == ["a", "p"]
    assert len(inputs.malformed) == 1 and inputs.located[0].source == "the cluster"
