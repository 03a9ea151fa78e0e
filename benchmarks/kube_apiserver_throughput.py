#!/usr/bin/env python3
"""Bind a backlog of pods through a real kube-apiserver: `kschedfw run` against the shipped
kube-scheduler, same API server build, same cluster, same client QPS/burst.

    KSCHEDFW_KUBE_ASSETS=DIR python benchmarks/kube_apiserver_throughput.py [--nodes 500] [--pods 2000]
        [--qps 50 --burst 100] [--only kschedfw|kube-scheduler] [--runs N] [--base-root DIR]
        [--transports http.client,urllib3,pycurl]

For each scheduler a fresh loopback etcd + kube-apiserver is started (kschedfw.testing.controlplane),
NODES ready nodes and PODS pending pods (100m cpu, 128Mi) are created, then the scheduler is started
and timed until no pod of its schedulerName is left unbound. Reported per scheduler: seconds from
process start to the last bind (``total``), and pods/s over the binding phase (first to last bind,
from the pods' PodScheduled transition times, 1 s resolution). CPU: ``cpu_to_last_bind_s`` is the
scheduler process's user+system CPU when the last pod is seen bound (polled every 0.25 s), and
``pods_per_cpu_s`` the pods bound per CPU-second of it; ``scheduler_cpu_s`` is its CPU until it
exits after SIGTERM (including shutdown: kschedfw writes the events still queued, for up to 5 s).
With ``--transports`` kschedfw also runs, as ``kschedfw[NAME]``, with its one-shot requests
(binds, status patches, events, leases) sent through another HTTP client of
benchmarks/http_transports.py: a throwaway copy of the package whose KubeClient imports that
client's Transport instead (watches stay on kschedfw's). With ``--profile`` the measured process is py-spy, so CPU figures are not comparable. Both
schedulers share the machine's cores with the API server and etcd, as in a small real control
plane.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import datetime as _dt
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import http_transports  # noqa: E402

from kschedfw.cluster.kube.client import KubeClient  # noqa: E402
from kschedfw.cluster.kube.credentials import load_connection  # noqa: E402
from kschedfw.testing.controlplane import ControlPlane, find_assets, free_port, missing_assets_reason  # noqa: E402

SCHEDULER_NAME = "bench"


def populate(cp: ControlPlane, nodes: int, pods: int) -> None:
    client = KubeClient(load_connection(cp.kubeconfig), qps=0, burst=1)
    cp.api("POST", "/api/v1/namespaces", {"metadata": {"name": "bench"}})
    now = _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")

    def node(i: int) -> None:
        alloc = {"cpu": "4", "memory": "16Gi", "pods": "110"}
        client.request("POST", "/api/v1/nodes", body={
            "metadata": {"name": f"node-{i}", "labels": {"kubernetes.io/hostname": f"node-{i}"}},
            "status": {"capacity": alloc, "allocatable": alloc, "conditions": [
                {"type": "Ready", "status": "True", "reason": "KubeletReady", "lastHeartbeatTime": now,
                 "lastTransitionTime": now}]}})
        # TaintNodesByCondition admission adds the not-ready taint at create; no kubelet removes it
        client.request("PATCH", f"/api/v1/nodes/node-{i}", body={"spec": {"taints": None}},
                       content_type="application/merge-patch+json")

    def pod(i: int) -> None:
        client.request("POST", "/api/v1/namespaces/bench/pods", body={
            "metadata": {"name": f"pod-{i}"},
            "spec": {"schedulerName": SCHEDULER_NAME, "containers": [{
                "name": "c", "image": "registry.k8s.io/pause:3.10",
                "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}}}]}})

    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        list(pool.map(node, range(nodes)))
        list(pool.map(pod, range(pods)))
    client.close()


def unbound_left(cp: ControlPlane) -> bool:
    page = cp.api("GET", f"/api/v1/namespaces/bench/pods?limit=1&fieldSelector="
                         f"spec.schedulerName%3D{SCHEDULER_NAME},spec.nodeName%3D")
    return bool(page["items"])


def bind_phase(cp: ControlPlane) -> tuple[float, int]:
    times = []
    for p in cp.api("GET", "/api/v1/namespaces/bench/pods")["items"]:
        for c in p["status"].get("conditions") or []:
            if c["type"] == "PodScheduled" and c["status"] == "True":
                times.append(_dt.datetime.strptime(c["lastTransitionTime"], "%Y-%m-%dT%H:%M:%SZ").timestamp())
    return (max(times) - min(times) + 1.0 if times else 0.0), len(times)


def process_cpu(pid: int) -> float | None:
    """CPU seconds (user + system) a running process has used so far (Linux /proc), or None."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return None


_OWN_IMPORT = "from kschedfw.cluster.kube.transport import NotConnected, Transport"


def variant_tree(transport: str, under: Path) -> Path:
    """A copy of the kschedfw package under ``under`` whose KubeClient sends its one-shot
    requests through ``transport`` (a name of benchmarks/http_transports.py)."""
    kube = under / "kschedfw" / "cluster" / "kube"
    shutil.copytree(ROOT / "kschedfw", under / "kschedfw", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(Path(__file__).with_name("http_transports.py"), kube / "bench_transports.py")
    client = kube / "client.py"
    source = client.read_text()
    if _OWN_IMPORT not in source:
        raise RuntimeError(f"{client}: no line {_OWN_IMPORT!r} to swap")
    class_name = http_transports.BY_NAME[transport].__name__
    client.write_text(source.replace(_OWN_IMPORT, "from kschedfw.cluster.kube.transport import NotConnected\n"
                                     f"from kschedfw.cluster.kube.bench_transports import {class_name} as Transport"))
    return under


def run_one(which: str, assets: Path, args: argparse.Namespace, roots: dict[str, Path]) -> dict:
    with ControlPlane(assets) as cp, tempfile.TemporaryDirectory() as tmp:
        populate(cp, args.nodes, args.pods)
        config = Path(tmp, "config.yaml")
        config.write_text(json.dumps({
            "apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
            "clientConnection": {"kubeconfig": str(cp.kubeconfig), "qps": args.qps, "burst": args.burst},
            "leaderElection": {"leaderElect": False}, "profiles": [{"schedulerName": SCHEDULER_NAME}]}))
        if which == "kube-scheduler":
            cmd = [str(assets / "kube-scheduler"), f"--config={config}", "--bind-address=127.0.0.1",
                   f"--secure-port={free_port()}", "-v=0"]
        else:
            # port 0: a free port for /healthz and /metrics (other schedulers may hold the default)
            cmd = [sys.executable, "-m", "kschedfw.cli.main", "run", "--config", str(config),
                   "--secure-port", "0", "--health-address", "127.0.0.1:0"]
            if args.profile:  # py-spy samples the scheduler process (its CPU figure then includes py-spy's)
                cmd = ["py-spy", "record", "--format", "raw", "--rate", "100", "--gil", "--output", args.profile,
                       "--", *cmd]
        root = str(roots.get(which, ROOT))
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, (root, os.environ.get("PYTHONPATH")))),
               "KSCHEDFW_BENCH_CAFILE": str(cp.ca_file)}
        log = open(Path(tmp, "scheduler.log"), "w")
        start = time.monotonic()
        cpu_before = os.times()
        # cwd: ``python -m`` puts it first on sys.path, ahead of PYTHONPATH
        proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env, cwd=root)
        try:
            while unbound_left(cp):
                if proc.poll() is not None:
                    raise RuntimeError(f"{which} exited: {Path(tmp, 'scheduler.log').read_text()[-2000:]}")
                if time.monotonic() - start > args.timeout:
                    raise RuntimeError(f"{which}: not done after {args.timeout}s")
                time.sleep(0.25)
            total = time.monotonic() - start
            cpu_to_done = process_cpu(proc.pid)
        finally:
            if args.profile:  # stop the profiled scheduler; py-spy then writes its file and exits
                for child in Path(f"/proc/{proc.pid}/task/{proc.pid}/children").read_text().split():
                    os.kill(int(child), signal.SIGTERM)
            else:
                proc.terminate()
            proc.wait(60)
            log.close()
        cpu_after = os.times()
        phase, bound = bind_phase(cp)
        return {"scheduler": which, "nodes": args.nodes, "pods": args.pods, "qps": args.qps, "burst": args.burst,
                "total_s": round(total, 1), "bound": bound, "bind_phase_s": round(phase, 1),
                "pods_per_s": round(bound / phase, 1) if phase else None,
                "cpu_to_last_bind_s": None if cpu_to_done is None else round(cpu_to_done, 2),
                "pods_per_cpu_s": round(bound / cpu_to_done, 1) if cpu_to_done else None,
                "scheduler_cpu_s": round((cpu_after.children_user + cpu_after.children_system)
                                         - (cpu_before.children_user + cpu_before.children_system), 1)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--nodes", type=int, default=500)
    parser.add_argument("--pods", type=int, default=2000)
    parser.add_argument("--qps", type=float, default=50)
    parser.add_argument("--burst", type=int, default=100)
    parser.add_argument("--only", choices=("kschedfw", "kube-scheduler"))
    parser.add_argument("--timeout", type=float, default=900)
    parser.add_argument("--runs", type=int, default=1, help="rounds of the schedulers, alternating")
    parser.add_argument("--base-root", metavar="DIR", type=Path,
                        help="also run kschedfw from this source tree (e.g. a worktree of an older commit) "
                             "as 'kschedfw-base', alternating with the others")
    parser.add_argument("--transports", metavar="NAMES", type=_names,
                        help="also run kschedfw with each of these HTTP clients (comma-separated: "
                             "http.client, urllib3, pycurl, pycurl-h2), alternating with the others")
    parser.add_argument("--profile", metavar="FILE",
                        help="record kschedfw's stacks with py-spy into FILE (collapsed stacks)")
    args = parser.parse_args()
    assets = find_assets()
    if assets is None or not (assets / "kube-scheduler").exists():
        print(f"kube_apiserver_throughput: {missing_assets_reason() if assets is None else 'no kube-scheduler'}",
              file=sys.stderr)
        return 2
    if args.profile and shutil.which("py-spy") is None:
        print("kube_apiserver_throughput: --profile needs py-spy (pip install py-spy)", file=sys.stderr)
        return 2
    order = [args.only] if args.only else ["kube-scheduler", "kschedfw"]
    roots: dict[str, Path] = {}
    if args.base_root:
        order.append("kschedfw-base")
        roots["kschedfw-base"] = args.base_root
    with tempfile.TemporaryDirectory() as variants:
        for transport in args.transports or ():
            order.append(f"kschedfw[{transport}]")
            roots[order[-1]] = variant_tree(transport, Path(variants, transport))
        for _ in range(args.runs):  # alternate, so each sees the machine's load of the moment alike
            for which in order:
                print(json.dumps(run_one(which, assets, args, roots)), flush=True)
    return 0


def _names(text: str) -> list[str]:
    names = [name.strip() for name in text.split(",") if name.strip()]
    unknown = [name for name in names if name not in http_transports.BY_NAME]
    if unknown:
        raise argparse.ArgumentTypeError(f"unknown transport {', '.join(unknown)} "
                                         f"(known: {', '.join(http_transports.BY_NAME)})")
    return names


if __name__ == "__main__":
    sys.exit(main())
