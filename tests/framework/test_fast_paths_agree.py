"""Every fast path gives what the plain path gives. One switch (``fast_paths``) turns them all off:
the plugins' memos (the Handle's ``node_memo`` keeps nothing), the runtime's whole-list forms and
the nominated-pods pass's kept entries, InterPodAffinity's and PodTopologySpread's use of the
cache's indexes, DynamicResources' kept allocator and preemption's arithmetic dry run. Each scenario
below runs with it on and off and must place, reject, nominate and preempt alike, with the same
statuses and messages; each also checks that the fast run met what it is about (a scenario that
exercises nothing proves nothing).

The scenarios: small scheduler_perf workloads (the runner in ``benchmarks/perf``, on the test
fixtures), topology spreading, seeded clusters full of low-priority pods with preemptors and pods
that stay nominated, preemption with PDBs, taints and node selectors, DRA devices, and the
runtime's Filter and Score step by step while nominations move (statuses per node, scores).
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any, Callable

import pytest

from kschedfw.api import parse_object
from kschedfw.cache.snapshot import Snapshot
from kschedfw.cluster.inputs.scenario import Step
from kschedfw.config.validate import default_config
from kschedfw.framework.handle import Handle
from kschedfw.framework.nominated import PLAIN, NominatedPods
from kschedfw.framework.registry import default_registry
from kschedfw.framework.runtime import Framework
from kschedfw.fwk.cycle_state import CycleState
from kschedfw.fwk.types import NominatingInfo, NominatingMode
from kschedfw.queue.nominator import Nominator
from kschedfw.simulation import Simulation
from kschedfw.testing import container, make_node, make_pdb, make_pod, spread_constraint, taint, toleration
from tests.plugins.test_preemption_resource_victims import random_node

PERF_FIXTURES = Path(__file__).resolve().parents[1] / "perf" / "fixtures"


def _simulate(objects: list[Any], seed: int, fast_paths: bool, steps: list[Step] = (), until: float | None = None):
    registry = default_registry()
    return Simulation(default_config(registry), registry, objects, steps, seed=seed, fast_paths=fast_paths).run(until=until)


def _preempted(result) -> list[tuple[str, str]]:
    return [(e.object_key, e.message) for e in result.cluster.events if e.reason == "Preempted"]


def _outcome(result) -> tuple[Any, ...]:
    """Where each pod went (status, node, reason and message, nomination) and the Preempted events."""
    return (sorted((p.key, p.status, p.node, p.reason, p.message, p.nominated_node) for p in result.pods),
            _preempted(result))


# --------------------------------------------------------------------------- scheduler_perf workloads

def _perf(test_case: str, **params: int) -> Callable[[int, bool], tuple]:
    """The test case's first workload, with ``params`` over its own."""
    def run(seed: int, fast_paths: bool) -> tuple:
        from benchmarks.perf.runner import RunOptions, WorkloadRunner, build_config
        from benchmarks.perf.workload import find_test_case, load_test_cases, unroll

        registry = default_registry()
        tc = find_test_case(load_test_cases(PERF_FIXTURES), test_case)
        first = tc.workloads[0]
        small = type(first)(name="small", params={**first.params, **params})
        config, _ = build_config(registry)
        result = WorkloadRunner(unroll(tc, small), config, registry,
                                RunOptions(seed=seed, pace="instant", fast_paths=fast_paths)).run()
        return (result.status, result.error, result.placements_digest, result.total_bound, result.pending_end,
                result.unschedulable_reasons)
    return run


def _perf_exercised(outcome: tuple) -> bool:
    return outcome[0] == "ok" and outcome[3] > 0


# --------------------------------------------------------------------------- topology spreading

def _spreading(seed: int, fast_paths: bool):
    """Zones and hosts, pods already spread unevenly, replicas spreading over zones (hard) and
    hosts (soft), some also with a node selector."""
    r = random.Random(seed)
    nodes = [make_node(f"n{i}", cpu=r.choice(["2", "4"]), memory="4Gi",
                       labels={"topology.kubernetes.io/zone": f"z{i % 3}", "kubernetes.io/hostname": f"n{i}",
                               "disk": r.choice(["ssd", "hdd"])})
             for i in range(r.randint(16, 24))]
    objects: list[Any] = list(nodes)
    for i in range(r.randint(10, 30)):
        objects.append(make_pod(f"old{i}", node_name=r.choice(nodes).name, cpu="200m", memory="64Mi",
                                labels={"app": r.choice(["web", "db"])}))
    for t in range(3):
        app = r.choice(["web", "db"])
        constraints = [spread_constraint(1, "topology.kubernetes.io/zone", selector={"matchLabels": {"app": app}}),
                       spread_constraint(1, "kubernetes.io/hostname", "ScheduleAnyway",
                                         selector={"matchLabels": {"app": app}})]
        for i in range(r.randint(5, 15)):
            objects.append(make_pod(f"t{t}-{i}", cpu=r.choice(["100m", "500m"]), memory="64Mi", labels={"app": app},
                                    topology_spread_constraints=constraints,
                                    node_selector={"disk": "ssd"} if t == 2 else None))
    return _outcome(_simulate(objects, seed, fast_paths))


def _spreading_exercised(outcome) -> bool:
    return sum(1 for p in outcome[0] if p[1] == "Bound") >= 10


# --------------------------------------------------------------------------- nominated pods

def _nominated(seed: int, fast_paths: bool):
    """Clusters big enough for the chunked Filter, full of low-priority pods, with preemptors of
    several priorities and a few pods that stay nominated (too big, never preempting): a node's
    nominated pods are sometimes of a lower priority than the pod being filtered (nothing to add)
    and sometimes not."""
    r = random.Random(seed)
    objects: list[Any] = [parse_object({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                                        "metadata": {"name": name}, "value": value, "preemptionPolicy": policy})
                          for name, value, policy in (("low", 10, "PreemptLowerPriority"),
                                                      ("mid", 100, "PreemptLowerPriority"),
                                                      ("high", 1000, "PreemptLowerPriority"),
                                                      ("mid-never", 100, "Never"), ("high-never", 1000, "Never"))]
    nodes = [make_node(f"n{i}", cpu=r.choice(["2", "4"]), memory="4Gi", pods=r.choice(["4", "110"]),
                       labels={"disk": r.choice(["ssd", "hdd"])}) for i in range(r.randint(16, 30))]
    objects += nodes
    for node in nodes:
        for i in range(r.randint(2, 4)):
            objects.append(make_pod(f"low-{node.name}-{i}", node_name=node.name, priority_class_name="low",
                                    cpu=r.choice(["500m", "900m"]), memory="128Mi",
                                    start_time=f"2026-01-01T00:00:{r.randrange(50):02d}Z"))
    for i in range(r.randint(2, 5)):
        objects.append(make_pod(f"stuck{i}", priority_class_name=r.choice(["mid-never", "high-never"]), cpu="64",
                                memory="128Mi", nominated_node_name=r.choice(nodes).name))
    for t in range(r.randint(3, 5)):
        cls, cpu = r.choice(["mid", "high"]), r.choice(["500m", "1", "1500m"])
        ssd = r.random() < 0.2
        for i in range(r.randint(4, 10)):
            objects.append(make_pod(f"t{t}-{i}", priority_class_name=cls, cpu=cpu, memory="128Mi",
                                    node_selector={"disk": "ssd"} if ssd else None))
    return _outcome(_simulate(objects, seed, fast_paths))


def _nominated_anti_affinity(seed: int, fast_paths: bool):
    """A high-priority pod that stays nominated to the small node n0 and repels ``app: x`` there
    (required anti-affinity per host). Pods without affinity are filtered first (InterPodAffinity's
    PreFilter skips them, so no AddPod extension runs and n0 keeps a clone with the nominated pod
    added); then a pod labelled ``app: x`` that only n0 takes, whose own anti-affinity keeps
    InterPodAffinity running: upstream's AddPod extension counts the nominated pod's
    anti-affinity, so it stays pending."""
    def anti(app: str) -> dict[str, Any]:
        return {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": {"matchLabels": {"app": app}}, "topologyKey": "kubernetes.io/hostname"}]}}

    r = random.Random(seed)
    objects: list[Any] = [parse_object({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                                        "metadata": {"name": "high-never"}, "value": 1000,
                                        "preemptionPolicy": "Never"})]
    objects += [make_node(f"n{i}", cpu="2" if i == 0 else "16", labels={"kubernetes.io/hostname": f"n{i}"})
                for i in range(r.randint(3, 5))]
    objects.append(make_pod("held", priority_class_name="high-never", cpu="100m", affinity=anti("x"),
                            node_selector={"pool": "none"}, nominated_node_name="n0"))
    objects += [make_pod(f"plain{i}", cpu="100m", labels={"app": "y"}) for i in range(r.randint(3, 6))]
    objects.append(make_pod("repelled", cpu="100m", labels={"app": "x"}, affinity=anti("z"),
                            node_selector={"kubernetes.io/hostname": "n0"}))
    return _outcome(_simulate(objects, seed, fast_paths))


def _repelled(outcome) -> bool:
    return any(p[0] == "default/repelled" and p[1] == "Pending" for p in outcome[0])


def preemption_run(seed: int, fast_paths: bool = True):
    """A small cluster full of low-priority pods, and replicas of higher-priority templates (some
    tolerating a taint or asking for ssd nodes) that can only land by preempting."""
    r = random.Random(seed)
    objects: list[Any] = [parse_object({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                                        "metadata": {"name": name}, "value": value})
                          for name, value in (("low", 10), ("mid", 100), ("high", 1000))]
    objects.append(make_pdb("pdb", match_labels={"app": "db"}, disruptions_allowed=r.choice([0, 1])))
    nodes = [random_node(r, i) for i in range(r.randint(6, 12))]
    objects += nodes
    for i in range(r.randint(20, 40)):
        objects.append(make_pod(f"low{i}", node_name=r.choice(nodes).name, priority_class_name="low",
                                cpu=r.choice(["300m", "500m", "900m"]), memory="128Mi",
                                labels={"app": r.choice(["db", "web"])},
                                start_time=f"2026-01-01T00:00:{r.randrange(50):02d}Z" if r.random() < 0.8 else None))
    for t in range(r.randint(2, 4)):
        cls, cpu = r.choice(["mid", "high"]), r.choice(["500m", "1", "1500m"])
        tolerate, ssd = r.random() < 0.3, r.random() < 0.2
        for i in range(r.randint(2, 6)):
            objects.append(make_pod(f"t{t}-{i}", priority_class_name=cls, cpu=cpu, memory="128Mi",
                                    tolerations=[{"key": "t", "operator": "Exists"}] if tolerate else (),
                                    node_selector={"disk": "ssd"} if ssd else None))
    return _simulate(objects, seed, fast_paths)


def _preemption(seed: int, fast_paths: bool):
    return _outcome(preemption_run(seed, fast_paths))


def _preempts(outcome) -> bool:
    return bool(outcome[1])


# --------------------------------------------------------------------------- DRA devices

DRIVER = "gpu.example.com"


def _dra_objects() -> list[Any]:
    def gpu_slice(node_name, models):
        return parse_object({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
                             "metadata": {"name": f"{node_name}-gpus"},
                             "spec": {"driver": DRIVER, "nodeName": node_name,
                                      "pool": {"name": node_name, "generation": 1, "resourceSliceCount": 1},
                                      "devices": [{"name": f"gpu-{i}", "attributes": {"model": {"string": m}}}
                                                  for i, m in enumerate(models)]}})

    def template(name, requests):
        return parse_object({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
                             "metadata": {"name": name, "namespace": "default"},
                             "spec": {"spec": {"devices": {"requests": requests}}}})

    def exactly(count, model=None):
        body = {"deviceClassName": "gpu", "allocationMode": "ExactCount", "count": count}
        if model:
            body["selectors"] = [{"cel": {"expression": f'device.attributes["{DRIVER}"].model == "{model}"'}}]
        return body

    device_class = parse_object({"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu"},
                                 "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{DRIVER}"'}}]}})
    templates = [template("one", [{"name": "g", "exactly": exactly(1)}]),
                 template("two-h100", [{"name": "g", "exactly": exactly(2, "h100")}]),
                 template("prefer-h100", [{"name": "g", "firstAvailable": [
                     {"name": "h100", **exactly(1, "h100")}, {"name": "any", **exactly(1)}]}])]
    nodes = [make_node(f"n{i}") for i in range(3)]
    slices = [gpu_slice("n0", ["a100"] * 4), gpu_slice("n1", ["h100", "h100", "a100", "a100"]),
              gpu_slice("n2", ["h100"] * 3)]
    kinds = ["one", "two-h100", "prefer-h100"]
    pods = [make_pod(f"p{i:02d}", containers=[container("c", image="busybox")],
                     resourceClaims=[{"name": "gpu", "resourceClaimTemplateName": kinds[i % 3]}]) for i in range(14)]
    return [*nodes, *slices, device_class, *templates, *pods]


def _dra(seed: int, fast_paths: bool):
    """Node-local GPUs of two models, claims for one, two of a model, or a preferred model, and a
    pod deleted on the way: the same placements and the same devices allocated."""
    steps = [Step(30, "delete", target={"kind": "Pod", "namespace": "default", "name": "p01"})]
    result = _simulate(_dra_objects(), seed, fast_paths, steps, until=600)
    claims = sorted((c.raw["metadata"]["ownerReferences"][0]["name"],
                     str((c.raw.get("status") or {}).get("allocation", {}).get("devices")))
                    for c in result.cluster.list("ResourceClaim"))
    return _outcome(result), claims


def _dra_exercised(outcome) -> bool:
    pods = outcome[0][0]
    return sum(1 for p in pods if p[1] == "Bound") >= 8 and any(p[1] == "Pending" for p in pods)


# --------------------------------------------------------------------------- the runtime, step by step

class _Side:
    """The default profile's runtime over its own cluster and nominations."""

    def __init__(self, nodes, pods, fast_paths: bool) -> None:
        registry = default_registry()
        self.snapshot = Snapshot.from_objects(nodes, pods)
        self.held: dict[str, object] = {}
        self.nominator = Nominator(resolve=lambda pod: pod, held=self.held)
        self.framework = Framework(default_config(registry).profiles[0], registry, fast_paths=fast_paths,
                                   handle=Handle.factory(snapshot=self.snapshot, nominator=self.nominator))

    def nominate(self, pod, node_name: str) -> None:
        self.held[pod.uid] = pod
        self.nominator.add_nominated_pod(pod, NominatingInfo(node_name, NominatingMode.Override))

    def forget(self, pod) -> None:
        self.held.pop(pod.uid, None)
        self.nominator.delete_nominated_pod_if_exists(pod)

    def schedule(self, pod, start: int, to_find: int):
        """Filter, Score and place ``pod``: what each gave (statuses per node, totals), and the node."""
        fwk, nodes = self.framework, self.snapshot.node_infos()
        state = CycleState()
        _, status, _ = fwk.run_pre_filter_plugins(state, pod, nodes)
        if status is not None:
            return ("prefilter", status.code, status.reasons), None
        feasible, rejected, failure = fwk.filter_nodes(state, pod, nodes, start % len(nodes), to_find,
                                                       self.nominator.nominated_node_names())
        facts: list = [[ni.name for ni in feasible], [(ni.name, st.code, st.reasons, st.plugin) for ni, st in rejected],
                       None if failure is None else failure.message()]
        if failure is not None or not feasible:
            return facts, None
        assert fwk.run_pre_score_plugins(state, pod, feasible) is None
        totals, status = fwk.run_score_plugins_totals(state, pod, feasible)
        assert status is None
        facts.append(totals)
        best = max(range(len(feasible)), key=lambda i: (totals[i], -i))
        chosen = feasible[best]
        chosen.add_pod(pod.with_node(chosen.name))  # as the cache does: the node's generation moves
        facts.append(chosen.name)
        return facts, chosen.name


def _steps(seed: int, fast_paths: bool):
    """A pod of one of a few shapes per step, placed on its best node, while nominations of
    several priorities come and go (the pod being scheduled sometimes nominated itself)."""
    rng = random.Random(seed)
    nodes = [make_node(f"n{i}", cpu=rng.choice(["2", "4"]), memory="8Gi", pods=rng.choice(["3", "110"]),
                       labels={"disk": rng.choice(["ssd", "hdd"])},
                       taints=[taint("gpu")] if rng.random() < 0.2 else ())
             for i in range(rng.randint(16, 40))]
    pods = [make_pod(f"run{i}", cpu=rng.choice(["500m", "1"]), memory="256Mi", node_name=rng.choice(nodes).name)
            for i in range(rng.randint(10, 40))]
    shapes = [dict(cpu=rng.choice(["300m", "700m", "1500m"]), memory="128Mi", priority=rng.choice([0, 10, 100]),
                   node_selector={"disk": "ssd"} if rng.random() < 0.3 else None,
                   tolerations=[toleration("gpu", operator="Exists")] if rng.random() < 0.3 else ())
              for _ in range(4)]
    side = _Side(nodes, pods, fast_paths)
    node_names = [n.name for n in nodes]
    nominated: list = []
    facts = []
    for step in range(60):
        roll = rng.random()
        if roll < 0.25 or len(nominated) < 3:
            shape = rng.choice(shapes)
            pod = make_pod(f"nom{step}", cpu=shape["cpu"], memory="128Mi", priority=rng.choice([0, 10, 100, 1000]))
            nominated.append(pod)
            side.nominate(pod, rng.choice(node_names))
        elif roll < 0.35:
            side.forget(nominated.pop(rng.randrange(len(nominated))))
        pod = make_pod(f"p{step}", **rng.choice(shapes))
        if rng.random() < 0.15:
            pod = nominated.pop(rng.randrange(len(nominated)))
        start, to_find = rng.randrange(100), rng.choice([1, 5, 20, 100])
        got, placed = side.schedule(pod, start, to_find)
        facts.append((step, got))
        if pod in nominated or placed is not None:
            side.forget(pod)
    kept = side.framework.nominated._kept
    # (not compared) whether clones and outcomes were kept and reused: only with the fast paths
    return facts, (any(entry.info is not None for entry in kept.values()), any(entry.outcomes for entry in kept.values()))


# --------------------------------------------------------------------------- the harness

#: name -> (run(seed, fast_paths) -> outcome, the seeds, whether a fast outcome exercised the
#: scenario: one of the seeds' must)
SCENARIOS: dict[str, tuple[Callable[[int, bool], Any], range, Callable[[Any], bool]]] = {
    "perf-SchedulingBasic": (_perf("SchedulingBasic", initNodes=20, initPods=20, measurePods=60), range(2),
                             _perf_exercised),
    "perf-SchedulingPodAffinity": (_perf("SchedulingPodAffinity", initNodes=20, initPods=20, measurePods=40),
                                   range(2), _perf_exercised),
    "perf-RequiredPodAntiAffinityWithNSSelector": (
        _perf("SchedulingRequiredPodAntiAffinityWithNSSelector", initNodes=20, measurePods=12), range(1),
        _perf_exercised),
    "spreading": (_spreading, range(4), _spreading_exercised),
    "nominated": (_nominated, range(12), _preempts),
    "nominated-anti-affinity": (_nominated_anti_affinity, range(3), _repelled),
    "preemption": (_preemption, range(25), _preempts),
    "dra": (_dra, range(1), _dra_exercised),
    "runtime-steps": (lambda seed, fast: _steps(seed, fast)[0], range(10), lambda facts: bool(facts)),
}


@pytest.mark.parametrize("name", SCENARIOS)
def test_the_fast_paths_give_what_the_plain_path_gives(name):
    run, seeds, exercised = SCENARIOS[name]
    outcomes = []
    for seed in seeds:
        fast = run(seed, True)
        assert fast == run(seed, False), f"{name} seed {seed}"
        outcomes.append(fast)
    assert any(exercised(outcome) for outcome in outcomes), f"{name} exercised nothing"


def test_the_runtime_keeps_nominated_entries_only_with_the_fast_paths():
    """The step-by-step scenario meets kept clones and outcomes with the fast paths on, none off."""
    assert any(_steps(seed, True)[1] == (True, True) for seed in range(10))
    assert all(_steps(seed, False)[1] == (False, False) for seed in range(3))


def test_nominated_runs_meet_both_the_single_and_the_two_passes(monkeypatch):
    """The nominated scenario filters nodes whose nominations the pod must leave room for (two
    passes) and nodes whose nominated pods are all of a lower priority (the plain Filter)."""
    seen: list[bool] = []
    real = NominatedPods.outcome

    def counting(self, ctx, state, pod, node_info):
        out = real(self, ctx, state, pod, node_info)
        seen.append(out is PLAIN)
        return out

    monkeypatch.setattr(NominatedPods, "outcome", counting)
    for seed in range(12):
        _nominated(seed, True)
    assert any(seen) and not all(seen)
