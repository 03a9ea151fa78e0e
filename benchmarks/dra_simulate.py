"""DRA's speed scenario on the embedded cluster: nodes with 8 GPUs each published in
ResourceSlices, a DeviceClass, and pods whose ResourceClaimTemplates ask one or two GPUs by CEL
selector, scheduled by the default profile (DynamicResources allocating). Reports scheduling
throughput (wall and per CPU-second, loading excluded) with DynamicResources' fast path on and off
and checks that both place every pod on the same node with the same devices.

    python benchmarks/dra_simulate.py --nodes 1000 --pods 2000
"""

from __future__ import annotations

import argparse
import time
from typing import Any

from kschedfw.api import parse_object
from kschedfw.config.validate import default_config
from kschedfw.framework.registry import default_registry
from kschedfw.simulation import Simulation
from kschedfw.testing import make_node

DRIVER = "gpu.example.com"
REQUEST_SELECTOR = f'device.capacity["{DRIVER}"].memory.compareTo(quantity("40Gi")) >= 0'


def objects(nodes: int, pods: int) -> list[Any]:
    out: list[Any] = []
    for i in range(nodes):
        name = f"node-{i}"
        out.append(make_node(name, cpu="64", memory="256Gi"))
        out.append(parse_object({
            "apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": f"{name}-gpus"},
            "spec": {"driver": DRIVER, "nodeName": name,
                     "pool": {"name": name, "generation": 1, "resourceSliceCount": 1},
                     "devices": [{"name": f"gpu-{j}", "attributes": {"model": {"string": "a100"}},
                                  "capacity": {"memory": {"value": "80Gi"}}} for j in range(8)]}}))
    out.append(parse_object({"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu"},
                             "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{DRIVER}"'}}]}}))
    for count in (1, 2):
        out.append(parse_object({
            "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
            "metadata": {"name": f"gpus-{count}", "namespace": "default"},
            "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": {
                "deviceClassName": "gpu", "allocationMode": "ExactCount", "count": count,
                "selectors": [{"cel": {"expression": REQUEST_SELECTOR}}]}}]}}}}))
    for p in range(pods):
        out.append(parse_object({
            "apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"pod-{p}", "namespace": "default"},
            "spec": {"containers": [{"name": "c", "image": "busybox", "resources": {"requests": {"cpu": "100m"}}}],
                     "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": f"gpus-{1 + p % 2}"}]}}))
    return out


def run(nodes: int, pods: int, fast_paths: bool) -> tuple[float, float, int, list[tuple[str, str, str]]]:
    """(wall s, CPU s, bound pods, placements with their devices) of the scheduling part."""
    registry = default_registry()
    sim = Simulation(default_config(registry), registry, objects(nodes, pods), fast_paths=fast_paths)
    start, cpu = time.perf_counter(), time.process_time()
    result = sim.run()
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu
    bound = sum(1 for p in result.pods if p.status == "Bound")
    devices = {c.raw["metadata"]["ownerReferences"][0]["name"]: str(c.raw.get("status", {}).get("allocation"))
               for c in result.cluster.list("ResourceClaim")}
    placements = sorted((p.key, p.node, devices.get(p.key.split("/")[1], "")) for p in result.pods)
    return wall, cpu, bound, placements


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=1000)
    parser.add_argument("--pods", type=int, default=2000)
    args = parser.parse_args()
    placements = []
    for fast in (True, False):
        wall, cpu, bound, placed = run(args.nodes, args.pods, fast)
        placements.append(placed)
        print(f"fast path {'on ' if fast else 'off'}: {bound}/{args.pods} bound in {wall:.1f}s: "
              f"{bound / wall:.0f} pods/s, {bound / cpu:.0f} pods/CPU-s")
    print("same placements and devices:", placements[0] == placements[1])


if __name__ == "__main__":
    main()
