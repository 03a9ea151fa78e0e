"""``kschedfw-gpushare``: reproduce the FGD paper's runs and compare them with its results.

``reproduce`` runs every (workload, policy, seed) through kschedfw's sweep executors (local
processes, or Ray) and writes OUT.csv in the paper's ``analysis_allo_discrete.csv`` format plus
OUT.times.csv; runs already in OUT.csv are not redone. ``compare`` prints our seed means beside
the paper's.
"""

from __future__ import annotations

import argparse
import sys
from typing import Sequence

from kschedfw_gpushare.experiment import compare as comparison
from kschedfw_gpushare.experiment import results
from kschedfw_gpushare.experiment.metric import HEADER
from kschedfw_gpushare.experiment.procedure import POLICIES, policy_named
from kschedfw_gpushare.experiment.runs import RunResult, RunSpec, run

PAPER_SEEDS = "42-51"


def parse_seeds(text: str) -> list[int]:
    """``42,43`` or ``42-51`` (inclusive), or a mix."""
    seeds: list[int] = []
    for part in text.split(","):
        part = part.strip()
        low, dash, high = part.partition("-")
        if dash and low:
            seeds.extend(range(int(low), int(high) + 1))
        elif part:
            seeds.append(int(part))
    return seeds


def parse_policies(text: str) -> list[str]:
    if text == "all":
        return [p.label for p in POLICIES.values()]
    return [policy_named(name.strip()).label for name in text.split(",") if name.strip()]


def specs(traces: str, workloads: list[str], policies: list[str], seeds: list[int]) -> list[RunSpec]:
    return [RunSpec(w, p, s, traces) for w in workloads for p in policies for s in seeds]


def _add_reproduce(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("reproduce", help="run the paper's experiment (one row per run)",
                       description="Run every (workload, policy, seed) of the FGD paper's experiment and write "
                                   "the allocation curves in the format of its analysis_allo_discrete.csv, "
                                   "plus OUT.times.csv with each run's wall time. Runs already in OUT.csv are "
                                   "kept and not redone.")
    p.add_argument("--traces", required=True, metavar="DIR",
                   help="the trace folder (cluster-trace-gpu-v2023: csv/ and node_yaml/)")
    p.add_argument("--workloads", default="default", help="comma-separated, e.g. default,cpu050 (default: default)")
    p.add_argument("--policies", default="all", help=f"all, or some of {','.join(POLICIES)} (default: all)")
    p.add_argument("--seeds", default=PAPER_SEEDS, help=f"e.g. 42,43 or 42-51 (default: {PAPER_SEEDS}, the paper's)")
    p.add_argument("--workers", type=int,
                   help="worker processes (default: one per core; 1: in this process; with --ray local: Ray's CPUs)")
    p.add_argument("--ray", metavar="ADDRESS",
                   help="run on Ray: 'local' starts one on this machine, or a cluster's address "
                        "(ray://HEAD:10001 or HEAD:6379); needs Ray: pip install '.[ray]' in the kschedfw clone")
    p.add_argument("-o", "--output", required=True, metavar="OUT.csv")
    p.add_argument("--expected", metavar="FILE", nargs="?", const="",
                   help="then print the comparison with the paper (FILE: its analysis_allo_discrete.csv; "
                        "default: the default and cpu050 numbers shipped with this package)")
    p.set_defaults(func=_reproduce)


def _add_compare(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("compare", help="our seed means beside the paper's",
                       description="Per workload and policy, the mean ± sd over seeds at 100% and 130% arrived, "
                                   "ours and the paper's, whether ours is within 2 sd of the paper's (at least "
                                   "0.3 points), and whether the paper's order of the policies holds at 100%. "
                                   "Exit status 1 when something is out of tolerance.")
    p.add_argument("results", metavar="OUT.csv")
    p.add_argument("--expected", metavar="FILE",
                   help="the paper's analysis_allo_discrete.csv (default: the default and cpu050 numbers "
                        "shipped with this package)")
    p.set_defaults(func=_compare)


def _paper(path: str | None) -> dict:
    if not path:
        return comparison.paper_allocation()
    with open(path, encoding="utf-8") as fh:
        return comparison.read_allocation(fh)


def _compare(args: argparse.Namespace) -> int:
    with open(args.results, encoding="utf-8") as fh:
        ours = comparison.read_allocation(fh)
    return 0 if comparison.compare(ours, _paper(args.expected), sys.stdout) else 1


def _reproduce(args: argparse.Namespace) -> int:
    from kschedfw.sweep import executor, run_all
    workloads = [w.strip() for w in args.workloads.split(",") if w.strip()]
    items = specs(args.traces, workloads, parse_policies(args.policies), parse_seeds(args.seeds))
    times_path = results.times_path(args.output)
    rows = results.read_rows(args.output, HEADER)
    times = results.read_rows(times_path, results.TIMES_HEADER)
    todo = [s for s in items if s.key not in rows]
    print(f"kschedfw-gpushare: {len(items)} runs, {len(items) - len(todo)} already in {args.output}",
          file=sys.stderr)
    finished = 0

    def record(spec: RunSpec, result: RunResult) -> None:
        nonlocal finished
        finished += 1
        rows[spec.key] = result.row
        times[spec.key] = results.times_row(*spec.key, result.seconds, result.pods, result.bound)
        results.write_rows(args.output, HEADER, rows)
        results.write_rows(times_path, results.TIMES_HEADER, times)
        at100, at130 = result.row[HEADER.index("100")], result.row[HEADER.index("130")]
        print(f"[{finished}/{len(todo)}] {spec.workload} {spec.policy} seed {spec.seed}: "
              f"{at100} @100, {at130} @130; {result.seconds:.1f} s, {result.pods / result.seconds:.0f} pods/s",
              file=sys.stderr)

    with executor(ray=args.ray, workers=args.workers) as ex:
        run_all(run, items, key=lambda s: s.key, done=set(rows), executor=ex, on_result=record)
    if args.expected is not None:
        with open(args.output, encoding="utf-8") as fh:
            ours = comparison.read_allocation(fh)
        comparison.compare(ours, _paper(args.expected), sys.stdout)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="kschedfw-gpushare",
                                     description="The FGD paper's experiment (USENIX ATC '23) on kschedfw.")
    sub = parser.add_subparsers(dest="command", required=True)
    _add_reproduce(sub)
    _add_compare(sub)
    args = parser.parse_args(argv)
    return int(args.func(args))


if __name__ == "__main__":
    sys.exit(main())
