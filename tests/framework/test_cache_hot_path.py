"""The cache's shortcuts give what the plain code gives. Snapshot.named, the nodes a PreFilter
result names: the same NodeInfos in the same (snapshot) order as a pass over every node keeping
those named (upstream looks each name up; the order is the snapshot's so that the round-robin
start and tie-breaking do not depend on set order). NodeInfo.remove_pod searching from the end:
the same lists and aggregates as removing the (unique) pod found from the start."""

from __future__ import annotations

import random

from kschedfw.cache.snapshot import Snapshot
from kschedfw.fwk.types import NodeInfo
from kschedfw.testing import make_node, make_pod


def test_named_equals_a_pass_over_every_node():
    rng = random.Random(3)
    names = [f"node-{i}" for i in range(300)]
    rng.shuffle(names)
    snapshot = Snapshot.from_objects([make_node(name) for name in names])
    infos = snapshot.node_infos()
    for size in (0, 1, 2, 5, 30, 37, 38, 100, 300):
        wanted = set(rng.sample(names, size)) | {"not-a-node"}
        got = snapshot.named(frozenset(wanted))
        assert got == [ni for ni in infos if ni.name in wanted]
        assert all(a is b for a, b in zip(got, [ni for ni in infos if ni.name in wanted]))


def test_remove_pod_keeps_the_order_and_the_aggregates():
    rng = random.Random(5)
    anti = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": {"matchLabels": {"app": "a"}}, "topologyKey": "kubernetes.io/hostname"}]}}
    info = NodeInfo(node=make_node("n", cpu="64", pods="1000"))
    reference: list = []
    for step in range(300):
        if reference and rng.random() < 0.4:
            victim = rng.choice(reference)
            reference.remove(victim)
            assert info.remove_pod(make_pod(victim.name, uid=victim.uid)) is True
        else:
            pod = make_pod(f"p{step}", uid=f"u{step}", cpu=f"{rng.choice([100, 200])}m",
                           affinity=anti if rng.random() < 0.3 else None)
            reference.append(pod)
            info.add_pod(pod)
        assert [p.uid for p in info.pods] == [p.uid for p in reference]
        assert [p.uid for p in info.pods_with_affinity] == [p.uid for p in reference if p.affinity is not None]
        assert [p.uid for p in info.pods_with_required_anti_affinity] == [
            p.uid for p in reference if p.affinity is not None]
        assert info.requested.get("cpu", 0) == sum(int(p.request()["cpu"]) for p in reference)
    assert info.remove_pod(make_pod("gone", uid="nope")) is False
