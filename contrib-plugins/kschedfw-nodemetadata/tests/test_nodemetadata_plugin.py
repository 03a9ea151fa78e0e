"""NodeMetadata: upstream ``pkg/nodemetadata/node_metadata_test.go`` (TestCalculateScore,
TestValidateArgs, TestNormalizeScore, TestNewDefaultsTimestampFormat) and more edge cases."""

from __future__ import annotations

import datetime as dt
import time

import pytest

from kschedfw import testing as kit
from kschedfw import MAX_NODE_SCORE, MIN_NODE_SCORE, CycleState, NodeInfo, NodeScore
from kschedfw.api import parse_object
from kschedfw.clock import SimulatedClock
from kschedfw.framework.handle import Handle
from kschedfw.testing import framework_for

from kschedfw_nodemetadata import INVALID_SCORE, NodeMetadata, validate_args
from kschedfw_nodemetadata.gotime import RFC3339
from kschedfw_nodemetadata.plugin import MetadataError

HOUR = 3600
POD = parse_object({"kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
                    "spec": {"containers": [{"name": "c"}]}})


def args(key, source, kind, strategy, fmt=""):
    return {"metadataKey": key, "metadataSource": source, "metadataType": kind, "scoringStrategy": strategy,
            "timestampFormat": fmt}


def node(name, labels=None, annotations=None):
    return kit.make_node(name, labels=labels, annotations=annotations, hostname_label=False)


def ago(hours: float) -> str:
    """``time.Now().Add(-h).Format(time.RFC3339)``."""
    when = dt.datetime.now(dt.timezone.utc) - dt.timedelta(hours=hours)
    return when.strftime("%Y-%m-%dT%H:%M:%SZ")


# --------------------------------------------------------------------------- TestCalculateScore

@pytest.mark.parametrize("plugin_args, the_node, check", [
    pytest.param(args("priority", "Label", "Number", "Highest"), node("node1", {"priority": "100"}),
                 lambda s: s == 100, id="numeric label - highest strategy"),
    pytest.param(args("cost", "Label", "Number", "Lowest"), node("node1", {"cost": "50"}),
                 lambda s: s == -50, id="numeric label - lowest strategy"),
    pytest.param(args("last-update", "Annotation", "Timestamp", "Newest", RFC3339),
                 node("node1", annotations={"last-update": ago(1)}), lambda s: s < 0,
                 id="timestamp annotation - newest strategy"),
    pytest.param(args("nonexistent", "Label", "Number", "Highest"), node("node1", {"other": "10"}), None,
                 id="missing metadata key"),
    pytest.param(args("priority", "Label", "Number", "Highest"), node("node1", {"priority": "not-a-number"}), None,
                 id="invalid numeric value"),
    pytest.param(args("timestamp", "Annotation", "Timestamp", "Newest", RFC3339),
                 node("node1", annotations={"timestamp": "not-a-timestamp"}), None, id="invalid timestamp format"),
])
def test_calculate_score(plugin_args, the_node, check):
    plugin = NodeMetadata(plugin_args, Handle())
    if check is None:
        with pytest.raises(MetadataError):
            plugin.calculate_score(the_node)
    else:
        assert check(plugin.calculate_score(the_node))


# --------------------------------------------------------------------------- TestValidateArgs

@pytest.mark.parametrize("plugin_args, expected", [
    pytest.param(args("priority", "Label", "Number", "Highest"), [], id="valid numeric args"),
    pytest.param(args("timestamp", "Annotation", "Timestamp", "Newest", RFC3339), [], id="valid timestamp args"),
    pytest.param(args("", "Label", "Number", "Highest"),
                 ['metadataKey: Invalid value: "": metadataKey cannot be empty'], id="missing metadata key"),
    pytest.param(args("key", "Invalid", "Number", "Highest"),
                 ['metadataSource: Invalid value: "Invalid": metadataSource must be either "Label" or "Annotation"'],
                 id="invalid metadata source"),
    pytest.param(args("key", "Label", "Invalid", "Highest"),
                 ['metadataType: Invalid value: "Invalid": metadataType must be either "Number" or "Timestamp"'],
                 id="invalid metadata type"),
    pytest.param(args("timestamp", "Annotation", "Timestamp", "Newest"), [],
                 id="timestamp without format uses default validation path"),
    pytest.param(args("priority", "Label", "Number", "Newest"),
                 ['scoringStrategy: Invalid value: "Newest": scoringStrategy "Newest" and "Oldest" are only valid '
                  'for metadataType "Timestamp"'], id="numeric with timestamp strategy"),
    pytest.param(args("t", "Label", "Timestamp", "Lowest"),
                 ['scoringStrategy: Invalid value: "Lowest": scoringStrategy "Highest" and "Lowest" are only valid '
                  'for metadataType "Number"'], id="timestamp with numeric strategy"),
    pytest.param(args("k", "Label", "Number", "Best"),
                 ['scoringStrategy: Invalid value: "Best": scoringStrategy must be one of "Highest", "Lowest", '
                  '"Newest", or "Oldest"'], id="unknown strategy"),
    pytest.param({}, ['metadataKey: Invalid value: "": metadataKey cannot be empty',
                      'metadataSource: Invalid value: "": metadataSource must be either "Label" or "Annotation"',
                      'metadataType: Invalid value: "": metadataType must be either "Number" or "Timestamp"',
                      'scoringStrategy: Invalid value: "": scoringStrategy must be one of "Highest", "Lowest", '
                      '"Newest", or "Oldest"'], id="nothing set"),
])
def test_validate_args(plugin_args, expected):
    assert [str(e) for e in validate_args(plugin_args)] == expected
    if expected:
        with pytest.raises(ValueError, match="^invalid NodeMetadataArgs: "):
            NodeMetadata(plugin_args, Handle())


def test_new_defaults_timestamp_format():
    plugin = NodeMetadata(args("last-update", "Annotation", "Timestamp", "Newest"), Handle())
    assert plugin.timestamp_format == RFC3339
    assert NodeMetadata(args("p", "Label", "Number", "Highest"), Handle()).timestamp_format == ""


# --------------------------------------------------------------------------- TestNormalizeScore

def _normalize(plugin, nodes):
    scores = []
    for n in nodes:
        value = plugin.score(CycleState(), POD, NodeInfo(node=n))
        assert isinstance(value, int)
        scores.append(NodeScore(n.name, value))
    assert plugin.normalize_score(CycleState(), POD, scores) is None
    return scores


NORMALIZE_CASES = [
    pytest.param(args("priority", "Label", "Number", "Highest"),
                 [node("node-low", {"priority": "10"}), node("node-high", {"priority": "100"}),
                  node("node-medium", {"priority": "50"})],
                 ["node-high", "node-medium", "node-low"], None,
                 id="numeric labels - highest strategy with three nodes"),
    pytest.param(args("cost", "Label", "Number", "Lowest"),
                 [node("node-expensive", {"cost": "100"}), node("node-cheap", {"cost": "10"}),
                  node("node-medium", {"cost": "50"})],
                 ["node-cheap", "node-medium", "node-expensive"], None,
                 id="numeric labels - lowest strategy with three nodes"),
    pytest.param(args("last-update", "Annotation", "Timestamp", "Newest", RFC3339),
                 [node("node-old", annotations={"last-update": ago(72)}),
                  node("node-newest", annotations={"last-update": ago(1)}),
                  node("node-medium", annotations={"last-update": ago(24)})],
                 ["node-newest", "node-medium", "node-old"], None, id="timestamp annotations - newest strategy"),
    pytest.param(args("created-at", "Annotation", "Timestamp", "Oldest", RFC3339),
                 [node("node-newest", annotations={"created-at": ago(1)}),
                  node("node-oldest", annotations={"created-at": ago(72)}),
                  node("node-medium", annotations={"created-at": ago(24)})],
                 ["node-oldest", "node-medium", "node-newest"], None, id="timestamp annotations - oldest strategy"),
    pytest.param(args("tier", "Label", "Number", "Highest"),
                 [node("node-no-metadata-1"), node("node-with-metadata", {"tier": "100"}), node("node-no-metadata-2")],
                 ["node-with-metadata", "node-no-metadata-1", "node-no-metadata-2"], None,
                 id="highest strategy with one valid node and missing metadata nodes"),
    pytest.param(args("priority", "Label", "Number", "Highest"),
                 [node("node1", {"other": "value"}), node("node2", {"other": "value"})], None, MIN_NODE_SCORE,
                 id="all nodes missing metadata"),
    pytest.param(args("priority", "Label", "Number", "Highest"),
                 [node("node1", {"priority": "50"}), node("node2", {"priority": "50"}),
                  node("node3", {"priority": "50"})], None, MIN_NODE_SCORE + 1, id="all nodes with same value"),
    pytest.param(args("weight", "Annotation", "Number", "Lowest"),
                 [node("node-valid-high", annotations={"weight": "200"}),
                  node("node-valid-low", annotations={"weight": "100"}),
                  node("node-valid-medium", annotations={"weight": "150"}), node("node-missing")],
                 ["node-valid-low", "node-valid-medium", "node-valid-high", "node-missing"], None,
                 id="mixed - some with metadata, some without"),
]


@pytest.mark.parametrize("plugin_args, nodes, expected_order, expected_score", NORMALIZE_CASES)
def test_normalize_score(plugin_args, nodes, expected_order, expected_score):
    plugin = NodeMetadata(plugin_args, Handle())
    valid = {}
    for n in nodes:
        try:
            valid[n.name] = plugin.calculate_score(n)
        except MetadataError:
            pass
    scores = _normalize(plugin, nodes)
    if expected_score is not None:
        assert [s.score for s in scores] == [expected_score] * len(nodes)
        return
    ranked = sorted(scores, key=lambda s: -s.score)  # stable, as Go's sort.Slice on these inputs
    assert [s.name for s in ranked] == expected_order
    has_invalid = len(valid) < len(nodes)
    if len(set(valid.values())) > 1:
        assert ranked[0].score == MAX_NODE_SCORE
    if has_invalid:
        assert ranked[-1].score == MIN_NODE_SCORE
        assert all(s.name not in valid for s in scores if s.score == MIN_NODE_SCORE)
    else:
        assert ranked[-1].score == MIN_NODE_SCORE + 1


# --------------------------------------------------------------------------- beyond the upstream tables

def test_numbers_read_as_go_reads_them():
    plugin = NodeMetadata(args("v", "Label", "Number", "Highest"), Handle())
    for text, want in [("2.9", 2), ("-2.9", -2), ("1e3", 1000), ("0x1p4", 16), (".5", 0), ("+7", 7)]:
        assert plugin.calculate_score(node("n", {"v": text})) == want, text
    for text in ["1_000", " 1", "1 ", "0x10", "1e400", "+nan", "", "١"]:
        with pytest.raises(MetadataError):
            plugin.calculate_score(node("n", {"v": text}))
    # int64(NaN), int64(±Inf) are the smallest int64 on amd64, i.e. the invalid score
    for text in ["NaN", "inf", "-Infinity", "1e19"]:
        assert plugin.calculate_score(node("n", {"v": text})) == INVALID_SCORE, text
    lowest = NodeMetadata(args("v", "Label", "Number", "Lowest"), Handle())
    assert lowest.calculate_score(node("n", {"v": "inf"})) == INVALID_SCORE  # -MinInt64 wraps


def test_timestamps_measured_against_the_scheduler_clock():
    clock = SimulatedClock()
    plugin = NodeMetadata(args("t", "Annotation", "Timestamp", "Newest"), Handle(clock=clock))
    # the simulation epoch is 2026-01-01T00:00:00Z
    assert plugin.calculate_score(node("n", annotations={"t": "2025-12-31T23:00:00Z"})) == -HOUR
    clock.set(60.5)
    assert plugin.calculate_score(node("n", annotations={"t": "2025-12-31T23:00:00Z"})) == -(HOUR + 60)
    oldest = NodeMetadata(args("t", "Label", "Timestamp", "Oldest", "2006-01-02"), Handle(clock=SimulatedClock()))
    assert oldest.calculate_score(node("n", {"t": "2025-12-31"})) == 86400
    # a timestamp in the future has a negative age
    assert oldest.calculate_score(node("n", {"t": "2026-01-02"})) == -86400


def test_wall_clock_without_a_scheduler_clock():
    plugin = NodeMetadata(args("t", "Annotation", "Timestamp", "Oldest"), Handle())
    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() - 10 * HOUR))
    assert 10 * HOUR - 5 <= plugin.calculate_score(node("n", annotations={"t": stamp})) <= 10 * HOUR + 5


def test_custom_layouts():
    clock = SimulatedClock()
    cases = [
        ("2006-01-02 15:04:05", "2025-12-31 22:00:00", 2 * HOUR),
        ("02/01/2006 3:04PM", "31/12/2025 11:00PM", HOUR),
        ("Mon, 02 Jan 2006 15:04:05 -0700", "Wed, 31 Dec 2025 23:00:00 -0100", 0),
        ("Jan _2 2006", "Dec  1 2025", 31 * 86400),
        (RFC3339, "2025-12-31T23:59:59.75+00:00", 0),
    ]
    for layout, value, age in cases:
        plugin = NodeMetadata(args("t", "Label", "Timestamp", "Oldest", layout), Handle(clock=clock))
        assert plugin.calculate_score(node("n", {"t": value})) == age, (layout, value)
    plugin = NodeMetadata(args("t", "Label", "Timestamp", "Oldest", "2006-01-02"), Handle(clock=clock))
    for bad in ["2025-02-30", "2025-13-01", "25-01-01", "2025-01-01T00:00:00Z"]:
        with pytest.raises(MetadataError):
            plugin.calculate_score(node("n", {"t": bad}))


def test_in_a_framework():
    fwk = framework_for([NodeMetadata], args={"NodeMetadata": args("p", "Label", "Number", "Highest")},
                        weights={"NodeMetadata": 5})
    infos = [NodeInfo(node=node("a", {"p": "1"})), NodeInfo(node=node("b", {"p": "3"})), NodeInfo(node=node("c"))]
    results, status = fwk.run_score_plugins(CycleState(), POD, infos)
    assert status is None
    assert {r.name: r.total_score for r in results} == {"a": 5, "b": 500, "c": 0}
