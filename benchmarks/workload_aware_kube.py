#!/usr/bin/env python3
"""The workload-aware benchmark's gangs through a real kube-apiserver: `kschedfw run` against the
shipped kube-scheduler, the same API server build, the same cluster, the same gates.

    KSCHEDFW_KUBE_ASSETS=DIR python benchmarks/workload_aware_kube.py [--nodes 5000] [--racks 50]
        [--gangs 600] [--constraint none|rack] [--only kschedfw|kube-scheduler] [--runs N]
        [--qps 1000 --burst 2000]

For each scheduler a fresh loopback etcd + kube-apiserver is started with
``--runtime-config=scheduling.k8s.io/v1alpha2=true`` and the gates GenericWorkload, GangScheduling
and TopologyAwareWorkloadScheduling; the cluster of benchmarks/workload_aware.py (racked nodes,
one Workload and one gang PodGroup per gang, the gang's pods) is created, then the scheduler is
started with the same gates and timed until no pod is left unbound. Reported as
benchmarks/kube_apiserver_throughput.py reports: seconds from process start to the last bind,
pods/s over the binding phase (the pods' PodScheduled transitions, 1 s resolution), the
scheduler's CPU seconds to the last bind; and, read back from the API server, how many PodGroups
carry PodGroupScheduled=True and how many gangs have pods in more than one rack. A run that did
not schedule the gangs as groups is reported on stderr and the exit status is 1.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import datetime as _dt
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from kube_apiserver_throughput import bind_phase, process_cpu, unbound_left  # noqa: E402
from workload_aware import GATES, RACK, gang_objects, gang_sizes, racked_nodes  # noqa: E402

from kschedfw.cluster.kube.client import KubeClient  # noqa: E402
from kschedfw.cluster.kube.credentials import load_connection  # noqa: E402
from kschedfw.testing.controlplane import ControlPlane, find_assets, free_port, missing_assets_reason  # noqa: E402

SCHEDULER_NAME = "bench"
NAMESPACE = "bench"
_PATHS = {"Workload": "/apis/scheduling.k8s.io/v1alpha2/namespaces/bench/workloads",
          "PodGroup": "/apis/scheduling.k8s.io/v1alpha2/namespaces/bench/podgroups",
          "Pod": "/api/v1/namespaces/bench/pods"}


def populate(cp: ControlPlane, args: argparse.Namespace) -> int:
    client = KubeClient(load_connection(cp.kubeconfig), qps=0, burst=1)
    cp.api("POST", "/api/v1/namespaces", {"metadata": {"name": NAMESPACE}})
    now = _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")

    def node(manifest: dict) -> None:
        status = manifest["status"]
        status["conditions"] = [{"type": "Ready", "status": "True", "reason": "KubeletReady",
                                 "lastHeartbeatTime": now, "lastTransitionTime": now}]
        client.request("POST", "/api/v1/nodes", body=manifest)
        # TaintNodesByCondition admission adds the not-ready taint at create; no kubelet removes it
        client.request("PATCH", f"/api/v1/nodes/{manifest['metadata']['name']}", body={"spec": {"taints": None}},
                       content_type="application/merge-patch+json")

    def create(manifest: dict) -> None:
        manifest["metadata"]["namespace"] = NAMESPACE
        if manifest["kind"] == "Pod":
            manifest["spec"]["schedulerName"] = SCHEDULER_NAME
        client.request("POST", _PATHS[manifest["kind"]], body=manifest)

    sizes = gang_sizes(args.gangs, args.seed)
    objects = gang_objects(sizes, args.constraint, True)
    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        list(pool.map(node, racked_nodes(args.nodes, args.racks)))
        # every Workload, then every PodGroup (admission wants its Workload), then the pods
        for kind in ("Workload", "PodGroup", "Pod"):
            list(pool.map(create, [o for o in objects if o["kind"] == kind]))
    client.close()
    return sum(sizes)


def run_one(which: str, assets: Path, args: argparse.Namespace) -> dict:
    flags = [f"--feature-gates={GATES}", "--runtime-config=scheduling.k8s.io/v1alpha2=true"]
    with ControlPlane(assets, extra_apiserver_flags=flags) as cp, tempfile.TemporaryDirectory() as tmp:
        pods = populate(cp, args)
        config = Path(tmp, "config.yaml")
        config.write_text(json.dumps({
            "apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
            "clientConnection": {"kubeconfig": str(cp.kubeconfig), "qps": args.qps, "burst": args.burst},
            "leaderElection": {"leaderElect": False}, "profiles": [{"schedulerName": SCHEDULER_NAME}]}))
        if which == "kube-scheduler":
            cmd = [str(assets / "kube-scheduler"), f"--config={config}", "--bind-address=127.0.0.1",
                   f"--secure-port={free_port()}", f"--feature-gates={GATES}", "-v=0"]
        else:
            cmd = [sys.executable, "-m", "kschedfw.cli.main", "run", "--config", str(config),
                   "--feature-gates", GATES, "--secure-port", "0", "--health-address", "127.0.0.1:0"]
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, (str(ROOT), os.environ.get("PYTHONPATH"))))}
        log = open(Path(tmp, "scheduler.log"), "w")
        start = time.monotonic()
        proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env, cwd=ROOT)
        try:
            while unbound_left(cp):
                if proc.poll() is not None:
                    raise RuntimeError(f"{which} exited: {Path(tmp, 'scheduler.log').read_text()[-2000:]}")
                if time.monotonic() - start > args.timeout:
                    raise RuntimeError(f"{which}: not done after {args.timeout}s")
                time.sleep(0.25)
            total = time.monotonic() - start
            cpu = process_cpu(proc.pid)
        finally:
            proc.terminate()
            proc.wait(60)
            log.close()
        phase, bound = bind_phase(cp)
        split, scheduled = gang_check(cp)
        return {"scheduler": which, "nodes": args.nodes, "gangs": args.gangs, "pods": pods,
                "constraint": args.constraint, "total_s": round(total, 1), "bound": bound,
                "bind_phase_s": round(phase, 1), "pods_per_s": round(bound / phase, 1) if phase else None,
                "cpu_to_last_bind_s": None if cpu is None else round(cpu, 2),
                "pods_per_cpu_s": round(bound / cpu, 1) if cpu else None,
                "gangs_in_several_racks": split, "podgroups_scheduled": scheduled}


def gang_check(cp: ControlPlane) -> tuple[int, int]:
    """How many gangs have pods bound in more than one rack, and how many PodGroups carry
    PodGroupScheduled=True (what says the run went through the pod-group cycle)."""
    racks = {n["metadata"]["name"]: n["metadata"]["labels"].get(RACK) for n in cp.api("GET", "/api/v1/nodes")["items"]}
    by_gang: dict[str, set[str | None]] = {}
    for pod in cp.api("GET", _PATHS["Pod"])["items"]:
        gang = pod["metadata"]["labels"].get("gang")
        if gang and pod["spec"].get("nodeName"):
            by_gang.setdefault(gang, set()).add(racks.get(pod["spec"]["nodeName"]))
    scheduled = sum(1 for pg in cp.api("GET", _PATHS["PodGroup"])["items"]
                    if any(c["type"] == "PodGroupScheduled" and c["status"] == "True"
                           for c in (pg.get("status") or {}).get("conditions") or []))
    return sum(1 for found in by_gang.values() if len(found) > 1), scheduled


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--racks", type=int, default=50)
    parser.add_argument("--gangs", type=int, default=600)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--constraint", choices=("none", "rack"), default="rack")
    parser.add_argument("--qps", type=float, default=1000)
    parser.add_argument("--burst", type=int, default=2000)
    parser.add_argument("--only", choices=("kschedfw", "kube-scheduler"))
    parser.add_argument("--runs", type=int, default=1, help="rounds of the schedulers, alternating")
    parser.add_argument("--timeout", type=float, default=1800)
    args = parser.parse_args()
    assets = find_assets()
    if assets is None or not (assets / "kube-scheduler").exists():
        print(f"workload_aware_kube: {missing_assets_reason() if assets is None else 'no kube-scheduler'}",
              file=sys.stderr)
        return 2
    order = [args.only] if args.only else ["kube-scheduler", "kschedfw"]
    whole = True
    for _ in range(args.runs):
        for which in order:
            row = run_one(which, assets, args)
            print(json.dumps(row), flush=True)
            if row["podgroups_scheduled"] != args.gangs or (args.constraint == "rack" and row["gangs_in_several_racks"]):
                print(f"workload_aware_kube: {which} did not schedule the gangs as groups "
                      f"({row['podgroups_scheduled']} of {args.gangs} PodGroups scheduled, "
                      f"{row['gangs_in_several_racks']} gangs in several racks): its rate is not comparable",
                      file=sys.stderr)
                whole = False
    return 0 if whole else 1


if __name__ == "__main__":
    sys.exit(main())
