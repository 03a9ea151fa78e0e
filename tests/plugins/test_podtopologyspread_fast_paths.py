"""PodTopologySpread's fast paths equal its plain ones: with the cache's pod label index, PreFilter
counts pods only on the nodes that can host a selected pod (every domain still recorded, in node
order) and PreScore likewise; the states, critical paths, Filter verdicts and scores must equal
those of upstream's walk over every node's pods, on seeded random clusters with namespaces,
terminating pods, taints, node selectors, inclusion policies, every selector operator and nodes
changing their topology labels."""

from __future__ import annotations

import random

import pytest

from kschedfw.api import LabelSelector, LabelSelectorRequirement, Taint
from kschedfw.cache.cache import Cache
from kschedfw.fwk.cycle_state import CycleState
from kschedfw.framework.handle import Handle
from kschedfw.plugins.podtopologyspread import PodTopologySpread
from kschedfw.plugins.podtopologyspread.filtering import PRE_FILTER_STATE_KEY
from kschedfw.plugins.podtopologyspread.scoring import PRE_SCORE_STATE_KEY

from tests.plugins.podtopologyspread_builders import (DNS, HONOR, HOSTNAME, IGNORE, SA, ZONE,
                                                      FakeLister, st_node, st_pod, spread)

TAINT = Taint("dedicated", "x", "NoSchedule")


def _selector(rng):
    app = f"app-{rng.randrange(3)}"
    return rng.choice([
        LabelSelector({"app": app}),
        LabelSelector({"app": app, "tier": "web"}),
        LabelSelector({}, (LabelSelectorRequirement("app", "In", (app, "app-9")),)),
        LabelSelector({}, (LabelSelectorRequirement("app", "In", (app,)),
                           LabelSelectorRequirement("tier", "NotIn", ("db",)))),
        LabelSelector({}, (LabelSelectorRequirement("tier", "Exists"),)),
        LabelSelector({}),
        None,
    ])


def _constraints(rng):
    out = []
    for key in rng.sample([ZONE, HOSTNAME, "rack"], rng.randrange(1, 3)):
        out.append(spread(rng.choice([1, 2]), key, rng.choice([DNS, SA]), _selector(rng),
                          min_domains=rng.choice([None, 2, 5]) if rng.random() < 0.3 else None,
                          affinity_policy=rng.choice([None, HONOR, IGNORE]),
                          taints_policy=rng.choice([None, HONOR, IGNORE]),
                          match_label_keys=("tier",) if rng.random() < 0.2 else ()))
    return out


def _labels(rng):
    labels = {"app": f"app-{rng.randrange(3)}"}
    if rng.random() < 0.5:
        labels["tier"] = rng.choice(["web", "db"])
    return labels


def _incoming(rng, step):
    return st_pod(f"in-{step}", ns=rng.choice(["default", "other"]), labels=_labels(rng),
                    constraints=_constraints(rng),
                    node_selector={"pool": "a"} if rng.random() < 0.2 else None,
                    tolerate=("dedicated",) if rng.random() < 0.3 else ())


def _results(plugin, handle, pod):
    state = CycleState()
    nodes = handle.snapshot.node_infos()
    _, status = plugin.pre_filter(state, pod, nodes)
    pre = state.get(PRE_FILTER_STATE_KEY)
    filtered = None
    if pre is not None:
        filtered = ([list(m.items()) for m in pre.tp_value_to_match_num],
                    [p.as_tuple() for p in pre.critical_paths],
                    [None if (v := plugin.filter(state, pod, ni)) is None else (v.code, v.reasons)
                     for ni in nodes])
    feasible = [ni for ni in nodes if ni.node is not None]
    score_status = plugin.pre_score(state, pod, feasible)
    post = state.get(PRE_SCORE_STATE_KEY)
    scored = None
    if post is not None and score_status is None:
        scored = ([list(m.items()) for m in post.topology_value_to_pod_counts],
                  sorted(post.ignored_nodes), [plugin.score(state, pod, ni) for ni in feasible])
    return (status and status.code, filtered, score_status and score_status.code, scored)


@pytest.mark.parametrize("seed", range(8))
def test_indexed_counts_equal_the_walk_over_pods(seed):
    rng = random.Random(seed)
    cache = Cache()
    for i in range(10):
        labels = {HOSTNAME: f"n{i}"}
        if i % 5:
            labels[ZONE] = f"z{i % 3}"
        if rng.random() < 0.7:
            labels["rack"] = f"r{i // 4}"
        if rng.random() < 0.5:
            labels["pool"] = "a"
        cache.add_node(st_node(f"n{i}", labels, taints=(TAINT,) if rng.random() < 0.2 else ()))
    handle = Handle(snapshot=cache.update_snapshot(), lister=FakeLister())
    plugin = PodTopologySpread({"defaultingType": "List"}, handle)
    placed = []
    for step in range(70):
        pod = _incoming(rng, step)
        handle.snapshot = cache.update_snapshot()
        with_index = _results(plugin, handle, pod)
        handle.fast_paths = False  # the plain path: the same plugin walks the pods
        walked = _results(plugin, handle, pod)
        handle.fast_paths = True
        assert with_index == walked, f"step {step}"
        action = rng.random()
        if action < 0.1:  # a node changes its topology labels (the domains change)
            node = rng.choice(handle.snapshot.node_infos()).node
            labels = dict(node.labels)
            labels[rng.choice([ZONE, "rack"])] = f"new-{step}"
            if rng.random() < 0.3:
                labels.pop(ZONE, None)
            cache.update_node(node, st_node(node.name, labels, taints=node.taints))
        elif action < 0.7 or not placed:
            bound = st_pod(f"p{step}", ns=rng.choice(["default", "other"]), labels=_labels(rng),
                             node=f"n{rng.randrange(10)}", terminating=rng.random() < 0.15)
            cache.add_pod(bound)
            placed.append(bound)
        else:
            cache.remove_pod(placed.pop(rng.randrange(len(placed))))


@pytest.mark.parametrize("seed", range(4))
def test_counts_kept_across_cycles_follow_every_change(seed):
    """One-label counts (PreFilter and PreScore) are kept from cycle to cycle and updated from
    the label index's log of changed pods (bound, deleted, relabelled, turned terminating); they
    must stay equal to a fresh walk, also when the log no longer reaches back and when nodes
    change."""
    from kschedfw.cache.label_index import PodLabelIndex

    rng = random.Random(100 + seed)
    cache = Cache()
    for i in range(8):
        labels = {HOSTNAME: f"n{i}", "rack": f"r{i // 3}"}
        if i % 4:
            labels[ZONE] = f"z{i % 3}"
        cache.add_node(st_node(f"n{i}", labels))
    handle = Handle(snapshot=cache.update_snapshot(), lister=FakeLister())
    plugin = PodTopologySpread({"defaultingType": "List"}, handle)
    placed = []
    limit = PodLabelIndex.LOG_LIMIT
    PodLabelIndex.LOG_LIMIT = 16  # the log is cut often: some cycles read the index afresh
    try:
        for step in range(150):
            app = f"app-{rng.randrange(2)}"
            key = rng.choice([ZONE, "rack", HOSTNAME])
            pod = st_pod(f"in-{step}", ns=rng.choice(["default", "other"]), labels={"app": app},
                           constraints=[spread(1, key, rng.choice([DNS, SA]),
                                               LabelSelector({"app": app}))])
            handle.snapshot = cache.update_snapshot()
            with_index = _results(plugin, handle, pod)
            handle.fast_paths = False  # the plain path: the same plugin walks the pods
            walked = _results(plugin, handle, pod)
            handle.fast_paths = True
            assert with_index == walked, f"step {step}"
            for _ in range(rng.randrange(1, 4)):
                action = rng.random()
                if action < 0.03:
                    node = rng.choice(handle.snapshot.node_infos()).node
                    labels = dict(node.labels)
                    labels["rack"] = f"r-{step}"
                    cache.update_node(node, st_node(node.name, labels))
                elif action < 0.6 or not placed:
                    bound = st_pod(f"p{step}-{action}", ns=rng.choice(["default", "other"]),
                                     labels={"app": f"app-{rng.randrange(2)}"},
                                     node=f"n{rng.randrange(8)}", terminating=rng.random() < 0.1)
                    cache.add_pod(bound)
                    placed.append(bound)
                elif action < 0.8:
                    cache.remove_pod(placed.pop(rng.randrange(len(placed))))
                else:
                    old = placed.pop(rng.randrange(len(placed)))
                    new = st_pod(old.name, ns=old.namespace, uid=old.uid, node=old.node_name,
                                   labels={"app": f"app-{rng.randrange(2)}"},
                                   terminating=rng.random() < 0.3)
                    cache.update_pod(old, new)
                    placed.append(new)
    finally:
        PodLabelIndex.LOG_LIMIT = limit
