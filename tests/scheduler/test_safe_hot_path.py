"""What the runtime reuses for speed cannot be corrupted by a plugin."""

from __future__ import annotations

import random


from kschedfw import hookimpl
from kschedfw.fwk.cycle_state import CycleState
from kschedfw.fwk.types import NodeInfo, QueuedPodInfo
from kschedfw.plugins.queuesort import PrioritySort
from kschedfw.testing import framework_for, simulate_with

from .plugins import BASE, CpuFit


class Keeper:
    """Keeps every NodeScore list and item NormalizeScore gets, and scores by node index."""

    name = "Keeper"
    kept: list = []

    def __init__(self, args, handle):
        pass

    @hookimpl
    def score(self, state, pod, node_info):
        return int(node_info.name[1:])

    @hookimpl
    def normalize_score(self, state, pod, scores):
        Keeper.kept.append((scores, [(s.name, s.score) for s in scores]))


class Polite:
    """Normalizes in place and keeps nothing."""

    name = "Polite"

    def __init__(self, args, handle):
        pass

    @hookimpl
    def score(self, state, pod, node_info):
        return 1

    @hookimpl
    def normalize_score(self, state, pod, scores):
        for s in scores:
            s.score *= 10


def test_node_scores_a_plugin_keeps_are_never_changed_by_later_cycles(node, pod):
    Keeper.kept = []
    objects = [node(f"n{i}") for i in range(1, 6)] + [pod(f"p{i}") for i in range(6)]
    result = simulate_with([*BASE, Keeper], objects)
    assert {p.status for p in result.pods} == {"Bound"}
    assert len(Keeper.kept) == 6
    for scores, seen in Keeper.kept:
        assert [(s.name, s.score) for s in scores] == seen
    # no two cycles shared a NodeScore object
    ids = [id(s) for scores, _ in Keeper.kept for s in scores]
    assert len(ids) == len(set(ids))


def test_normalize_in_place_gives_the_same_totals_every_cycle(node, pod):
    fwk = framework_for([Polite])
    infos = [NodeInfo(node=node(f"n{i}")) for i in range(3)]
    for _ in range(3):
        totals, status = fwk.run_score_plugins_totals(CycleState(), pod("p"), infos)
        assert status is None and totals == [10, 10, 10]


class KeepOne:
    """Keeps only the best NodeScore item, not the list."""

    name = "KeepOne"
    best = None

    def __init__(self, args, handle):
        pass

    @hookimpl
    def score(self, state, pod, node_info):
        return int(node_info.name[1:])

    @hookimpl
    def normalize_score(self, state, pod, scores):
        KeepOne.best = max(scores, key=lambda s: s.score)


def test_a_kept_node_score_item_is_never_changed_by_a_later_cycle(node, pod):
    fwk = framework_for([KeepOne])
    for names in (("n1", "n2", "n3"), ("n4", "n5", "n6")):
        fwk.run_score_plugins_totals(CycleState(), pod("p"), [NodeInfo(node=node(n)) for n in names])
        if names[0] == "n1":
            first = KeepOne.best
    assert (first.name, first.score) == ("n3", 3) and KeepOne.best is not first


def _qpi(priority, timestamp):
    from kschedfw.api import parse_object
    p = parse_object({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"p{priority}-{timestamp}"},
                      "spec": {"priority": priority, "containers": [{"name": "c", "image": "i"}]}})
    return QueuedPodInfo(p, timestamp=timestamp)


def test_priority_sort_key_orders_exactly_like_less():
    plugin = PrioritySort({}, None)
    rng = random.Random(7)
    items = [_qpi(rng.choice([-5, 0, 0, 10, 1000]), rng.choice([0.0, 1.0, 1.5, 2.0])) for _ in range(40)]
    for a in items:
        for b in items:
            assert plugin.less(a, b) == (plugin.sort_key(a) < plugin.sort_key(b))


class NamedLikePrioritySort:
    """A custom QueueSort that happens to be called PrioritySort: lowest priority first."""

    name = "PrioritySort"

    def __init__(self, args, handle):
        pass

    @hookimpl
    def less(self, pod_info_a, pod_info_b):
        return pod_info_a.pod.effective_priority < pod_info_b.pod.effective_priority


def test_queue_fast_path_comes_from_sort_key_not_the_plugin_name(node, pod):
    objects = [node("n1", cpu="1"), pod("low", cpu="600m", priority=1), pod("high", cpu="600m", priority=100)]
    result = simulate_with([NamedLikePrioritySort, BASE[1], CpuFit], objects)
    assert result.scheduler.frameworks["default-scheduler"].queue_sort_key is None
    assert {p.key: p.status for p in result.pods} == {"default/high": "Pending", "default/low": "Bound"}
    result = simulate_with([*BASE, CpuFit], objects)
    assert result.scheduler.frameworks["default-scheduler"].queue_sort_key is not None
    assert {p.key: p.status for p in result.pods} == {"default/high": "Bound", "default/low": "Pending"}
