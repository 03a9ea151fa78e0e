"""Random realistic clusters and scheduler configurations for the differential fuzzer.

``generate(seed, kind)`` is a pure function of its arguments (its own ``random.Random``), so a
seed is a reproduction. Everything it makes is what a v1.36 API server accepts on create as
written: pods name a RuntimeClass (admission fills ``spec.overhead``) and a PriorityClass
(admission fills ``spec.priority``), owners carry a uid, extended resources have requests equal
to limits, pod-level requests cover what the containers ask. Sizes are small (4-12 nodes,
10-30 pods) so that a scheduler run takes seconds and a mismatch is quick to shrink; the load is
drawn against the nodes' capacity so that pods compete, some do not fit, and higher priorities
preempt.
"""

from __future__ import annotations

import random
import uuid
import zlib
from typing import Any

from tests.differential.devices import Devices
from tests.differential.gangs import generate_gang
from tests.differential.scenario import NAMESPACES, Kind, Scenario

CONFIG_API = "kubescheduler.config.k8s.io/v1"
DEFAULT_SCHEDULER = "default-scheduler"
GPU = "example.com/gpu"
HOSTNAME = "kubernetes.io/hostname"
ZONE = "topology.kubernetes.io/zone"
REGION = "topology.kubernetes.io/region"
DISK = "example.com/disk"
GENERATION = "example.com/cpu-generation"  # a number, for Gt / Lt
POOL = "example.com/pool"
#: the taints nodes may carry; tolerations are drawn against them
TAINTS = (
    {"key": "dedicated", "value": "gpu", "effect": "NoSchedule"},
    {"key": "dedicated", "value": "infra", "effect": "NoSchedule"},
    {"key": "spot", "value": "true", "effect": "PreferNoSchedule"},
    {"key": "maintenance", "value": "", "effect": "NoExecute"},
)
def reported_size(node: str, image: str, size: int) -> int:
    """The size ``node`` reports for ``image``: now and then not the usual one (another build
    under the same name), which kube-scheduler's cache ignores after the first node that reported
    the name. Decided by a checksum, not the seed's stream, so the other draws stay as they were."""
    mark = zlib.crc32(f"{node}/{image}".encode())
    return size if mark % 4 else size + (mark % 7 + 1) * 40_000_000


#: (image, size in bytes); ImageLocality scores nodes that already hold a pod's images
IMAGES = (
    ("registry.example.com/web:1.25", 180_000_000),
    ("registry.example.com/api:3.2", 450_000_000),
    ("registry.example.com/batch:0.9", 900_000_000),
    ("registry.example.com/cache:7.2", 60_000_000),
    ("registry.example.com/ml:2024.1", 2_400_000_000),
    ("registry.example.com/sidecar:1.0", 25_000_000),
)
#: PriorityClasses: name -> (value, preemptionPolicy or None)
PRIORITY_CLASSES = {
    "fuzz-low": (100, None),
    "fuzz-mid": (1000, None),
    "fuzz-high": (10000, None),
    "fuzz-high-polite": (10000, "Never"),
}
#: RuntimeClasses: name -> overhead.podFixed
RUNTIME_CLASSES = {
    "fuzz-kata": {"cpu": "250m", "memory": "160Mi"},
    "fuzz-gvisor": {"cpu": "100m", "memory": "64Mi"},
}
SCORE_PLUGINS = ("TaintToleration", "NodeAffinity", "NodeResourcesFit", "PodTopologySpread",
                 "InterPodAffinity", "NodeResourcesBalancedAllocation", "ImageLocality")
#: a fixed instant for node conditions, so that a seed always makes the same objects
HEARTBEAT = "2026-01-01T00:00:00Z"


def generate(seed: int, kind: Kind) -> Scenario:
    """The scenario of ``seed``: the default profile (``kind="default"``) or variations of it, or
    the default profile on a cluster with devices (``kind="dra"``), or PodGroups among plain pods
    (``kind="gang"``, :mod:`tests.differential.gangs`)."""
    if kind == "gang":
        return generate_gang(seed)
    return _Generator(random.Random(f"{kind}/{seed}"), kind).scenario(seed)


def millicpu(m: int) -> str:
    return f"{m // 1000}" if m % 1000 == 0 else f"{m}m"


def mebibytes(mi: int) -> str:
    return f"{mi // 1024}Gi" if mi % 1024 == 0 else f"{mi}Mi"


class _Generator:
    """One scenario's worth of draws; the methods build its parts in dependency order."""

    def __init__(self, rng: random.Random, kind: Kind) -> None:
        self.rng = rng
        self.kind = kind
        self.zones = [f"zone-{c}" for c in "abc"[: rng.randint(2, 3)]]
        self.apps = [f"app-{i}" for i in range(rng.randint(3, 5))]
        self.app_namespace = {app: rng.choice(NAMESPACES) for app in self.apps}
        self.schedulers = [DEFAULT_SCHEDULER]
        self.nodes: list[dict[str, Any]] = []
        self.free: dict[str, dict[str, int]] = {}  # per node: cpu (m), memory (Mi), gpu, pods left
        self.gpu_nodes = 0
        self.owner_of: dict[str, dict[str, Any]] = {}  # app -> the ownerReference of its pods
        self.template_hash: dict[str, str] = {}
        self.mean_cpu = 0  # millicpu a pod asks for on average
        self.containers_now = 1

    def scenario(self, seed: int) -> Scenario:
        config = self.config()
        nodes = self.make_nodes()
        owners = self.owners()
        pods = self.pods()
        objects = [*self.namespaces(), *self.priority_classes(), *self.runtime_classes(), *nodes,
                   *owners, *self.pdbs(pods)]
        if self.kind == "dra":
            objects += self.devices(pods)
        return Scenario(seed=seed, kind=self.kind, config=config, objects=tuple(objects), pods=tuple(pods))

    # ------------------------------------------------------------------ configuration
    def config(self) -> dict[str, Any]:
        profiles: list[dict[str, Any]] = [{"schedulerName": DEFAULT_SCHEDULER}]
        if self.kind == "variants":
            count = self.rng.choice((1, 1, 2, 3))
            self.schedulers = [DEFAULT_SCHEDULER] + [f"fuzz-scheduler-{i}" for i in range(1, count)]
            profiles = [self.variant_profile(name) for name in self.schedulers]
        return {"apiVersion": CONFIG_API, "kind": "KubeSchedulerConfiguration", "profiles": profiles}

    def variant_profile(self, name: str) -> dict[str, Any]:
        rng = self.rng
        plugin_config: list[dict[str, Any]] = []
        strategy = rng.choice(("LeastAllocated", "MostAllocated", "MostAllocated",
                               "RequestedToCapacityRatio", "RequestedToCapacityRatio"))
        resources = [{"name": "cpu", "weight": rng.randint(1, 5)},
                     {"name": "memory", "weight": rng.randint(1, 5)}]
        if rng.random() < 0.7:
            resources.append({"name": GPU, "weight": rng.randint(1, 10)})
        if rng.random() < 0.2:
            resources.append({"name": "ephemeral-storage", "weight": 1})
        scoring: dict[str, Any] = {"type": strategy, "resources": resources}
        if strategy == "RequestedToCapacityRatio":
            scoring["requestedToCapacityRatio"] = {"shape": self.shape()}
        plugin_config.append({"name": "NodeResourcesFit", "args": {"scoringStrategy": scoring}})
        if rng.random() < 0.3:
            balanced = [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}]
            if rng.random() < 0.5:
                balanced.append({"name": GPU, "weight": 1})
            plugin_config.append({"name": "NodeResourcesBalancedAllocation", "args": {"resources": balanced}})
        if rng.random() < 0.5:
            constraints = [{"maxSkew": rng.randint(1, 3), "topologyKey": ZONE,
                            "whenUnsatisfiable": rng.choice(("ScheduleAnyway", "DoNotSchedule"))}]
            if rng.random() < 0.5:
                constraints.append({"maxSkew": rng.randint(1, 4), "topologyKey": HOSTNAME,
                                    "whenUnsatisfiable": "ScheduleAnyway"})
            plugin_config.append({"name": "PodTopologySpread",
                                  "args": {"defaultingType": "List", "defaultConstraints": constraints}})
        if rng.random() < 0.4:
            plugin_config.append({"name": "NodeAffinity", "args": {"addedAffinity": self.added_affinity()}})
        if rng.random() < 0.4:
            args: dict[str, Any] = {"hardPodAffinityWeight": rng.choice((0, 1, 5, 50, 100))}
            if rng.random() < 0.3:
                args["ignorePreferredTermsOfExistingPods"] = True
            plugin_config.append({"name": "InterPodAffinity", "args": args})
        profile: dict[str, Any] = {"schedulerName": name, "pluginConfig": plugin_config}
        score: dict[str, Any] = {}
        if rng.random() < 0.6:
            score["enabled"] = [{"name": p, "weight": rng.randint(1, 10)}
                                for p in rng.sample(SCORE_PLUGINS, rng.randint(1, 3))]
        if rng.random() < 0.15:
            score["disabled"] = [{"name": "ImageLocality"}]
            enabled = [e for e in score.pop("enabled", []) if e["name"] != "ImageLocality"]
            if enabled:
                score["enabled"] = enabled
        if score:
            profile["plugins"] = {"score": score}
        return profile

    def shape(self) -> list[dict[str, int]]:
        rng = self.rng
        cuts = sorted(rng.sample(range(1, 100), rng.randint(0, 2)))
        return [{"utilization": u, "score": rng.randint(0, 10)} for u in [0, *cuts, 100]]

    def added_affinity(self) -> dict[str, Any]:
        rng = self.rng
        affinity: dict[str, Any] = {}
        if rng.random() < 0.6:
            expression = rng.choice((
                {"key": "node-role.example.com/control-plane", "operator": "DoesNotExist"},
                {"key": ZONE, "operator": "In", "values": self.zones[: max(2, len(self.zones) - 1)]},
                {"key": DISK, "operator": "Exists"},
            ))
            affinity["requiredDuringSchedulingIgnoredDuringExecution"] = {
                "nodeSelectorTerms": [{"matchExpressions": [expression]}]}
        if rng.random() < 0.7 or not affinity:
            affinity["preferredDuringSchedulingIgnoredDuringExecution"] = [
                {"weight": rng.randint(1, 100), "preference": {"matchExpressions": [
                    {"key": DISK, "operator": "In", "values": ["ssd"]}]}}]
        return affinity

    # ------------------------------------------------------------------ cluster-scoped objects
    def namespaces(self) -> list[dict[str, Any]]:
        return [{"apiVersion": "v1", "kind": "Namespace",
                 "metadata": {"name": ns, "labels": {"team": self.rng.choice(("red", "blue")),
                                                     "env": "prod" if i == 0 else "dev"}}}
                for i, ns in enumerate(NAMESPACES)]

    def priority_classes(self) -> list[dict[str, Any]]:
        out = []
        for name, (value, policy) in PRIORITY_CLASSES.items():
            pc: dict[str, Any] = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                                  "metadata": {"name": name}, "value": value, "globalDefault": False}
            if policy:
                pc["preemptionPolicy"] = policy
            out.append(pc)
        return out

    def runtime_classes(self) -> list[dict[str, Any]]:
        return [{"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass", "metadata": {"name": name},
                 "handler": name.removeprefix("fuzz-"), "overhead": {"podFixed": dict(overhead)}}
                for name, overhead in RUNTIME_CLASSES.items()]

    def make_nodes(self) -> list[dict[str, Any]]:
        rng = self.rng
        regions = {z: f"region-{1 + i // 2}" for i, z in enumerate(self.zones)}
        for i in range(rng.randint(4, 12)):
            name = f"node-{i:02d}"
            zone = self.zones[i % len(self.zones)] if rng.random() < 0.8 else rng.choice(self.zones)
            cpu = rng.choice((2, 4, 4, 8, 8, 16)) * 1000
            memory = cpu // 1000 * rng.choice((2, 4, 4, 8)) * 1024
            pods = rng.choice((110, 110, 110, 32, 8))
            labels = {HOSTNAME: name, ZONE: zone, REGION: regions[zone], GENERATION: str(rng.randint(3, 6))}
            if rng.random() < 0.6:
                labels[DISK] = rng.choice(("ssd", "hdd"))
            if rng.random() < 0.3:
                labels[POOL] = rng.choice(("general", "batch"))
            if rng.random() < 0.1:
                labels["node-role.example.com/control-plane"] = ""
            taints = []
            gpus = 0
            if rng.random() < 0.3:
                gpus = rng.choice((1, 2, 4, 8))
                if rng.random() < 0.5:
                    taints.append(dict(TAINTS[0]))
            if rng.random() < 0.2:
                taint = rng.choice(TAINTS[1:])
                if not any(t["key"] == taint["key"] for t in taints):  # unique by key and effect
                    taints.append(dict(taint))
            capacity = {"cpu": millicpu(cpu), "memory": mebibytes(memory), "pods": str(pods),
                        "ephemeral-storage": f"{rng.choice((20, 50, 100))}Gi"}
            if gpus:
                capacity[GPU] = str(gpus)
            allocatable = dict(capacity)
            reserved_cpu = rng.choice((0, 0, 100, 250))
            if reserved_cpu:  # kubelet reservations: allocatable below capacity
                cpu -= reserved_cpu
                memory -= 256
                allocatable.update(cpu=millicpu(cpu), memory=mebibytes(memory))
            images = rng.sample(IMAGES, rng.randint(0, 3))
            node: dict[str, Any] = {
                "apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels},
                "spec": {},
                "status": {"capacity": capacity, "allocatable": allocatable,
                           "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady",
                                           "message": "kubelet is posting ready status",
                                           "lastHeartbeatTime": HEARTBEAT, "lastTransitionTime": HEARTBEAT}],
                           "images": [{"names": [image], "sizeBytes": reported_size(name, image, size)}
                                      for image, size in images]},
            }
            if taints:
                node["spec"]["taints"] = taints
            if rng.random() < 0.06:
                node["spec"]["unschedulable"] = True
            self.nodes.append(node)
            self.free[name] = {"cpu": cpu, "memory": memory, GPU: gpus, "pods": pods}
            self.gpu_nodes += bool(gpus)
        return self.nodes

    def devices(self, pods: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Device objects, and claims for about half the pending pods. A pod with claims gets no
        PriorityClass: it never preempts, so no victim's devices would have to be freed by the
        resourceclaim controller (which runs beside neither scheduler) before its retry."""
        devices = Devices(self.rng, self.nodes, self.zones)
        objects = [*devices.device_classes(), *devices.resource_slices(), *devices.claims_and_templates(NAMESPACES)]
        for pod in pods:
            if not pod["spec"].get("nodeName") and self.rng.random() < 0.5 and devices.attach(pod):
                pod["spec"].pop("priorityClassName", None)
        return objects

    # ------------------------------------------------------------------ owners
    def owners(self) -> list[dict[str, Any]]:
        """A ReplicaSet per app (most apps) and a Service for some, so that default spreading
        (the owners' selectors) applies to their pods."""
        rng = self.rng
        self.template_hash = {app: f"{rng.getrandbits(40):010x}" for app in self.apps}
        out: list[dict[str, Any]] = []
        for app in self.apps:
            ns = self.app_namespace[app]
            if rng.random() < 0.75:
                name = f"{app}-rs"
                uid = str(uuid.UUID(int=rng.getrandbits(128), version=4))
                self.owner_of[app] = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": name,
                                      "uid": uid, "controller": True, "blockOwnerDeletion": True}
                out.append({"apiVersion": "apps/v1", "kind": "ReplicaSet",
                            "metadata": {"name": name, "namespace": ns, "labels": {"app": app}},
                            "spec": {"replicas": 0, "selector": {"matchLabels": {"app": app}},
                                     "template": {"metadata": {"labels": {"app": app}},
                                                  "spec": {"containers": [{"name": "main",
                                                                           "image": IMAGES[0][0]}]}}}})
            if rng.random() < 0.5:
                out.append({"apiVersion": "v1", "kind": "Service",
                            "metadata": {"name": f"{app}-svc", "namespace": ns},
                            "spec": {"selector": {"app": app}, "ports": [{"port": 80, "protocol": "TCP"}]}})
        return out

    def pdbs(self, pods: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """PodDisruptionBudgets over some apps, with the status a disruption controller would
        write (the harness sets it through the status subresource)."""
        rng = self.rng
        out = []
        for app in rng.sample(self.apps, rng.randint(0, 2)):
            members = sum(1 for p in pods if p["metadata"]["labels"].get("app") == app)
            allowed = rng.randint(0, 1)
            spec: dict[str, Any] = {"selector": {"matchLabels": {"app": app}}}
            if rng.random() < 0.5:
                spec["minAvailable"] = max(0, members - allowed)
            else:
                spec["maxUnavailable"] = allowed
            out.append({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
                        "metadata": {"name": f"{app}-pdb", "namespace": self.app_namespace[app]},
                        "spec": spec,
                        "status": {"disruptionsAllowed": allowed, "currentHealthy": members,
                                   "desiredHealthy": max(0, members - allowed), "expectedPods": members,
                                   "observedGeneration": 1}})
        return out

    # ------------------------------------------------------------------ pods
    def pods(self) -> list[dict[str, Any]]:
        rng = self.rng
        count = rng.randint(10, 30)
        capacity = sum(f["cpu"] for f in self.free.values())
        pressure = rng.uniform(0.3, 1.2)  # near 1: some pods must wait or preempt
        self.mean_cpu = max(50, int(capacity * pressure / count))
        bound, pending = [], []
        for i in range(count):
            pod = self.pod(f"pod-{i:02d}")
            if i < count // 3 and rng.random() < 0.6 and self.bind(pod):
                bound.append(pod)
                classes: tuple[str | None, ...] = (None, "fuzz-low", "fuzz-low", "fuzz-mid")
            else:
                pending.append(pod)
                classes = (None, None, *PRIORITY_CLASSES)  # later and higher: preemption
            priority_class = rng.choice(classes)
            if priority_class:
                pod["spec"]["priorityClassName"] = priority_class
        return bound + pending

    def bind(self, pod: dict[str, Any]) -> bool:
        """Put ``pod`` on a node it fits by its requests (existing load), if there is one."""
        need = self.requests_of(pod)
        names = [n for n, free in self.free.items() if all(free[k] >= v for k, v in need.items())]
        if not names:
            return False
        name = self.rng.choice(names)
        for k, v in need.items():
            self.free[name][k] -= v
        pod["spec"]["nodeName"] = name
        return True

    @staticmethod
    def requests_of(pod: dict[str, Any]) -> dict[str, int]:
        """A rough upper bound of what ``pod`` takes from a node (for pre-bound pods only)."""
        total = {"cpu": 0, "memory": 0, GPU: 0, "pods": 1}
        spec = pod["spec"]
        for c in [*spec["containers"], *spec.get("initContainers", [])]:
            requests = c.get("resources", {}).get("requests", {})
            total["cpu"] += _milli(requests.get("cpu", "0"))
            total["memory"] += _mebi(requests.get("memory", "0"))
            total[GPU] += int(requests.get(GPU, "0"))
        pod_level = spec.get("resources", {}).get("requests", {})
        total["cpu"] = max(total["cpu"], _milli(pod_level.get("cpu", "0")))
        total["memory"] = max(total["memory"], _mebi(pod_level.get("memory", "0")))
        if spec.get("runtimeClassName"):
            overhead = RUNTIME_CLASSES[spec["runtimeClassName"]]
            total["cpu"] += _milli(overhead["cpu"])
            total["memory"] += _mebi(overhead["memory"])
        return total

    def pod(self, name: str) -> dict[str, Any]:
        rng = self.rng
        app = rng.choice(self.apps)
        ns = self.app_namespace[app]
        labels = {"app": app, "version": rng.choice(("v1", "v2"))}
        if rng.random() < 0.3:
            labels["tier"] = rng.choice(("frontend", "backend"))
        metadata: dict[str, Any] = {"name": name, "namespace": ns, "labels": labels}
        if app in self.owner_of and rng.random() < 0.85:
            metadata["ownerReferences"] = [dict(self.owner_of[app])]
            labels["pod-template-hash"] = self.template_hash[app]
        spec: dict[str, Any] = {"schedulerName": rng.choice(self.schedulers), "terminationGracePeriodSeconds": 0,
                                "containers": self.containers(rng.choice((1, 1, 1, 2, 3)), "c")}
        if rng.random() < 0.35:
            spec["initContainers"] = self.init_containers()
        if self.gpu_nodes and rng.random() < 0.1:  # extended resources: requests equal to limits
            gpus = str(rng.choice((1, 1, 2)))
            resources = spec["containers"][0].setdefault("resources", {})
            resources.setdefault("requests", {})[GPU] = gpus
            resources.setdefault("limits", {})[GPU] = gpus
        if rng.random() < 0.2:
            self.pod_level_resources(spec)
        if rng.random() < 0.15:
            spec["runtimeClassName"] = rng.choice(sorted(RUNTIME_CLASSES))
        if rng.random() < 0.15:
            self.host_ports(spec)
        if rng.random() < 0.15:
            spec["nodeSelector"] = rng.choice(({ZONE: rng.choice(self.zones)}, {DISK: "ssd"}, {POOL: "general"}))
        affinity = self.affinity(ns)
        if affinity:
            spec["affinity"] = affinity
        if rng.random() < 0.25:
            spec["topologySpreadConstraints"] = self.spread(app)
        if rng.random() < 0.35:
            spec["tolerations"] = self.tolerations()
        return {"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": spec}

    def container(self, name: str) -> dict[str, Any]:
        rng = self.rng
        image = rng.choice(IMAGES)[0]
        container: dict[str, Any] = {"name": name, "image": image}
        style = rng.random()
        if style < 0.12:
            return container  # no requests at all (BestEffort if every container is so)
        cpu = max(10, int(self.mean_cpu * rng.uniform(0.2, 1.2) / self.containers_now) // 10 * 10)
        memory = max(16, int(cpu * rng.choice((1, 2, 4)) * rng.uniform(0.5, 1.5)) // 16 * 16)
        requests: dict[str, str] = {}
        if style < 0.85 or rng.random() < 0.5:
            requests["cpu"] = millicpu(cpu)
        if style < 0.7 or not requests:
            requests["memory"] = mebibytes(memory)
        if rng.random() < 0.1:
            requests["ephemeral-storage"] = f"{rng.choice((1, 2, 5))}Gi"
        resources: dict[str, Any] = {"requests": requests}
        if rng.random() < 0.3:
            resources["limits"] = {k: v for k, v in requests.items() if k != "ephemeral-storage"}
            if "cpu" in requests and rng.random() < 0.5:
                resources["limits"]["cpu"] = millicpu(cpu * 2)
        container["resources"] = resources
        return container

    def containers(self, count: int, prefix: str) -> list[dict[str, Any]]:
        self.containers_now = count  # a pod's load is shared among its containers
        return [self.container(f"{prefix}{i}") for i in range(count)]

    def init_containers(self) -> list[dict[str, Any]]:
        out = self.containers(self.rng.randint(1, 2), "init")
        for c in out:
            if self.rng.random() < 0.5:
                c["restartPolicy"] = "Always"  # a sidecar
        return out

    def pod_level_resources(self, spec: dict[str, Any]) -> None:
        """``spec.resources``: requests at least what every container asks (the API server's
        rule), for cpu, memory or both; sometimes limits as high as the requests."""
        rng = self.rng
        asked = {"cpu": 0, "memory": 0}
        for c in [*spec["containers"], *spec.get("initContainers", [])]:
            requests = c.get("resources", {}).get("requests", {})
            asked["cpu"] += _milli(requests.get("cpu", "0"))
            asked["memory"] += _mebi(requests.get("memory", "0"))
        limited = {k for c in [*spec["containers"], *spec.get("initContainers", [])]
                   for k in c.get("resources", {}).get("limits", {})}
        requests = {}
        for resource in rng.choice((("cpu",), ("memory",), ("cpu", "memory"), ("cpu", "memory"))):
            if resource == "cpu":
                requests["cpu"] = millicpu(asked["cpu"] + rng.choice((0, 100, 500, 1000)))
            else:
                requests["memory"] = mebibytes(asked["memory"] + rng.choice((0, 128, 512, 1024)))
        requests = ({k: v for k, v in requests.items() if v not in ("0", "0Mi")}
                    or {"cpu": millicpu(asked["cpu"] + 100)})
        resources: dict[str, Any] = {"requests": requests}
        if rng.random() < 0.3 and not limited & requests.keys():
            resources["limits"] = dict(requests)
        spec["resources"] = resources

    def host_ports(self, spec: dict[str, Any]) -> None:
        rng = self.rng
        port = rng.choice((8080, 8443, 9100))
        entry = {"containerPort": port, "hostPort": port, "protocol": "TCP"}
        if rng.random() < 0.4:
            spec["hostNetwork"] = True
        elif rng.random() < 0.3:
            entry["hostIP"] = "127.0.0.1"
        spec["containers"][0]["ports"] = [entry]

    def affinity(self, ns: str) -> dict[str, Any]:
        rng = self.rng
        affinity: dict[str, Any] = {}
        node: dict[str, Any] = {}
        if rng.random() < 0.2:
            node["requiredDuringSchedulingIgnoredDuringExecution"] = {
                "nodeSelectorTerms": [self.node_term() for _ in range(rng.randint(1, 2))]}
        if rng.random() < 0.25:
            node["preferredDuringSchedulingIgnoredDuringExecution"] = [
                {"weight": rng.randint(1, 100), "preference": self.node_term(fields=False)}
                for _ in range(rng.randint(1, 2))]
        if node:
            affinity["nodeAffinity"] = node
        for kind, chance in (("podAffinity", 0.15), ("podAntiAffinity", 0.2)):
            terms: dict[str, Any] = {}
            if rng.random() < chance:
                terms["requiredDuringSchedulingIgnoredDuringExecution"] = [self.pod_term(ns)]
            if rng.random() < chance:
                terms["preferredDuringSchedulingIgnoredDuringExecution"] = [
                    {"weight": rng.randint(1, 100), "podAffinityTerm": self.pod_term(ns)}
                    for _ in range(rng.randint(1, 2))]
            if terms:
                affinity[kind] = terms
        return affinity

    def node_term(self, fields: bool = True) -> dict[str, Any]:
        rng = self.rng
        if fields and self.nodes and rng.random() < 0.15:
            names = [n["metadata"]["name"] for n in self.nodes]
            return {"matchFields": [{"key": "metadata.name", "operator": rng.choice(("In", "NotIn")),
                                     "values": [rng.choice(names)]}]}
        choices = [
            {"key": ZONE, "operator": "In", "values": rng.sample(self.zones, rng.randint(1, len(self.zones)))},
            {"key": ZONE, "operator": "NotIn", "values": [rng.choice(self.zones)]},
            {"key": DISK, "operator": "Exists"},
            {"key": POOL, "operator": "DoesNotExist"},
            {"key": GENERATION, "operator": rng.choice(("Gt", "Lt")), "values": [str(rng.randint(3, 6))]},
            {"key": DISK, "operator": "In", "values": ["ssd"]},
        ]
        return {"matchExpressions": rng.sample(choices, rng.randint(1, 2))}

    def pod_term(self, ns: str) -> dict[str, Any]:
        rng = self.rng
        apps = rng.sample(self.apps, rng.randint(1, 2))
        if len(apps) == 1 and rng.random() < 0.6:
            selector: dict[str, Any] = {"matchLabels": {"app": apps[0]}}
        else:
            selector = {"matchExpressions": [{"key": "app", "operator": "In", "values": apps}]}
        term: dict[str, Any] = {"labelSelector": selector,
                                "topologyKey": rng.choice((HOSTNAME, HOSTNAME, ZONE, REGION))}
        scope = rng.random()
        if scope < 0.2:
            term["namespaces"] = rng.sample(NAMESPACES, rng.randint(1, 2))
        elif scope < 0.4:
            term["namespaceSelector"] = rng.choice(({}, {"matchLabels": {"env": "dev"}},
                                                    {"matchExpressions": [{"key": "team", "operator": "In",
                                                                           "values": ["red"]}]}))
        elif scope < 0.5:
            term["namespaces"] = [ns]
            term["namespaceSelector"] = {"matchLabels": {"team": "blue"}}
        keys = rng.random()
        if keys < 0.12:
            term["matchLabelKeys"] = ["version"]
        elif keys < 0.2:
            term["mismatchLabelKeys"] = ["version"]
        return term

    def spread(self, app: str) -> list[dict[str, Any]]:
        rng = self.rng
        out = []
        for key in rng.sample((ZONE, HOSTNAME), rng.randint(1, 2)):
            constraint: dict[str, Any] = {
                "maxSkew": rng.randint(1, 3), "topologyKey": key,
                "whenUnsatisfiable": rng.choice(("DoNotSchedule", "ScheduleAnyway")),
                "labelSelector": {"matchLabels": {"app": app}}}
            if constraint["whenUnsatisfiable"] == "DoNotSchedule" and rng.random() < 0.3:
                constraint["minDomains"] = rng.randint(1, 4)
            if rng.random() < 0.3:
                constraint["nodeAffinityPolicy"] = rng.choice(("Honor", "Ignore"))
            if rng.random() < 0.3:
                constraint["nodeTaintsPolicy"] = rng.choice(("Honor", "Ignore"))
            if rng.random() < 0.25:
                constraint["matchLabelKeys"] = ["version"]
            out.append(constraint)
        return out

    def tolerations(self) -> list[dict[str, Any]]:
        rng = self.rng
        out: list[dict[str, Any]] = []
        for taint in rng.sample(TAINTS, rng.randint(1, 2)):
            toleration: dict[str, Any] = {"key": taint["key"], "effect": taint["effect"]}
            if taint["value"] and rng.random() < 0.7:
                toleration.update(operator="Equal", value=taint["value"])
            else:
                toleration["operator"] = "Exists"
            if taint["effect"] == "NoExecute" and rng.random() < 0.5:
                toleration["tolerationSeconds"] = 300
            if rng.random() < 0.1:
                del toleration["effect"]
                toleration.pop("tolerationSeconds", None)
            out.append(toleration)
        if rng.random() < 0.05:
            out.append({"operator": "Exists"})
        return out


def _milli(quantity: str) -> int:
    return int(quantity[:-1]) if quantity.endswith("m") else int(quantity) * 1000


def _mebi(quantity: str) -> int:
    if quantity.endswith("Gi"):
        return int(quantity[:-2]) * 1024
    return int(quantity[:-2]) if quantity.endswith("Mi") else int(quantity) // (1024 * 1024)
