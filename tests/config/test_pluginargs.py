"""In-tree plugin args: upstream's validation_pluginargs_test.go and v1 defaults_test.go tables.

Upstream compares (type, field) and ignores BadValue/Detail in most tables; so do the tables here,
and separate cases pin the exact texts of kube-scheduler's messages.
"""

from __future__ import annotations

import pytest

from kschedfw.config import jsonsubset
from kschedfw.api.field import format_path
from kschedfw.fwk.features import DEFAULT_FEATURE_GATES as FEATURE_GATES
from kschedfw.fwk.args import apply_defaults, default_args
from kschedfw.plugins.defaultpreemption_args import validate_default_preemption_args
from kschedfw.plugins.dynamicresources.args import default_dynamic_resources_args, validate_dynamic_resources_args
from kschedfw.plugins.interpodaffinity.args import validate_inter_pod_affinity_args
from kschedfw.plugins.nodeaffinity_args import validate_node_affinity_args
from kschedfw.plugins.noderesources.args import (validate_node_resources_balanced_allocation_args,
                                                 validate_node_resources_fit_args)
from kschedfw.plugins.podtopologyspread.args import validate_pod_topology_spread_args
from kschedfw.plugins.volumebinding.args import default_volume_binding_args, validate_volume_binding_args

from .fakes import IN_TREE_ARGS

INV, REQ, DUP, UNS, FORB = ("Invalid value", "Required value", "Duplicate value",
                            "Unsupported value", "Forbidden")


def fields(errs):
    return [(format_path(e.path), e.kind) for e in errs]


def texts(errs):
    return [str(e) for e in errs]


# ----------------------------------------------------------- TestValidateDefaultPreemptionArgs

@pytest.mark.parametrize("args, want", [
    pytest.param({"minCandidateNodesPercentage": 10, "minCandidateNodesAbsolute": 100}, [],
                 id="valid args (default)"),
    pytest.param({"minCandidateNodesPercentage": -1, "minCandidateNodesAbsolute": 100},
                 [("minCandidateNodesPercentage", INV)], id="negative minCandidateNodesPercentage"),
    pytest.param({"minCandidateNodesPercentage": 900, "minCandidateNodesAbsolute": 100},
                 [("minCandidateNodesPercentage", INV)], id="minCandidateNodesPercentage over 100"),
    pytest.param({"minCandidateNodesPercentage": 20, "minCandidateNodesAbsolute": -1},
                 [("minCandidateNodesAbsolute", INV)], id="negative minCandidateNodesAbsolute"),
    pytest.param({"minCandidateNodesPercentage": 0, "minCandidateNodesAbsolute": 0},
                 [("minCandidateNodesPercentage", INV), ("minCandidateNodesAbsolute", INV)],
                 id="all zero"),
    pytest.param({"minCandidateNodesPercentage": -1, "minCandidateNodesAbsolute": -1},
                 [("minCandidateNodesPercentage", INV), ("minCandidateNodesAbsolute", INV)],
                 id="both negative"),
])
def test_default_preemption_args(args, want):
    assert fields(validate_default_preemption_args(args)) == want


def test_default_preemption_texts():
    assert texts(validate_default_preemption_args(
        {"minCandidateNodesPercentage": 0, "minCandidateNodesAbsolute": 0})) == [
        "minCandidateNodesPercentage: Invalid value: 0: cannot be zero at the same time as "
        "minCandidateNodesAbsolute",
        "minCandidateNodesAbsolute: Invalid value: 0: cannot be zero at the same time as "
        "minCandidateNodesPercentage"]
    assert texts(validate_default_preemption_args(
        {"minCandidateNodesPercentage": 101, "minCandidateNodesAbsolute": -1})) == [
        "minCandidateNodesPercentage: Invalid value: 101: not in valid range [0, 100]",
        "minCandidateNodesAbsolute: Invalid value: -1: not in valid range [0, inf)"]


# ----------------------------------------------------------- TestValidateInterPodAffinityArgs

@pytest.mark.parametrize("weight, want", [
    pytest.param(10, [], id="valid args"),
    pytest.param(-1, ["hardPodAffinityWeight: Invalid value: -1: not in valid range [0, 100]"],
                 id="hardPodAffinityWeight less than min"),
    pytest.param(101, ["hardPodAffinityWeight: Invalid value: 101: not in valid range [0, 100]"],
                 id="hardPodAffinityWeight more than max"),
])
def test_inter_pod_affinity_args(weight, want):
    assert texts(validate_inter_pod_affinity_args({"hardPodAffinityWeight": weight})) == want


# ----------------------------------------------------------- TestValidatePodTopologySpreadArgs

def _c(skew=1, key="node", when="DoNotSchedule", **extra):
    return {"maxSkew": skew, "topologyKey": key, "whenUnsatisfiable": when, **extra}


@pytest.mark.parametrize("args, want", [
    pytest.param({"defaultConstraints": [_c(), _c(2, "zone", "ScheduleAnyway")],
                  "defaultingType": "List"}, [], id="valid config"),
    pytest.param({"defaultConstraints": [_c(-1)], "defaultingType": "List"},
                 [("defaultConstraints[0].maxSkew", INV)], id="maxSkew less than zero"),
    pytest.param({"defaultConstraints": [_c(key="")], "defaultingType": "List"},
                 [("defaultConstraints[0].topologyKey", REQ)], id="empty topology key"),
    pytest.param({"defaultConstraints": [_c(when="")], "defaultingType": "List"},
                 [("defaultConstraints[0].whenUnsatisfiable", REQ)],
                 id="whenUnsatisfiable is empty"),
    pytest.param({"defaultConstraints": [_c(when="unknown action")], "defaultingType": "List"},
                 [("defaultConstraints[0].whenUnsatisfiable", UNS)],
                 id="whenUnsatisfiable contains unsupported action"),
    pytest.param({"defaultConstraints": [_c(), _c(2)], "defaultingType": "List"},
                 [("defaultConstraints[1]", DUP)], id="duplicated constraints"),
    pytest.param({"defaultConstraints": [_c(key="key", labelSelector={"matchLabels": {"a": "b"}})],
                  "defaultingType": "List"},
                 [("defaultConstraints[0].labelSelector", FORB)], id="label selector present"),
    pytest.param({"defaultingType": "List"}, [], id="list default constraints, no constraints"),
    pytest.param({"defaultingType": "System"}, [], id="system default constraints"),
    pytest.param({"defaultingType": "unknown"}, [("defaultingType", UNS)], id="wrong constraints"),
    pytest.param({"defaultConstraints": [_c(key="key")], "defaultingType": "System"},
                 [("defaultingType", INV)], id="system default constraints, but has constraints"),
])
def test_pod_topology_spread_args(args, want):
    assert fields(validate_pod_topology_spread_args(args)) == want


def test_pod_topology_spread_texts():
    """Texts from the older string-based upstream table and validation_pluginargs.go."""
    assert texts(validate_pod_topology_spread_args(
        {"defaultConstraints": [_c(when="unknown action")], "defaultingType": "List"})) == [
        'defaultConstraints[0].whenUnsatisfiable: Unsupported value: "unknown action": supported '
        'values: "DoNotSchedule", "ScheduleAnyway"']
    assert texts(validate_pod_topology_spread_args(
        {"defaultConstraints": [_c(), _c(2)], "defaultingType": "List"})) == [
        'defaultConstraints[1]: Duplicate value: "{node, DoNotSchedule}"']
    assert texts(validate_pod_topology_spread_args(
        {"defaultConstraints": [_c(key="key")], "defaultingType": "System"})) == [
        'defaultingType: Invalid value: "System": when .defaultConstraints are not empty']
    assert texts(validate_pod_topology_spread_args({"defaultingType": "x"})) == [
        'defaultingType: Unsupported value: "x": supported values: "System", "List"']
    assert texts(validate_pod_topology_spread_args(
        {"defaultConstraints": [_c(key="key", labelSelector={})], "defaultingType": "List"})) == [
        "defaultConstraints[0].labelSelector: Forbidden: constraint must not define a selector, "
        "as they deduced for each pod"]
    assert texts(validate_pod_topology_spread_args(
        {"defaultConstraints": [_c(0, "")], "defaultingType": "List"})) == [
        "defaultConstraints[0].maxSkew: Invalid value: 0: not in valid range (0, inf)",
        "defaultConstraints[0].topologyKey: Required value: can not be empty"]


# ------------------------------------------- TestValidateNodeResourcesBalancedAllocationArgs

@pytest.mark.parametrize("resources, want", [
    pytest.param([{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}], [],
                 id="valid config"),
    pytest.param([{"name": "cpu", "weight": 2}, {"name": "memory", "weight": 1}],
                 [("resources[0].weight", INV)], id="invalid config"),
    pytest.param([{"name": "cpu", "weight": 1}, {"name": "cpu", "weight": 1}],
                 [("resources[1].name", DUP)], id="repeated resources"),
])
def test_balanced_allocation_args(resources, want):
    assert fields(validate_node_resources_balanced_allocation_args({"resources": resources})) == want


def test_balanced_allocation_texts():
    assert texts(validate_node_resources_balanced_allocation_args(
        {"resources": [{"name": "cpu", "weight": 2}, {"name": "cpu", "weight": 1}]})) == [
        "resources[0].weight: Invalid value: 2: must be 1",
        'resources[1].name: Duplicate value: "cpu"']


# ----------------------------------------------------------- TestValidateNodeAffinityArgs

_VALID_AFFINITY = {
    "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{
        "matchExpressions": [{"key": "label-1", "operator": "In", "values": ["label-1-val"]}]}]},
    "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 1, "preference": {
        "matchFields": [{"key": "metadata.name", "operator": "In", "values": ["node-1"]}]}}],
}
_INVALID_AFFINITY = {
    "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{
        "matchExpressions": [{"key": "invalid/label/key", "operator": "In",
                              "values": ["label-1-val"]}]}]},
    "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 1, "preference": {
        "matchFields": [{"key": "metadata.name", "operator": "In",
                         "values": ["node-1", "node-2"]}]}}],
}


@pytest.mark.parametrize("args, want", [
    pytest.param({}, [], id="empty"),
    pytest.param({"addedAffinity": _VALID_AFFINITY}, [], id="valid added affinity"),
    pytest.param({"addedAffinity": _INVALID_AFFINITY}, [
        ("addedAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]"
         ".matchExpressions[0].key", INV),
        ("addedAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].matchFields[0].values",
         INV)], id="invalid added affinity"),
])
def test_node_affinity_args(args, want):
    assert fields(validate_node_affinity_args(args)) == want


@pytest.mark.parametrize("expr, want", [
    pytest.param({"key": "k", "operator": "Foo", "values": ["a"]},
                 ['e[0].operator: Unsupported value: "Foo": supported values: "In", "NotIn", '
                  '"Exists", "DoesNotExist", "Gt", "Lt"'], id="bad operator"),
    pytest.param({"key": "k", "operator": "In", "values": []},
                 ["e[0].values: Invalid value: []string{}: for 'in', 'notin' operators, values set "
                  "can't be empty"], id="In without values"),
    pytest.param({"key": "k", "operator": "Exists", "values": ["a"]},
                 ['e[0].values: Invalid value: []string{"a"}: values set must be empty for exists '
                  'and does not exist'], id="Exists with values"),
    pytest.param({"key": "k", "operator": "Gt", "values": ["x"]},
                 ['e[0].values[0]: Invalid value: "x": for \'Gt\', \'Lt\' operators, the value '
                  'must be an integer'], id="Gt not an integer"),
    pytest.param({"key": "k", "operator": "Lt", "values": ["1", "2"]},
                 ['e[0].values: Invalid value: []string{"1", "2"}: for \'Gt\', \'Lt\' operators, '
                  'exactly one value is required'], id="Lt two values"),
])
def test_node_affinity_requirement_texts(expr, want):
    args = {"addedAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchExpressions": [expr]}]}}}
    base = ("addedAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]"
            ".matchExpressions")
    got = [t.replace(base, "e") for t in texts(validate_node_affinity_args(args))]
    assert got == want


def test_node_affinity_invalid_key_text_is_apimachinery_s():
    errs = validate_node_affinity_args({"addedAffinity": _INVALID_AFFINITY})
    assert errs[0].detail.startswith("a valid label key must consist of alphanumeric characters, "
                                     "'-', '_' or '.', and must start and end with an alphanumeric "
                                     "character (e.g. 'MyName',  or 'my.name',  or '123-abc', "
                                     "regex used for validation is ")
    assert str(errs[1]).endswith(': Invalid value: []string{"node-1", "node-2"}: must have one '
                                 'element')


def test_node_affinity_skips_zero_weight_and_empty_terms():
    args = {"addedAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{}]},
        "preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 0, "preference": {"matchFields": [{"key": "x", "operator": "Gt"}]}}]}}
    assert validate_node_affinity_args(args) == []


# ----------------------------------------------------------- TestValidateVolumeBindingArgs

OFF = {**FEATURE_GATES, "StorageCapacityScoring": False}
ON = {**FEATURE_GATES, "StorageCapacityScoring": True}


@pytest.mark.parametrize("args, features, want", [
    pytest.param({"bindTimeoutSeconds": 0}, None, [], id="zero is a valid config"),
    pytest.param({"bindTimeoutSeconds": 10}, None, [], id="positive value is valid config"),
    pytest.param({"bindTimeoutSeconds": -10}, None, [("bindTimeoutSeconds", INV)],
                 id="negative value is invalid config"),
    pytest.param({"bindTimeoutSeconds": 10}, OFF, [],
                 id="[StorageCapacityScoring=off] shape should be nil when the feature is off"),
    pytest.param({"bindTimeoutSeconds": 10, "shape": [{"utilization": 1, "score": 1},
                                                      {"utilization": 3, "score": 3}]},
                 OFF, [("shape", INV)],
                 id="[StorageCapacityScoring=off] error if the shape is not nil when the feature "
                    "is off"),
    pytest.param({"bindTimeoutSeconds": 10, "shape": []}, ON, [("shape", REQ)],
                 id="[StorageCapacityScoring=on] shape should not be empty"),
    pytest.param({"bindTimeoutSeconds": 10, "shape": [{"utilization": 3, "score": 3},
                                                      {"utilization": 1, "score": 1}]},
                 ON, [("shape[1].utilization", INV)],
                 id="[StorageCapacityScoring=on] shape points must be sorted in increasing order"),
    pytest.param({"bindTimeoutSeconds": 10, "shape": [
        {"utilization": -1, "score": 1}, {"utilization": 10, "score": -1},
        {"utilization": 20, "score": 11}, {"utilization": 101, "score": 1}]}, ON,
        [("shape[0].utilization", INV), ("shape[1].score", INV), ("shape[2].score", INV),
         ("shape[3].utilization", INV)],
        id="[StorageCapacityScoring=on] shape point: invalid utilization and score"),
])
def test_volume_binding_args(args, features, want):
    assert fields(validate_volume_binding_args(args, features=features)) == want


def test_volume_binding_texts():
    assert texts(validate_volume_binding_args({"bindTimeoutSeconds": -10})) == [
        "bindTimeoutSeconds: Invalid value: -10: invalid BindTimeoutSeconds, should not be a "
        "negative value"]
    assert texts(validate_volume_binding_args({"shape": [{"utilization": 3, "score": 3},
                                                         {"utilization": 1, "score": 1}]},
                                              features=ON)) == [
        "shape[1].utilization: Invalid value: 1: values must be sorted in increasing order"]
    assert texts(validate_volume_binding_args({"shape": []}, features=OFF)) == [
        "shape: Invalid value: unexpected field `shape`, remove it or turn on the feature gate "
        "StorageCapacityScoring"]


# ----------------------------------------------------------- TestValidateFitArgs

_DEFAULT_STRATEGY = {"type": "LeastAllocated",
                     "resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}]}


@pytest.mark.parametrize("args, expect", [
    pytest.param({"ignoredResources": ["longvalue" + "a" * 64],
                  "scoringStrategy": _DEFAULT_STRATEGY},
                 "name part must be no more than 63 bytes",
                 id="IgnoredResources: too long value"),
    pytest.param({"ignoredResources": ["example.com/"], "scoringStrategy": _DEFAULT_STRATEGY},
                 "name part must be non-empty", id="IgnoredResources: name is empty"),
    pytest.param({"ignoredResources": ["example.com/aaa/bbb"], "scoringStrategy": _DEFAULT_STRATEGY},
                 "a valid label key must consist of alphanumeric characters",
                 id="IgnoredResources: name has too many slash"),
    pytest.param({"ignoredResources": ["example.com"], "scoringStrategy": _DEFAULT_STRATEGY}, None,
                 id="IgnoredResources: valid args"),
    pytest.param({"ignoredResourceGroups": ["example.com"], "scoringStrategy": _DEFAULT_STRATEGY},
                 None, id="IgnoredResourceGroups: valid args"),
    pytest.param({"ignoredResourceGroups": ["example.com/"], "scoringStrategy": _DEFAULT_STRATEGY},
                 "name part must be non-empty", id="IgnoredResourceGroups: illegal args"),
    pytest.param({"ignoredResourceGroups": ["a" * 64], "scoringStrategy": _DEFAULT_STRATEGY},
                 "name part must be no more than 63 bytes",
                 id="IgnoredResourceGroups: name is too long"),
    pytest.param({"ignoredResourceGroups": ["example.com/aa"], "scoringStrategy": _DEFAULT_STRATEGY},
                 "resource group name can't contain '/'",
                 id="IgnoredResourceGroups: name cannot be contain slash"),
    pytest.param({}, "ScoringStrategy field is required", id="ScoringStrategy: field is required"),
    pytest.param({"scoringStrategy": {"type": "Invalid"}}, 'Unsupported value: "Invalid"',
                 id="ScoringStrategy: type is unsupported"),
])
def test_fit_args(args, expect):
    errs = validate_node_resources_fit_args(args)
    if expect is None:
        assert errs == []
    else:
        assert any(expect in str(e) for e in errs), texts(errs)


@pytest.mark.parametrize("strategy", ["LeastAllocated", "MostAllocated"])
@pytest.mark.parametrize("resources, want", [
    pytest.param(None, [], id="default config"),
    pytest.param([{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 10}], [],
                 id="multi valid resources"),
    pytest.param([{"name": "cpu", "weight": 0}], [("scoringStrategy.resources[0].weight", INV)],
                 id="weight less than min"),
    pytest.param([{"name": "cpu", "weight": 101}], [("scoringStrategy.resources[0].weight", INV)],
                 id="weight greater than max"),
    pytest.param([{"name": "cpu", "weight": 0}, {"name": "memory", "weight": 101}],
                 [("scoringStrategy.resources[0].weight", INV),
                  ("scoringStrategy.resources[1].weight", INV)], id="multi invalid resources"),
])
def test_least_and_most_allocated_scoring_strategy(strategy, resources, want):
    """TestValidateLeastAllocatedScoringStrategy and TestValidateMostAllocatedScoringStrategy."""
    args = {"scoringStrategy": {"type": strategy, "resources": resources}}
    assert fields(validate_node_resources_fit_args(args)) == want


_SHAPE = [{"utilization": 30, "score": 3}]
_RTCR = "scoringStrategy.requestedToCapacityRatio.shape"


@pytest.mark.parametrize("resources, shape, want", [
    pytest.param(None, None, [(_RTCR, REQ)], id="no shapes"),
    pytest.param([{"name": "cpu", "weight": 101}], _SHAPE,
                 [("scoringStrategy.resources[0].weight", INV)], id="weight greater than max"),
    pytest.param([{"name": "cpu", "weight": 0}], _SHAPE,
                 [("scoringStrategy.resources[0].weight", INV)], id="weight less than min"),
    pytest.param(None, _SHAPE, [], id="valid shapes"),
    pytest.param(None, [{"utilization": -1, "score": 3}], [(_RTCR + "[0].utilization", INV)],
                 id="utilization less than min"),
    pytest.param(None, [{"utilization": 101, "score": 3}], [(_RTCR + "[0].utilization", INV)],
                 id="utilization greater than max"),
    pytest.param(None, [{"utilization": 10, "score": 3}, {"utilization": 10, "score": 3}],
                 [(_RTCR + "[1].utilization", INV)], id="duplicated utilization values"),
    pytest.param(None, [{"utilization": 10, "score": 3}, {"utilization": 20, "score": 3},
                        {"utilization": 30, "score": 3}], [], id="increasing utilization values"),
    pytest.param(None, [{"utilization": 10, "score": 3}, {"utilization": 20, "score": 3},
                        {"utilization": 15, "score": 3}], [(_RTCR + "[2].utilization", INV)],
                 id="non-increasing utilization values"),
    pytest.param(None, [{"utilization": 10, "score": -1}], [(_RTCR + "[0].score", INV)],
                 id="score less than min"),
    pytest.param(None, [{"utilization": 10, "score": 11}], [(_RTCR + "[0].score", INV)],
                 id="score greater than max"),
])
def test_requested_to_capacity_ratio_scoring_strategy(resources, shape, want):
    """TestValidateRequestedToCapacityRatioScoringStrategy (shape under requestedToCapacityRatio,
    as in the newest validation_pluginargs.go)."""
    args = {"scoringStrategy": {"type": "RequestedToCapacityRatio", "resources": resources,
                                "requestedToCapacityRatio": {"shape": shape}}}
    assert fields(validate_node_resources_fit_args(args)) == want


def test_fit_texts():
    assert texts(validate_node_resources_fit_args({})) == [
        "scoringStrategy: Required value: ScoringStrategy field is required"]
    assert texts(validate_node_resources_fit_args({"scoringStrategy": {
        "type": "RequestedToCapacityRatio", "resources": [{"name": "cpu", "weight": 0}]}})) == [
        "scoringStrategy.resources[0].weight: Invalid value: 0: resource weight of cpu not in "
        "valid range (0, 100]",
        "scoringStrategy.requestedToCapacityRatio: Required value: must be specified when type is "
        "RequestedToCapacityRatio"]
    assert texts(validate_node_resources_fit_args({"scoringStrategy": {
        "type": "MostAllocated", "requestedToCapacityRatio": {"shape": _SHAPE}}})) == [
        "scoringStrategy.requestedToCapacityRatio: Forbidden: must be nil when type is not "
        "RequestedToCapacityRatio"]
    assert texts(validate_node_resources_fit_args({"scoringStrategy": {
        "type": "RequestedToCapacityRatio", "requestedToCapacityRatio": {"shape": []}}})) == [
        "scoringStrategy.requestedToCapacityRatio.shape: Required value: at least one point must "
        "be specified"]
    assert texts(validate_node_resources_fit_args({"scoringStrategy": {"type": "X"}})) == [
        'scoringStrategy.type: Unsupported value: "X": supported values: "LeastAllocated", '
        '"MostAllocated", "RequestedToCapacityRatio"']
    assert texts(validate_node_resources_fit_args({
        "ignoredResourceGroups": ["example.com/aa"], "scoringStrategy": _DEFAULT_STRATEGY})) == [
        "ignoredResourceGroups[0]: Invalid value: \"example.com/aa\": resource group name can't "
        "contain '/'"]


# ----------------------------------------------------------- DynamicResourcesArgs

DRA_OFF = {**FEATURE_GATES, "DRASchedulerFilterTimeout": False,
           "DRADeviceBindingConditions": False}


@pytest.mark.parametrize("args, features, want", [
    pytest.param({"filterTimeout": "10s", "bindingTimeout": "10m0s"}, None, [], id="defaults"),
    pytest.param({"filterTimeout": "0"}, None, [], id="zero filter timeout disables it"),
    pytest.param({"filterTimeout": "-1s"},
                 None, ["filterTimeout: Invalid value: -1s: must be zero or positive"],
                 id="negative filter timeout"),
    pytest.param({"bindingTimeout": "500ms"}, None,
                 ["bindingTimeout: Invalid value: 500ms: must be at least 1 second"],
                 id="binding timeout under a second"),
    pytest.param({"filterTimeout": "1s", "bindingTimeout": "1m"}, DRA_OFF,
                 ["filterTimeout: Forbidden: DRASchedulingFilterTimeout feature gate is disabled",
                  "bindingTimeout: Forbidden: DRADeviceBindingConditions or "
                  "DRAResourceClaimDeviceStatus feature gate is disabled"],
                 id="fields set while their gates are off"),
])
def test_dynamic_resources_args(args, features, want):
    assert texts(validate_dynamic_resources_args(args, features=features)) == want


# ----------------------------------------------------------- TestPluginArgsDefaults (v1)

@pytest.mark.parametrize("name, given, want", [
    pytest.param("DefaultPreemption", {},
                 {"minCandidateNodesPercentage": 10, "minCandidateNodesAbsolute": 100},
                 id="DefaultPreemptionArgs empty"),
    pytest.param("DefaultPreemption", {"minCandidateNodesPercentage": 50},
                 {"minCandidateNodesPercentage": 50, "minCandidateNodesAbsolute": 100},
                 id="DefaultPreemptionArgs with value"),
    pytest.param("InterPodAffinity", {},
                 {"hardPodAffinityWeight": 1, "ignorePreferredTermsOfExistingPods": False},
                 id="InterPodAffinityArgs empty"),
    pytest.param("InterPodAffinity", {"hardPodAffinityWeight": 0},
                 {"hardPodAffinityWeight": 0, "ignorePreferredTermsOfExistingPods": False},
                 id="InterPodAffinityArgs explicit 0"),
    pytest.param("InterPodAffinity", {"hardPodAffinityWeight": 5},
                 {"hardPodAffinityWeight": 5, "ignorePreferredTermsOfExistingPods": False},
                 id="InterPodAffinityArgs with value"),
    pytest.param("NodeResourcesBalancedAllocation", {},
                 {"resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}]},
                 id="NodeResourcesBalancedAllocationArgs resources empty"),
    pytest.param("NodeResourcesBalancedAllocation",
                 {"resources": [{"name": "scalar.io/scalar1", "weight": 1}]},
                 {"resources": [{"name": "scalar.io/scalar1", "weight": 1}]},
                 id="NodeResourcesBalancedAllocationArgs with scalar resource"),
    pytest.param("NodeResourcesBalancedAllocation",
                 {"resources": [{"name": "cpu", "weight": 1},
                                {"name": "scalar.io/scalar1", "weight": 1}]},
                 {"resources": [{"name": "cpu", "weight": 1},
                                {"name": "scalar.io/scalar1", "weight": 1}]},
                 id="NodeResourcesBalancedAllocationArgs with mixed resources"),
    pytest.param("NodeResourcesBalancedAllocation",
                 {"resources": [{"name": "cpu"}, {"name": "scalar.io/scalar0"},
                                {"name": "scalar.io/scalar1", "weight": 1}]},
                 {"resources": [{"name": "cpu", "weight": 1},
                                {"name": "scalar.io/scalar0", "weight": 1},
                                {"name": "scalar.io/scalar1", "weight": 1}]},
                 id="NodeResourcesBalancedAllocationArgs have resource no weight"),
    pytest.param("PodTopologySpread", {}, {"defaultingType": "System"},
                 id="PodTopologySpreadArgs resources empty"),
    pytest.param("PodTopologySpread",
                 {"defaultConstraints": [_c(2, "planet")]},
                 {"defaultConstraints": [_c(2, "planet")], "defaultingType": "System"},
                 id="PodTopologySpreadArgs resources with value"),
    pytest.param("NodeResourcesFit", {}, {"scoringStrategy": _DEFAULT_STRATEGY},
                 id="NodeResourcesFitArgs not set"),
    pytest.param("NodeResourcesFit", {"scoringStrategy": {"type": "MostAllocated"}},
                 {"scoringStrategy": {**_DEFAULT_STRATEGY, "type": "MostAllocated"}},
                 id="NodeResourcesFitArgs Resources empty"),
    pytest.param("VolumeBinding", {}, {"bindTimeoutSeconds": 600},
                 id="VolumeBindingArgs empty, StorageCapacityScoring disabled"),
    pytest.param("NodeAffinity", {}, {}, id="NodeAffinityArgs empty"),
    pytest.param("DynamicResources", {}, {"filterTimeout": "10s", "bindingTimeout": "10m0s"},
                 id="DynamicResourcesArgs empty (v1.36 gates)"),
])
def test_plugin_args_defaults(name, given, want):
    assert IN_TREE_ARGS[name].defaults(given) == want
    assert given is not want  # inputs are not mutated into the result
    # and the defaults pass their own schema and validation
    assert jsonsubset.check(IN_TREE_ARGS[name].schema, want) == []


def test_volume_binding_default_shape_with_storage_capacity_scoring():
    assert default_volume_binding_args({}, features=ON) == {
        "bindTimeoutSeconds": 600,
        "shape": [{"utilization": 0, "score": 10}, {"utilization": 100, "score": 0}]}


def test_dynamic_resources_defaults_follow_gates():
    assert default_dynamic_resources_args({}, features=DRA_OFF) == {}


def test_fit_default_weights_zero_becomes_one():
    got = IN_TREE_ARGS["NodeResourcesFit"].defaults(
        {"scoringStrategy": {"type": "LeastAllocated", "resources": [{"name": "cpu", "weight": 0}]}})
    assert got["scoringStrategy"]["resources"] == [{"name": "cpu", "weight": 1}]


def test_pod_topology_spread_constraints_without_list_defaulting_is_invalid():
    """v1 defaults defaultingType to System even with defaultConstraints (no List inference)."""
    args = IN_TREE_ARGS["PodTopologySpread"].defaults({"defaultConstraints": [_c()]})
    assert fields(validate_pod_topology_spread_args(args)) == [("defaultingType", INV)]


# ----------------------------------------------------------- schemas and generic defaulting

@pytest.mark.parametrize("name", sorted(IN_TREE_ARGS))
def test_in_tree_schemas_are_valid_draft_2020_12(name):
    from jsonschema import Draft202012Validator
    Draft202012Validator.check_schema(IN_TREE_ARGS[name].schema)
    assert jsonsubset.is_simple(IN_TREE_ARGS[name].schema)


@pytest.mark.parametrize("name", sorted(IN_TREE_ARGS))
def test_generic_schema_defaults_agree_with_upstream_defaulting_on_empty_args(name):
    assert apply_defaults(IN_TREE_ARGS[name].schema, {}) == IN_TREE_ARGS[name].defaults({})


def test_apply_defaults_recurses_and_does_not_mutate():
    schema = {"type": "object", "properties": {
        "a": {"type": "integer", "default": 1},
        "b": {"type": "object", "default": {}, "properties": {"c": {"default": "x"}}},
        "l": {"type": "array", "items": {"type": "object", "properties": {
            "w": {"default": 1}}}}}}
    given = {"l": [{}, {"w": 5}]}
    assert apply_defaults(schema, given) == {"a": 1, "b": {"c": "x"}, "l": [{"w": 1}, {"w": 5}]}
    assert given == {"l": [{}, {"w": 5}]}


def test_default_args_uses_generic_defaults_for_foreign_schema():
    """A plugin's own defaulting applies to its own schema only; another schema gets its JSON
    Schema defaults, and no schema leaves the args as given."""
    schema = {"type": "object", "properties": {"x": {"default": 3}}}
    assert default_args(IN_TREE_ARGS["NodeResourcesFit"], schema, {}) == {"x": 3}
    assert default_args(None, None, {"y": 1}) == {"y": 1}


@pytest.mark.parametrize("name, args, want", [
    pytest.param("DefaultPreemption", {"minCandidateNodesPercentage": "10"},
                 ['minCandidateNodesPercentage: Invalid value: "10": expected integer, got string'],
                 id="string where an int32 is expected"),
    pytest.param("DefaultPreemption", {"minCandidateNodesPercentage": 2 ** 31},
                 ["minCandidateNodesPercentage: Invalid value: 2147483648: must be less than or "
                  "equal to 2147483647"], id="int32 overflow"),
    pytest.param("NodeResourcesFit", {"scoringStrategy": {"requestedToCapacityRatio": {
        "shape": [{"Score": 2, "Utilization": 1}]}}},
                 ['scoringStrategy.requestedToCapacityRatio.shape[0].Score: Forbidden: unknown '
                  'field "Score"', 'scoringStrategy.requestedToCapacityRatio.shape[0].Utilization: '
                  'Forbidden: unknown field "Utilization"'],
                 id="v1 NodeResourcesFitArgs shape encoding is strict (scheme_test)"),
    pytest.param("NodeResourcesFit", {"scoringStrategy": {"resources": [{"Name": "cpu",
                                                                         "Weight": 1}]}},
                 ['scoringStrategy.resources[0].Name: Forbidden: unknown field "Name"',
                  'scoringStrategy.resources[0].Weight: Forbidden: unknown field "Weight"'],
                 id="v1 NodeResourcesFitArgs resources encoding is strict (scheme_test)"),
    pytest.param("DynamicResources", {"filterTimeout": 10},
                 ["filterTimeout: Invalid value: 10: expected string, got integer"],
                 id="durations are strings"),
    pytest.param("DynamicResources", {"filterTimeout": "10 seconds"},
                 ['filterTimeout: Invalid value: "10 seconds": must be a duration such as "10s", '
                  '"1m30s" or "0"'], id="duration syntax"),
])
def test_args_schema_errors(name, args, want):
    assert [str(i.error) for i in jsonsubset.check(IN_TREE_ARGS[name].schema, args)] == want
