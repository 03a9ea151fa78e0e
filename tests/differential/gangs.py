"""The ``gang`` kind: PodGroups of 2-16 pods (gang ``minCount`` or basic policy, with and without a
rack constraint) mixed with plain pods, on nodes labelled with a rack.

The pod-group cycle breaks ties at random in places a plain pod's cycle does not: the pods of a
group are tried in a random order when their priorities are equal, each pod picks at random among
nodes of equal score, and placements (racks) of equal score are drawn by ``rand.Int()``. The
generator keeps the comparison deterministic where it can: the pods of one group are identical
(their order then changes nothing), every node has its own CPU and memory size (scores rarely
tie), and no two racks hold the same capacity (placement scores do not tie on an empty rack).

Preemption by a group (workload-aware preemption, gate ``WorkloadAwarePreemption``) is on
(:data:`WORKLOAD_PREEMPTION`). Upstream's PodGroupPostFilter takes the group's priority from the
PodGroup's own ``spec.priority``, which the API server's Priority admission fills from the
PodGroup's ``priorityClassName`` (not from its pods'): a PodGroup without one has priority 0 and
finds no victim ("No preemption victims found for incoming preemptor"). So each PodGroup (and its
Workload's template) names its pods' class; some groups are disrupted as a whole
(``disruptionMode: PodGroup``), the rest pod by pod. For there to be victims, the cluster is
filled first: about half the plain pods (low and mid priority, bound and given a start time)
come before any group. Off, the groups' PriorityClass never preempts and no plain pod outranks
a group's pod, and the schedulers run without that gate.
"""

from __future__ import annotations

import copy
import random
from typing import Any

from tests.differential.scenario import NAMESPACES, Scenario

#: generate preemption-prone groups and turn WorkloadAwarePreemption on in both schedulers
WORKLOAD_PREEMPTION = True

WORKLOAD_API = "scheduling.k8s.io/v1alpha2"
RACK = "topology.example.com/rack"
HOSTNAME = "kubernetes.io/hostname"
#: the gates the test API server runs with (every kind), so that it serves and admits PodGroups
APISERVER_GATES = ("GenericWorkload", "GangScheduling", "TopologyAwareWorkloadScheduling", "WorkloadAwarePreemption")
APISERVER_FLAGS = (f"--feature-gates={','.join(f'{g}=true' for g in APISERVER_GATES)}",
                   f"--runtime-config={WORKLOAD_API}=true")
HEARTBEAT = "2026-01-01T00:00:00Z"


def scheduler_gates(preemption: bool | None = None) -> str:
    """The ``--feature-gates`` value both schedulers get for a gang scenario (``preemption``:
    default :data:`WORKLOAD_PREEMPTION`, read at the call)."""
    if preemption is None:
        preemption = WORKLOAD_PREEMPTION
    gates = APISERVER_GATES if preemption else APISERVER_GATES[:-1]
    return ",".join(f"{g}=true" for g in gates)


def priority_classes(preemption: bool) -> dict[str, tuple[int, str | None]]:
    """name -> (value, preemptionPolicy): plain pods preempt one another; groups preempt only
    with ``preemption``, and otherwise sit at the plain pods' top so that none evicts them."""
    classes: dict[str, tuple[int, str | None]] = {"fuzz-low": (100, None), "fuzz-mid": (1000, None)}
    if preemption:
        classes["fuzz-gang"] = (500, None)
        classes["fuzz-gang-high"] = (10000, None)
    else:
        classes["fuzz-gang"] = (1000, "Never")
    return classes


def group_of(pod: dict[str, Any]) -> str | None:
    """The PodGroup a pod manifest joins, or None."""
    group = (pod.get("spec") or {}).get("schedulingGroup") or {}
    return group.get("podGroupName")


def is_pod_group(obj: dict[str, Any]) -> bool:
    return obj.get("kind") == "PodGroup" and obj.get("apiVersion") == WORKLOAD_API


def generate_gang(seed: int, preemption: bool | None = None) -> Scenario:
    return _Gangs(random.Random(f"gang/{seed}"), WORKLOAD_PREEMPTION if preemption is None else preemption
                  ).scenario(seed)


class _Gangs:
    def __init__(self, rng: random.Random, preemption: bool) -> None:
        self.rng = rng
        self.preemption = preemption
        self.classes = priority_classes(preemption)
        self.nodes: list[dict[str, Any]] = []
        self.cpu_total = 0

    def scenario(self, seed: int) -> Scenario:
        objects: list[dict[str, Any]] = [
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns, "labels": {"team": "gang"}}}
            for ns in NAMESPACES]
        objects += [self.priority_class(name, value, policy) for name, (value, policy) in self.classes.items()]
        objects += self.make_nodes()
        groups: list[dict[str, Any]] = []
        pods: list[dict[str, Any]] = []
        units = ["group"] * self.rng.randint(2, 4) + ["plain"] * self.rng.randint(3, 8)
        self.rng.shuffle(units)
        if self.preemption:  # victims first: half the plain pods fill the cluster before any group
            plain = units.count("plain")
            first = (plain + 1) // 2
            rest = [u for u in units if u == "group"] + ["plain"] * (plain - first)
            self.rng.shuffle(rest)
            units = ["plain"] * first + rest
        for i, unit in enumerate(units):
            if unit == "plain":
                pods.append(self.plain_pod(f"p-{i}"))
            else:
                workload, group, members = self.group(f"g-{i}")
                groups += [workload, group]
                pods += members
        config = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
                  "profiles": [{"schedulerName": "default-scheduler"}]}
        return Scenario(seed=seed, kind="gang", config=config, objects=(*objects, *groups), pods=tuple(pods))

    @staticmethod
    def priority_class(name: str, value: int, policy: str | None) -> dict[str, Any]:
        pc: dict[str, Any] = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                              "metadata": {"name": name}, "value": value, "globalDefault": False}
        if policy:
            pc["preemptionPolicy"] = policy
        return pc

    def make_nodes(self) -> list[dict[str, Any]]:
        """4-8 nodes in 2-3 racks, no two of the same CPU or memory size, no two racks of the
        same total (drawn again until so)."""
        rng = self.rng
        count = rng.randint(4, 8)
        racks = rng.randint(2, 3)
        while True:
            cpus = rng.sample(range(4, 25), count)
            memories = rng.sample(range(8, 65), count)
            rack_of = [i % racks for i in range(count)]
            rng.shuffle(rack_of)
            sums = [(sum(c for c, r in zip(cpus, rack_of) if r == k), sum(m for m, r in zip(memories, rack_of) if r == k))
                    for k in range(racks)]
            if len({s[0] for s in sums}) == racks and len({s[1] for s in sums}) == racks:
                break
        for i, (cpu, memory, rack) in enumerate(zip(cpus, memories, rack_of)):
            name = f"node-{i:02d}"
            capacity = {"cpu": str(cpu), "memory": f"{memory}Gi", "pods": "110"}
            self.nodes.append({
                "apiVersion": "v1", "kind": "Node",
                "metadata": {"name": name, "labels": {HOSTNAME: name, RACK: f"rack-{rack}"}},
                "spec": {},
                "status": {"capacity": capacity, "allocatable": dict(capacity),
                           "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady",
                                           "message": "kubelet is posting ready status",
                                           "lastHeartbeatTime": HEARTBEAT, "lastTransitionTime": HEARTBEAT}]}})
        self.cpu_total = sum(cpus) * 1000
        return self.nodes

    def requests(self, mean_cpu: int) -> dict[str, str]:
        cpu = max(100, int(self.rng.uniform(0.4, 1.6) * mean_cpu) // 100 * 100)
        memory = max(128, int(cpu * self.rng.uniform(0.8, 3.0)) // 64 * 64)
        return {"cpu": f"{cpu}m", "memory": f"{memory}Mi"}

    def pod(self, name: str, namespace: str, requests: dict[str, str], priority_class: str) -> dict[str, Any]:
        return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": namespace},
                "spec": {"schedulerName": "default-scheduler", "priorityClassName": priority_class,
                         "terminationGracePeriodSeconds": 0,
                         "containers": [{"name": "c", "image": "registry.example.com/worker:1.0",
                                         "resources": {"requests": requests}}]}}

    def plain_pod(self, name: str) -> dict[str, Any]:
        rng = self.rng
        requests = self.requests(self.cpu_total // 10)
        return self.pod(name, rng.choice(NAMESPACES), requests, rng.choice(("fuzz-low", "fuzz-low", "fuzz-mid")))

    def group(self, name: str) -> tuple[dict[str, Any], dict[str, Any], list[dict[str, Any]]]:
        """A Workload, its PodGroup and the group's pods (identical but for their names)."""
        rng = self.rng
        size = rng.randint(2, 16)
        namespace = rng.choice(NAMESPACES)
        # the group asks for 15-80% of the cluster's CPU: with what runs already, some fit and some do not
        share = rng.uniform(0.15, 0.8) * self.cpu_total / size
        requests = self.requests(int(share))
        if rng.random() < 0.7:
            policy: dict[str, Any] = {"gang": {"minCount": size if rng.random() < 0.6 else rng.randint(1, size)}}
        else:
            policy = {"basic": {}}
        spec: dict[str, Any] = {"podGroupTemplateRef": {"workload": {"workloadName": name,
                                                                     "podGroupTemplateName": "workers"}},
                                "schedulingPolicy": policy}
        if rng.random() < 0.5:
            spec["schedulingConstraints"] = {"topology": [{"key": RACK}]}
        priority_class = rng.choice(("fuzz-gang", "fuzz-gang-high")) if self.preemption else "fuzz-gang"
        if self.preemption:  # the group's priority is its own class's (admission), not its pods'
            spec["priorityClassName"] = priority_class
            if rng.random() < 0.5:
                spec["disruptionMode"] = "PodGroup"
        # the template says what the PodGroup says (own copies: a reproduction's YAML has no aliases)
        template: dict[str, Any] = {"name": "workers", **copy.deepcopy({k: v for k, v in spec.items()
                                                                       if k != "podGroupTemplateRef"})}
        workload = {"apiVersion": WORKLOAD_API, "kind": "Workload",
                    "metadata": {"name": name, "namespace": namespace},
                    "spec": {"podGroupTemplates": [template]}}
        group = {"apiVersion": WORKLOAD_API, "kind": "PodGroup", "metadata": {"name": name, "namespace": namespace},
                 "spec": spec}
        members = []
        for j in range(size):
            pod = self.pod(f"{name}-{j}", namespace, requests, priority_class)
            pod["spec"]["schedulingGroup"] = {"podGroupName": name}
            members.append(pod)
        return workload, group, members
