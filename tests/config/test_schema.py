"""The JSON Schema of KubeSchedulerConfiguration v1, and the built-in checker that applies it."""

from __future__ import annotations

import copy

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from kschedfw.config import jsonsubset
from kschedfw.config.plugin_sets import PLUGIN_SET_FIELDS
from kschedfw.config.schema import CONFIG_SCHEMA, schema_with_plugins

from .fakes import FakeRegistry


def test_config_schema_is_valid_draft_2020_12():
    Draft202012Validator.check_schema(CONFIG_SCHEMA)
    assert jsonsubset.is_simple(CONFIG_SCHEMA)


def test_all_v1_fields_are_described():
    top = set(CONFIG_SCHEMA["properties"])
    assert top == {"apiVersion", "kind", "parallelism", "leaderElection", "clientConnection",
                   "enableProfiling", "enableContentionProfiling", "percentageOfNodesToScore",
                   "podInitialBackoffSeconds", "podMaxBackoffSeconds", "profiles", "extenders",
                   "delayCacheUntilActive"}
    plugins = CONFIG_SCHEMA["properties"]["profiles"]["items"]["properties"]["plugins"]
    assert set(plugins["properties"]) == set(PLUGIN_SET_FIELDS)
    # upstream v1 Plugins: the twelve original sets, multiPoint, and v1.36's two placement sets
    # (no podGroupPostFilter: DefaultPreemption is the PodGroupPostFilter plugin wherever enabled)
    assert set(PLUGIN_SET_FIELDS) == {
        "preEnqueue", "queueSort", "preFilter", "filter", "postFilter", "preScore", "score", "reserve",
        "permit", "preBind", "bind", "postBind", "multiPoint", "placementGenerate", "placementScore"}


def test_schema_with_plugins_is_valid_and_checks_args():
    schema = schema_with_plugins(FakeRegistry().with_out_of_tree())
    Draft202012Validator.check_schema(schema)
    assert not jsonsubset.is_simple(schema)  # if/then needs the full validator
    doc = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
           "profiles": [{"pluginConfig": [
               {"name": "InterPodAffinity", "args": {"kind": "InterPodAffinityArgs",
                                                     "hardPodAffinityWeight": "x"}},
               {"name": "Unknown", "args": {"anything": 1}}]}]}
    errors = sorted(".".join(map(str, e.absolute_path))
                    for e in Draft202012Validator(schema).iter_errors(doc))
    assert errors == ["profiles.0.pluginConfig.0.args.hardPodAffinityWeight"]


def test_schema_with_plugins_does_not_change_the_base_schema():
    before = copy.deepcopy(CONFIG_SCHEMA)
    schema_with_plugins(FakeRegistry())
    assert CONFIG_SCHEMA == before


# The built-in checker must agree with jsonschema on which instances are valid (where Go's
# integer rules do not differ: floats are kept out of integer positions here).

scalars = st.one_of(st.none(), st.booleans(), st.integers(-2 ** 40, 2 ** 40),
                    st.text(max_size=6), st.sampled_from(["10s", "1m30s", "x", "0", "-5s"]))
plugin = st.fixed_dictionaries({"name": st.sampled_from(["A", "B", "*"])},
                               optional={"weight": st.integers(-3, 3), "extra": scalars})
plugin_set = st.fixed_dictionaries({}, optional={"enabled": st.lists(plugin, max_size=2),
                                                 "disabled": st.one_of(st.lists(plugin, max_size=2),
                                                                       scalars)})
profile = st.fixed_dictionaries({}, optional={
    "schedulerName": st.one_of(st.text(max_size=4), scalars),
    "percentageOfNodesToScore": scalars,
    "plugins": st.dictionaries(st.sampled_from(["score", "filter", "multiPoint", "bogus"]),
                               st.one_of(plugin_set, scalars), max_size=2),
    "pluginConfig": st.lists(st.one_of(st.fixed_dictionaries(
        {"name": st.sampled_from(["A", "B"])}, optional={"args": st.one_of(
            st.dictionaries(st.text(max_size=3), scalars, max_size=2), scalars)}), scalars),
        max_size=2),
})
config = st.fixed_dictionaries({}, optional={
    "parallelism": scalars, "percentageOfNodesToScore": scalars,
    "leaderElection": st.one_of(st.fixed_dictionaries({}, optional={
        "leaderElect": scalars, "leaseDuration": scalars, "resourceLock": scalars}), scalars),
    "profiles": st.one_of(st.lists(profile, max_size=2), scalars),
    "extenders": st.lists(st.fixed_dictionaries({}, optional={
        "weight": scalars, "managedResources": st.lists(st.fixed_dictionaries(
            {"name": scalars}), max_size=2)}), max_size=2),
    "unknownTop": scalars,
})


@settings(max_examples=80, deadline=None)
@given(config)
def test_builtin_checker_agrees_with_jsonschema(instance):
    schema = {k: v for k, v in CONFIG_SCHEMA.items() if k != "required"}
    ours = {tuple(i.error.path) for i in jsonsubset.check(schema, instance)}
    theirs = list(Draft202012Validator(schema).iter_errors(instance))
    assert (not ours) == (not theirs)


@pytest.mark.parametrize("instance, want", [
    pytest.param({"parallelism": 3.0}, ["parallelism: Invalid value: 3.0: expected integer, got "
                                        "number"], id="Go rejects 3.0 for an int32"),
    pytest.param({"parallelism": True}, ["parallelism: Invalid value: true: expected integer, got "
                                         "boolean"], id="booleans are not numbers"),
    pytest.param({"profiles": {}}, ["profiles: Invalid value: expected array, got object"],
                 id="collections are not printed as values"),
])
def test_go_flavoured_type_errors(instance, want):
    assert [str(i.error) for i in jsonsubset.check(CONFIG_SCHEMA, {
        "apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
        **instance})] == want
