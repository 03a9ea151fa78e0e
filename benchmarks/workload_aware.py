#!/usr/bin/env python3
"""Workload-aware scheduling end to end: gangs of pods on a racked cluster through
`kschedfw simulate` with the v1.36 gates on, against SchedulingBasic's pods on the same nodes.

    python benchmarks/workload_aware.py [--nodes 5000] [--racks 50] [--gangs 600] [--seed 0]
        [--constraint none,rack] [--repeat 2] [--profile FILE] [--folder DIR]
    python benchmarks/workload_aware.py write DIR [--constraint rack] ...   # only write the clusters

The cluster: NODES nodes of SchedulingBasic's shape (4 cpu, 32Gi, 110 pods) labelled ``rack``
(``rack-0`` ... , as upstream's topology-aware integration tests name the key), NODES / RACKS
per rack; GANGS Workloads, each with one PodGroup (gang, ``minCount`` all its pods) of 8-16 pause
pods (100m, 500Mi; about 12 * GANGS pods, drawn from the seed). With ``--constraint rack`` every
PodGroup has ``schedulingConstraints.topology: [{key: rack}]``.

Each scenario is run as a fresh ``kschedfw simulate -o json`` process with and without its pods
(the same nodes, Workloads and PodGroups), alternating, ``--repeat`` times; pods/s is the pods
bound over the difference of the two runs' wall times (and user+system CPU), as the
"simulate end to end" section of benchmarks/README.md measures SchedulingBasic. The ``basic``
scenario is that SchedulingBasic run at the same node and pod count, gates off. ``--folder DIR``
runs on clusters written by ``write`` instead of generating them. ``--profile FILE`` runs the
first scenario's full run once under cProfile and writes its stats to FILE.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from clusters import _Dumper, _node, _pod, as_list

GATES = "GenericWorkload=true,GangScheduling=true,TopologyAwareWorkloadScheduling=true"
RACK = "rack"
_GROUP = "scheduling.k8s.io/v1alpha2"


def racked_nodes(nodes: int, racks: int) -> list[dict[str, Any]]:
    per_rack = max(1, nodes // racks)
    return [_node(f"node-{i}", {RACK: f"rack-{min(i // per_rack, racks - 1)}"}, "4", "32Gi") for i in range(nodes)]


def gang_sizes(gangs: int, seed: int) -> list[int]:
    rng = random.Random(seed)
    return [rng.randint(8, 16) for _ in range(gangs)]


def gang_objects(sizes: list[int], constraint: str, with_pods: bool) -> list[dict[str, Any]]:
    """One Workload, one PodGroup (gang of all its pods) and, with ``with_pods``, its pods."""
    items: list[dict[str, Any]] = []
    for g, size in enumerate(sizes):
        name = f"gang-{g}"
        policy = {"gang": {"minCount": size}}
        items.append({"apiVersion": _GROUP, "kind": "Workload", "metadata": {"name": name, "namespace": "default"},
                      "spec": {"podGroupTemplates": [{"name": "workers", "schedulingPolicy": policy}]}})
        spec: dict[str, Any] = {"podGroupTemplateRef": {"workload": {"workloadName": name,
                                                                      "podGroupTemplateName": "workers"}},
                                "schedulingPolicy": policy}
        if constraint == "rack":
            spec["schedulingConstraints"] = {"topology": [{"key": RACK}]}
        items.append({"apiVersion": _GROUP, "kind": "PodGroup", "metadata": {"name": name, "namespace": "default"},
                      "spec": spec})
        if with_pods:
            items += [_pod(f"{name}-{i}", {"gang": name}, "100m", "500Mi", schedulingGroup={"podGroupName": name})
                      for i in range(size)]
    return items


def scenario_files(args: argparse.Namespace, out: Path) -> dict[str, tuple[Path, Path, int, str]]:
    """name -> (cluster with pods, the same without pods, pod count, feature gates)."""
    nodes = racked_nodes(args.nodes, args.racks)
    sizes = gang_sizes(args.gangs, args.seed)
    pods = sum(sizes)
    files: dict[str, tuple[Path, Path, int, str]] = {}
    for constraint in args.constraint:
        full, empty = out / f"gangs-{constraint}.yaml", out / f"gangs-{constraint}-nopods.yaml"
        _write(full, nodes + gang_objects(sizes, constraint, True))
        _write(empty, nodes + gang_objects(sizes, constraint, False))
        files[f"gangs, constraint {constraint}"] = (full, empty, pods, GATES)
    if args.basic:
        plain = [_node(f"node-{i}", {}, "4", "32Gi") for i in range(args.nodes)]
        full, empty = out / "basic.yaml", out / "basic-nopods.yaml"
        _write(full, plain + [_pod(f"pod-{i}", {}, "100m", "500Mi") for i in range(pods)])
        _write(empty, plain)
        files["basic (SchedulingBasic, gates off)"] = (full, empty, pods, "")
    return files


def folder_files(folder: Path) -> dict[str, tuple[Path, Path, int, str]]:
    """The clusters ``write`` left in ``folder`` (their pod counts read back)."""
    files: dict[str, tuple[Path, Path, int, str]] = {}
    for full in sorted(folder.glob("*.yaml")):
        if full.stem.endswith("-nopods"):
            continue
        empty = full.with_name(f"{full.stem}-nopods.yaml")
        if not empty.exists():
            raise SystemExit(f"workload_aware: {full} has no {empty.name} beside it")
        with open(full, encoding="utf-8") as fh:
            items = yaml.load(fh, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))["items"]
        pods = sum(1 for item in items if item.get("kind") == "Pod")
        gates = GATES if any(item.get("kind") == "PodGroup" for item in items) else ""
        files[full.stem] = (full, empty, pods, gates)
    return files


def _write(path: Path, items: list[dict[str, Any]]) -> None:
    with open(path, "w", encoding="utf-8") as fh:
        yaml.dump(as_list(items), fh, Dumper=_Dumper, sort_keys=False)


def simulate(cluster: Path, gates: str, profile: str | None = None) -> tuple[float, float, dict[str, Any]]:
    """Wall and CPU seconds of one ``kschedfw simulate -o json`` process, and its JSON."""
    cmd = [sys.executable]
    if profile:
        cmd += ["-m", "cProfile", "-o", profile]
    cmd += ["-m", "kschedfw.cli.main", "simulate", str(cluster), "-o", "json", "--progress", "never"]
    if gates:
        cmd += ["--feature-gates", gates]
    env = {**os.environ, "PYTHONHASHSEED": "0",
           "PYTHONPATH": os.pathsep.join(filter(None, (str(ROOT), os.environ.get("PYTHONPATH"))))}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    proc = subprocess.run(cmd, check=False, capture_output=True, text=True, env=env, cwd=ROOT)
    wall = time.monotonic() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode not in (0, 1) or not proc.stdout.strip():
        raise SystemExit(f"workload_aware: simulate {cluster} exited {proc.returncode}: {proc.stderr[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, json.loads(proc.stdout)


def bound_pods(report: dict[str, Any]) -> int:
    return sum(1 for p in report.get("pods", []) if p.get("node"))


def measure(name: str, full: Path, empty: Path, pods: int, gates: str, repeat: int) -> dict[str, Any]:
    walls: list[tuple[float, float]] = []
    cpus: list[tuple[float, float]] = []
    bound = 0
    for _ in range(repeat):  # alternate, so both see the machine's load of the moment alike
        empty_wall, empty_cpu, _report = simulate(empty, gates)
        full_wall, full_cpu, report = simulate(full, gates)
        bound = bound_pods(report)
        walls.append((empty_wall, full_wall))
        cpus.append((empty_cpu, full_cpu))
    rates = sorted(bound / (f - e) for e, f in walls if f > e)
    cpu_rates = sorted(bound / (f - e) for e, f in cpus if f > e)
    return {"scenario": name, "pods": pods, "bound": bound,
            "no_pods_wall_s": [round(e, 2) for e, _ in walls], "pods_wall_s": [round(f, 2) for _, f in walls],
            "pods_per_s": [round(r) for r in rates], "pods_per_cpu_s": [round(r) for r in cpu_rates],
            "median_pods_per_s": round(statistics.median(rates)) if rates else None,
            "median_pods_per_cpu_s": round(statistics.median(cpu_rates)) if cpu_rates else None}


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    write_to = None
    if argv[:1] == ["write"]:
        if len(argv) < 2:
            raise SystemExit("workload_aware: write DIR")
        write_to, argv = Path(argv[1]), argv[2:]
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--racks", type=int, default=50)
    parser.add_argument("--gangs", type=int, default=600)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--constraint", type=lambda s: [c for c in s.split(",") if c], default=["none", "rack"],
                        help="comma-separated: none, rack (default both)")
    parser.add_argument("--no-basic", dest="basic", action="store_false",
                        help="skip the SchedulingBasic comparison run")
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--folder", type=Path, help="run the clusters `write` left in DIR")
    parser.add_argument("--profile", metavar="FILE", help="cProfile the first scenario's run with pods into FILE")
    args = parser.parse_args(argv)
    unknown = set(args.constraint) - {"none", "rack"}
    if unknown:
        parser.error(f"--constraint: unknown {', '.join(sorted(unknown))} (known: none, rack)")
    if write_to is not None:
        write_to.mkdir(parents=True, exist_ok=True)
        for name, (full, empty, pods, _gates) in scenario_files(args, write_to).items():
            print(f"{name}: {full} ({pods} pods), {empty}")
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        files = folder_files(args.folder) if args.folder else scenario_files(args, Path(tmp))
        if args.profile:
            full, _empty, _pods, gates = next(iter(files.values()))
            simulate(full, gates, profile=args.profile)
            print(f"profile written to {args.profile}", file=sys.stderr)
            return 0
        results = [measure(name, *spec, repeat=args.repeat) for name, spec in files.items()]
    for row in results:
        print(json.dumps(row), flush=True)
    basic = next((r for r in results if r["scenario"].startswith("basic")), None)
    if basic and basic["median_pods_per_s"]:
        for row in results:
            if row is not basic and row["median_pods_per_s"]:
                print(f"{row['scenario']}: {row['median_pods_per_s'] / basic['median_pods_per_s']:.0%} of basic "
                      f"(wall), {row['median_pods_per_cpu_s'] / basic['median_pods_per_cpu_s']:.0%} (CPU)")
    return 0 if all(r["bound"] == r["pods"] for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
