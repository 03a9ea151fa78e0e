"""DefaultPreemption's arithmetic victim selection gives exactly what the plain dry run gives.

Upstream's SelectVictimsOnNode copies the state and the node, removes every lower-priority pod,
runs Filter, and reprieves victims one by one (PDB-violating ones first, most important first).
``victim_selector`` must return the same victims, in the same order, the same PDB violation count
and the same status on every node, or refuse (None) when this cycle's Filter plugins other than
NodeResourcesFit may look at the pods on a node. Seeded random clusters of the default profile:
mixed priorities, start times (some missing), PDBs, nominated pods, extended resources, taints,
and preemptors with host ports or anti-affinity so that the arithmetic is sometimes refused.
"""

from __future__ import annotations

import random

from kschedfw.cache.snapshot import Snapshot
from kschedfw.cluster.memory import MemoryCluster
from kschedfw.config.validate import default_config
from kschedfw.fwk.cycle_state import CycleState
from kschedfw.framework.handle import Handle
from kschedfw.framework.registry import default_registry
from kschedfw.framework.runtime import Framework
from kschedfw.fwk.types import NodeToStatus
from kschedfw.plugins import filter_key
from kschedfw.plugins.nodeports import NodePorts
from kschedfw.queue.nominator import Nominator
from kschedfw.testing import container, make_node, make_pdb, make_pod, pod_affinity_term, taint

GPU = "example.com/gpu"


def random_node(r: random.Random, i: int):
    extra = {GPU: str(r.choice([1, 2]))} if r.random() < 0.3 else None
    taints = [taint("t", "x", r.choice(["NoSchedule", "PreferNoSchedule"]))] if r.random() < 0.3 else ()
    return make_node(f"n{i}", cpu=r.choice(["2", "4"]), memory=r.choice(["2Gi", "4Gi"]),
                     pods=r.choice(["3", "4", "110"]), labels={"disk": r.choice(["ssd", "hdd"])},
                     extra_allocatable=extra, taints=taints, unschedulable=r.random() < 0.05)


def random_pod(r: random.Random, name: str, *, node: str = "", priority: int, anti_affinity: bool = False,
               host_port: bool = False, start: bool = True, nominated: str = "", tolerate: bool | None = None):
    requests = {"cpu": r.choice(["100m", "300m", "500m", "900m", "1500m"]),
                "memory": r.choice(["64Mi", "256Mi", "1Gi"])}
    if r.random() < 0.2:
        requests[GPU] = "1"
    affinity = None
    if anti_affinity:
        affinity = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            pod_affinity_term("kubernetes.io/hostname", {"matchLabels": {"app": r.choice("abc")}})]}}
    seconds = r.randrange(0, 50)
    tolerates = r.random() < 0.3
    if tolerate is not None:
        tolerates = tolerate
    return make_pod(name, node_name=node, priority=priority, labels={"app": r.choice("abc")},
                    containers=[container("c", requests=requests, host_ports=(80,) if host_port else ())],
                    affinity=affinity, start_time=f"2026-01-01T00:00:{seconds:02d}Z" if start else None,
                    nominated_node_name=nominated,
                    tolerations=[{"key": "t", "operator": "Exists"}] if tolerates else (),
                    node_selector={"disk": "ssd"} if r.random() < 0.2 else None)


def build(seed: int):
    r = random.Random(seed)
    nodes = [random_node(r, i) for i in range(r.randint(4, 10))]
    names = [n.name for n in nodes]
    cluster = MemoryCluster(admission_plugins=())  # a fake client, as in the upstream tests
    for n in nodes:
        cluster.create(n)
    anti = r.random() < 0.2  # an existing pod with required anti-affinity: InterPodAffinity runs
    bound = []
    for i in range(r.randint(8, 30)):
        pod = random_pod(r, f"p{i}", node=r.choice(names), priority=r.choice([-5, 0, 0, 5, 10, 100]),
                         anti_affinity=anti and i == 0, start=r.random() < 0.85)
        bound.append(cluster.create(pod))
    pdbs = [cluster.create(make_pdb(f"pdb-{app}", match_labels={"app": app}, disruptions_allowed=r.choice([0, 1, 2])))
            for app in r.sample("abc", r.randint(0, 2))]
    nominator = Nominator()
    for i in range(r.randint(0, 4)):
        node = r.choice(names)
        nominated = cluster.create(random_pod(r, f"nom{i}", priority=r.choice([5, 50, 100, 1000]), nominated=node))
        nominator.add_nominated_pod(nominated)
    registry = default_registry()
    framework = Framework(default_config(registry).profiles[0], registry,
                          handle=Handle.factory(backend=cluster, snapshot=Snapshot.from_objects(nodes, bound),
                                                nominator=nominator, waiting_pods={}))
    handle = framework.handle
    preemptors = []
    for t in range(3):  # replicas of a template: later ones reuse what earlier ones worked out
        template = r.randrange(1 << 30)
        for i in range(r.randint(1, 3)):
            tr = random.Random(template)
            # replicas differing in their tolerations only: the same request, other taints tolerated
            preemptors.append(cluster.create(random_pod(tr, f"high{t}-{i}", priority=tr.choice([50, 100, 1000]),
                                                        host_port=tr.random() < 0.15,
                                                        anti_affinity=tr.random() < 0.1,
                                                        tolerate=r.random() < 0.5)))
    return r, cluster, handle, framework, preemptors, pdbs


def brief(status):
    return None if status is None or status.is_success() else (status.code, status.reasons, status.plugin)


def outcome(result):
    victims, num_violating, status = result
    return [p.name for p in victims], num_violating, status.code, status.reasons, status.plugin


def test_arithmetic_selection_equals_the_plain_dry_run_on_random_clusters():
    seen = {"refused": 0, "nodes": 0, "candidates": 0, "no fit": 0}
    for seed in range(40):
        r, cluster, handle, framework, preemptors, pdbs = build(seed)
        plugin = framework.plugins["DefaultPreemption"]
        for pod in preemptors:
            state = CycleState()
            nodes = list(handle.snapshot.node_infos())
            _, status, _ = framework.run_pre_filter_plugins(state, pod, nodes)
            if status is not None and not status.is_success():
                continue
            _, rejected, error = framework.filter_nodes(state, pod, nodes, 0, len(nodes),
                                                        handle.nominator.nominated_node_names())
            assert error is None
            statuses = NodeToStatus({ni.name: st for ni, st in rejected})
            # Filter's nominated-pods passes, kept per node for later pods: the same as afresh
            kept = dict(statuses.items())
            for ni in nodes:
                fresh = framework.run_filter_plugins_with_nominated_pods(state, pod, ni)
                assert brief(kept.get(ni.name)) == brief(fresh), (seed, pod.name, ni.name)
            select = plugin.victim_selector(state, pod, pdbs, statuses)
            if select is None:
                seen["refused"] += 1
                continue
            for ni in nodes:
                plain = outcome(plugin.select_victims_on_node(state.clone(), pod, ni.clone(), pdbs))
                assert outcome(select(ni)) == plain, (seed, pod.name, ni.name)
                assert outcome(select(ni)) == plain, (seed, pod.name, ni.name, "remembered")
                seen["nodes"] += 1
                seen["candidates" if plain[0] else "no fit"] += 1
            # the cache changes a node and the nominations move: remembered results must follow
            ni = r.choice(nodes)
            if ni.pods and r.random() < 0.5:
                ni.remove_pod(r.choice(ni.pods))
            else:
                ni.add_pod(random_pod(r, f"late-{pod.name}", node=ni.name, priority=r.choice([0, 10]), start=False))
            if r.random() < 0.5:
                target = r.choice(nodes).name
                moved = cluster.create(random_pod(r, f"moved-{pod.name}", priority=1000, nominated=target))
                handle.nominator.add_nominated_pod(moved)
            # pods without a start time rank as started now: the order of victims moves with the clock
            cluster.clock.advance(r.choice([0, 7, 20]))
    assert seen["refused"] >= 10 and seen["candidates"] >= 200 and seen["no fit"] >= 200, seen


def test_the_whole_dry_run_is_the_same_with_and_without_the_arithmetic():
    """Evaluator.find_candidates: candidates (order, victims, PDB violations) and the statuses of
    the other nodes, from the same random offset."""
    compared = 0
    for seed in range(40, 70):
        _, _, handle, framework, preemptors, pdbs = build(seed)
        plugin = framework.plugins["DefaultPreemption"]
        for pod in preemptors:
            state = CycleState()
            nodes = list(handle.snapshot.node_infos())
            _, status, _ = framework.run_pre_filter_plugins(state, pod, nodes)
            if status is not None and not status.is_success():
                continue
            _, rejected, _ = framework.filter_nodes(state, pod, nodes, 0, len(nodes),
                                                    handle.nominator.nominated_node_names())
            statuses = NodeToStatus({ni.name: st for ni, st in rejected})
            runs = []
            for arithmetic in (False, True, True):
                plugin.resource_victim_selection = arithmetic
                plugin.offset_rand = lambda n, s=seed: s % n
                plugin.min_candidate_nodes_absolute = 1 + seed % 4
                candidates, node_statuses, errors = plugin.evaluator.find_candidates(state, nodes, pod, statuses)
                runs.append(([(c.name, [p.name for p in c.victims.pods], c.victims.num_pdb_violations)
                              for c in candidates],
                             sorted((n, s.code, s.reasons) for n, s in (node_statuses or NodeToStatus()).items()),
                             errors))
            assert runs[0] == runs[1] == runs[2], (seed, pod.name)
            compared += bool(runs[0][0])
    assert compared >= 30


def test_plugins_that_look_at_pods_on_the_node_refuse_the_arithmetic():
    """NodePorts, InterPodAffinity, PodTopologySpread... make the plain path run; node-only
    plugins (NodeAffinity, TaintToleration...) do not."""
    node = make_node("n1", cpu="2")
    cluster = MemoryCluster(admission_plugins=())  # a fake client, as in the upstream tests
    cluster.create(node)
    low = cluster.create(make_pod("low", cpu="2", node_name="n1", priority=0))
    registry = default_registry()
    framework = Framework(default_config(registry).profiles[0], registry,
                          handle=Handle.factory(backend=cluster, snapshot=Snapshot.from_objects([node], [low]),
                                                nominator=Nominator(), waiting_pods={}))
    handle = framework.handle
    plugin = framework.plugins["DefaultPreemption"]

    def selector(pod):
        state = CycleState()
        framework.run_pre_filter_plugins(state, pod, list(handle.snapshot.node_infos()))
        return plugin.victim_selector(state, pod, [], None)

    plain = make_pod("plain", cpu="2", priority=10, node_selector={"disk": "ssd"},
                     tolerations=[{"key": "t", "operator": "Exists"}])
    assert selector(plain) is not None
    assert selector(make_pod("ports", cpu="2", priority=10, host_ports=[80])) is None
    spread = [{"maxSkew": 1, "topologyKey": "kubernetes.io/hostname", "whenUnsatisfiable": "DoNotSchedule",
               "labelSelector": {"matchLabels": {"app": "a"}}}]
    assert selector(make_pod("spread", cpu="2", priority=10, topology_spread_constraints=spread)) is None
    plugin.is_eligible_pod = lambda node_info, victim, preemptor: True  # a customised policy
    assert selector(plain) is None
    assert NodePorts not in filter_key.NODE_ONLY_FILTERS  # it reads the ports of the pods on the node


def reference_pick(nodes_to_victims, now):
    """Upstream pickOneNodeForPreemption, literally: each criterion a function of the node name,
    scores compared as Unix nanoseconds, the best-scoring nodes kept, the first one left wins."""
    from kschedfw.preemption.types import get_earliest_pod_start_time, unix_nano

    def latest_start(node):
        earliest = get_earliest_pod_start_time(nodes_to_victims[node], now)
        return -(1 << 63) if earliest is None else unix_nano(earliest)

    criteria = [lambda n: -nodes_to_victims[n].num_pdb_violations,
                lambda n: -nodes_to_victims[n].pods[0].effective_priority,
                lambda n: -sum(p.effective_priority + (1 << 31) for p in nodes_to_victims[n].pods),
                lambda n: -len(nodes_to_victims[n].pods),
                latest_start]
    candidates = list(nodes_to_victims)
    for score in criteria:
        best = max(score(n) for n in candidates)
        candidates = [n for n in candidates if score(n) == best]
        if len(candidates) == 1:
            break
    return candidates[0]


def test_the_chosen_node_is_upstreams_on_random_candidates():
    """pick_one_node_for_preemption scores victims in bulk and compares start times as datetimes;
    the node is the one upstream's criteria pick, ties (kept on purpose here) included."""
    import datetime as dt

    from kschedfw.preemption import Victims, pick_one_node_for_preemption

    now = dt.datetime(2026, 1, 1, 0, 1, tzinfo=dt.timezone.utc)
    for seed in range(300):
        r = random.Random(seed)
        nodes_to_victims = {}
        for i in range(r.randint(1, 12)):
            pods = [make_pod(f"v{i}-{k}", priority=r.choice([-3, 0, 0, 5]),
                             start_time=r.choice([None, "2026-01-01T00:00:10Z", "2026-01-01T00:00:20Z"]))
                    for k in range(r.randint(1, 3))]
            pods.sort(key=lambda p: -p.effective_priority)
            nodes_to_victims[f"n{i}"] = Victims(pods, r.choice([0, 0, 1]))
        assert pick_one_node_for_preemption(nodes_to_victims, None, now) == reference_pick(nodes_to_victims, now), seed


def preemption_run(seed: int, fast_paths: bool = True):
    """A small cluster full of low-priority pods, and replicas of higher-priority templates
    (some tolerating a taint or asking for ssd nodes) that can only land by preempting;
    ``fast_paths=False`` runs the plain path."""
    from kschedfw.api import parse_object
    from kschedfw.simulation import Simulation

    r = random.Random(seed)
    objects = [parse_object({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
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
    registry = default_registry()
    return Simulation(default_config(registry), registry, objects, seed=seed, fast_paths=fast_paths).run()


def test_simulations_place_and_preempt_alike_with_the_memos_off():
    """Whole runs of the default profile: the same pods bound where, and the same victims with
    the same messages, as with every cross-cycle memo and the arithmetic dry run off
    (``fast_paths=False``)."""

    preempted = 0
    for seed in range(25):
        fast = preemption_run(seed)
        plain = preemption_run(seed, fast_paths=False)
        assert fast.pods == plain.pods, seed
        victims = [(e.object_key, e.message) for e in fast.cluster.events if e.reason == "Preempted"]
        assert victims == [(e.object_key, e.message) for e in plain.cluster.events if e.reason == "Preempted"]
        preempted += len(victims)
    assert preempted >= 50
