"""Random small clusters through the default profile: the scheduler never crashes, every pod
ends bound, queued or reported (the simulation checks it), and the same seed gives the same run."""

from __future__ import annotations

import random

import pytest

from kschedfw.api import Node, Pod
from kschedfw.cluster.inputs.scenario import Step
from kschedfw.config.validate import default_config
from kschedfw.framework.registry import default_registry
from kschedfw.simulation import Simulation
from kschedfw.testing import (HOSTNAME, ZONE, container, make_node, make_pdb, make_pod, make_priority_class,
                              pod_affinity_term, spread_constraint, taint, toleration)


def random_node(r: random.Random, i: int) -> Node:
    taints = [taint("t", r.choice(["x", "y"]), r.choice(["NoSchedule", "PreferNoSchedule", "NoExecute"]))] \
        if r.random() < 0.2 else []
    unschedulable = r.random() < 0.05
    zone, disk = r.choice("abc"), r.choice(["ssd", "hdd"])
    return make_node(f"n{i}", zone=zone, labels={"disk": disk}, taints=taints, unschedulable=unschedulable,
                     cpu=str(r.choice([1, 2, 4])), memory=r.choice(["2Gi", "4Gi"]), pods=str(r.choice([3, 110])))


def random_pod(r: random.Random, i: int, node_names: list[str]) -> Pod:
    app = r.choice(["web", "db", "cache"])
    image, cpu = r.choice(["nginx", "redis:7"]), r.choice(["100m", "500m", "1", "3"])
    ports = [{"containerPort": 80, "hostPort": r.choice([80, 8080])}] if r.random() < 0.2 else []
    kw: dict = {"containers": [container("c", image=image, requests={"cpu": cpu, "memory": "64Mi"},
                                         **({"ports": ports} if ports else {}))]}
    if r.random() < 0.2:
        kw["node_selector"] = {"disk": "ssd"}
    if r.random() < 0.2:
        kw["tolerations"] = [toleration("t")]
    if r.random() < 0.3:
        kw["priority_class_name"] = r.choice(["low", "high", "never"])
    term = pod_affinity_term(r.choice([ZONE, HOSTNAME]), {"matchLabels": {"app": app}})
    if r.random() < 0.15:
        kw["affinity"] = {r.choice(["podAffinity", "podAntiAffinity"]):
                          {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}
    elif r.random() < 0.15:
        kw["affinity"] = {r.choice(["podAffinity", "podAntiAffinity"]): {
            "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 10, "podAffinityTerm": term}]}}
    if r.random() < 0.2:
        kw["topology_spread_constraints"] = [spread_constraint(
            1, ZONE, r.choice(["DoNotSchedule", "ScheduleAnyway"]), {"matchLabels": {"app": app}})]
    if r.random() < 0.1:
        kw["scheduling_gates"] = ["example.com/g"]
    if r.random() < 0.15:
        kw["node_name"] = r.choice(node_names)
    return make_pod(f"p{i}", namespace=r.choice(["default", "other"]), labels={"app": app}, **kw)


PRIORITY_CLASSES = [make_priority_class("low", 10), make_priority_class("high", 1000),
                    make_priority_class("never", 2000, preemption_policy="Never")]


def random_run(seed: int):
    r = random.Random(seed)
    nodes = [random_node(r, i) for i in range(r.randint(1, 10))]
    names = [n.name for n in nodes]
    pods = [random_pod(r, i, names) for i in range(r.randint(1, 30))]
    pdb = make_pdb("db", min_available=1, match_labels={"app": "db"}, disruptions_allowed=r.choice([0, 1]))
    objects = [*nodes, *pods, *PRIORITY_CLASSES, pdb]
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
            steps.append(Step(at, "create", objects=(random_node(r, 100 + k),)))
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
