"""Filter with nominated pods (upstream RunFilterPluginsWithNominatedPods: two passes when
pods of at least the pod's priority are nominated to the node, one pass when none is) gives
the same placements and the same Preempted events whether Filter takes the plugins' whole-list
forms (chunks of nodes, plugin by plugin) or their per-node hooks (``Simulation(...,
fast_paths=False)``, which also leaves every memo out). What the pass keeps between cycles is
compared with ``fast_paths`` off in test_kept_node_results.

Seeded clusters big enough for the chunked Filter (at least 16 nodes), full of low-priority
pods, with preemptors of several priorities and a few pods that stay nominated (too big to fit,
never preempting): a node's nominated pods are sometimes of a lower priority than the pod being
filtered (nothing to add, the plain Filter) and sometimes not.
"""

from __future__ import annotations

import random

import pytest

from kschedfw.config.validate import default_config
from kschedfw.framework.nominated import PLAIN, NominatedPods
from kschedfw.framework.registry import default_registry
from kschedfw.testing import make_node, make_pod


def _run(seed: int, fast_paths: bool = True):
    from kschedfw.api import parse_object
    from kschedfw.simulation import Simulation

    r = random.Random(seed)
    objects = [parse_object({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                             "metadata": {"name": name}, "value": value, "preemptionPolicy": policy})
               for name, value, policy in (("low", 10, "PreemptLowerPriority"), ("mid", 100, "PreemptLowerPriority"),
                                           ("high", 1000, "PreemptLowerPriority"), ("mid-never", 100, "Never"),
                                           ("high-never", 1000, "Never"))]
    nodes = [make_node(f"n{i}", cpu=r.choice(["2", "4"]), memory="4Gi", pods=r.choice(["4", "110"]),
                       labels={"disk": r.choice(["ssd", "hdd"])}) for i in range(r.randint(16, 30))]
    objects += nodes
    for node in nodes:
        for i in range(r.randint(2, 4)):
            objects.append(make_pod(f"low-{node.name}-{i}", node_name=node.name, priority_class_name="low",
                                    cpu=r.choice(["500m", "900m"]), memory="128Mi",
                                    start_time=f"2026-01-01T00:00:{r.randrange(50):02d}Z"))
    for i in range(r.randint(2, 5)):  # nominated, never placed (too big, never preempt): stay nominated
        objects.append(make_pod(f"stuck{i}", priority_class_name=r.choice(["mid-never", "high-never"]), cpu="64",
                                memory="128Mi",
                                nominated_node_name=r.choice(nodes).name))
    for t in range(r.randint(3, 5)):
        cls, cpu = r.choice(["mid", "high"]), r.choice(["500m", "1", "1500m"])
        ssd = r.random() < 0.2
        for i in range(r.randint(4, 10)):
            objects.append(make_pod(f"t{t}-{i}", priority_class_name=cls, cpu=cpu, memory="128Mi",
                                    node_selector={"disk": "ssd"} if ssd else None))
    registry = default_registry()
    return Simulation(default_config(registry), registry, objects, seed=seed, fast_paths=fast_paths).run()


def _preempted(result):
    return [(e.object_key, e.message) for e in result.cluster.events if e.reason == "Preempted"]


@pytest.mark.parametrize("seed", range(12))
def test_runs_place_and_preempt_alike_without_the_kept_entries_and_chunks(seed, monkeypatch):
    outcomes: list = []
    real = NominatedPods.outcome

    def counting(self, ctx, state, pod, node_info):
        out = real(self, ctx, state, pod, node_info)
        outcomes.append(out is PLAIN)
        return out

    monkeypatch.setattr(NominatedPods, "outcome", counting)
    fast = _run(seed)
    plain = _run(seed, fast_paths=False)
    assert fast.pods == plain.pods
    assert _preempted(fast) == _preempted(plain)
    assert _preempted(fast)
    assert outcomes  # nodes with nominated pods met the pod being filtered


def test_some_runs_meet_nodes_with_only_lower_priority_nominations(monkeypatch):
    """The single-pass case (nothing of the pod's priority or higher nominated) is exercised."""
    plain_seen = []
    real = NominatedPods.outcome

    def counting(self, ctx, state, pod, node_info):
        out = real(self, ctx, state, pod, node_info)
        plain_seen.append(out is PLAIN)
        return out

    monkeypatch.setattr(NominatedPods, "outcome", counting)
    for seed in range(12):
        _run(seed)
    assert any(plain_seen) and not all(plain_seen)
