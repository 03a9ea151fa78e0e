"""What the runtime keeps per node between cycles (the nominated-pods pass's clones, its outcomes
per Filter verdict key, the entries derived from the nominator's kept lists: one invariant, see
``framework.node_stamp``) never changes a result: seeded random clusters give the same Filter
statuses, scores and placements with ``fast_paths`` on and off.

Each step schedules a pod of one of a few shapes (so later pods meet what earlier ones left),
places it on its best node (the snapshot's NodeInfo changes, as the cache changes it), and now and
then moves nominations of several priorities around, or cordons a node.
"""

from __future__ import annotations

import random

import pytest

from kschedfw.cache.snapshot import Snapshot
from kschedfw.config.validate import default_config
from kschedfw.fwk.cycle_state import CycleState
from kschedfw.framework.handle import Handle
from kschedfw.framework.registry import default_registry
from kschedfw.framework.runtime import Framework
from kschedfw.fwk.types import NominatingInfo, NominatingMode
from kschedfw.queue.nominator import Nominator
from kschedfw.testing import make_node, make_pod, taint, toleration


def _cluster(rng: random.Random):
    nodes = [make_node(f"n{i}", cpu=rng.choice(["2", "4"]), memory="8Gi", pods=rng.choice(["3", "110"]),
                       labels={"disk": rng.choice(["ssd", "hdd"])},
                       taints=[taint("gpu")] if rng.random() < 0.2 else ())
             for i in range(rng.randint(16, 40))]
    pods = [make_pod(f"run{i}", cpu=rng.choice(["500m", "1"]), memory="256Mi", node_name=rng.choice(nodes).name)
            for i in range(rng.randint(10, 40))]
    return nodes, pods


def _shapes(rng: random.Random):
    return [dict(cpu=rng.choice(["300m", "700m", "1500m"]), memory="128Mi", priority=rng.choice([0, 10, 100]),
                 node_selector={"disk": "ssd"} if rng.random() < 0.3 else None,
                 tolerations=[toleration("gpu", operator="Exists")] if rng.random() < 0.3 else ())
            for _ in range(4)]


class _Side:
    """One framework (fast paths on or off) over its own copy of the cluster and nominations."""

    def __init__(self, nodes, pods, fast_paths: bool) -> None:
        registry = default_registry()
        self.snapshot = Snapshot.from_objects(nodes, pods)
        self.held: dict[str, object] = {}
        self.nominator = Nominator(resolve=lambda pod: pod, held=self.held)
        handle = Handle.factory(snapshot=self.snapshot, nominator=self.nominator)
        self.framework = Framework(default_config(registry).profiles[0], registry, handle=handle, fast_paths=fast_paths)

    def nominate(self, pod, node_name: str) -> None:
        self.held[pod.uid] = pod
        self.nominator.add_nominated_pod(pod, NominatingInfo(node_name, NominatingMode.Override))

    def forget(self, pod) -> None:
        self.held.pop(pod.uid, None)
        self.nominator.delete_nominated_pod_if_exists(pod)

    def schedule(self, pod, start: int, to_find: int):
        """Filter, Score and place ``pod``: what each gave, and the node chosen (or None)."""
        fwk, nodes = self.framework, self.snapshot.node_infos()
        state = CycleState()
        _, status, _ = fwk.run_pre_filter_plugins(state, pod, nodes)
        if status is not None:
            return ("prefilter", status.code, status.reasons), None
        feasible, rejected, failure = fwk.filter_nodes(state, pod, nodes, start % len(nodes), to_find,
                                                       self.nominator.nominated_node_names())
        facts: list = [[ni.name for ni in feasible], [(ni.name, st.code, st.reasons, st.plugin) for ni, st in rejected],
                       None if failure is None else failure.message()]
        if failure is not None or not feasible:
            return facts, None
        assert fwk.run_pre_score_plugins(state, pod, feasible) is None
        totals, status = fwk.run_score_plugins_totals(state, pod, feasible)
        assert status is None
        facts.append(totals)
        best = max(range(len(feasible)), key=lambda i: (totals[i], -i))
        chosen = feasible[best]
        chosen.add_pod(pod.with_node(chosen.name))  # as the cache does: the node's generation moves
        facts.append(chosen.name)
        return facts, chosen.name


@pytest.mark.parametrize("seed", range(10))
def test_kept_node_results_change_nothing(seed):
    rng = random.Random(seed)
    nodes, pods = _cluster(rng)
    fast, plain = _Side(nodes, pods, True), _Side(nodes, pods, False)
    shapes = _shapes(rng)
    node_names = [n.name for n in nodes]
    nominated: list = []
    for step in range(60):
        roll = rng.random()
        if roll < 0.25 or len(nominated) < 3:
            shape = rng.choice(shapes)
            pod = make_pod(f"nom{step}", cpu=shape["cpu"], memory="128Mi", priority=rng.choice([0, 10, 100, 1000]))
            where = rng.choice(node_names)
            nominated.append(pod)
            for side in (fast, plain):
                side.nominate(pod, where)
        elif roll < 0.35:
            gone = nominated.pop(rng.randrange(len(nominated)))
            for side in (fast, plain):
                side.forget(gone)
        shape = rng.choice(shapes)
        pod = make_pod(f"p{step}", **shape)
        if rng.random() < 0.15:  # the pod being scheduled is itself nominated somewhere
            pod = nominated.pop(rng.randrange(len(nominated)))
        start, to_find = rng.randrange(100), rng.choice([1, 5, 20, 100])
        expected, placed = plain.schedule(pod, start, to_find)
        assert fast.schedule(pod, start, to_find) == (expected, placed), f"seed {seed} step {step}"
        if pod in nominated or placed is not None:
            for side in (fast, plain):
                side.forget(pod)
    kept = fast.framework.nominated._kept
    assert not plain.framework.nominated._kept
    # the fast side did keep and reuse clones and outcomes, so the comparison means something
    assert any(entry.info is not None for entry in kept.values())
    assert any(entry.outcomes for entry in kept.values())


def _plan_key(classes, pod):
    from kschedfw.testing import framework_for
    fwk = framework_for(classes)
    state = CycleState()
    fwk.run_pre_filter_plugins(state, pod, [])
    return fwk.filter_verdict_key(state, pod)


def test_a_verdict_key_is_composed_only_when_every_filter_plugin_declares_one():
    from kschedfw import hookimpl
    from kschedfw.plugins.nodename import NodeName
    from kschedfw.plugins.tainttoleration import TaintToleration

    class NoKey:
        name = "NoKey"

        def __init__(self, args, handle):
            pass

        @hookimpl
        def filter(self, state, pod, node_info):
            return None

    class StrictNodeName(NodeName):
        """Overrides filter: NodeName's verdict key does not describe it."""
        name = "StrictNodeName"

        @hookimpl
        def filter(self, state, pod, node_info):
            return None

    pod = make_pod("p", node_name="n1", tolerations=[toleration("gpu", operator="Exists")])
    assert _plan_key([NodeName, TaintToleration], pod) == (("NodeName", "n1"), ("TaintToleration", pod.tolerations))
    assert _plan_key([NodeName, NoKey], pod) is None
    assert _plan_key([StrictNodeName], pod) is None
