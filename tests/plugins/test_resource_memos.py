"""Per-node memos (the Handle's ``node_memo``, kschedfw/fwk/node_reuse.py): NodeResourcesFit's Filter and Score and
BalancedAllocation's Score must give, cycle after cycle, exactly what a plugin without memos
gives (upstream computes every node afresh each cycle), whatever changed on the nodes between
cycles: pods bound or removed, the node object replaced (allocatable changed), requests that
differ from the previous pod's, and clones (preemption dry runs) of the same NodeInfo."""

from __future__ import annotations

import random

import attrs
import pytest

from kschedfw.fwk.cycle_state import CycleState
from kschedfw.fwk.types import NodeInfo
from kschedfw.framework.handle import Handle
from kschedfw.plugins.noderesources.balanced_allocation import NodeResourcesBalancedAllocation
from kschedfw.plugins.noderesources.fit import NodeResourcesFit
from kschedfw.testing import make_node, make_pod


def _pod(name, cpu, mem, node_name=""):
    return make_pod(name, cpu=f"{cpu}m", memory=f"{mem}Mi", node_name=node_name)


def _cycle(plugins, pod, infos):
    """One scheduling cycle of the three hooks: (filter verdicts, fit scores, balanced scores)."""
    fit, balanced = plugins
    state = CycleState()
    fit.pre_filter(state, pod, infos)
    verdicts = [None if (s := fit.filter(state, pod, ni)) is None else tuple(s.reasons) for ni in infos]
    feasible = [ni for ni, v in zip(infos, verdicts) if v is None]
    fit.pre_score(state, pod, feasible)
    skipped = balanced.pre_score(state, pod, feasible) is not None
    return (verdicts, [fit.score(state, pod, ni) for ni in feasible],
            None if skipped else [balanced.score(state, pod, ni) for ni in feasible])


def _plugins(fast_paths: bool = True):
    handle = Handle(fast_paths=fast_paths)
    return NodeResourcesFit({}, handle), NodeResourcesBalancedAllocation({}, handle)


@pytest.mark.parametrize("seed", range(5))
def test_memoised_cycles_equal_fresh_plugins(seed):
    rng = random.Random(seed)
    infos = [NodeInfo(node=make_node(f"n{i}", cpu=f"{rng.choice([1000, 2000, 4000])}m",
                                     memory=f"{rng.choice([1024, 4096])}Mi", pods=str(rng.choice([3, 110]))))
             for i in range(12)]
    memoised = _plugins()
    requests = [(100, 128), (100, 128), (500, 1024), (100, 128), (2500, 3000)]
    for step in range(60):
        cpu, mem = rng.choice(requests)
        pod = _pod(f"p{step}", cpu, mem)
        expected = _cycle(_plugins(), pod, infos)  # fresh plugins: no memo
        assert _cycle(memoised, pod, infos) == expected, f"step {step}"
        # a clone, as a preemption dry run makes, with one pod fewer, gives what a fresh plugin gives
        clone = infos[step % len(infos)].clone()
        if clone.pods:
            clone.remove_pod(clone.pods[0])
        assert _cycle(memoised, pod, [clone]) == _cycle(_plugins(), pod, [clone])
        # change the cluster as binds, deletions and node updates would
        target = rng.choice(infos)
        action = rng.random()
        if action < 0.6:
            target.add_pod(_pod(f"bound{step}", cpu, mem, target.name))
        elif action < 0.8 and target.pods:
            target.remove_pod(target.pods[-1])
        else:  # the node object replaced, as the cache does on a node update
            node = target.node
            target.set_node(attrs.evolve(node, allocatable={**node.allocatable, "cpu": node.allocatable["cpu"] + 500}))
            target.generation += 1


def test_plain_path_when_memos_are_off():
    """With the fast paths off the Handle's memos keep nothing and the results are the same."""
    infos = [NodeInfo(node=make_node(f"n{i}", cpu="2", memory="4Gi")) for i in range(3)]
    pod = _pod("p", 100, 128)
    plugins = _plugins(fast_paths=False)
    assert _cycle(plugins, pod, infos) == _cycle(_plugins(), pod, infos)
    assert plugins[0]._fit_memos._memos == {} and plugins[1]._memos._memos == {}
    assert plugins[0]._filter_cycle[2] == {} and plugins[1]._cycle[2] == {}


@pytest.mark.parametrize("seed", range(3))
def test_filter_reasons_equal_fits(seed):
    """Filter's allocation-free verdict names the shortages `fits` lists, in upstream's order,
    unresolvable exactly when one request exceeds the node's whole allocatable."""
    from kschedfw.fwk.status import Code
    from kschedfw.plugins.noderesources.fit import compute_pod_resource_request, fits_request

    rng = random.Random(seed)
    plugin = NodeResourcesFit({}, None)
    for step in range(80):
        info = NodeInfo(node=make_node("n", cpu=f"{rng.randrange(0, 3000)}m", memory=f"{rng.randrange(0, 3000)}Mi",
                                       pods=str(rng.randrange(0, 3)),
                                       extra_allocatable={"example.com/gpu": str(rng.randrange(0, 3))}))
        for i in range(rng.randrange(0, 3)):
            info.add_pod(_pod(f"e{i}", rng.randrange(0, 1500), rng.randrange(0, 1500), "n"))
        pod = make_pod("p", cpu=f"{rng.randrange(0, 2000)}m", memory=f"{rng.randrange(0, 2000)}Mi",
                       requests={"example.com/gpu": str(rng.randrange(0, 4))})
        state = CycleState()
        plugin.pre_filter(state, pod, [info])
        status = plugin.filter(state, pod, info)
        expected = fits_request(compute_pod_resource_request(pod), info)
        if not expected:
            assert status is None
        else:
            assert status.reasons == tuple(r.reason for r in expected)
            unresolvable = any(r.unresolvable for r in expected)
            assert status.code is (Code.UnschedulableAndUnresolvable if unresolvable else Code.Unschedulable)


def _filter_outcomes(plugin, pod, infos, whole_list):
    """One cycle's Filter results as comparable values: None or (code, reasons, plugin), through
    ``filter`` per node or ``filter_nodes``; every returned Status then gets its plugin set, as
    the framework does: a remembered Status handed out again would show it next cycle."""
    state = CycleState()
    plugin.pre_filter(state, pod, infos)
    statuses = plugin.filter_nodes(state, pod, infos) if whole_list else None
    if statuses is None:  # per node (the framework does so when filter_nodes declines)
        statuses = [plugin.filter(state, pod, ni) for ni in infos]
    out = [None if s is None else (s.code, s.reasons, s.plugin) for s in statuses]
    for s in statuses:
        if s is not None:
            s.plugin = "SetByTheFramework"
    return out, statuses


@pytest.mark.parametrize("whole_list", [False, True])
@pytest.mark.parametrize("memos_on", [True, False])
@pytest.mark.parametrize("seed", range(4))
def test_remembered_rejections_equal_fresh_ones(seed, memos_on, whole_list):
    """Upstream works out every node's shortages afresh each cycle: the remembered rejections of
    full nodes (code, reasons, no plugin name) equal a fresh plugin's on a cluster that changes
    between cycles (binds, deletions, node updates, pod-count limits), with memos on or off,
    and each call hands out a Status of its own."""
    rng = random.Random(seed)
    infos = [NodeInfo(node=make_node(f"n{i}", cpu=f"{rng.choice([300, 1000, 2000])}m",
                                     memory=f"{rng.choice([256, 1024, 4096])}Mi", pods=str(rng.choice([1, 2, 110]))))
             for i in range(16)]
    memoised = NodeResourcesFit({}, Handle(fast_paths=memos_on))
    requests = [(100, 128), (100, 128), (900, 512), (100, 128), (2500, 3000), (400, 2048)]
    for step in range(80):
        cpu, mem = rng.choice(requests)
        pod = _pod(f"p{step}", cpu, mem)
        got, _ = _filter_outcomes(memoised, pod, infos, whole_list)
        expected, _ = _filter_outcomes(NodeResourcesFit({}, None), pod, infos, False)
        assert got == expected, f"step {step}"
        target = rng.choice(infos)
        action = rng.random()
        if action < 0.6:
            target.add_pod(_pod(f"bound{step}", cpu, mem, target.name))
        elif action < 0.85 and target.pods:
            target.remove_pod(target.pods[-1])
        else:  # the node object replaced, as the cache does on a node update
            node = target.node
            target.set_node(attrs.evolve(node, allocatable={**node.allocatable,
                                                            "cpu": node.allocatable["cpu"] + 300}))
            target.generation += 1
    assert any(v is not None for v in got)  # the cluster filled up: rejections were compared
