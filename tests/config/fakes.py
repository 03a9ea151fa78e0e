"""A fake plugin registry: the in-tree plugins of the v1 default profile (their order, weights
and extension points), with the args specs the in-tree plugins own (their ``args_spec``), plus a
few out-of-tree ones."""

from __future__ import annotations

from typing import Any

from kschedfw.api.field import INVALID, FieldError
from kschedfw.fwk.args import ArgsSpec
from kschedfw.plugins import defaultpreemption_args, nodeaffinity_args
from kschedfw.plugins.dynamicresources import args as dynamicresources_args
from kschedfw.plugins.interpodaffinity import args as interpodaffinity_args
from kschedfw.plugins.noderesources import args as noderesources_args
from kschedfw.plugins.podtopologyspread import args as podtopologyspread_args
from kschedfw.plugins.volumebinding import args as volumebinding_args

#: the in-tree plugins' own args specs, by plugin name
IN_TREE_ARGS: dict[str, ArgsSpec] = {
    "DefaultPreemption": defaultpreemption_args.ARGS,
    "DynamicResources": dynamicresources_args.ARGS,
    "InterPodAffinity": interpodaffinity_args.ARGS,
    "NodeAffinity": nodeaffinity_args.ARGS,
    "NodeResourcesBalancedAllocation": noderesources_args.BALANCED_ALLOCATION_ARGS,
    "NodeResourcesFit": noderesources_args.FIT_ARGS,
    "PodTopologySpread": podtopologyspread_args.ARGS,
    "VolumeBinding": volumebinding_args.ARGS,
}

SCORE = frozenset({"pre_score", "score"})

IN_TREE: dict[str, frozenset[str]] = {
    "SchedulingGates": frozenset({"pre_enqueue"}),
    "PrioritySort": frozenset({"less"}),
    "NodeUnschedulable": frozenset({"filter"}),
    "NodeName": frozenset({"filter"}),
    "TaintToleration": frozenset({"filter", "pre_score", "score", "normalize_score"}),
    "NodeAffinity": frozenset({"pre_filter", "filter", "pre_score", "score", "normalize_score"}),
    "NodePorts": frozenset({"pre_filter", "filter"}),
    "NodeResourcesFit": frozenset({"pre_filter", "filter", "pre_score", "score",
                                   "score_placement"}),
    "VolumeRestrictions": frozenset({"pre_filter", "filter"}),
    "NodeVolumeLimits": frozenset({"pre_filter", "filter"}),
    "VolumeBinding": frozenset({"pre_filter", "filter", "reserve", "pre_bind", "pre_score",
                                "score"}),
    "VolumeZone": frozenset({"pre_filter", "filter"}),
    "PodTopologySpread": frozenset({"pre_filter", "filter", "pre_score", "score",
                                    "normalize_score"}),
    "InterPodAffinity": frozenset({"pre_filter", "filter", "pre_score", "score",
                                   "normalize_score"}),
    "DynamicResources": frozenset({"pre_enqueue", "pre_filter", "filter", "post_filter",
                                   "reserve", "pre_bind", "pre_score", "score"}),
    "DefaultPreemption": frozenset({"post_filter", "pre_enqueue", "pod_group_post_filter"}),
    "NodeResourcesBalancedAllocation": frozenset({"pre_score", "score"}),
    "ImageLocality": frozenset({"score"}),
    "DefaultBinder": frozenset({"bind"}),
}

COSCHEDULING_SCHEMA = {
    "type": "object", "additionalProperties": False,
    "properties": {"permitWaitingTimeSeconds": {"type": "integer", "default": 60},
                   "podGroupBackoffSeconds": {"type": "integer", "default": 0}},
}


def _validate_coscheduling(args: dict) -> list[FieldError]:
    if args.get("permitWaitingTimeSeconds", 0) < 0:
        return [FieldError(("permitWaitingTimeSeconds",), INVALID, "must not be negative",
                           args["permitWaitingTimeSeconds"])]
    return []


OUT_OF_TREE: dict[str, tuple[frozenset[str], dict | None, Any]] = {
    "Coscheduling": (frozenset({"less", "pre_enqueue", "pre_filter", "post_filter", "permit",
                                "reserve", "post_bind"}), COSCHEDULING_SCHEMA,
                     _validate_coscheduling),
    "CapacityScheduling": (frozenset({"pre_enqueue", "pre_filter", "post_filter", "reserve"}),
                           None, None),
    "NodeResourcesAllocatable": (SCORE, {
        "type": "object", "additionalProperties": False,
        "properties": {"mode": {"enum": ["Least", "Most"], "default": "Least"},
                       "resources": {"type": "array", "items": {
                           "type": "object", "required": ["name"],
                           "additionalProperties": False,
                           "properties": {"name": {"type": "string"},
                                          "weight": {"type": "integer"}}}}}}, None),
    # a plugin whose schema needs the full jsonschema validator
    "OneOfPlugin": (frozenset({"filter"}), {
        "type": "object",
        "properties": {"mode": {"oneOf": [{"const": "a"}, {"const": "b"}]}}}, None),
}


class FakeRegistry:
    """Implements kschedfw.framework.registry.PluginRegistry over plain tables."""

    def __init__(self, plugins: dict[str, frozenset[str]] | None = None,
                 schemas: dict[str, dict | None] | None = None,
                 validators: dict[str, Any] | None = None, dist: str = "kschedfw") -> None:
        self._plugins = dict(IN_TREE if plugins is None else plugins)
        self._schemas: dict[str, dict | None] = {}
        self._validators: dict[str, Any] = {}
        self._specs: dict[str, ArgsSpec] = {}
        if plugins is None:
            for name, spec in IN_TREE_ARGS.items():
                self._schemas[name] = spec.schema
                self._validators[name] = spec.validate
                self._specs[name] = spec
        self._schemas.update(schemas or {})
        self._validators.update(validators or {})
        self._dist = dist

    def with_out_of_tree(self) -> "FakeRegistry":
        for name, (hooks, schema, validator) in OUT_OF_TREE.items():
            self._plugins[name] = hooks
            self._schemas[name] = schema
            if validator is not None:
                self._validators[name] = validator
        return self

    def names(self) -> list[str]:
        return sorted(self._plugins)

    def extension_points(self, name: str) -> frozenset[str] | None:
        return self._plugins.get(name)

    def args_schema(self, name: str) -> dict | None:
        return self._schemas.get(name)

    def args_spec(self, name: str) -> ArgsSpec | None:
        return self._specs.get(name)

    def validate_args(self, name: str, args: dict) -> list[FieldError]:
        fn = self._validators.get(name)
        return list(fn(args)) if fn else []

    def describe(self, name: str) -> str:
        return f"{self._dist}[{name}]"
