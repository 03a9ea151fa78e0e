"""Opportunistic batching end to end: upstream's test/integration/scheduler/batch scenarios.

Upstream (v1.36, test/integration/scheduler/batch/batch_test.go) runs the default profile with
PodTopologySpread's system default constraints cleared (pods would be unsignable otherwise),
plus profiles ``mysched`` (a copy), ``nosign`` (an extra Filter plugin without SignPod) and
``emptysign`` (an extra Filter plugin whose SignPod refuses). Pods are created one at a time,
each scheduled before the next; nodes allow ``maxPods`` pods; each pod prefers the nodes of its
list with decreasing weights. A pod counts as batched when the profile's batched-pod count grew.
"""

from __future__ import annotations

from typing import Any

import pytest

from kschedfw import Status, hookimpl
from kschedfw.clock import SimulatedClock
from kschedfw.cluster.memory import MemoryCluster
from kschedfw.config.validate import load_config_text
from kschedfw.fwk.features import FeatureGates
from kschedfw.framework.registry import Registry
from kschedfw.scheduler import Scheduler
from kschedfw.testing import make_node, make_pod


class NoSign:
    name = "NoSign"

    def __init__(self, args: Any, handle: Any) -> None:
        pass

    @hookimpl
    def filter(self, state: Any, pod: Any, node_info: Any) -> None:
        return None


class EmptySign(NoSign):
    name = "EmptySign"

    @hookimpl
    def sign_pod(self, pod: Any) -> Any:
        return None, Status.unschedulable()


_NO_DEFAULT_SPREAD = """\
  pluginConfig:
  - name: PodTopologySpread
    args: {defaultingType: List, defaultConstraints: []}
"""

CONFIG = ("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n"
          + "".join(f"- schedulerName: {name}\n{extra}{_NO_DEFAULT_SPREAD}" for name, extra in (
              ("default-scheduler", ""), ("mysched", ""),
              ("nosign", "  plugins: {filter: {enabled: [{name: NoSign}]}}\n"),
              ("emptysign", "  plugins: {filter: {enabled: [{name: EmptySign}]}}\n"))))


def new_scheduler(gates: dict[str, bool] | None = None, config_text: str = CONFIG) -> Scheduler:
    registry = Registry.discover([NoSign, EmptySign])
    feature_gates = FeatureGates(gates)
    config, diagnostics = load_config_text(config_text, "batch.yaml", registry, feature_gates)
    assert config is not None, [d.render() for d in diagnostics]
    return Scheduler(config, registry, MemoryCluster(SimulatedClock()), feature_gates=feature_gates)


def batch_node(name: str, max_pods: int, labels: dict[str, str] | None = None) -> Any:
    return make_node(name, cpu="100", memory=str(4 * 1024 ** 3), pods=str(max_pods), labels=labels)


def batch_pod(name: str, prefer: list[str] = (), node_selector: dict[str, str] | None = None,
              scheduler: str = "default-scheduler") -> Any:
    """Upstream's newPod: 10 cpu, 4Mi, preferring ``prefer[i]`` with weight len-i (by metadata.name)."""
    affinity = None
    if prefer:
        affinity = {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": len(prefer) - i,
             "preference": {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}}
            for i, node in enumerate(prefer)]}}
    return make_pod(name, cpu="10", memory=str(4 * 1024 ** 2), affinity=affinity,
                    node_selector=node_selector, scheduler_name=scheduler)


def run_one_by_one(scheduler: Scheduler, nodes: list[Any], pods: list[Any]) -> list[tuple[str, bool]]:
    """Create each pod after the previous one was scheduled: (node or '', batched?) per pod."""
    cluster = scheduler.cluster
    cluster.load(nodes)
    now = scheduler.clock.now()
    scheduler.run(until=now)
    batch = scheduler.frameworks["default-scheduler"].batch
    out = []
    for pod in pods:
        before = batch.batched_pods if batch is not None else 0
        cluster.create(pod)
        scheduler.run(until=now)  # the clock stays: what is pending after its attempt stays
        current = cluster.get("Pod", pod.name, pod.namespace)
        out.append((current.node_name, (batch.batched_pods if batch is not None else 0) > before))
    return out


THREE = ["tpb-n1", "tpb-n2", "tpb-n3"]

SCENARIOS = {
    "one pod one node": (
        [batch_node("n1", 1)], [batch_pod("p1")], [("n1", False)]),
    "distinct pods on distinct nodes": (
        [batch_node(f"n{i}", 10, {"forpod": str(i)}) for i in (3, 2, 1)],
        [batch_pod(f"p{i}", node_selector={"forpod": str(i)}) for i in (1, 2, 3)],
        [("n1", False), ("n2", False), ("n3", False)]),
    "three pod batch": (
        [batch_node(n, 1) for n in reversed(THREE)], [batch_pod(f"p{i}", THREE) for i in (1, 2, 3)],
        [("tpb-n1", False), ("tpb-n2", True), ("tpb-n3", True)]),
    "two consecutive batches": (
        [batch_node(f"n{i}", 1) for i in (4, 3, 2, 1)],
        [batch_pod("p1", ["n1", "n2"]), batch_pod("p2", ["n1", "n2"]),
         batch_pod("p3", ["n4", "n3"]), batch_pod("p4", ["n4", "n3"])],
        [("n1", False), ("n2", True), ("n4", False), ("n3", True)]),
    "multiple pods per node means no batching": (
        [batch_node(f"n{i}", 2) for i in (4, 3, 2, 1)],
        [batch_pod("p1", ["n1", "n2"]), batch_pod("p2", ["n1", "n2"]),
         batch_pod("p3", ["n4", "n3"]), batch_pod("p4", ["n4", "n3"])],
        [("n1", False), ("n1", False), ("n4", False), ("n4", False)]),
    "no batching between schedulers": (
        [batch_node(n, 1) for n in reversed(THREE)],
        [batch_pod("p1", THREE), batch_pod("p2", THREE, scheduler="mysched")],
        [("tpb-n1", False), ("tpb-n2", False)]),
    "no batching missing sign": (
        [batch_node(n, 1) for n in reversed(THREE)],
        [batch_pod("p1", THREE, scheduler="nosign"), batch_pod("p2", THREE, scheduler="nosign")],
        [("tpb-n1", False), ("tpb-n2", False)]),
    "no batching empty sign": (
        [batch_node(n, 1) for n in reversed(THREE)],
        [batch_pod("p1", THREE, scheduler="emptysign"), batch_pod("p2", THREE, scheduler="emptysign")],
        [("tpb-n1", False), ("tpb-n2", False)]),
    "unschedulable pod": (
        [batch_node("n1", 1)], [batch_pod("p1"), batch_pod("p2")], [("n1", False), ("", False)]),
}


@pytest.mark.parametrize("name", SCENARIOS)
def test_upstream_batch_scenarios(name: str) -> None:
    nodes, pods, expected = SCENARIOS[name]
    assert run_one_by_one(new_scheduler(), nodes, pods) == expected


@pytest.mark.parametrize("name", SCENARIOS)
def test_same_placements_with_the_gate_off_and_nothing_batched(name: str) -> None:
    """Upstream's scenarios place every pod where a full cycle would: batching is an economy there."""
    nodes, pods, expected = SCENARIOS[name]
    scheduler = new_scheduler({"OpportunisticBatching": False})
    assert all(fwk.batch is None for fwk in scheduler.frameworks.values())
    assert run_one_by_one(scheduler, nodes, pods) == [(node, False) for node, _ in expected]


def test_batched_pods_skip_scoring_and_count_upstream_metrics() -> None:
    scheduler = new_scheduler()
    run_one_by_one(scheduler, [batch_node(n, 1) for n in reversed(THREE)],
                   [batch_pod(f"p{i}", THREE) for i in (1, 2, 3)])
    counters = scheduler.batch_metrics.counters()
    # p1: no batch yet; p2, p3: hint used
    assert counters["scheduler_batch_attempts_total"] == {
        ("default-scheduler", "no_hint"): 1, ("default-scheduler", "hint_used"): 2}
    # p3 used the last node of the list: the next pod finds the batch empty (not a flush)
    assert counters["scheduler_batch_cache_flushed_total"] == {}
    assert [a.node for a in scheduler.attempts if a.result == "Scheduled"] == THREE


def test_default_profile_signs_no_pod_so_nothing_is_batched() -> None:
    """v1.36's default PodTopologySpread has system default constraints, and its SignPod refuses
    every pod then: with the default configuration the gate changes nothing but the counters."""
    scheduler = new_scheduler(config_text="apiVersion: kubescheduler.config.k8s.io/v1\n"
                                          "kind: KubeSchedulerConfiguration\n")
    result = run_one_by_one(scheduler, [batch_node(n, 1) for n in reversed(THREE)],
                            [batch_pod(f"p{i}", THREE) for i in (1, 2, 3)])
    assert result == [("tpb-n1", False), ("tpb-n2", False), ("tpb-n3", False)]
    assert scheduler.batch_metrics.counters()["scheduler_batch_cache_flushed_total"] == {
        ("default-scheduler", "pod_not_batchable"): 2, ("default-scheduler", "empty_list"): 1}


# --------------------------------------------------------------------------- where on and off differ

def _strong_then_weak_preference() -> dict[str, Any]:
    return {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": 10, "preference": {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]}},
        {"weight": 1, "preference": {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n2"]}]}}]}}


@pytest.mark.parametrize(("gates", "second"), [(None, ("n3", True)), ({"OpportunisticBatching": False}, ("n2", False))],
                         ids=["on", "off"])
def test_a_hint_keeps_the_first_cycles_ranking(gates: dict[str, bool] | None, second: tuple[str, bool]) -> None:
    """Where upstream's batching places a pod elsewhere than a full cycle. Both pods prefer n1
    (weight 10) then n2 (weight 1); n3 is five times larger; one pod per node.
    p1's cycle: NodeAffinity normalizes against n1's 10, so n2 gets 10 (x2) and n3's free room
    (LeastAllocated 90 vs 50) ranks it above n2: the batch keeps [n3, n2]. With the gate on p2
    (same signature, n1 now full) takes the hint n3 unscored. With it off p2 is scored: without
    n1 NodeAffinity normalizes against n2's 1, n2 gets 100 (x2) and wins."""
    nodes = [make_node("n1", cpu="20", memory="20Gi", pods="1"), make_node("n2", cpu="20", memory="20Gi", pods="1"),
             make_node("n3", cpu="100", memory="100Gi", pods="1")]
    pods = [make_pod(f"p{i}", cpu="10", memory="10Gi", affinity=_strong_then_weak_preference()) for i in (1, 2)]
    assert run_one_by_one(new_scheduler(gates), nodes, pods) == [("n1", False), second]


SCENARIO_CLUSTER = """\
apiVersion: v1
kind: List
items:
""" + "".join(f"""\
- apiVersion: v1
  kind: Node
  metadata: {{name: {n}, labels: {{kubernetes.io/hostname: {n}}}}}
  status: {{allocatable: {{cpu: "{size}", memory: {size}Gi, pods: "1"}}}}
""" for n, size in (("n1", 20), ("n2", 20), ("n3", 100))) + "".join(f"""\
- apiVersion: v1
  kind: Pod
  metadata: {{name: {p}, namespace: default}}
  spec:
    affinity:
      nodeAffinity:
        preferredDuringSchedulingIgnoredDuringExecution:
        - {{weight: 10, preference: {{matchFields: [{{key: metadata.name, operator: In, values: [n1]}}]}}}}
        - {{weight: 1, preference: {{matchFields: [{{key: metadata.name, operator: In, values: [n2]}}]}}}}
    containers: [{{name: c, image: busybox, resources: {{requests: {{cpu: "10", memory: 10Gi}}}}}}]
""" for p in ("p1", "p2"))


@pytest.mark.parametrize(("flags", "p2_node"), [([], "n3"), (["--feature-gates", "OpportunisticBatching=false"], "n2")],
                         ids=["default-on", "off"])
def test_simulate_feature_gate_switches_batching(tmp_path: Any, capsys: Any, flags: list[str], p2_node: str) -> None:
    """The same scenario through `kschedfw simulate`: v1.36's default (on) and the gate off."""
    import json

    from kschedfw.cli.main import main
    cluster = tmp_path / "cluster.yaml"
    cluster.write_text(SCENARIO_CLUSTER)
    config = tmp_path / "config.yaml"
    config.write_text("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
                      "profiles:\n- schedulerName: default-scheduler\n" + _NO_DEFAULT_SPREAD)
    code = main(["simulate", str(cluster), "-c", str(config), "-o", "json", *flags])
    out, err = capsys.readouterr()
    assert code == 0, err
    nodes = {p["pod"]: p["node"] for p in json.loads(out)["pods"]}
    assert nodes == {"default/p1": "n1", "default/p2": p2_node}


# --------------------------------------------------------------------------- the hint in the cycle

class Flaky:
    """Filter rejects the nodes named in the pod's annotation ``reject`` (comma-separated)."""

    name = "Flaky"

    def __init__(self, args: Any, handle: Any) -> None:
        pass

    @hookimpl
    def sign_pod(self, pod: Any) -> Any:
        return [], None  # the annotation is left out on purpose: equal signatures, different Filter

    @hookimpl
    def filter(self, state: Any, pod: Any, node_info: Any) -> Any:
        if node_info.name in pod.annotations.get("reject", "").split(","):
            return Status.unschedulable("flaky")
        return None


def _flaky_scheduler() -> Scheduler:
    registry = Registry.discover([NoSign, EmptySign, Flaky])
    text = ("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n"
            "- schedulerName: default-scheduler\n  plugins: {filter: {enabled: [{name: Flaky}]}}\n"
            + _NO_DEFAULT_SPREAD)
    config, diagnostics = load_config_text(text, "flaky.yaml", registry, FeatureGates())
    assert config is not None, [d.render() for d in diagnostics]
    return Scheduler(config, registry, MemoryCluster(SimulatedClock()), feature_gates=FeatureGates())


def test_a_hinted_node_failing_filter_means_a_full_cycle_and_a_new_batch() -> None:
    """Upstream evaluateNominatedNode on the hint: it fails, every node is filtered and scored,
    the hint is counted as not used and the new cycle's list becomes the batch."""
    scheduler = _flaky_scheduler()
    nodes = [batch_node(n, 1) for n in reversed(THREE)] + [batch_node("tpb-n4", 1)]
    pods = [batch_pod("p1", THREE), _with_annotation(batch_pod("p2", THREE), "tpb-n2"), batch_pod("p3", THREE)]
    result = run_one_by_one(scheduler, nodes, pods)
    # p1 -> n1, batch [n2, n3, n4]. p2's hint n2 is rejected: scored again among n3, n4 it takes
    # n3, and its list [n4] is the batch. p3 is hinted n4 from p2's list, although a full cycle
    # would give it n2 (which only p2 could not use): upstream keeps the list of the last cycle.
    assert result == [("tpb-n1", False), ("tpb-n3", False), ("tpb-n4", True)]
    attempts = scheduler.batch_metrics.counters()["scheduler_batch_attempts_total"]
    assert attempts == {("default-scheduler", "no_hint"): 1, ("default-scheduler", "hint_not_used"): 1,
                        ("default-scheduler", "hint_used"): 1}


def test_a_nominated_node_wins_over_the_hint_which_is_spent() -> None:
    """Upstream asks for the hint even when the pod has a nominatedNodeName, then tries the
    nominated node: the hint is popped, counted as not used, and the one-node result empties
    the batch (empty_list)."""
    scheduler = _flaky_scheduler()
    nodes = [batch_node(n, 1) for n in reversed(THREE)]
    p2 = make_pod("p2", cpu="10", memory=str(4 * 1024 ** 2), nominated_node_name="tpb-n3",
                  affinity=batch_pod("p", THREE).raw["spec"]["affinity"])
    result = run_one_by_one(scheduler, nodes, [batch_pod("p1", THREE), p2])
    assert result == [("tpb-n1", False), ("tpb-n3", False)]
    counters = scheduler.batch_metrics.counters()
    assert counters["scheduler_batch_attempts_total"][("default-scheduler", "hint_not_used")] == 1
    assert counters["scheduler_batch_cache_flushed_total"] == {("default-scheduler", "empty_list"): 1}
    assert scheduler.frameworks["default-scheduler"].batch.state is None


def _with_annotation(pod: Any, reject: str) -> Any:
    from kschedfw.api import parse_object
    manifest = dict(pod.raw)
    manifest["metadata"] = {**manifest["metadata"], "annotations": {"reject": reject}}
    return parse_object(manifest)


def _placements(gates: dict[str, bool] | None, config_text: str) -> dict[str, str]:
    from kschedfw.simulation import Simulation
    registry = Registry.discover([NoSign, EmptySign])
    feature_gates = FeatureGates(gates)
    config, _ = load_config_text(config_text, "c.yaml", registry, feature_gates)
    assert config is not None
    nodes = [make_node(f"n{i:02}", cpu=str(2 + i % 3), memory=f"{4 + i % 5}Gi") for i in range(30)]
    pods = [make_pod(f"p{i:03}", cpu=("1500m", "300m", "100m")[i % 3], memory=("1Gi", "256Mi", "64Mi")[i % 3],
                     host_ports=[8080] if i % 3 == 0 else ()) for i in range(150)]
    result = Simulation(config, registry, [*nodes, *pods], seed=7, feature_gates=feature_gates).run()
    return {p.key: p.node for p in result.pods}


def test_default_profile_places_alike_with_the_gate_on_and_off() -> None:
    """No pod is signable with v1.36's default profile: the gate cannot move a pod, ties included."""
    text = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
    assert _placements(None, text) == _placements({"OpportunisticBatching": False}, text)


class ErrsOnce:
    """Filter fails with an Error the first time it sees node n1, then lets every node pass."""

    name = "ErrsOnce"
    seen: set[str] = set()

    def __init__(self, args: Any, handle: Any) -> None:
        pass

    @hookimpl
    def filter(self, state: Any, pod: Any, node_info: Any) -> Any:
        if node_info.name == "n1" and "n1" not in ErrsOnce.seen:
            ErrsOnce.seen.add("n1")
            return Status.as_status("transient")
        return None


def test_an_error_on_the_nominated_node_is_logged_and_every_node_searched() -> None:
    """Upstream findNodesThatFitPod: evaluateNominatedNode's error is only logged; the search over
    all nodes decides (here it succeeds), rather than failing the cycle."""
    from kschedfw.testing import simulate_with
    from tests.scheduler.plugins import BASE

    ErrsOnce.seen = set()
    pod = make_pod("p", cpu="100m", nominated_node_name="n1")
    result = simulate_with([*BASE, ErrsOnce], [make_node("n1"), make_node("n2"), pod])
    (placed,) = result.pods
    assert placed.status == "Bound" and ErrsOnce.seen == {"n1"}
    assert [e.reason for e in result.cluster.events if e.reason == "FailedScheduling"] == []  # first attempt


def test_a_batch_older_than_500ms_on_the_scheduler_clock_is_not_used() -> None:
    scheduler = new_scheduler()
    cluster, clock = scheduler.cluster, scheduler.clock
    cluster.load([batch_node(n, 1) for n in reversed(THREE)])
    cluster.create(batch_pod("p1", THREE))
    scheduler.run(until=clock.now())
    clock.set(clock.now() + 0.6)
    cluster.create(batch_pod("p2", THREE))
    scheduler.run(until=clock.now())
    assert cluster.get("Pod", "p2", "default").node_name == "tpb-n2"  # scored again: same answer here
    assert scheduler.frameworks["default-scheduler"].batch.batched_pods == 0
    assert scheduler.batch_metrics.counters()["scheduler_batch_cache_flushed_total"] == {
        ("default-scheduler", "expired"): 1}
