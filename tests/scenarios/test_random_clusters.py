"""Random small clusters through the default profile: the scheduler never crashes, every pod
ends bound, queued or reported (the simulation checks it), and the same seed gives the same run."""

from __future__ import annotations

import random

import pytest

from kschedfw.api import parse_object
from kschedfw.cluster.inputs.scenario import Step
from kschedfw.config.validate import default_config
from kschedfw.framework.registry import default_registry
from kschedfw.simulation import Simulation

ZONE = "topology.kubernetes.io/zone"
HOSTNAME = "kubernetes.io/hostname"


def random_node(r: random.Random, i: int) -> dict:
    spec: dict = {}
    if r.random() < 0.2:
        spec["taints"] = [{"key": "t", "value": r.choice(["x", "y"]),
                           "effect": r.choice(["NoSchedule", "PreferNoSchedule", "NoExecute"])}]
    if r.random() < 0.05:
        spec["unschedulable"] = True
    labels = {HOSTNAME: f"n{i}", ZONE: r.choice("abc"), "disk": r.choice(["ssd", "hdd"])}
    allocatable = {"cpu": str(r.choice([1, 2, 4])), "memory": r.choice(["2Gi", "4Gi"]), "pods": str(r.choice([3, 110]))}
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": f"n{i}", "labels": labels}, "spec": spec,
            "status": {"allocatable": allocatable}}


def random_pod(r: random.Random, i: int, node_names: list[str]) -> dict:
    app = r.choice(["web", "db", "cache"])
    container = {"name": "c", "image": r.choice(["nginx", "redis:7"]),
                 "resources": {"requests": {"cpu": r.choice(["100m", "500m", "1", "3"]), "memory": "64Mi"}}}
    if r.random() < 0.2:
        container["ports"] = [{"containerPort": 80, "hostPort": r.choice([80, 8080])}]
    spec: dict = {"containers": [container]}
    if r.random() < 0.2:
        spec["nodeSelector"] = {"disk": "ssd"}
    if r.random() < 0.2:
        spec["tolerations"] = [{"key": "t", "operator": "Exists"}]
    if r.random() < 0.3:
        spec["priorityClassName"] = r.choice(["low", "high", "never"])
    term = {"labelSelector": {"matchLabels": {"app": app}}, "topologyKey": r.choice([ZONE, HOSTNAME])}
    if r.random() < 0.15:
        spec["affinity"] = {r.choice(["podAffinity", "podAntiAffinity"]):
                            {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}
    elif r.random() < 0.15:
        spec["affinity"] = {r.choice(["podAffinity", "podAntiAffinity"]): {
            "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 10, "podAffinityTerm": term}]}}
    if r.random() < 0.2:
        spec["topologySpreadConstraints"] = [{
            "maxSkew": 1, "topologyKey": ZONE, "labelSelector": {"matchLabels": {"app": app}},
            "whenUnsatisfiable": r.choice(["DoNotSchedule", "ScheduleAnyway"])}]
    if r.random() < 0.1:
        spec["schedulingGates"] = [{"name": "example.com/g"}]
    if r.random() < 0.15:
        spec["nodeName"] = r.choice(node_names)
    return {"apiVersion": "v1", "kind": "Pod", "spec": spec,
            "metadata": {"name": f"p{i}", "namespace": r.choice(["default", "other"]), "labels": {"app": app}}}


PRIORITY_CLASSES = [
    {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "low"}, "value": 10},
    {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "high"}, "value": 1000},
    {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "never"}, "value": 2000,
     "preemptionPolicy": "Never"},
]


def random_run(seed: int):
    r = random.Random(seed)
    nodes = [random_node(r, i) for i in range(r.randint(1, 10))]
    names = [n["metadata"]["name"] for n in nodes]
    pods = [random_pod(r, i, names) for i in range(r.randint(1, 30))]
    pdb = {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "db", "namespace": "default"},
           "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "db"}}},
           "status": {"disruptionsAllowed": r.choice([0, 1])}}
    objects = [parse_object(d) for d in nodes + pods + PRIORITY_CLASSES + [pdb]]
    steps = []
    for k in range(r.randint(0, 3)):
        at = r.choice([5.0, 20.0, 60.0])
        kind = r.choice(["delete", "gate", "node"])
        if kind == "delete":
            steps.append(Step(at, "delete", target={"kind": "Pod", "name": f"p{r.randrange(len(pods))}",
                                                   "namespace": "default"}))
        elif kind == "gate":
            steps.append(Step(at, "removeSchedulingGate", target={"pod": f"default/p{r.randrange(len(pods))}"}))
        else:
            steps.append(Step(at, "create", objects=(parse_object(random_node(r, 100 + k)),)))
    registry = default_registry()
    return Simulation(default_config(registry), registry, objects, steps, seed=seed).run()


@pytest.mark.parametrize("seed", range(60))
def test_random_cluster_runs_to_a_reported_end(seed):
    result = random_run(seed)  # raises InvariantError if a pod is neither bound, queued nor reported
    cluster = result.cluster
    bound_here = {p.key for p in result.pods if p.status == "Bound"}
    for node in cluster.list("Node"):
        on_node = [p for p in cluster.list("Pod") if p.node_name == node.name and p.deletion_timestamp is None]
        came_bound = [p for p in on_node if p.key not in bound_here]
        if sum(p.request().get("cpu", 0) for p in came_bound) > node.allocatable["cpu"] or \
                len(came_bound) > node.allocatable["pods"]:
            continue  # the input already overcommitted this node
        # NodeResourcesFit: what the scheduler placed never overcommits a node
        assert sum(p.request().get("cpu", 0) for p in on_node) <= node.allocatable["cpu"]
        assert len(on_node) <= node.allocatable["pods"]
        assert not node.unschedulable or not any(p.key in bound_here for p in on_node)
    assert random_run(seed).pods == result.pods  # reproducible from the seed
