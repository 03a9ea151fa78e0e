"""How much of a policy's seed-to-seed spread is the node tie order.

The simulator renames its nodes with a seeded ``Perm`` that decides every score tie, but its
informers draw from the same stream first, a number of times no run records; so the paper's
runs of one seed had some tie order we cannot know. This runs each seed under several: with
``k`` values drawn and dropped before ``Perm`` (``--tie-draws 0-2``), and prints each policy's
mean ± sd at 100% and 130% arrived, over all of them and per ``k``:

    python tie_orders.py --traces DIR --workload cpu050 --policies GpuClustering,GpuPacking,BestFit \\
        --seeds 42-51 --tie-draws 0-2 [--workers N | --ray local] -o ties.csv

``ties.csv`` has one row per run (``workload,sc_policy,seed,tie_draws,100,130,seconds``) and is
resumable like ``reproduce``'s output.
"""

from __future__ import annotations

import argparse
import csv
import os
import statistics
import sys
from typing import Sequence

from kschedfw.sweep import executor, run_all

from kschedfw_gpushare.experiment.metric import HEADER
from kschedfw_gpushare.experiment.reproduce import parse_policies, parse_seeds
from kschedfw_gpushare.experiment.runs import RunResult, RunSpec, run

FIELDS = ["workload", "sc_policy", "seed", "tie_draws", "100", "130", "seconds"]


def key(spec: RunSpec) -> tuple[str, str, str, str]:
    return (spec.workload, spec.policy, str(spec.seed), str(spec.tie_draws))


def read(path: str) -> dict[tuple[str, str, str, str], dict[str, str]]:
    if not os.path.exists(path):
        return {}
    with open(path, encoding="utf-8", newline="") as fh:
        return {(r["workload"], r["sc_policy"], r["seed"], r["tie_draws"]): r for r in csv.DictReader(fh)}


def write(path: str, rows: dict[tuple[str, str, str, str], dict[str, str]]) -> None:
    with open(path + ".tmp", "w", encoding="utf-8", newline="") as fh:
        out = csv.DictWriter(fh, FIELDS)
        out.writeheader()
        out.writerows(rows[k] for k in sorted(rows, key=lambda k: (k[0], k[1], int(k[2]), int(k[3]))))
    os.replace(path + ".tmp", path)


def summary(rows: dict[tuple[str, str, str, str], dict[str, str]]) -> str:
    def stat(values: list[float]) -> str:
        sd = statistics.stdev(values) if len(values) > 1 else 0.0
        return f"{statistics.fmean(values):6.2f} ± {sd:4.2f} (n={len(values)})"

    lines = []
    for workload, policy in sorted({(k[0], k[1]) for k in rows}):
        mine = [r for k, r in rows.items() if k[:2] == (workload, policy)]
        cells = "  ".join(f"@{c} {stat([float(r[c]) for r in mine])}" for c in ("100", "130"))
        lines.append(f"{workload} {policy:<17} all: {cells}")
        for draws in sorted({int(r["tie_draws"]) for r in mine}):
            some = [float(r["100"]) for r in mine if int(r["tie_draws"]) == draws]
            lines.append(f"{'':>{len(workload)}} {'':<17} tie_draws={draws}: @100 {stat(some)}")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--traces", required=True, metavar="DIR")
    parser.add_argument("--workload", default="cpu050")
    parser.add_argument("--policies", default="GpuClustering,GpuPacking,BestFit")
    parser.add_argument("--seeds", default="42-51")
    parser.add_argument("--tie-draws", default="0-2", help="e.g. 0-2 or 0,5,9")
    parser.add_argument("--workers", type=int)
    parser.add_argument("--ray", metavar="ADDRESS")
    parser.add_argument("-o", "--output", required=True, metavar="TIES.csv")
    args = parser.parse_args(argv)
    items = [RunSpec(args.workload, policy, seed, args.traces, draws)
             for policy in parse_policies(args.policies) for seed in parse_seeds(args.seeds)
             for draws in parse_seeds(args.tie_draws)]
    rows = read(args.output)

    def record(spec: RunSpec, result: RunResult) -> None:
        cells = dict(zip(HEADER, result.row))
        rows[key(spec)] = {"workload": spec.workload, "sc_policy": spec.policy, "seed": str(spec.seed),
                           "tie_draws": str(spec.tie_draws), "100": cells["100"], "130": cells["130"],
                           "seconds": f"{result.seconds:.3f}"}
        write(args.output, rows)
        print(f"{spec.policy} seed {spec.seed} tie_draws {spec.tie_draws}: {cells['100']} @100", file=sys.stderr)

    with executor(ray=args.ray, workers=args.workers) as ex:
        run_all(run, items, key=key, done=set(rows), executor=ex, on_result=record)
    print(summary(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
