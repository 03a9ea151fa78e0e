"""PlacementLabelPreference: a PlacementScore plugin, for pod groups what NodeLabelPreference is
for pods.

With the gates GenericWorkload and TopologyAwareWorkloadScheduling on, the scheduler tries a
PodGroup whose ``schedulingConstraints.topology`` names a key (``rack``) in every placement the
PlacementGenerate plugin proposes (one per rack), and the PlacementScore plugins choose among
the placements the whole group fits in. This one prefers placements by the value of one label
that all their nodes share: with ``labelKey: rack`` and ``preferredValues: [rack-2]``, a gang
goes to rack-2 when it fits there, whatever the default placement scorers say (given the weight
to outvote them: NodeResourcesFit's and PodGroupPodsCount's placement scores are each 0..100
times their weight, 1 by default).

It takes NodeLabelPreference's args (the same schema and checks) and implements two hooks of
``kschedfw.fwk.hookspecs``: ``score_placement`` (one placement, with the pods the cycle found room
for in it) and ``normalize_placement_score`` (all of this plugin's placement scores of a cycle).
Enable it in a profile's ``plugins.placementScore`` (or ``multiPoint``) with a ``weight``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kschedfw import MAX_SCORE, hookimpl
from kschedfw_example_plugin.plugin import NodeLabelPreference

if TYPE_CHECKING:
    from kschedfw import Handle, PlacementScore
    from kschedfw.fwk.podgroup import PodGroupAssignments

NAME = "PlacementLabelPreference"


class PlacementLabelPreference:
    """Score a placement by how early the ``labelKey`` value its nodes share comes in
    ``preferredValues`` (0 when they do not all carry one preferred value)."""

    name = NAME
    args_schema = {**NodeLabelPreference.args_schema, "title": "PlacementLabelPreferenceArgs"}
    validate_args = staticmethod(NodeLabelPreference.validate_args)

    def __init__(self, args: dict, handle: Handle | None) -> None:
        self.label_key = args.get("labelKey", "topology.kubernetes.io/zone")
        preferred = list(args.get("preferredValues", []))
        self.rank = {value: len(preferred) - i for i, value in enumerate(preferred)}
        self.handle = handle

    @hookimpl
    def score_placement(self, placement: PodGroupAssignments) -> int:
        """Called once per placement the whole group fits in (not a hot path: a few per group)."""
        values = {node_info.node.labels.get(self.label_key) for node_info in placement.placement.nodes}
        if len(values) != 1:
            return 0
        return self.rank.get(values.pop(), 0)

    @hookimpl
    def normalize_placement_score(self, placement_scores: list[PlacementScore]) -> None:
        """Rescale in place to [0, MAX_SCORE]: the most preferred placement present gets 100."""
        highest = max((p.score for p in placement_scores), default=0)
        for p in placement_scores:
            p.score = p.score * MAX_SCORE // highest if highest else 0
