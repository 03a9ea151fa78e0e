"""The queue at scheduler_perf sizes: order and counts stay right with 50,000 pods.

How fast it is belongs to benchmarks/, not to timed tests."""

from __future__ import annotations

import attrs
import pytest

from tests.queue.queue_testlib import NODE_ADD, hint_map, queue_pod, new_queue, queue_hint_return_queue

N = 50_000


@pytest.fixture(scope="module")
def pods():
    base = queue_pod("p", priority=0)
    return [attrs.evolve(base, name=f"p{i}", uid=f"u{i}", priority=i % 7) for i in range(N)]


@pytest.mark.parametrize("sort_key", [False, True], ids=["less", "sort_key"])
def test_50k_pods_queue_and_pop(pods, sort_key):
    q, _, _ = new_queue(sort_key=sort_key)
    for pod in pods:
        q.add(pod)
    popped = []
    while (qpi := q.pop()) is not None:
        popped.append(qpi)
        q.done(qpi.pod.uid)
    assert len(popped) == N
    prios = [q.pod.effective_priority for q in popped]
    assert prios == sorted(prios, reverse=True)


def test_20k_pods_fail_and_requeue(pods):
    q, clock, _ = new_queue(sort_key=True, hints=hint_map((NODE_ADD, [("P", queue_hint_return_queue)])))
    for pod in pods[:20_000]:
        q.add(pod)
    while (qpi := q.pop()) is not None:
        qpi.unschedulable_plugins = {"Other"}
        q.add_unschedulable_if_not_present(qpi, q.scheduling_cycle)
    q.move_all_to_active_or_backoff_queue(NODE_ADD)  # nobody's hint: stays
    clock.advance(400)
    q.flush_unschedulable_pods_leftover()
    assert q.pending_pods()["active"] == 20_000
