#!/usr/bin/env python3
"""DRA's speed scenario through the shipped kube-scheduler against a real kube-apiserver:
the cluster of benchmarks/dra_simulate.py (nodes with 8 GPUs each in ResourceSlices, one
DeviceClass, pods claiming one or two GPUs by CEL selector), for comparison with `simulate`.

    KSCHEDFW_KUBE_ASSETS=DIR python benchmarks/dra_kube_scheduler.py [--nodes 1000] [--pods 2000]
        [--qps 1000 --burst 2000]

A fresh loopback etcd + kube-apiserver is started (kschedfw.testing.controlplane) and the whole
cluster is created first; there is no resourceclaim controller, so each pod names a ResourceClaim
created beside it (the claim a template would have generated). Then kube-scheduler is started and
timed until every pod is bound. Reported: seconds from process start to the last bind
(``total_s``), pods/s over the binding phase (first to last PodScheduled transition, 1 s
resolution), pods/s over ``total_s``, and the scheduler's CPU seconds until the last bind.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from dra_simulate import DRIVER, REQUEST_SELECTOR  # noqa: E402
from kube_apiserver_throughput import bind_phase, process_cpu  # noqa: E402

from kschedfw.cluster.kube.client import KubeClient  # noqa: E402
from kschedfw.cluster.kube.credentials import load_connection  # noqa: E402
from kschedfw.testing.controlplane import ControlPlane, find_assets, free_port, missing_assets_reason  # noqa: E402

SCHEDULER_NAME = "bench"
RESOURCE = "/apis/resource.k8s.io/v1"


def populate(cp: ControlPlane, nodes: int, pods: int) -> None:
    client = KubeClient(load_connection(cp.kubeconfig), qps=0, burst=1)
    cp.api("POST", "/api/v1/namespaces", {"metadata": {"name": "bench"}})
    cp.api("POST", f"{RESOURCE}/deviceclasses", {
        "metadata": {"name": "gpu"}, "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{DRIVER}"'}}]}})

    def node(i: int) -> None:
        name = f"node-{i}"
        cp.create_ready_node(name, cpu="64", memory="256Gi")
        client.request("POST", f"{RESOURCE}/resourceslices", body={
            "metadata": {"name": f"{name}-gpus"},
            "spec": {"driver": DRIVER, "nodeName": name, "pool": {"name": name, "generation": 1, "resourceSliceCount": 1},
                     "devices": [{"name": f"gpu-{j}", "attributes": {"model": {"string": "a100"}},
                                  "capacity": {"memory": {"value": "80Gi"}}} for j in range(8)]}})

    def pod(i: int) -> None:
        client.request("POST", f"{RESOURCE}/namespaces/bench/resourceclaims", body={
            "metadata": {"name": f"pod-{i}-gpu"},
            "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {
                "deviceClassName": "gpu", "allocationMode": "ExactCount", "count": 1 + i % 2,
                "selectors": [{"cel": {"expression": REQUEST_SELECTOR}}]}}]}}})
        client.request("POST", "/api/v1/namespaces/bench/pods", body={
            "metadata": {"name": f"pod-{i}"},
            "spec": {"schedulerName": SCHEDULER_NAME,
                     "containers": [{"name": "c", "image": "busybox", "resources": {"requests": {"cpu": "100m"}}}],
                     "resourceClaims": [{"name": "gpu", "resourceClaimName": f"pod-{i}-gpu"}]}})

    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        list(pool.map(node, range(nodes)))
        list(pool.map(pod, range(pods)))
    client.close()


def unbound(cp: ControlPlane) -> int:
    return len(cp.api("GET", "/api/v1/namespaces/bench/pods?fieldSelector=spec.nodeName%3D")["items"])


def run(assets: Path, args: argparse.Namespace) -> dict:
    with ControlPlane(assets) as cp, tempfile.TemporaryDirectory() as tmp:
        populate(cp, args.nodes, args.pods)
        config = Path(tmp, "config.yaml")
        config.write_text(json.dumps({
            "apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
            "clientConnection": {"kubeconfig": str(cp.kubeconfig), "qps": args.qps, "burst": args.burst},
            "leaderElection": {"leaderElect": False}, "profiles": [{"schedulerName": SCHEDULER_NAME}]}))
        cmd = [str(assets / "kube-scheduler"), f"--config={config}", "--bind-address=127.0.0.1",
               f"--secure-port={free_port()}", "-v=0"]
        log = open(Path(tmp, "scheduler.log"), "w")
        start = time.monotonic()
        proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT)
        try:
            while unbound(cp):
                if proc.poll() is not None:
                    raise RuntimeError(f"kube-scheduler exited: {Path(tmp, 'scheduler.log').read_text()[-2000:]}")
                if time.monotonic() - start > args.timeout:
                    raise RuntimeError(f"kube-scheduler: {unbound(cp)} pods unbound after {args.timeout}s")
                time.sleep(0.25)
            total = time.monotonic() - start
            cpu = process_cpu(proc.pid)
        finally:
            proc.terminate()
            proc.wait(60)
            log.close()
        phase, bound = bind_phase(cp)
        allocated = sum(1 for c in cp.api("GET", f"{RESOURCE}/namespaces/bench/resourceclaims")["items"]
                        if (c.get("status") or {}).get("allocation"))
        return {"scheduler": "kube-scheduler", "nodes": args.nodes, "pods": args.pods, "qps": args.qps,
                "burst": args.burst, "bound": bound, "claims_allocated": allocated, "total_s": round(total, 1),
                "pods_per_s_total": round(bound / total, 1), "bind_phase_s": round(phase, 1),
                "pods_per_s": round(bound / phase, 1) if phase else None,
                "cpu_to_last_bind_s": None if cpu is None else round(cpu, 2),
                "pods_per_cpu_s": round(bound / cpu, 1) if cpu else None}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--nodes", type=int, default=1000)
    parser.add_argument("--pods", type=int, default=2000)
    parser.add_argument("--qps", type=float, default=1000)
    parser.add_argument("--burst", type=int, default=2000)
    parser.add_argument("--timeout", type=float, default=600)
    args = parser.parse_args()
    assets = find_assets()
    if assets is None or not (assets / "kube-scheduler").exists():
        print(f"dra_kube_scheduler: {missing_assets_reason() if assets is None else 'no kube-scheduler'}",
              file=sys.stderr)
        return 2
    print(json.dumps(run(assets, args)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
