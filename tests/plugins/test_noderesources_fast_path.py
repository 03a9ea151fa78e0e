"""The cpu+memory fast paths of NodeResourcesFit (LeastAllocated) and BalancedAllocation give
exactly the general scorers' results."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from kschedfw.fwk.cycle_state import CycleState
from kschedfw.fwk.types import NodeInfo
from kschedfw.plugins.noderesources.balanced_allocation import NodeResourcesBalancedAllocation
from kschedfw.plugins.noderesources.fit import NodeResourcesFit
from kschedfw.testing import make_node, make_pod

quantity = st.integers(min_value=0, max_value=64_000)


def node(cpu_m, mem_mi):
    return make_node("n", cpu=f"{cpu_m}m", memory=f"{mem_mi}Mi")


def pod(name, cpu_m, mem_mi, node_name=""):
    return make_pod(name, cpu=None if cpu_m is None else f"{cpu_m}m",
                    memory=None if mem_mi is None else f"{mem_mi}Mi", node_name=node_name)


maybe = st.one_of(st.none(), quantity)


@settings(max_examples=300, deadline=None)
@given(cap_cpu=quantity, cap_mem=quantity, used=st.lists(st.tuples(maybe, maybe), max_size=4),
       incoming=st.tuples(maybe, maybe), weights=st.tuples(st.integers(1, 5), st.integers(1, 5)))
def test_fast_paths_equal_general_scorers(cap_cpu, cap_mem, used, incoming, weights):
    info = NodeInfo(node=node(cap_cpu, cap_mem))
    for i, (c, m) in enumerate(used):
        info.add_pod(pod(f"e{i}", c, m, "n"))
    p = pod("p", *incoming)
    fit = NodeResourcesFit({"scoringStrategy": {"type": "LeastAllocated", "resources": [
        {"name": "cpu", "weight": weights[0]}, {"name": "memory", "weight": weights[1]}]}}, None)
    balanced = NodeResourcesBalancedAllocation({}, None)
    for plugin in (fit, balanced):
        for _ in range(2):  # the second round checks that remembered per-node values follow changes
            state = CycleState()
            if plugin.pre_score(state, p, [info]) is not None:
                break  # best-effort pod: BalancedAllocation skips
            fast = plugin.score(state, p, info)
            general = plugin.scorer.score(info, plugin.scorer.pod_requests(p))
            assert fast == general
            info.add_pod(pod(f"more-{plugin.name}", 250, 128, "n"))
