"""`simulate --explain` names each preemption's victims on the attempt that chose them, once.

Upstream (``pkg/scheduler/framework/preemption/preemption.go``, ``Evaluator.prepareCandidate``)
deletes the victims during the preemptor's failed attempt, whose PostFilter nominated the node;
the attempt after that schedules the pod and evicts nobody. Victims without a grace period are
gone at once, so both attempts happen at one simulated instant.
"""

from __future__ import annotations

import textwrap

from kschedfw.testing import run_cli

CLUSTER = textwrap.dedent("""\
    apiVersion: v1
    kind: List
    items:
    - {apiVersion: scheduling.k8s.io/v1, kind: PriorityClass, metadata: {name: urgent}, value: 1000}
    - {apiVersion: v1, kind: Node, metadata: {name: n1, labels: {kubernetes.io/hostname: n1}},
       status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}}
    - apiVersion: v1
      kind: Pod
      metadata: {name: low}
      spec: {nodeName: n1, terminationGracePeriodSeconds: 0,
             containers: [{name: c, image: busybox, resources: {requests: {cpu: "3"}}}]}
    - apiVersion: v1
      kind: Pod
      metadata: {name: urgent}
      spec: {priorityClassName: urgent, containers: [{name: c, image: busybox, resources: {requests: {cpu: "2"}}}]}
    - apiVersion: v1
      kind: Pod
      metadata: {name: later}
      spec: {priorityClassName: urgent, containers: [{name: c, image: busybox, resources: {requests: {cpu: "3"}}}]}
    """)


def explained(tmp_path, *pods):
    cluster = tmp_path / "cluster.yaml"
    cluster.write_text(CLUSTER)
    args = [a for pod in pods for a in ("--explain", pod)]
    return {e["pod"]: e for e in run_cli("simulate", "-o", "json", str(cluster), *args).assert_ok().json["explain"]}


def test_victims_with_no_grace_period_are_listed_on_their_attempt_only(tmp_path):
    urgent = explained(tmp_path, "default/urgent")["default/urgent"]
    first, second = urgent["attempts"]
    assert first["time"] == second["time"]  # one simulated instant
    assert (first["result"], first["nominatedNode"]) == ("Unschedulable", "n1")
    assert first["victims"] == [{"pod": "default/low", "priority": 0}]
    assert (second["result"], second["node"]) == ("Scheduled", "n1")
    assert "victims" not in second


def test_another_pods_victims_are_not_listed(tmp_path):
    # `later` does not fit next to `urgent` and cannot preempt it (same priority): it never
    # evicts anyone, though its attempt shares the instant of urgent's preemption
    pods = explained(tmp_path, "default/urgent", "default/later")
    later = pods["default/later"]
    assert later["status"] == "Pending"
    assert all("victims" not in a for a in later["attempts"])
