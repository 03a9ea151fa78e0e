"""NodeLabelPreference: a small, complete kschedfw plugin to copy when writing your own.

It prefers nodes by the value of one label: with ``labelKey: topology.kubernetes.io/zone`` and
``preferredValues: [zone-a, zone-b]``, pods go to zone-a nodes first, then zone-b, then anywhere.
With ``requireMatch: true`` nodes without a preferred value are filtered out instead.

What a plugin is made of, in the order you meet it below:

1. ``name``: the name profiles use in KubeSchedulerConfiguration YAML.
2. ``args_schema``: a JSON Schema for the plugin's ``pluginConfig`` args. ``"default"``s fill in
   what the user left out; ``additionalProperties: false`` turns a typo into an error.
3. ``validate_args``: checks a schema cannot express, returning ``FieldError``s with paths relative
   to ``args``; ``kschedfw validate`` prints them at the right line of the YAML file.
4. ``__init__(args, handle)``: called once per profile with the (defaulted) args and a Handle.
5. Hooks, each marked ``@hookimpl`` and named after an extension point of
   ``kschedfw.fwk.hookspecs``: here ``filter``, ``score``, ``normalize_score`` and
   ``events_to_register``. Implementing a hook is what makes the plugin usable at that point.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from kschedfw import (MAX_NODE_SCORE, ActionType, ClusterEvent, ClusterEventWithHint, EventResource,
                      QueueingHint, Status, hookimpl)
from kschedfw.api.field import DUPLICATE, INVALID, REQUIRED, FieldError

if TYPE_CHECKING:
    from kschedfw import Handle

NAME = "NodeLabelPreference"

# Label syntax, as Kubernetes checks it: an optional DNS-subdomain prefix, then a name of at most
# 63 characters; values are empty or name-like.
_NAME = r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_KEY_RE = re.compile(r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?" + _NAME + "$")
_VALUE_RE = re.compile(r"^(" + _NAME + ")?$")


class NodeLabelPreference:
    """Score nodes by how early their ``labelKey`` value comes in ``preferredValues``."""

    name = NAME

    args_schema = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "NodeLabelPreferenceArgs",
        "type": "object",
        "properties": {
            "labelKey": {
                "type": "string", "default": "topology.kubernetes.io/zone",
                "description": "The node label to look at."},
            "preferredValues": {
                "type": "array", "items": {"type": "string"}, "default": [],
                "description": "Label values in order of preference; the first scores highest."},
            "requireMatch": {
                "type": "boolean", "default": False,
                "description": "Filter out nodes whose label value is not preferred."},
        },
        "additionalProperties": False,
    }

    @staticmethod
    def validate_args(args: dict) -> list[FieldError]:
        """Semantic checks on defaulted args; an empty list means valid."""
        errors = []
        key = args.get("labelKey", "")
        if not key:
            errors.append(FieldError(("labelKey",), REQUIRED, "a node label key is needed"))
        elif len(key.rpartition("/")[2]) > 63 or not _KEY_RE.match(key):
            errors.append(FieldError(("labelKey",), INVALID, "must be a valid label key", key))
        seen = set()
        values = args.get("preferredValues", [])
        for i, value in enumerate(values):
            if value in seen:
                errors.append(FieldError(("preferredValues", i), DUPLICATE, value=value))
            elif len(value) > 63 or not _VALUE_RE.match(value):
                errors.append(FieldError(("preferredValues", i), INVALID, "must be a valid label value", value))
            seen.add(value)
        if args.get("requireMatch") and not values:
            errors.append(FieldError(("requireMatch",), INVALID,
                                     "needs at least one entry in preferredValues", True))
        return errors

    def __init__(self, args: dict, handle: Handle | None) -> None:
        # ``kschedfw`` passes defaulted args; filling defaults here too keeps direct use simple.
        self.label_key = args.get("labelKey", "topology.kubernetes.io/zone")
        preferred = list(args.get("preferredValues", []))
        # rank: the first preferred value gets the highest raw score
        self.rank = {value: len(preferred) - i for i, value in enumerate(preferred)}
        self.require_match = bool(args.get("requireMatch", False))
        self.handle = handle

    # ------------------------------------------------------------------ Filter
    @hookimpl
    def filter(self, state, pod, node_info):
        """Called once per node (hot path). Return None to accept the node.

        UnschedulableAndUnresolvable tells the scheduler that preempting pods cannot help here;
        the reason text is what users read in the pod's FailedScheduling event.
        """
        if not self.require_match:
            return None
        if node_info.node.labels.get(self.label_key) not in self.rank:
            return Status.unresolvable(f"node(s) didn't have a preferred {self.label_key} label")
        return None

    @hookimpl
    def events_to_register(self):
        """Which cluster events may make a pod this plugin filtered out schedulable again.

        A new node, or a node whose labels changed; the hint keeps the pod in the unschedulable
        pool unless the node now carries a preferred value.
        """
        return [ClusterEventWithHint(ClusterEvent(EventResource.Node, ActionType.Add | ActionType.UpdateNodeLabel),
                                     self._node_now_preferred)]

    def _node_now_preferred(self, pod, old_node, new_node) -> QueueingHint:
        if new_node is not None and new_node.labels.get(self.label_key) in self.rank:
            return QueueingHint.Queue
        return QueueingHint.QueueSkip

    # ------------------------------------------------------------------ Score
    @hookimpl
    def score(self, state, pod, node_info) -> int:
        """Raw score of one feasible node: any int, since ``normalize_score`` rescales it."""
        return self.rank.get(node_info.node.labels.get(self.label_key), 0)

    @hookimpl
    def normalize_score(self, state, pod, scores) -> None:
        """Rescale in place to [0, MAX_NODE_SCORE]: the most preferred node present gets 100."""
        highest = max((s.score for s in scores), default=0)
        if highest == 0:
            return None
        for s in scores:
            s.score = s.score * MAX_NODE_SCORE // highest
        return None
