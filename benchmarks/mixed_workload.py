"""The mixed workload: a generated cluster (default 2000 nodes in 4 zones and
25-node racks) and pending pods (default 5000) mixing required and preferred topology spread, pod
affinity and anti-affinity, deterministic from ``--seed`` (see ``clusters.mixed``).

Everything runs in-process on the embedded cluster with the default profile: the objects are
parsed, loaded, and the scheduler runs until every pod is placed or settled. Reported: pods/s
over the scheduling loop (wall and CPU), the load time, how many pods were bound, and a digest
of the placements. ``--check`` runs the same cluster again with the scheduler's fast paths off
(``fast_paths=False``: no memos, no whole-list forms) and fails unless every pod lands on the same node.

    python benchmarks/mixed_workload.py [--nodes 2000] [--pods 5000] [--seed 0] [--check]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import time
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import clusters  # noqa: E402  (the generator beside this file)


def run_once(kind: str, nodes: int, pods: int, seed: int, memo: bool = True) -> dict[str, Any]:
    """Generate, load and schedule; return the figures and the placements."""
    from kschedfw.api.load import parse_object
    from kschedfw.config.validate import default_config
    from kschedfw.framework.registry import default_registry
    from kschedfw.simulation import Simulation
    manifests = clusters.GENERATORS[kind](nodes, pods, seed)
    t0 = time.perf_counter()
    objects = [parse_object(m) for m in manifests]
    registry = default_registry()
    sim = Simulation(default_config(registry), registry, objects, seed=seed, fast_paths=memo)
    t1, c1 = time.perf_counter(), time.process_time()
    result = sim.run()
    t2, c2 = time.perf_counter(), time.process_time()
    present = [p for p in result.pods if p.status not in ("Preempted", "Deleted")]  # still in the cluster
    placements = {p.key: p.node for p in present}
    bound = sum(1 for p in present if p.status == "Bound")
    digest = hashlib.sha256(json.dumps(sorted(placements.items())).encode()).hexdigest()[:16]
    return {"workload": f"{kind} {nodes} nodes / {pods} pods (seed {seed})", "memo": memo,
            "load_s": round(t1 - t0, 2), "schedule_s": round(t2 - t1, 2),
            "pods_per_s": round(bound / (t2 - t1), 1) if t2 > t1 else None,
            "pods_per_cpu_s": round(bound / (c2 - c1), 1) if c2 > c1 else None,
            "bound": bound, "pending": len(present) - bound, "placements_digest": digest,
            "placements": placements}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kind", choices=sorted(clusters.GENERATORS), default="mixed")
    parser.add_argument("--nodes", type=int, default=2000)
    parser.add_argument("--pods", type=int, default=5000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--check", action="store_true",
                        help="also run the plain path (memos off) and compare placements")
    parser.add_argument("--output", choices=("table", "json"), default="table")
    args = parser.parse_args(argv)
    runs = [run_once(args.kind, args.nodes, args.pods, args.seed)]
    if args.check:
        runs.append(run_once(args.kind, args.nodes, args.pods, args.seed, memo=False))
    same = all(r["placements"] == runs[0]["placements"] for r in runs)
    if args.output == "json":
        print(json.dumps([{k: v for k, v in r.items() if k != "placements"} for r in runs]
                         + ([{"same_placements": same}] if args.check else []), indent=2))
    else:
        for r in runs:
            print(f"{r['workload']}, memo {'on' if r['memo'] else 'off'}: {r['pods_per_s']} pods/s "
                  f"({r['pods_per_cpu_s']} pods/CPU-s), load {r['load_s']} s, schedule "
                  f"{r['schedule_s']} s, bound {r['bound']}, pending {r['pending']}, "
                  f"placements {r['placements_digest']}")
        if args.check:
            print("placements: " + ("identical" if same else "DIFFERENT"))
    if args.check and not same:
        diff = [k for k, v in runs[0]["placements"].items() if runs[1]["placements"].get(k) != v]
        print(f"{len(diff)} pods placed differently, e.g. {diff[:5]}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
