"""The cache's pod label index (kschedfw/cache/label_index.py) and InterPodAffinity's use of it:
PreFilter counts and PreScore maps read from the index must equal those of the walk over every
assigned pod (upstream's getIncomingAffinityAntiAffinityCounts / processExistingPod), as pods
come, go and change labels."""

from __future__ import annotations

import random

import pytest

from kschedfw.cache.cache import Cache
from kschedfw.fwk.cycle_state import CycleState
from kschedfw.framework.handle import Handle
from kschedfw.plugins.interpodaffinity import InterPodAffinity
from kschedfw.plugins.interpodaffinity.filtering import PRE_FILTER_STATE_KEY
from kschedfw.plugins.interpodaffinity.scoring import PRE_SCORE_STATE_KEY
from kschedfw.testing import make_node, make_pod

ZONE = "topology.kubernetes.io/zone"


def _term(key, app, namespaces=None):
    term = {"topologyKey": key, "labelSelector": {"matchLabels": {"app": app}}}
    if namespaces is not None:
        term["namespaces"] = namespaces
    return term


def _incoming(rng, i):
    """A pod with a random mix of required and preferred (anti-)affinity terms."""
    app = f"app-{rng.randrange(3)}"
    key = rng.choice([ZONE, "kubernetes.io/hostname"])
    affinity = {}
    choice = rng.randrange(4)
    if choice == 0:
        affinity["podAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": [_term(key, app)]}
    elif choice == 1:
        affinity["podAntiAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": [
            _term(key, app, rng.choice([None, ["default"], ["other", "default"]]))]}
    elif choice == 2:
        affinity["podAffinity"] = {"preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 7, "podAffinityTerm": _term(key, app)}]}
        affinity["podAntiAffinity"] = {"preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 3, "podAffinityTerm": _term(ZONE, f"app-{rng.randrange(3)}")}]}
    else:
        affinity["podAntiAffinity"] = {"preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 5, "podAffinityTerm": {"topologyKey": key, "namespaceSelector": {},
                                              "labelSelector": {"matchLabels": {"app": app}}}}]}
    return make_pod(f"in-{i}", labels={"app": app}, affinity=affinity)


def _states(plugin, handle, pod):
    state = CycleState()
    nodes = handle.snapshot.node_infos()
    _, status = plugin.pre_filter(state, pod, nodes)
    pre_filter = state.get(PRE_FILTER_STATE_KEY)
    filter_counts = None if pre_filter is None else (pre_filter.affinity_counts, pre_filter.anti_affinity_counts)
    pre_score_status = plugin.pre_score(state, pod, nodes)
    pre_score = state.get(PRE_SCORE_STATE_KEY)
    return (status and status.code, filter_counts, pre_score_status and pre_score_status.code,
            None if pre_score is None else pre_score.topology_score)


@pytest.mark.parametrize("seed", range(4))
def test_indexed_counts_equal_the_walk_over_pods(seed):
    rng = random.Random(seed)
    cache = Cache()
    for i in range(8):
        cache.add_node(make_node(f"n{i}", zone=f"z{i % 3}"))
    handle = Handle(snapshot=cache.update_snapshot())
    plugin = InterPodAffinity({}, handle)
    placed = []
    for step in range(60):
        pod = _incoming(rng, step)
        handle.snapshot = cache.update_snapshot()
        with_index = _states(plugin, handle, pod)
        handle.fast_paths = False  # the plain path: the same plugin walks the pods
        walked = _states(plugin, handle, pod)
        handle.fast_paths = True
        assert with_index == walked, f"step {step}"
        # change the cluster: bind, delete, or relabel a bound pod
        action = rng.random()
        if action < 0.6 or not placed:
            bound = make_pod(f"p{step}", namespace=rng.choice(["default", "other"]),
                             labels={"app": f"app-{rng.randrange(3)}"}, node_name=f"n{rng.randrange(8)}")
            cache.add_pod(bound)
            placed.append(bound)
        elif action < 0.8:
            cache.remove_pod(placed.pop(rng.randrange(len(placed))))
        else:
            old = placed.pop(rng.randrange(len(placed)))
            new = make_pod(old.name, namespace=old.namespace, uid=old.uid, node_name=old.node_name,
                           labels={"app": f"app-{rng.randrange(3)}"})
            cache.update_pod(old, new)
            placed.append(new)


def test_index_forgets_removed_pods():
    cache = Cache()
    cache.add_node(make_node("n1"))
    pod = make_pod("p", labels={"app": "a"}, node_name="n1")
    cache.add_pod(pod)
    index = cache.update_snapshot().label_index
    assert [(ni.name, dict(c)) for ni, c in index.nodes_with("app", "a").items()] == [("n1", {"default": 1})]
    cache.remove_pod(pod)
    assert not index.nodes_with("app", "a")


def test_snapshot_affinity_lists_follow_the_pods():
    """The snapshot's lists of nodes with (anti-)affinity pods, recomputed only when a node
    enters or leaves them, always equal a scan of the nodes."""
    rng = random.Random(7)
    cache = Cache()
    for i in range(6):
        cache.add_node(make_node(f"n{i}"))
    anti = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [_term(ZONE, "a")]}}
    soft = {"podAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": 1, "podAffinityTerm": _term(ZONE, "a")}]}}
    placed = []
    for step in range(80):
        if rng.random() < 0.6 or not placed:
            pod = make_pod(f"p{step}", node_name=f"n{rng.randrange(6)}", affinity=rng.choice([None, anti, soft]))
            cache.add_pod(pod)
            placed.append(pod)
        else:
            cache.remove_pod(placed.pop(rng.randrange(len(placed))))
        snapshot = cache.update_snapshot()
        infos = snapshot.node_infos()
        assert snapshot.have_pods_with_affinity() == [ni for ni in infos if ni.pods_with_affinity]
        assert snapshot.have_pods_with_required_anti_affinity() == [
            ni for ni in infos if ni.pods_with_required_anti_affinity]
