"""Differential: the same pods on the same cluster through the shipped kube-scheduler and through
kschedfw, each placement decided uniquely by the cluster (resources, taints, affinity, spread,
gates), must come out identical, and so must an unschedulable pod's condition message."""

from __future__ import annotations

import json
import os
import subprocess
import threading

import pytest

from kschedfw.kube_runner import KubeRunner
from kschedfw.config.validate import load_config
from kschedfw.fwk.features import FeatureGates
from kschedfw.framework.registry import default_registry
from kschedfw.testing.controlplane import ControlPlane, free_port
from tests.kube.helpers import pod_manifest, wait_for

ZONE = "topology.kubernetes.io/zone"


def waves(ns: str, scheduler: str) -> list[list[dict]]:
    """Pods in waves: each wave is bound before the next is created (no queue-order ties)."""
    def pod(name, labels=None, **spec):
        manifest = pod_manifest(name, ns, scheduler=scheduler, **spec)
        manifest["metadata"]["labels"] = labels or {}
        return manifest

    affinity_c = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": ZONE, "operator": "In", "values": ["c"]}]}]}}}
    not_b = {"key": ZONE, "operator": "NotIn", "values": ["b"]}
    return [
        [pod("affine", affinity=affinity_c),
         pod("big", {"app": "big"}, cpu="1800m"),  # only node a: b is tainted, c too small
         pod("tolerant", tolerations=[{"key": "dedicated", "operator": "Equal", "value": "gpu",
                                       "effect": "NoSchedule"}], nodeSelector={ZONE: "b"}),
         pod("spread-1", {"app": "spread"}, nodeSelector={ZONE: "a"}, cpu="50m"),
         pod("gated", schedulingGates=[{"name": "example.com/wait"}]),
         pod("huge", cpu="64")],
        [pod("anti", affinity={
            "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
                {"matchExpressions": [not_b]}]}},
            "podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [{
                "labelSelector": {"matchLabels": {"app": "big"}}, "topologyKey": "kubernetes.io/hostname"}]}},
             cpu="50m"),
         pod("spread-2", {"app": "spread"}, cpu="50m", affinity={
             "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
                 {"matchExpressions": [not_b]}]}}},
             topologySpreadConstraints=[{"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "DoNotSchedule",
                                         "labelSelector": {"matchLabels": {"app": "spread"}}}])],
    ]


def outcome(cp: ControlPlane, ns: str) -> dict[str, tuple[str, str]]:
    out = {}
    for p in cp.api("GET", f"/api/v1/namespaces/{ns}/pods")["items"]:
        cond = next((c for c in p["status"].get("conditions") or [] if c["type"] == "PodScheduled"), {})
        out[p["metadata"]["name"]] = (p["spec"].get("nodeName", ""), cond.get("reason", ""), cond.get("message", ""))
    return out


def settled(cp: ControlPlane, ns: str, names: list[str], must_bind: bool = False) -> bool:
    """Every pod bound, or (unless ``must_bind``) given up on with a PodScheduled reason."""
    result = outcome(cp, ns)
    return all(n in result and (result[n][0] or (result[n][1] and not must_bind)) for n in names)


def play(cp: ControlPlane, ns: str, scheduler: str, make_waves=None, must_bind=False) -> dict[str, tuple[str, str]]:
    for wave in (make_waves or waves)(ns, scheduler):
        for manifest in wave:
            cp.api("POST", f"/api/v1/namespaces/{ns}/pods", manifest)
        wait_for(lambda: settled(cp, ns, [m["metadata"]["name"] for m in wave], must_bind), timeout=60,
                 what=f"{scheduler} to decide {[m['metadata']['name'] for m in wave]}")
    return outcome(cp, ns)


@pytest.fixture
def cluster(control_plane: ControlPlane, namespace):
    names = {f"{namespace}-a": ("a", "2", []), f"{namespace}-b": ("b", "2", [
        {"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}]), f"{namespace}-c": ("c", "1", [])}
    for name, (zone, cpu, taints) in names.items():
        control_plane.create_ready_node(name, cpu=cpu, labels={ZONE: zone}, taints=taints)
    yield names
    for name in names:
        control_plane.api("DELETE", f"/api/v1/nodes/{name}")


def both(control_plane: ControlPlane, namespace: str, tmp_path, make_waves=None, must_bind=False,
         scheduler_args=(), attempts: list[str] | None = None, profile: dict | None = None,
         feature_gates: str = "", runners: list | None = None):
    """Play the waves through kube-scheduler (its log in ``tmp_path/kube-scheduler.log``, extra
    flags in ``scheduler_args``), clear them, play them through kschedfw; ``attempts`` gets the
    names of the pods kschedfw's scheduling cycles took, in order. ``profile``: more fields of
    both profiles (pluginConfig...); ``feature_gates``: ``--feature-gates`` of both;
    ``runners`` gets kschedfw's runner (closed by then) to look at afterwards."""
    kube_scheduler = control_plane.assets / "kube-scheduler"
    if not os.access(kube_scheduler, os.X_OK):
        pytest.skip(f"no kube-scheduler in {control_plane.assets}")
    upstream_ns, ours_ns = namespace, f"{namespace}-k"
    control_plane.api("POST", "/api/v1/namespaces", {"metadata": {"name": ours_ns}})

    config = tmp_path / "upstream.yaml"
    config.write_text(json.dumps({
        "apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
        "clientConnection": {"kubeconfig": str(control_plane.kubeconfig)}, "leaderElection": {"leaderElect": False},
        "profiles": [{"schedulerName": f"up-{namespace}", **(profile or {})}]}))
    log = open(tmp_path / "kube-scheduler.log", "w")
    proc = subprocess.Popen([str(kube_scheduler), f"--config={config}", "--bind-address=127.0.0.1",
                             f"--secure-port={free_port()}", "-v=3", *scheduler_args,
                             *([f"--feature-gates={feature_gates}"] if feature_gates else [])],
                            stdout=log, stderr=subprocess.STDOUT)
    try:
        # pods created before its informers synced would come in the initial list, whose order
        # is not creation order: wait (its -v=3 log says when), as kschedfw's runner.start does
        wait_for(lambda: '"Handlers synced"' in (tmp_path / "kube-scheduler.log").read_text(), timeout=60,
                 what="kube-scheduler's informers")
        upstream = play(control_plane, upstream_ns, f"up-{namespace}", make_waves, must_bind)
    finally:
        proc.terminate()
        proc.wait(30)
        log.close()
    for name in upstream:  # free the nodes for the second run
        control_plane.api("DELETE", f"/api/v1/namespaces/{upstream_ns}/pods/{name}",
                          {"gracePeriodSeconds": 0})
    wait_for(lambda: not control_plane.api("GET", f"/api/v1/namespaces/{upstream_ns}/pods")["items"],
             what="the first run's pods gone")

    ours_config = tmp_path / "ours.yaml"
    ours_config.write_text(json.dumps({
        "apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
        "leaderElection": {"leaderElect": False},
        "profiles": [{"schedulerName": f"ours-{namespace}", **(profile or {})}]}))
    registry = default_registry()
    gates = FeatureGates.parse(feature_gates)
    loaded, diagnostics = load_config(str(ours_config), registry, gates)
    assert loaded is not None, diagnostics
    runner = KubeRunner(loaded, registry, kubeconfig=control_plane.kubeconfig, feature_gates=gates)
    if runners is not None:
        runners.append(runner)
    if attempts is not None:
        runner.scheduler.scheduling.recorder_for = lambda pod: attempts.append(pod.name)  # type: ignore[func-returns-value]
    assert runner.start(30)
    thread = threading.Thread(target=runner.run, daemon=True)
    thread.start()
    try:
        ours = play(control_plane, ours_ns, f"ours-{namespace}", make_waves, must_bind)
    finally:
        runner.stop()
        thread.join(10)
        runner.close()
    return upstream, ours


def test_kube_scheduler_and_kschedfw_place_every_pod_identically(control_plane, namespace, cluster, tmp_path):
    # pods on other tests' nodes would change the counts in messages: only ours may exist
    assert len(control_plane.api("GET", "/api/v1/nodes")["items"]) == 3
    upstream, ours = both(control_plane, namespace, tmp_path)
    # every placement is forced by the cluster: check that first, then that both agree
    assert {k: v[0] for k, v in upstream.items()} == {
        "affine": f"{namespace}-c", "big": f"{namespace}-a", "tolerant": f"{namespace}-b",
        "spread-1": f"{namespace}-a", "gated": "", "huge": "", "anti": f"{namespace}-c", "spread-2": f"{namespace}-c"}
    assert ours == upstream


def preemption_waves(ns: str, scheduler: str) -> list[list[dict]]:
    """A low-priority pod fills node a; a high-priority pod that fits only on a (b is tainted,
    c too small) must preempt exactly that pod, then land on a."""
    def pod(name, cpu, cls, **spec):
        manifest = pod_manifest(name, ns, scheduler=scheduler, cpu=cpu, priorityClassName=f"{ns}-{cls}", **spec)
        manifest["spec"]["terminationGracePeriodSeconds"] = 0  # no kubelet: let the victim go at once
        return manifest
    not_b = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": ZONE, "operator": "NotIn", "values": ["b"]}]}]}}}
    return [[pod("low-a", "1500m", "low", nodeSelector={ZONE: "a"}), pod("low-c", "500m", "low",
                                                                      nodeSelector={ZONE: "c"})],
            [pod("high", "1500m", "high", affinity=not_b)]]


def test_preemption_picks_the_same_victim_and_node(control_plane, namespace, cluster, tmp_path):
    classes = {f"{namespace}-low": 10, f"{namespace}-high": 1000, f"{namespace}-k-low": 10,
               f"{namespace}-k-high": 1000}
    for name, value in classes.items():
        control_plane.api("POST", "/apis/scheduling.k8s.io/v1/priorityclasses",
                          {"metadata": {"name": name}, "value": value})
    try:
        upstream, ours = both(control_plane, namespace, tmp_path, preemption_waves, must_bind=True)
    finally:
        for name in classes:
            control_plane.api("DELETE", f"/apis/scheduling.k8s.io/v1/priorityclasses/{name}")
    assert {k: v[0] for k, v in upstream.items()} == {"low-c": f"{namespace}-c", "high": f"{namespace}-a"}
    assert {k: v[0] for k, v in ours.items()} == {"low-c": f"{namespace}-c", "high": f"{namespace}-a"}

    def notes(ns: str, reason: str) -> list[tuple[str, str]]:
        events = control_plane.api("GET", f"/apis/events.k8s.io/v1/namespaces/{ns}/events")["items"]
        return sorted((e["regarding"]["name"], e["note"]) for e in events if e["reason"] == reason)

    # the same victim, and the preemptor's failed attempt reported with the same message
    upstream_failed = notes(namespace, "FailedScheduling")
    assert upstream_failed and upstream_failed[0][0] == "high"
    assert wait_for(lambda: notes(f"{namespace}-k", "FailedScheduling"), what="our event") == upstream_failed
    assert [n for n, _ in notes(namespace, "Preempted")] == ["low-a"]
    assert [n for n, _ in wait_for(lambda: notes(f"{namespace}-k", "Preempted"), what="our event")] == ["low-a"]


# ---------------------------------------------------------------------- opportunistic batching
BATCH_NODES = 6


@pytest.fixture
def batch_cluster(control_plane: ControlPlane, namespace):
    """Six 4-cpu nodes whose memory grows by 200Mi: for a pod of 3 cpu and 3000Mi, both
    NodeResourcesFit (LeastAllocated) and NodeResourcesBalancedAllocation score a bigger node
    strictly higher, so every node's rank is unique, and each node holds one such pod."""
    names = [f"{namespace}-n{i}" for i in range(BATCH_NODES)]
    for i, name in enumerate(names):
        control_plane.create_ready_node(name, cpu="4", memory=f"{3000 + 200 * i}Mi")
    yield names
    for name in names:
        control_plane.api("DELETE", f"/api/v1/nodes/{name}")


def one_pod_per_node_waves(ns: str, scheduler: str) -> list[list[dict]]:
    """upstream's batching integration test shape: identical pods that each fill a node, all
    queued at once, so each cycle after the first can take the previous cycle's next-best node."""
    return [[pod_manifest(f"p{i}", ns, scheduler=scheduler, cpu="3", memory="3000Mi") for i in range(BATCH_NODES)]]


#: upstream's batching test profile: PodTopologySpread without the system default constraints
#: (their hostname spreading would make every placement change the next pod's scores)
NO_DEFAULT_SPREAD = {"pluginConfig": [{"name": "PodTopologySpread", "args": {"defaultingType": "List"}}]}


@pytest.mark.parametrize("gate", ["true", "false"])
def test_batching_places_one_pod_per_node_as_kube_scheduler(control_plane, namespace, batch_cluster, tmp_path, gate):
    """OpportunisticBatching on (v1.36's default) and off, on both schedulers: the same pod on
    the same node. kube-scheduler's -v=3 log shows whether it used hints; kschedfw's batching
    counters whether it did."""
    assert len(control_plane.api("GET", "/api/v1/nodes")["items"]) == BATCH_NODES
    runners: list = []
    upstream, ours = both(control_plane, namespace, tmp_path, one_pod_per_node_waves, must_bind=True,
                          profile=NO_DEFAULT_SPREAD,
                          feature_gates=f"OpportunisticBatching={gate}", runners=runners)
    # the biggest node first, then each next-best one: every placement forced by the scores
    expected = {f"p{i}": f"{namespace}-n{BATCH_NODES - 1 - i}" for i in range(BATCH_NODES)}
    assert {k: v[0] for k, v in upstream.items()} == expected
    assert {k: v[0] for k, v in ours.items()} == expected
    upstream_hints = (tmp_path / "kube-scheduler.log").read_text().count("OpportunisticBatch provided node hint")
    used = runners[0].scheduler.batch_metrics.attempts.get((f"ours-{namespace}", "hint_used"), 0)
    # (both give 5 hints here, one per pod after the first; only "some" is asserted, since a
    # batch older than 500 ms is dropped and this machine may be slow)
    if gate == "true":
        assert upstream_hints > 0 and used > 0
    else:
        assert upstream_hints == 0 and used == 0
