"""The nominator's shortcut for pods the queue holds as stored (``held``) gives the same
pods, the same objects, as resolving every stored pod through the queue (upstream
NominatedPodsForNode: the queue's version of a pod when it holds the pod, else the nominated
one), through random runs of queue operations."""

from __future__ import annotations

import random

from kschedfw.fwk.types import NominatingInfo, NominatingMode
from tests.queue.queue_testlib import NODE_ADD, queue_pod, new_queue, with_labels

NODES = ("n1", "n2", "n3")


def plain(q, node):
    """Every stored pod resolved through the queue, without the shortcut."""
    return [q._resolve_nominated(p) for p in q.nominator.nominated_nodes().get(node, [])]


def same(a, b):
    return len(a) == len(b) and all(x is y for x, y in zip(a, b))


def run(seed: int) -> int:
    r = random.Random(seed)
    q, clock, _ = new_queue(sort_key=bool(seed % 2))
    current: dict[str, object] = {}      # name -> the pod's current version (unbound, existing)
    in_flight: dict[str, object] = {}    # name -> popped QueuedPodInfo
    uids: dict[str, int] = {}
    shortcut = 0
    for step in range(300):
        op = r.random()
        name = f"p{r.randrange(8)}"
        pod = current.get(name)
        if op < 0.15 and pod is None:    # a new pod (a recreated one gets a new uid)
            uids[name] = uids.get(name, 0) + 1
            pod = queue_pod(name, uid=f"{name}-{uids[name]}", priority=r.choice([0, 10, 100]),
                           nominated=r.choice(["", "", *NODES]))
            current[name] = pod
            q.add(pod)
        elif op < 0.35 and pod is not None:  # an update (labels, maybe the nominated node)
            nominated = r.choice([pod.nominated_node_name, "", *NODES])
            new = with_labels(pod, {"v": str(step)})
            if nominated != new.nominated_node_name:
                new = queue_pod(name, uid=pod.uid, priority=pod.priority, nominated=nominated,
                               labels={"v": str(step)})
            current[name] = new
            q.update(pod, new)
        elif op < 0.45 and pod is not None:  # deleted
            del current[name]
            in_flight.pop(name, None)
            q.delete(pod)
        elif op < 0.60:
            qpi = q.pop() if len(q.active_q) else None
            if qpi is not None:
                in_flight[qpi.pod.name] = qpi
        elif op < 0.75 and in_flight:  # a failed attempt, maybe with a nomination (preemption)
            key = r.choice(sorted(in_flight))
            qpi = in_flight.pop(key)
            live = current.get(key)
            if live is None or live.uid != qpi.pod.uid:
                q.done(qpi.pod.uid)
                continue
            qpi.pod = live
            qpi.unschedulable_plugins = {"NodeResourcesFit"}
            q.add_unschedulable_if_not_present(qpi, q.scheduling_cycle)
            if r.random() < 0.6:
                q.nominator.add_nominated_pod(r.choice([live, qpi.pod]),
                                              NominatingInfo(r.choice(NODES), NominatingMode.Override))
        elif op < 0.82 and pod is not None:  # a plugin nominates some version of a pod
            q.nominator.add_nominated_pod(queue_pod(name, uid=pod.uid, priority=pod.priority),
                                          NominatingInfo(r.choice(NODES), NominatingMode.Override))
        elif op < 0.90:
            q.move_all_to_active_or_backoff_queue(NODE_ADD)
        else:
            clock.advance(r.choice([0.5, 1.0, 11.0]))
            q.flush_backoff_q_completed()
            q.flush_unschedulable_pods_leftover()
        for node in NODES:
            got = q.nominator.nominated_pods_for_node(node)
            want = plain(q, node)
            assert same(got, want), (seed, step, node, got, want)
            shortcut += len(got)
    return shortcut


def test_nominated_pods_for_node_equals_resolving_each_through_the_queue():
    assert sum(run(seed) for seed in range(60)) > 0


def test_preemption_runs_are_the_same_without_the_shortcut(monkeypatch):
    """Whole runs with preemption (nominated pods waiting for their victims): the same pods
    bound where, and the same Preempted events, as with nothing noted as held (every stored
    pod resolved through the queue) and every cross-cycle memo off."""
    from kschedfw.queue.scheduling_queue import PriorityQueue
    from tests.framework.test_fast_paths_agree import preemption_run

    def preempted(result):
        return [(e.object_key, e.message) for e in result.cluster.events if e.reason == "Preempted"]

    seen = 0
    for seed in range(100, 115):
        fast = preemption_run(seed)
        with monkeypatch.context() as m:
            m.setattr(PriorityQueue, "_note_held", lambda self, qpi: None)
            plain = preemption_run(seed, fast_paths=False)
        assert fast.pods == plain.pods, seed
        assert preempted(fast) == preempted(plain), seed
        seen += len(preempted(fast))
    assert seen > 0
