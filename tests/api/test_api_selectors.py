import pytest

from kschedfw.api import (LabelSelector, LabelSelectorRequirement, NodeSelector,
                          NodeSelectorRequirement, NodeSelectorTerm, label_selector_matches,
                          parse_label_selector, parse_node_selector,
                          parse_preferred_scheduling_term)
from kschedfw.api.field import ManifestError

LABELS = {"app": "web", "tier": "front", "cores": "8"}


@pytest.mark.parametrize("selector, expected", [
    pytest.param({}, True, id="empty-matches-all"),
    pytest.param({"matchLabels": {"app": "web"}}, True, id="matchLabels"),
    pytest.param({"matchLabels": {"app": "db"}}, False, id="matchLabels-other-value"),
    pytest.param({"matchLabels": {"zone": "a"}}, False, id="matchLabels-missing-key"),
    pytest.param({"matchLabels": {"app": "web", "tier": "back"}}, False, id="matchLabels-all-needed"),
    pytest.param({"matchExpressions": [{"key": "app", "operator": "In", "values": ["db", "web"]}]},
                 True, id="In"),
    pytest.param({"matchExpressions": [{"key": "app", "operator": "In", "values": ["db"]}]},
                 False, id="In-no"),
    pytest.param({"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]},
                 False, id="In-missing-key"),
    pytest.param({"matchExpressions": [{"key": "app", "operator": "NotIn", "values": ["db"]}]},
                 True, id="NotIn"),
    pytest.param({"matchExpressions": [{"key": "app", "operator": "NotIn", "values": ["web"]}]},
                 False, id="NotIn-no"),
    pytest.param({"matchExpressions": [{"key": "zone", "operator": "NotIn", "values": ["a"]}]},
                 True, id="NotIn-missing-key"),
    pytest.param({"matchExpressions": [{"key": "tier", "operator": "Exists"}]}, True, id="Exists"),
    pytest.param({"matchExpressions": [{"key": "zone", "operator": "Exists"}]}, False,
                 id="Exists-no"),
    pytest.param({"matchExpressions": [{"key": "zone", "operator": "DoesNotExist"}]}, True,
                 id="DoesNotExist"),
    pytest.param({"matchExpressions": [{"key": "app", "operator": "DoesNotExist"}]}, False,
                 id="DoesNotExist-no"),
    pytest.param({"matchLabels": {"app": "web"},
                  "matchExpressions": [{"key": "tier", "operator": "NotIn", "values": ["front"]}]},
                 False, id="labels-and-expressions-AND"),
])
def test_label_selector(selector, expected):
    sel = parse_label_selector(selector, "spec.selector")
    assert sel.matches(LABELS) is expected
    assert label_selector_matches(sel, LABELS) is expected


def test_nil_selector_matches_nothing():
    assert parse_label_selector(None, "spec.selector") is None
    assert label_selector_matches(None, LABELS) is False
    assert label_selector_matches(None, {}) is False
    assert LabelSelector().matches({}) is True


def test_label_selector_roundtrip_dict():
    d = {"matchLabels": {"a": "b"}, "matchExpressions": [{"key": "k", "operator": "In", "values": ["v"]}]}
    assert parse_label_selector(d, "x").to_dict() == d
    assert parse_label_selector(d, "x") == LabelSelector(
        {"a": "b"}, (LabelSelectorRequirement("k", "In", ("v",)),))


@pytest.mark.parametrize("selector, field, fragment", [
    pytest.param({"matchExpressions": [{"key": "a", "operator": "Gt", "values": ["1"]}]},
                 "spec.selector.matchExpressions[0].operator", "Unsupported value: 'Gt'",
                 id="node-only-operator"),
    pytest.param({"matchExpressions": [{"key": "a", "operator": "in", "values": ["1"]}]},
                 "spec.selector.matchExpressions[0].operator", "Unsupported value", id="lowercase"),
    pytest.param({"matchExpressions": [{"key": "a", "operator": "In"}]},
                 "spec.selector.matchExpressions[0].values", "non-empty", id="In-without-values"),
    pytest.param({"matchExpressions": [{"key": "a", "operator": "Exists", "values": ["x"]}]},
                 "spec.selector.matchExpressions[0].values", "must be empty", id="Exists-with-values"),
    pytest.param({"matchExpressions": [{"operator": "Exists"}]},
                 "spec.selector.matchExpressions[0].key", "Required", id="missing-key"),
    pytest.param({"matchLabels": {"a": 1}}, "spec.selector.matchLabels.a", "must be strings",
                 id="non-string-label-value"),
    pytest.param({"matchExpressions": {"key": "a"}}, "spec.selector.matchExpressions",
                 "expected a list", id="expressions-not-a-list"),
    pytest.param(["app"], "spec.selector", "expected a mapping", id="not-a-mapping"),
])
def test_label_selector_errors(selector, field, fragment):
    with pytest.raises(ManifestError) as err:
        parse_label_selector(selector, "spec.selector")
    assert err.value.field == field
    assert fragment in str(err.value)


NODE_LABELS = {"zone": "a", "cores": "8", "disk": "ssd"}


def _req(key, op, *values):
    return {"key": key, "operator": op, **({"values": list(values)} if values else {})}


@pytest.mark.parametrize("term, name, expected", [
    pytest.param({"matchExpressions": [_req("zone", "In", "a", "b")]}, "n1", True, id="In"),
    pytest.param({"matchExpressions": [_req("zone", "In", "b")]}, "n1", False, id="In-no"),
    pytest.param({"matchExpressions": [_req("zone", "NotIn", "b")]}, "n1", True, id="NotIn"),
    pytest.param({"matchExpressions": [_req("gpu", "NotIn", "b")]}, "n1", True,
                 id="NotIn-missing-label"),
    pytest.param({"matchExpressions": [_req("disk", "Exists")]}, "n1", True, id="Exists"),
    pytest.param({"matchExpressions": [_req("gpu", "DoesNotExist")]}, "n1", True, id="DoesNotExist"),
    pytest.param({"matchExpressions": [_req("disk", "DoesNotExist")]}, "n1", False,
                 id="DoesNotExist-no"),
    pytest.param({"matchExpressions": [_req("cores", "Gt", "4")]}, "n1", True, id="Gt"),
    pytest.param({"matchExpressions": [_req("cores", "Gt", "8")]}, "n1", False, id="Gt-equal"),
    pytest.param({"matchExpressions": [_req("cores", "Lt", "16")]}, "n1", True, id="Lt"),
    pytest.param({"matchExpressions": [_req("cores", "Lt", "-1")]}, "n1", False, id="Lt-negative"),
    pytest.param({"matchExpressions": [_req("zone", "Gt", "1")]}, "n1", False,
                 id="Gt-label-not-integer"),
    pytest.param({"matchExpressions": [_req("cores", "Gt", "four")]}, "n1", False,
                 id="Gt-value-not-integer"),
    pytest.param({"matchExpressions": [_req("gpu", "Lt", "4")]}, "n1", False, id="Lt-missing-label"),
    pytest.param({"matchExpressions": [_req("zone", "In", "a"), _req("disk", "In", "hdd")]}, "n1",
                 False, id="expressions-AND"),
    pytest.param({"matchFields": [_req("metadata.name", "In", "n1")]}, "n1", True, id="field-In"),
    pytest.param({"matchFields": [_req("metadata.name", "In", "n2")]}, "n1", False,
                 id="field-In-other-node"),
    pytest.param({"matchFields": [_req("metadata.name", "NotIn", "n2")]}, "n1", True,
                 id="field-NotIn"),
    pytest.param({"matchExpressions": [_req("zone", "In", "a")],
                  "matchFields": [_req("metadata.name", "In", "n2")]}, "n1", False,
                 id="expressions-AND-fields"),
    pytest.param({}, "n1", False, id="empty-term-matches-nothing"),
    pytest.param({"matchExpressions": [], "matchFields": []}, "n1", False,
                 id="empty-lists-match-nothing"),
])
def test_node_selector_term(term, name, expected):
    sel = parse_node_selector({"nodeSelectorTerms": [term]}, "spec.affinity")
    assert sel.terms[0].matches(NODE_LABELS, name) is expected
    assert sel.matches(NODE_LABELS, name) is expected


def test_node_selector_is_or_of_terms():
    sel = parse_node_selector({"nodeSelectorTerms": [
        {"matchExpressions": [_req("zone", "In", "z")]},
        {"matchFields": [_req("metadata.name", "In", "n1")]},
    ]}, "x")
    assert sel.matches(NODE_LABELS, "n1")
    assert not sel.matches(NODE_LABELS, "n2")
    assert not NodeSelector().matches(NODE_LABELS, "n1")
    assert sel.terms[1].node_names() == frozenset({"n1"})
    assert sel.terms[0].node_names() is None


def test_node_selector_equality_and_dict():
    d = {"nodeSelectorTerms": [{"matchExpressions": [_req("zone", "In", "a")]}]}
    sel = parse_node_selector(d, "x")
    assert sel == NodeSelector((NodeSelectorTerm((NodeSelectorRequirement("zone", "In", ("a",)),)),))
    assert sel.to_dict() == d
    assert hash(sel.terms[0]) == hash(NodeSelectorTerm((NodeSelectorRequirement("zone", "In", ("a",)),)))


@pytest.mark.parametrize("selector, field, fragment", [
    pytest.param({"nodeSelectorTerms": [{"matchExpressions": [_req("a", "Matches", "x")]}]},
                 "x.nodeSelectorTerms[0].matchExpressions[0].operator", "Unsupported value: 'Matches'",
                 id="unknown-operator"),
    pytest.param({"nodeSelectorTerms": [{"matchExpressions": [_req("a", "Gt", "1", "2")]}]},
                 "x.nodeSelectorTerms[0].matchExpressions[0].values", "exactly one value",
                 id="Gt-two-values"),
    pytest.param({"nodeSelectorTerms": [{"matchFields": [_req("metadata.labels", "In", "x")]}]},
                 "x.nodeSelectorTerms[0].matchFields[0].key", "metadata.name", id="field-key"),
    pytest.param({"nodeSelectorTerms": [{"matchFields": [_req("metadata.name", "Exists")]}]},
                 "x.nodeSelectorTerms[0].matchFields[0].operator", "Unsupported", id="field-operator"),
    pytest.param({"nodeSelectorTerms": []}, "x.nodeSelectorTerms", "at least one", id="no-terms"),
    pytest.param({"nodeSelectorTerms": [["zone"]]}, "x.nodeSelectorTerms[0]", "expected a mapping",
                 id="term-not-mapping"),
])
def test_node_selector_errors(selector, field, fragment):
    with pytest.raises(ManifestError) as err:
        parse_node_selector(selector, "x")
    assert err.value.field == field
    assert fragment in str(err.value)


def test_preferred_scheduling_term():
    t = parse_preferred_scheduling_term(
        {"weight": 5, "preference": {"matchExpressions": [_req("zone", "In", "a")]}}, "p")
    assert t.weight == 5 and t.preference.matches(NODE_LABELS, "n")
    with pytest.raises(ManifestError) as err:
        parse_preferred_scheduling_term({"weight": 0, "preference": {}}, "p")
    assert err.value.field == "p.weight"
