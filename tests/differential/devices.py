"""Devices for the fuzzer's ``dra`` kind: DeviceClasses, ResourceSlices published by hand (no
driver runs), ResourceClaimTemplates and ResourceClaims, and pods that reference them.

Everything is ``resource.k8s.io/v1`` as a v1.36 API server accepts it on create. GPUs are per-node
pools (one slice each, generation 1) with a model, an index and a memory capacity; NICs come from
pools that span every node or the nodes of one zone. Selectors only name attributes of their own
class's driver, so no CEL expression fails at run time."""

from __future__ import annotations

import random
from typing import Any

RESOURCE_API = "resource.k8s.io/v1"
GPU_DRIVER = "gpu.example.com"
NIC_DRIVER = "nic.example.com"
ZONE = "topology.kubernetes.io/zone"
#: model -> memory capacity
MODELS = {"a100": "40Gi", "h100": "80Gi", "l4": "24Gi"}
#: DeviceClass name -> (driver, extra CEL selector or None)
CLASSES = {
    "gpu": (GPU_DRIVER, None),
    "gpu-big": (GPU_DRIVER, f'device.capacity["{GPU_DRIVER}"].memory.compareTo(quantity("40Gi")) >= 0'),
    "gpu-h100": (GPU_DRIVER, f'device.attributes["{GPU_DRIVER}"].model == "h100"'),
    "nic": (NIC_DRIVER, None),
}
GPU_SELECTORS = (
    f'device.attributes["{GPU_DRIVER}"].model == "a100"',
    f'device.attributes["{GPU_DRIVER}"].model in ["a100", "l4"]',
    f'device.attributes["{GPU_DRIVER}"].index < 4',
    f'device.capacity["{GPU_DRIVER}"].memory.compareTo(quantity("32Gi")) > 0',
)
NIC_SELECTORS = (f'device.attributes["{NIC_DRIVER}"].speed >= 100',)


class Devices:
    """One scenario's device objects, drawn from the scenario's ``rng`` after its nodes."""

    def __init__(self, rng: random.Random, nodes: list[dict[str, Any]], zones: list[str]) -> None:
        self.rng = rng
        self.nodes = nodes
        self.zones = zones
        self.claims: dict[str, list[str]] = {}  # namespace -> names of standalone claims
        self.templates: dict[str, list[str]] = {}  # namespace -> template names

    def device_classes(self) -> list[dict[str, Any]]:
        out = []
        for name, (driver, extra) in CLASSES.items():
            selectors = [{"cel": {"expression": f'device.driver == "{driver}"'}}]
            if extra:
                selectors.append({"cel": {"expression": extra}})
            out.append({"apiVersion": RESOURCE_API, "kind": "DeviceClass", "metadata": {"name": name},
                        "spec": {"selectors": selectors}})
        return out

    def resource_slices(self) -> list[dict[str, Any]]:
        rng = self.rng
        out = []
        for node in self.nodes:
            name = node["metadata"]["name"]
            if rng.random() < 0.3:
                continue
            models = [rng.choice(sorted(MODELS))]
            if rng.random() < 0.3:
                models.append(rng.choice(sorted(MODELS)))
            devices = []
            for i in range(rng.randint(0, 8)):
                model = rng.choice(models)
                devices.append({"name": f"gpu-{i}", "attributes": {"model": {"string": model}, "index": {"int": i}},
                                "capacity": {"memory": {"value": MODELS[model]}}})
            out.append(self._slice(f"{name}-gpus", GPU_DRIVER, name, {"nodeName": name}, devices))
        if rng.random() < 0.5:
            out.append(self._slice("shared-nics", NIC_DRIVER, "shared", {"allNodes": True}, self._nics()))
        if rng.random() < 0.5:
            zone = rng.choice(self.zones)
            selector = {"nodeSelectorTerms": [{"matchExpressions": [{"key": ZONE, "operator": "In",
                                                                     "values": [zone]}]}]}
            out.append(self._slice(f"{zone}-nics", NIC_DRIVER, zone, {"nodeSelector": selector}, self._nics()))
        return out

    def _nics(self) -> list[dict[str, Any]]:
        return [{"name": f"nic-{i}", "attributes": {"speed": {"int": self.rng.choice((25, 100, 400))}}}
                for i in range(self.rng.randint(0, 4))]

    @staticmethod
    def _slice(name: str, driver: str, pool: str, where: dict[str, Any], devices: list[dict[str, Any]]
               ) -> dict[str, Any]:
        return {"apiVersion": RESOURCE_API, "kind": "ResourceSlice", "metadata": {"name": name},
                "spec": {"driver": driver, "pool": {"name": pool, "generation": 1, "resourceSliceCount": 1},
                         **where, "devices": devices}}

    def claim_spec(self) -> dict[str, Any]:
        """``spec.devices`` of a claim: one or two requests, sometimes a matchAttribute constraint."""
        rng = self.rng
        requests = [self._request(f"r{i}") for i in range(rng.choice((1, 1, 1, 2)))]
        devices: dict[str, Any] = {"requests": requests}
        gpu_requests = [r["name"] for r in requests if "exactly" in r and r["exactly"]["deviceClassName"] != "nic"]
        many = sum(r.get("exactly", {}).get("count", 1) for r in requests) > 1
        if gpu_requests and many and rng.random() < 0.5:
            constraint: dict[str, Any] = {"matchAttribute": f"{GPU_DRIVER}/model"}
            if len(gpu_requests) > 1 and rng.random() < 0.5:
                constraint["requests"] = gpu_requests
            elif len(requests) > 1:
                constraint["requests"] = gpu_requests[:1]
            devices["constraints"] = [constraint]
        return devices

    def _request(self, name: str) -> dict[str, Any]:
        rng = self.rng
        if rng.random() < 0.25:  # a prioritized list: the first sub-request that can be met
            subs = [{"name": "h100", "deviceClassName": "gpu-h100", "allocationMode": "ExactCount", "count": 1},
                    {"name": "any", "deviceClassName": "gpu", "allocationMode": "ExactCount",
                     "count": rng.choice((1, 2))}]
            if rng.random() < 0.5:
                subs[1]["selectors"] = [{"cel": {"expression": rng.choice(GPU_SELECTORS)}}]
            return {"name": name, "firstAvailable": subs}
        cls = rng.choice(("gpu", "gpu", "gpu", "gpu-big", "gpu-h100", "nic"))
        exactly: dict[str, Any] = {"deviceClassName": cls}
        if rng.random() < 0.1:
            exactly["allocationMode"] = "All"
        else:
            exactly.update(allocationMode="ExactCount", count=rng.choice((1, 1, 2)))
        if rng.random() < 0.35:
            exactly["selectors"] = [{"cel": {"expression": rng.choice(NIC_SELECTORS if cls == "nic"
                                                                      else GPU_SELECTORS)}}]
        return {"name": name, "exactly": exactly}

    def claims_and_templates(self, namespaces: tuple[str, ...]) -> list[dict[str, Any]]:
        """A template in every namespace (a few more now and then) and a few standalone claims."""
        rng = self.rng
        out = []
        for i, ns in enumerate([*namespaces, *rng.sample(namespaces, rng.randint(0, 2))]):
            name = f"tmpl-{i}"
            self.templates.setdefault(ns, []).append(name)
            out.append({"apiVersion": RESOURCE_API, "kind": "ResourceClaimTemplate",
                        "metadata": {"name": name, "namespace": ns},
                        "spec": {"spec": {"devices": self.claim_spec()}}})
        for i in range(rng.randint(0, 3)):
            ns = rng.choice(namespaces)
            name = f"claim-{i}"
            self.claims.setdefault(ns, []).append(name)
            out.append({"apiVersion": RESOURCE_API, "kind": "ResourceClaim",
                        "metadata": {"name": name, "namespace": ns}, "spec": {"devices": self.claim_spec()}})
        return out

    def attach(self, pod: dict[str, Any]) -> bool:
        """Give ``pod`` one or two claims of its namespace, named by its first container; False
        when its namespace has none."""
        rng = self.rng
        ns = pod["metadata"]["namespace"]
        choices = [("resourceClaimTemplateName", t) for t in self.templates.get(ns, ())]
        choices += [("resourceClaimName", c) for c in self.claims.get(ns, ())]
        if not choices:
            return False
        picked = rng.sample(choices, min(len(choices), rng.choice((1, 1, 1, 2))))
        spec = pod["spec"]
        spec["resourceClaims"] = [{"name": f"dev-{i}", field: name} for i, (field, name) in enumerate(picked)]
        resources = spec["containers"][0].setdefault("resources", {})
        resources["claims"] = [{"name": c["name"]} for c in spec["resourceClaims"]]
        return True
