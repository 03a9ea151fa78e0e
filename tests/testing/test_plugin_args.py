"""The kit builds plugins with the args ``kschedfw validate`` / ``simulate`` would give them: the
schema's defaults applied, upstream defaulting for in-tree args, bad args refused by plugin and field."""

from __future__ import annotations

import pytest

from kschedfw import Status, hookimpl
from kschedfw.api.field import INVALID, FieldError
from kschedfw.framework.registry import Registry
from kschedfw.framework.runtime import FrameworkError
from kschedfw.testing import PluginArgsError, PluginHarness, framework_for, make_node, make_pod, profile_for

REGISTRY = Registry.discover()


class Labelled:
    name = "Labelled"
    args_schema = {"type": "object", "additionalProperties": False,
                   "properties": {"label": {"type": "string", "default": "team"},
                                  "limit": {"type": "integer", "minimum": 1, "default": 3}}}

    @staticmethod
    def validate_args(args):
        if args["label"] == "reserved":
            return [FieldError(("label",), INVALID, "label is reserved", "reserved")]
        return []

    def __init__(self, args, handle):
        self.label, self.limit = args["label"], args["limit"]

    @hookimpl
    def filter(self, state, pod, node_info):
        if self.label not in node_info.node.labels:
            return Status.unresolvable(f"node(s) lack label {self.label}")


class NoArgs:
    name = "NoArgs"

    def __init__(self, args, handle):
        self.args = args

    @hookimpl
    def filter(self, state, pod, node_info):
        return None


def test_schema_defaults_are_applied_when_no_args_are_given():
    plugin = framework_for([Labelled]).plugins["Labelled"]
    assert (plugin.label, plugin.limit) == ("team", 3)


def test_given_args_are_completed_with_defaults():
    plugin = framework_for([Labelled], args={"Labelled": {"label": "owner"}}).plugins["Labelled"]
    assert (plugin.label, plugin.limit) == ("owner", 3)


def test_harness_uses_the_defaulted_args():
    h = PluginHarness(Labelled, nodes=[make_node("a", labels={"team": "x"}), make_node("b")])
    assert h.feasible(make_pod("p")) == ["a"]
    assert h.filter(make_pod("p")).statuses["b"].message() == "node(s) lack label team"


def test_in_tree_args_get_upstream_defaulting():
    # v1 defaults: a NodeResourcesFit scoringStrategy without resources gets cpu and memory, weight 1
    profile = profile_for([REGISTRY.load("NodeResourcesFit")],
                          args={"NodeResourcesFit": {"scoringStrategy": {"type": "MostAllocated"}}})
    assert profile.plugin_args["NodeResourcesFit"]["scoringStrategy"] == {
        "type": "MostAllocated", "resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}]}


def test_a_plugin_without_schema_gets_empty_args():
    # the CLI: 'plugin "NoArgs" takes no args; they are ignored' (a warning, not an error)
    with pytest.warns(UserWarning, match='plugin "NoArgs" takes no args; they are ignored'):
        assert framework_for([NoArgs], args={"NoArgs": {"x": 1}}).plugins["NoArgs"].args == {}
    assert framework_for([NoArgs]).plugins["NoArgs"].args == {}


@pytest.mark.parametrize("args, expected", [
    pytest.param({"limit": 0}, 'invalid args for plugin "Labelled": args.limit: Invalid value: 0', id="schema"),
    pytest.param({"lable": "x"}, 'invalid args for plugin "Labelled": args.lable', id="unknown-field"),
    pytest.param({"label": "reserved"},
                 'invalid args for plugin "Labelled": args.label: Invalid value: "reserved": label is reserved',
                 id="validate_args"),
    pytest.param({"kind": "OtherArgs"}, 'args.kind: Invalid value: "OtherArgs"', id="kind"),
])
def test_bad_args_name_the_plugin_and_field(args, expected):
    with pytest.raises(PluginArgsError) as info:
        PluginHarness(Labelled, args={"Labelled": args})
    assert expected in str(info.value)
    assert info.value.plugin == "Labelled"


def test_bad_in_tree_args_use_upstream_texts():
    with pytest.raises(PluginArgsError, match=r"args.hardPodAffinityWeight: Invalid value: 101: not in valid range"):
        framework_for([REGISTRY.load("InterPodAffinity")], args={"InterPodAffinity": {"hardPodAffinityWeight": 101}})


def test_args_for_a_plugin_outside_the_profile_are_refused():
    with pytest.raises(FrameworkError, match="Labeled"):
        profile_for([Labelled], args={"Labeled": {}})
