"""The whole-list NormalizeScore forms (hookspecs.WholeListNormalizeScore) of InterPodAffinity and
PodTopologySpread leave exactly the scores their NodeScore path leaves, or decline (None)."""

from __future__ import annotations

import random

import pytest

from kschedfw.framework.handle import Handle
from kschedfw.fwk.cycle_state import CycleState
from kschedfw.fwk.types import NodeScore
from kschedfw.plugins.interpodaffinity import scoring as ipa_scoring
from kschedfw.plugins.interpodaffinity.plugin import InterPodAffinity
from kschedfw.plugins.podtopologyspread import scoring as pts_scoring
from kschedfw.plugins.podtopologyspread.plugin import PodTopologySpread
from kschedfw.testing import make_pod


def _node_score_path(plugin, state, values):
    scores = [NodeScore(f"n{i}", v) for i, v in enumerate(values)]
    assert plugin.normalize_score(state, make_pod("p"), scores) is None
    return [s.score for s in scores]


def _values(rng):
    return [rng.randrange(-1, 60) if rng.random() < 0.1 else rng.randrange(0, 60) for _ in range(rng.randrange(0, 15))]


@pytest.mark.parametrize("topology_score", [{}, {"zone": {"a": 1}}])
def test_inter_pod_affinity(topology_score):
    plugin, rng = InterPodAffinity({}, Handle()), random.Random(1)
    state = CycleState()
    assert plugin.normalize_score_values(state, make_pod("p"), [1, 2]) is None  # no PreScore state
    state.write(ipa_scoring.PRE_SCORE_STATE_KEY, ipa_scoring.PreScoreState(topology_score))
    for _ in range(300):
        values = _values(rng)
        assert plugin.normalize_score_values(state, make_pod("p"), list(values)) == \
            _node_score_path(plugin, state, values)


def test_pod_topology_spread():
    plugin, rng = PodTopologySpread({}, Handle()), random.Random(2)
    state = CycleState()
    assert plugin.normalize_score_values(state, make_pod("p"), [1, 2]) is None  # no PreScore state
    pre_score = pts_scoring.PreScoreState()
    state.write(pts_scoring.PRE_SCORE_STATE_KEY, pre_score)
    for _ in range(300):
        values = _values(rng)
        assert plugin.normalize_score_values(state, make_pod("p"), list(values)) == \
            _node_score_path(plugin, state, values)
    pre_score.ignored_nodes.add("n0")  # known by name only: the NodeScore path decides
    assert plugin.normalize_score_values(state, make_pod("p"), [1, 2]) is None
