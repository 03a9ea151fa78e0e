"""Push and pop are O(log n): 50,000 pods queue and pop in well under a few seconds."""

from __future__ import annotations

import time

import attrs
import pytest

from tests.queue.queue_testlib import NODE_ADD, hint_map, make_pod, new_queue, queue_hint_return_queue

N = 50_000


@pytest.fixture(scope="module")
def pods():
    base = make_pod("p", priority=0)
    return [attrs.evolve(base, name=f"p{i}", uid=f"u{i}", priority=i % 7) for i in range(N)]


@pytest.mark.parametrize("sort_key, budget", [(False, 6.0), (True, 4.0)], ids=["less", "sort_key"])
def test_50k_pods_queue_and_pop(pods, sort_key, budget):
    q, _, _ = new_queue(sort_key=sort_key)
    start = time.process_time()
    for pod in pods:
        q.add(pod)
    popped = []
    while (qpi := q.pop()) is not None:
        popped.append(qpi)
        q.done(qpi.pod.uid)
    elapsed = time.process_time() - start
    assert len(popped) == N
    prios = [q.pod.effective_priority for q in popped]
    assert prios == sorted(prios, reverse=True)
    assert elapsed < budget, f"{elapsed:.2f}s of CPU for {N} add+pop"


def test_20k_pods_fail_and_requeue(pods):
    q, clock, _ = new_queue(sort_key=True, hints=hint_map((NODE_ADD, [("P", queue_hint_return_queue)])))
    for pod in pods[:20_000]:
        q.add(pod)
    start = time.process_time()
    while (qpi := q.pop()) is not None:
        qpi.unschedulable_plugins = {"Other"}
        q.add_unschedulable_if_not_present(qpi, q.scheduling_cycle)
    q.move_all_to_active_or_backoff_queue(NODE_ADD)  # nobody's hint: stays
    clock.advance(400)
    q.flush_unschedulable_pods_leftover()
    elapsed = time.process_time() - start
    assert q.pending_pods()["active"] == 20_000
    assert elapsed < 4.0, f"{elapsed:.2f}s"
