"""Snapshot.named, the nodes a PreFilter result names: the same NodeInfos in the same (snapshot)
order as a pass over every node keeping those named (upstream looks each name up; the order is
the snapshot's so that the round-robin start and tie-breaking do not depend on set order)."""

from __future__ import annotations

import random

from kschedfw.cache.snapshot import Snapshot
from kschedfw.testing import make_node


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
