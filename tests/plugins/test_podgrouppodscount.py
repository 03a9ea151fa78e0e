"""PodGroupPodsCount as upstream's podgroup_pods_count_test.go states it: a placement scores the
group's assumed and assigned pods plus its proposed ones; normalising scales by the best
count (integer division), and all zeros is an Error."""

from __future__ import annotations

import attrs
import pytest

from kschedfw.cache.cache import Cache
from kschedfw.framework.handle import Handle
from kschedfw.fwk.cycle_state import CycleState
from kschedfw.fwk.podgroup import Placement, PlacementScore, PodGroupAssignments, PodGroupInfo
from kschedfw.fwk.status import Code
from kschedfw.plugins.podgrouppodscount import PodGroupPodsCount
from kschedfw.testing.builders import make_node, make_pod


@attrs.frozen
class Proposed:
    pod: object
    node_name: str


def member(name, node=""):
    return make_pod(name, uid=name, node_name=node, schedulingGroup={"podGroupName": "pg1"})


PROPOSED = [Proposed(member("proposed-pod-1"), "node1"), Proposed(member("proposed-pod-2"), "node2")]


@pytest.mark.parametrize("name,assigned,assumed,want", [
    ("existing assigned and assumed pods", [member("p2", "node2"), member("p3", "node3")], [member("p1", "node1")],
     5),  # 1 assumed + 2 assigned + 2 proposed
    ("no assumed pods", [member("p1", "node1")], [], 3),
    ("no assigned pods", [], [member("p1", "node1")], 3),
    ("no assigned pods, no assumed pods", [], [], 2),
])
def test_score_placement(name, assigned, assumed, want):
    cache = Cache()
    for n in ("node1", "node2", "node3"):
        cache.add_node(make_node(n))
    for pod in assigned:
        cache.add_pod(pod)
    for pod in assumed:
        cache.add_pod_group_member(pod)
        cache.assume_pod(pod)
    for proposed in PROPOSED:
        cache.add_pod_group_member(proposed.pod)
    snapshot = cache.update_snapshot()
    pl = PodGroupPodsCount({}, Handle(snapshot=snapshot))
    placement = PodGroupAssignments(Placement(""), PROPOSED)
    assert pl.score_placement(CycleState(), PodGroupInfo("pg1", "default"), placement) == want


@pytest.mark.parametrize("name,scores,want", [
    ("distinct scores", [10, 50, 110], [9, 45, 100]),  # score * 100 / 110, truncated
    ("equal scores", [50, 50], [100, 100]),
    ("single score", [50], [100]),
    ("some minimal score that is far from a group of scores located closely", [11, 100, 101, 102],
     [10, 98, 99, 100]),
])
def test_normalize_placement_score(name, scores, want):
    placement_scores = [PlacementScore(score=s) for s in scores]
    status = PodGroupPodsCount({}).normalize_placement_score(CycleState(), PodGroupInfo("pg1"), placement_scores)
    assert status is None
    assert [s.score for s in placement_scores] == want


def test_normalize_placement_score_of_zeros_is_an_error():
    status = PodGroupPodsCount({}).normalize_placement_score(
        CycleState(), PodGroupInfo("pg1"), [PlacementScore(score=0), PlacementScore(score=0)])
    assert status is not None and status.code is Code.Error
    assert status.message() == "no pods from pod group are assigned to any of the candidate placements"
