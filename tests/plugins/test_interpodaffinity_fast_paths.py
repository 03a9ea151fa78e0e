"""InterPodAffinity's fast paths equal its plain ones. The cache's index of assigned pods'
affinity terms (kschedfw/cache/term_index.py) and the plugin's use of it: the PreFilter counts of existing pods' required anti-affinity and
the PreScore map of existing pods' affinity terms read from it must equal upstream's walk over
every pod with affinity on every node (``getExistingAntiAffinityCounts``,
``processExistingPod``), and so must every Filter verdict, as pods with affinity come, go and
change, nodes go and come back, on seeded random clusters. Filter's inlined check equals
upstream's three checks in their order. Counts kept across cycles (``domain_counts``) follow
every change, also when the label index's log no longer reaches back."""

from __future__ import annotations

import random

import pytest

from kschedfw.api import Namespace
from kschedfw.cache.cache import Cache
from kschedfw.cache.label_index import PodLabelIndex
from kschedfw.cache.term_index import PodAffinityTermIndex
from kschedfw.fwk.cycle_state import CycleState
from kschedfw.framework.handle import Handle
from kschedfw.plugins.interpodaffinity import InterPodAffinity
from kschedfw.fwk.pod_info import pod_terms
from kschedfw.plugins.interpodaffinity.filtering import (
    PRE_FILTER_STATE_KEY, PreFilterState, failed_check, satisfy_existing_pods_anti_affinity,
    satisfy_pod_affinity, satisfy_pod_anti_affinity)
from kschedfw.plugins.interpodaffinity.scoring import PRE_SCORE_STATE_KEY
from kschedfw.testing import make_node, make_pod

ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"
NAMESPACES = ("default", "other", "team-a")


class _Lister:
    def __init__(self) -> None:
        self._ns = {"default": Namespace("default", {}), "other": Namespace("other", {"team": "b"}),
                    "team-a": Namespace("team-a", {"team": "a"})}

    def get(self, kind, name, namespace=""):
        return self._ns.get(name) if kind == "Namespace" else None

    def list(self, kind, namespace=None):
        return list(self._ns.values()) if kind == "Namespace" else []


def _term(rng):
    term = {"topologyKey": rng.choice([ZONE, HOST, "rack"]),
            "labelSelector": rng.choice([
                {"matchLabels": {"app": f"app-{rng.randrange(3)}"}},
                {"matchExpressions": [{"key": "app", "operator": "In",
                                       "values": [f"app-{rng.randrange(3)}", "app-9"]}]},
                {"matchLabels": {"app": f"app-{rng.randrange(3)}", "tier": "web"}},
                {}])}
    ns = rng.randrange(4)
    if ns == 1:
        term["namespaces"] = ["default", "other"]
    elif ns == 2:
        term["namespaceSelector"] = {"matchLabels": {"team": rng.choice(["a", "b"])}}
    elif ns == 3:
        term["namespaceSelector"] = {}
    return term


def _affinity(rng):
    """A random mix of the four term lists (possibly none)."""
    affinity = {}
    pa, paa = {}, {}
    if rng.random() < 0.4:
        pa["requiredDuringSchedulingIgnoredDuringExecution"] = [_term(rng) for _ in range(rng.randrange(1, 3))]
    if rng.random() < 0.4:
        pa["preferredDuringSchedulingIgnoredDuringExecution"] = [
            {"weight": rng.choice([1, 7, 50]), "podAffinityTerm": _term(rng)}]
    if rng.random() < 0.4:
        paa["requiredDuringSchedulingIgnoredDuringExecution"] = [_term(rng)]
    if rng.random() < 0.4:
        paa["preferredDuringSchedulingIgnoredDuringExecution"] = [
            {"weight": rng.choice([3, 50]), "podAffinityTerm": _term(rng)} for _ in range(rng.randrange(1, 3))]
    if pa:
        affinity["podAffinity"] = pa
    if paa:
        affinity["podAntiAffinity"] = paa
    return affinity or None


def _labels(rng):
    labels = {"app": f"app-{rng.randrange(3)}"}
    if rng.random() < 0.5:
        labels["tier"] = "web"
    return labels


def _node(i, rng):
    labels = {"rack": f"r{i // 3}"} if rng.random() < 0.8 else {}
    return make_node(f"n{i}", zone=f"z{i % 3}" if i % 4 else None, labels=labels)


def _results(plugin, handle, pod):
    state = CycleState()
    nodes = handle.snapshot.node_infos()
    _, status = plugin.pre_filter(state, pod, nodes)
    pre_filter = state.get(PRE_FILTER_STATE_KEY)
    counts = None
    verdicts = None
    if pre_filter is not None:
        counts = (pre_filter.existing_anti_affinity_counts, pre_filter.affinity_counts,
                  pre_filter.anti_affinity_counts)
        verdicts = []
        for ni in nodes:
            s = plugin.filter(state, pod, ni)
            verdicts.append(None if s is None else (s.code, s.reasons))
    pre_score_status = plugin.pre_score(state, pod, nodes)
    pre_score = state.get(PRE_SCORE_STATE_KEY)
    scores = None
    if pre_score is not None:
        scores = [plugin.score(state, pod, ni) for ni in nodes]
    return (status and status.code, counts, verdicts, pre_score_status and pre_score_status.code,
            None if pre_score is None else pre_score.topology_score, scores)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("hard_weight", [0, 1, 5])
def test_term_index_equals_the_walk_over_pods(seed, hard_weight, monkeypatch):
    rng = random.Random(seed * 10 + hard_weight)
    cache = Cache()
    nodes = [_node(i, rng) for i in range(9)]
    for node in nodes:
        cache.add_node(node)
    handle = Handle(snapshot=cache.update_snapshot(), lister=_Lister())
    plugin = InterPodAffinity({"hardPodAffinityWeight": hard_weight}, handle)
    placed = []
    removed_node = None
    # Odd seeds cut the indexes' logs often: kept counts are then read afresh.
    monkeypatch.setattr(PodLabelIndex, "LOG_LIMIT", 6 if seed % 2 else PodLabelIndex.LOG_LIMIT)
    monkeypatch.setattr(PodAffinityTermIndex, "LOG_LIMIT", 4 if seed % 2 else PodAffinityTermIndex.LOG_LIMIT)
    for step in range(80):
        pod = make_pod(f"in-{step}", namespace=rng.choice(NAMESPACES), labels=_labels(rng),
                       affinity=_affinity(rng))
        handle.snapshot = cache.update_snapshot()
        with_index = _results(plugin, handle, pod)
        handle.fast_paths = False  # the plain path: the same plugin walks the pods
        walked = _results(plugin, handle, pod)
        handle.fast_paths = True
        assert with_index == walked, f"step {step}"
        action = rng.random()
        if action < 0.55 or not placed:
            bound = make_pod(f"p{step}", namespace=rng.choice(NAMESPACES), labels=_labels(rng),
                             affinity=_affinity(rng), node_name=f"n{rng.randrange(9)}")
            cache.add_pod(bound)
            placed.append(bound)
        elif action < 0.75:
            cache.remove_pod(placed.pop(rng.randrange(len(placed))))
        elif action < 0.9:
            old = placed.pop(rng.randrange(len(placed)))
            new = make_pod(old.name, namespace=old.namespace, uid=old.uid, node_name=old.node_name,
                           labels=_labels(rng), affinity=_affinity(rng))
            cache.update_pod(old, new)
            placed.append(new)
        elif removed_node is None:
            removed_node = nodes[rng.randrange(9)]
            cache.remove_node(removed_node)
        else:
            cache.add_node(removed_node)
            removed_node = None


def test_index_groups_pods_by_term_and_forgets_removed_ones():
    cache = Cache()
    cache.add_node(make_node("n1"))
    cache.add_node(make_node("n2"))
    anti = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"topologyKey": HOST, "labelSelector": {"matchLabels": {"app": "a"}}}]}}
    pods = [make_pod(f"p{i}", labels={"app": "a"}, affinity=anti, node_name=f"n{1 + i % 2}")
            for i in range(3)]
    for pod in pods:
        cache.add_pod(pod)
    index = cache.update_snapshot().term_index
    assert len(index.required_anti_affinity) == 1  # identical terms are one entry
    (nodes,) = index.required_anti_affinity.values()
    assert sorted((ni.name, n) for ni, n in nodes.items()) == [("n1", 2), ("n2", 1)]
    for pod in pods:
        cache.remove_pod(pod)
    assert not index.required_anti_affinity and len(index) == 0


def test_node_that_arrives_after_its_pods_joins_the_snapshot():
    """A pod can reach the cache before its node (upstream keeps a NodeInfo without a node);
    when the node comes, the next snapshot lists it, so every plugin sees it, as upstream's
    UpdateSnapshot does for any node in the node tree."""
    cache = Cache()
    cache.add_node(make_node("n1"))
    assert [ni.name for ni in cache.update_snapshot().node_infos()] == ["n1"]
    cache.add_pod(make_pod("early", node_name="n2"))
    cache.add_node(make_node("n2"))
    assert sorted(ni.name for ni in cache.update_snapshot().node_infos()) == ["n1", "n2"]


@pytest.mark.parametrize("seed", range(3))
def test_filter_check_equals_the_three_satisfy_functions(seed):
    """Filter's inlined check gives, on every node, the first of upstream's three checks
    (affinity, anti-affinity, existing pods' anti-affinity) that fails."""
    rng = random.Random(seed)
    nodes = [_node(i, rng) for i in range(12)]
    for step in range(300):
        pod = make_pod(f"in-{step}", labels=_labels(rng), affinity=_affinity(rng))
        terms = pod_terms(pod)
        state = PreFilterState(pod, terms.required_affinity, terms.required_anti_affinity, None)
        for counts in (state.affinity_counts, state.anti_affinity_counts,
                       state.existing_anti_affinity_counts):
            for _ in range(rng.randrange(3)):
                key = rng.choice([ZONE, HOST, "rack"])
                counts.setdefault(key, {})[rng.choice(["z0", "z1", "n1", "n2", "r0", "r1"])] = rng.randrange(1, 3)
        for node in nodes:
            labels = node.labels
            expected = (1 if terms.required_affinity and not satisfy_pod_affinity(state, labels) else
                        2 if state.anti_affinity_counts and not satisfy_pod_anti_affinity(state, labels) else
                        3 if not satisfy_existing_pods_anti_affinity(state, labels) else 0)
            assert failed_check(state, labels) == expected, f"step {step}, node {node.name}"
