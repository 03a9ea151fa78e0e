"""DynamicResources' fast path (the allocator kept between cycles, per-node results reused while
a node's devices stay as they were) places pods and allocates devices exactly as the plain path."""

from __future__ import annotations

from kschedfw.api import parse_object
from kschedfw.cluster.inputs.scenario import Step
from kschedfw.config.validate import default_config
from kschedfw.framework.registry import default_registry
from kschedfw.simulation import Simulation
from kschedfw.testing import container, make_node, make_pod

DRIVER = "gpu.example.com"


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


def pod(name, template_name):
    return make_pod(name, containers=[container("c", image="busybox")],
                    resourceClaims=[{"name": "gpu", "resourceClaimTemplateName": template_name}])


def objects():
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
    pods = [pod(f"p{i:02d}", kinds[i % 3]) for i in range(14)]
    return [*nodes, *slices, device_class, *templates, *pods]


def outcome(fast_paths):
    registry = default_registry()
    steps = [Step(30, "delete", target={"kind": "Pod", "namespace": "default", "name": "p01"})]
    result = Simulation(default_config(registry), registry, objects(), steps, fast_paths=fast_paths).run(until=600)
    pods = sorted((p.key, p.status, p.node, p.message) for p in result.pods)
    claims = sorted((c.raw["metadata"]["ownerReferences"][0]["name"],
                     str((c.raw.get("status") or {}).get("allocation", {}).get("devices")))
                    for c in result.cluster.list("ResourceClaim"))
    return pods, claims


def test_fast_path_allocates_as_the_plain_path():
    fast, plain = outcome(True), outcome(False)
    assert fast == plain
    pods, claims = fast
    assert sum(1 for p in pods if p[1] == "Bound") >= 8  # the cluster is used, not just emptied
    assert any(p[1] == "Pending" for p in pods)
