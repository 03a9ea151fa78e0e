"""RandomScore: a uniform pick among the feasible nodes. PreScore draws one with the plugin's
seeded generator; Score gives it 100 and every other node 0. With one feasible node the
framework does not score, so nothing is drawn (as in the simulator). Enable it at preScore as
well as score (``multiPoint`` does both)."""

from __future__ import annotations

import random
from typing import TYPE_CHECKING, Any, Mapping

from kschedfw import MAX_NODE_SCORE, MIN_NODE_SCORE, Status, hookimpl

from kschedfw_gpushare.args import SEED, schema
from kschedfw_gpushare.scoring import GpuScore

if TYPE_CHECKING:
    from kschedfw import CycleState, Handle, NodeInfo
    from kschedfw.api import Pod

STATE_KEY = "PreScore-RandomScore"


class RandomScore(GpuScore):
    """PreScore and Score plugin: a random feasible node."""

    name = "RandomScore"
    args_schema = schema(seed=SEED)

    def __init__(self, args: Mapping[str, Any] | None = None, handle: "Handle | None" = None) -> None:
        super().__init__(args, handle)
        self.rng = random.Random(int(self.args.get("seed") or 0))

    @hookimpl
    def pre_score(self, state: "CycleState", pod: "Pod", nodes: "list[NodeInfo]") -> Status | None:
        state.write(STATE_KEY, nodes[self.rng.randrange(len(nodes))].name)
        return None

    @hookimpl
    def score(self, state: "CycleState", pod: "Pod", node_info: "NodeInfo") -> Any:
        try:
            chosen = state.read(STATE_KEY)
        except KeyError:
            return Status.as_status(f'reading "{STATE_KEY}" from cycleState: not found (enable RandomScore '
                                       "at preScore too)")
        return MAX_NODE_SCORE if node_info.name == chosen else MIN_NODE_SCORE

    def score_nodes(self, state: "CycleState", pod: "Pod", nodes: "list[NodeInfo]") -> list:
        chosen = state.get(STATE_KEY)
        if chosen is None:
            return [self.score(state, pod, info) for info in nodes]
        return [MAX_NODE_SCORE if info.name == chosen else MIN_NODE_SCORE for info in nodes]
