"""What `simulate --explain all --report` costs over a plain `simulate`, on a generated cluster.

The target: a 5000-node run with decision-time explain and the HTML report stays within
2x the time and memory of a plain run. This script writes a cluster (nodes of three sizes, pods
of a few shapes, some too big for any node so that failed attempts are recorded too), then runs
both variants in fresh processes, alternating them so that both see the same machine load, and
prints wall time and peak RSS of each run and the ratios of the medians.

    python benchmarks/explain_overhead.py --nodes 5000 --pods 3000 --repeat 3

With ``--gangs N`` the pods are N gangs of ``--gang-size`` pods instead (each a PodGroup whose
pods must share a rack, the nodes in ``--racks`` racks), run with the workload gates on: what
recording each group's placements and scores costs.

    python benchmarks/explain_overhead.py --nodes 1000 --racks 20 --gangs 100 --gang-size 8
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SIZES = (("4", "16Gi"), ("8", "32Gi"), ("16", "64Gi"))
SHAPES = (("250m", "512Mi"), ("500m", "1Gi"), ("1", "2Gi"), ("2", "4Gi"))


def write_cluster(path: Path, nodes: int, pods: int, unschedulable_every: int) -> None:
    with path.open("w") as fh:
        fh.write("apiVersion: v1\nkind: List\nitems:\n")
        for i in range(nodes):
            cpu, memory = SIZES[i % len(SIZES)]
            fh.write(f"- {{apiVersion: v1, kind: Node, metadata: {{name: node-{i:05d}, labels: "
                     f"{{kubernetes.io/hostname: node-{i:05d}, topology.kubernetes.io/zone: zone-{i % 3}}}}}, "
                     f"status: {{allocatable: {{cpu: '{cpu}', memory: {memory}, pods: '110'}}}}}}\n")
        for i in range(pods):
            cpu, memory = SHAPES[i % len(SHAPES)]
            if unschedulable_every and i % unschedulable_every == 0:
                cpu = "64"  # fits nowhere: every attempt is a failed one
            fh.write(f"- {{apiVersion: v1, kind: Pod, metadata: {{name: pod-{i:05d}, namespace: default}}, "
                     f"spec: {{containers: [{{name: c, image: busybox, resources: {{requests: "
                     f"{{cpu: '{cpu}', memory: {memory}}}}}}}]}}}}\n")


#: the gates the pod-group cycle and its placements run with
GANG_GATES = "GenericWorkload=true,GangScheduling=true,TopologyAwareWorkloadScheduling=true"


def write_gang_cluster(path: Path, nodes: int, racks: int, gangs: int, size: int) -> None:
    """Nodes of 8 CPUs in ``racks`` racks, and ``gangs`` gangs (minCount ``size``) of ``size``
    pods of 1 CPU each, every gang's pods bound to share a rack; every 10th gang asks for more
    than a rack holds, so that failed attempts are recorded too."""
    with path.open("w") as fh:
        fh.write("apiVersion: v1\nkind: List\nitems:\n")
        for i in range(nodes):
            fh.write(f"- {{apiVersion: v1, kind: Node, metadata: {{name: node-{i:05d}, labels: "
                     f"{{kubernetes.io/hostname: node-{i:05d}, rack: rack-{i % racks}}}}}, "
                     f"status: {{allocatable: {{cpu: '8', memory: 32Gi, pods: '110'}}}}}}\n")
        per_rack = 8 * max(nodes // racks, 1)
        for g in range(gangs):
            name = f"gang-{g:04d}"
            cpu = str(per_rack) if g % 10 == 9 else "1"
            policy = f"{{gang: {{minCount: {size}}}}}"
            fh.write(f"- {{apiVersion: scheduling.k8s.io/v1alpha2, kind: Workload, metadata: {{name: {name}, "
                     f"namespace: default}}, spec: {{podGroupTemplates: [{{name: workers, schedulingPolicy: "
                     f"{policy}}}]}}}}\n")
            fh.write(f"- {{apiVersion: scheduling.k8s.io/v1alpha2, kind: PodGroup, metadata: {{name: {name}, "
                     f"namespace: default}}, spec: {{podGroupTemplateRef: {{workload: {{workloadName: {name}, "
                     f"podGroupTemplateName: workers}}}}, schedulingPolicy: {policy}, "
                     f"schedulingConstraints: {{topology: [{{key: rack}}]}}}}}}\n")
            for i in range(size):
                fh.write(f"- {{apiVersion: v1, kind: Pod, metadata: {{name: {name}-{i:02d}, namespace: default}}, "
                         f"spec: {{schedulingGroup: {{podGroupName: {name}}}, containers: [{{name: c, image: busybox, "
                         f"resources: {{requests: {{cpu: '{cpu}', memory: 1Gi}}}}}}]}}}}\n")


def run_once(cluster: Path, extra: list[str], out_dir: Path) -> tuple[float, float]:
    """(wall seconds, peak RSS in MiB) of one `kschedfw simulate` in a fresh process."""
    code = ("import resource, sys; from kschedfw.cli.main import main; rc = main(sys.argv[1:]); "
            "sys.stderr.write('MAXRSS %d\\n' % resource.getrusage(resource.RUSAGE_SELF).ru_maxrss); sys.exit(rc)")
    args = [sys.executable, "-c", code, "simulate", str(cluster), "-o", "json", "--progress", "never", *extra]
    start = time.perf_counter()
    done = subprocess.run(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                          cwd=out_dir, env=os.environ.copy())
    wall = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"simulate failed ({done.returncode}): {done.stderr[-2000:]}")
    rss_kib = int(next(line.split()[1] for line in done.stderr.splitlines() if line.startswith("MAXRSS")))
    return wall, rss_kib / 1024


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--pods", type=int, default=3000)
    parser.add_argument("--unschedulable-every", type=int, default=50,
                        help="every Nth pod fits no node (0: none)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--gangs", type=int, default=0, help="instead of --pods, this many gangs (gates on)")
    parser.add_argument("--gang-size", type=int, default=8)
    parser.add_argument("--racks", type=int, default=50)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        out_dir = Path(tmp)
        cluster = out_dir / "cluster.yaml"
        gates: list[str] = []
        if args.gangs:
            write_gang_cluster(cluster, args.nodes, args.racks, args.gangs, args.gang_size)
            gates = ["--feature-gates", GANG_GATES]
            args.pods = args.gangs * args.gang_size
        else:
            write_cluster(cluster, args.nodes, args.pods, args.unschedulable_every)
        variants = {"plain": gates, "explain+report": [*gates, "--explain", "all", "--report",
                                                       str(out_dir / "report.html")]}
        results: dict[str, list[tuple[float, float]]] = {name: [] for name in variants}
        for i in range(args.repeat):
            order = list(variants) if i % 2 == 0 else list(reversed(variants))
            for name in order:
                wall, rss = run_once(cluster, variants[name], out_dir)
                results[name].append((wall, rss))
                print(f"run {i + 1} {name:15} {wall:7.1f} s {rss:8.0f} MiB", flush=True)
        size = (out_dir / "report.html").stat().st_size / 1024 / 1024
    med = {name: (statistics.median(w for w, _ in r), statistics.median(m for _, m in r)) for name, r in results.items()}
    print(f"{args.nodes} nodes, {args.pods} pods; report {size:.1f} MiB")
    for name, (wall, rss) in med.items():
        print(f"median {name:15} {wall:7.1f} s {rss:8.0f} MiB")
    wall_ratio = med["explain+report"][0] / med["plain"][0]
    rss_ratio = med["explain+report"][1] / med["plain"][1]
    print(f"ratio: time {wall_ratio:.2f}x, peak memory {rss_ratio:.2f}x")
    return 0 if wall_ratio <= 2 and rss_ratio <= 2 else 1


if __name__ == "__main__":
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    sys.exit(main())
