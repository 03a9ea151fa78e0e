"""Small manifests for hand-written scenarios (the generator writes its own)."""

from __future__ import annotations

import copy
from typing import Any

from tests.differential.scenario import Kind, Scenario

CONFIG_API = "kubescheduler.config.k8s.io/v1"


def config(*profiles: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": CONFIG_API, "kind": "KubeSchedulerConfiguration",
            "profiles": list(profiles) or [{"schedulerName": "default-scheduler"}]}


def namespace(name: str, **labels: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "labels": labels}}


def node(name: str, cpu: str = "4", memory: str = "8Gi", *, labels: dict[str, str] | None = None,
         taints: list[dict[str, str]] | None = None, **allocatable: str) -> dict[str, Any]:
    resources = {"cpu": cpu, "memory": memory, "pods": "110", **allocatable}
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, **(labels or {})}},
            "spec": {"taints": taints or []},
            "status": {"capacity": resources, "allocatable": resources}}


def priority_class(name: str, value: int) -> dict[str, Any]:
    return {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": name},
            "value": value}


def pod(name: str, cpu: str = "100m", memory: str = "128Mi", *, ns: str = "fuzz-a",
        labels: dict[str, str] | None = None, **spec: Any) -> dict[str, Any]:
    """A pod of one container; ``spec`` fields are added as given (terminationGracePeriodSeconds
    is 0: there is no kubelet to end a victim)."""
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": ns, "labels": labels or {}},
            "spec": {"terminationGracePeriodSeconds": 0,
                     "containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10",
                                     "resources": {"requests": {"cpu": cpu, "memory": memory}}}], **spec}}


def scenario(objects: list[dict[str, Any]], pods: list[dict[str, Any]], cfg: dict[str, Any] | None = None,
             kind: Kind = "default", seed: int = 0) -> Scenario:
    return Scenario(seed=seed, kind=kind, config=cfg or config(), objects=tuple(objects), pods=tuple(pods))


WORKLOAD_API = "scheduling.k8s.io/v1alpha2"


def pod_group(name: str, policy: dict[str, Any], *, ns: str = "fuzz-a", topology_key: str = ""
              ) -> list[dict[str, Any]]:
    """A Workload of one template and its PodGroup, both with ``policy`` (and a topology
    constraint on ``topology_key``); pods join with :func:`member`."""
    spec: dict[str, Any] = {"schedulingPolicy": policy}
    if topology_key:
        spec["schedulingConstraints"] = {"topology": [{"key": topology_key}]}
    return [{"apiVersion": WORKLOAD_API, "kind": "Workload", "metadata": {"name": name, "namespace": ns},
             "spec": {"podGroupTemplates": [{"name": "workers", **copy.deepcopy(spec)}]}},
            {"apiVersion": WORKLOAD_API, "kind": "PodGroup", "metadata": {"name": name, "namespace": ns},
             "spec": {"podGroupTemplateRef": {"workload": {"workloadName": name, "podGroupTemplateName": "workers"}},
                      **spec}}]


def member(group: str, name: str, cpu: str = "100m", memory: str = "128Mi", **spec: Any) -> dict[str, Any]:
    return pod(name, cpu, memory, schedulingGroup={"podGroupName": group}, **spec)


RESOURCE_API = "resource.k8s.io/v1"


def device_class(name: str, driver: str) -> dict[str, Any]:
    return {"apiVersion": RESOURCE_API, "kind": "DeviceClass", "metadata": {"name": name},
            "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{driver}"'}}]}}


def gpu_slice(node_name: str, driver: str, *models: str) -> dict[str, Any]:
    """``node_name``'s pool of one slice: a device per model, named gpu-0, gpu-1, ..."""
    return {"apiVersion": RESOURCE_API, "kind": "ResourceSlice", "metadata": {"name": f"{node_name}-gpus"},
            "spec": {"driver": driver, "nodeName": node_name,
                     "pool": {"name": node_name, "generation": 1, "resourceSliceCount": 1},
                     "devices": [{"name": f"gpu-{i}", "attributes": {"model": {"string": m}}}
                                 for i, m in enumerate(models)]}}


def claim_template(name: str, *requests: dict[str, Any], ns: str = "fuzz-a") -> dict[str, Any]:
    return {"apiVersion": RESOURCE_API, "kind": "ResourceClaimTemplate", "metadata": {"name": name, "namespace": ns},
            "spec": {"spec": {"devices": {"requests": list(requests)}}}}


def claim(name: str, *requests: dict[str, Any], ns: str = "fuzz-a") -> dict[str, Any]:
    return {"apiVersion": RESOURCE_API, "kind": "ResourceClaim", "metadata": {"name": name, "namespace": ns},
            "spec": {"devices": {"requests": list(requests)}}}


def with_claims(manifest: dict[str, Any], **claims: str) -> dict[str, Any]:
    """``manifest`` (a pod) using ``claims``: pod claim name -> ``template:NAME`` or ``claim:NAME``,
    all named by its first container."""
    fields = {"template": "resourceClaimTemplateName", "claim": "resourceClaimName"}
    spec = manifest["spec"]
    spec["resourceClaims"] = [{"name": name, fields[ref.partition(":")[0]]: ref.partition(":")[2]}
                              for name, ref in claims.items()]
    spec["containers"][0]["resources"]["claims"] = [{"name": name} for name in claims]
    return manifest
