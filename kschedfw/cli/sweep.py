"""`kschedfw sweep`: a matrix of simulations (configurations × clusters × feature gates × seeds)
on local processes or Ray, one row per run in a CSV file that a rerun resumes."""

from __future__ import annotations

import argparse
import os
import sys

from kschedfw.api.yamlinput import STDIN
from kschedfw.cli.gates import parse_gates_or_report
from kschedfw.cli.simulate import add_run_options


def add_parser(subparsers: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    parser = subparsers.add_parser(
        "sweep", help="run a matrix of simulations in parallel",
        description="Simulate every combination of --config, --cluster, --feature-gates and --seeds, in "
                    "parallel on this machine's cores or on Ray, and write one CSV row per run: its key, "
                    "the pods per status, the rejected objects, the simulated seconds, every node's usage "
                    "(JSON, as `simulate -o json` reports it), its error if it failed, and its wall seconds. "
                    "Rerun with the same -o to resume: runs already in the file are skipped. Exit status "
                    "1 when a run in the file failed (see its error column; delete its row to run it again).")
    parser.add_argument("--config", "-c", action="append", default=[], metavar="FILE",
                        help="a KubeSchedulerConfiguration (repeatable; none: upstream defaults)")
    parser.add_argument("--cluster", action="append", default=[], required=True, metavar="PATH",
                        help="a cluster as `simulate` takes it: a file or a folder of manifests, or a "
                             "Scenario (repeatable)")
    parser.add_argument("--seeds", default="0", metavar="0-9|1,2,5",
                        help="the seeds: ranges and lists (default 0)")
    parser.add_argument("--feature-gates", action="append", default=[], metavar="NAME=true|false,...",
                        help="one set of feature gates (repeatable: each value is one point of the "
                             "matrix; none: v1.36 defaults)")
    add_run_options(parser)
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--workers", type=int, metavar="N",
                       help="local processes (default: one per core; 1 runs in this process)")
    where.add_argument("--ray", metavar="ADDRESS|local",
                       help="run on Ray: `local` starts an instance on this machine; else a cluster's "
                            "address, e.g. ray://HEAD:10001 (Ray: pip install '.[ray]' in a kschedfw clone)")
    parser.add_argument("--output", "-o", required=True, metavar="RESULTS.csv",
                        help="the results file, appended to")
    parser.add_argument("--progress", choices=("auto", "always", "never"), default="auto",
                        help="progress bar on stderr (auto: on a terminal)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from kschedfw.sweep import ExecutorError, executor, run_all
    from kschedfw.sweep.matrix import Run, expand, parse_seeds
    from kschedfw.sweep.results import ResultsFile, ResultsFileError
    from kschedfw.cli.sweep_run import COLUMNS, simulate_row

    problems = _check_paths(args)
    try:
        seeds = parse_seeds(args.seeds)
    except ValueError as exc:
        problems.append(f"--seeds: {exc}")
    for gates in args.feature_gates:
        if parse_gates_or_report(gates, "sweep") is None:
            return 2
    if args.workers is not None and args.workers < 1:
        problems.append("--workers must be at least 1")
    if problems:
        for problem in problems:
            print(f"kschedfw sweep: {problem}", file=sys.stderr)
        return 2
    runs = expand(args.config, args.cluster, seeds, args.feature_gates, once=args.once, ties=args.ties)
    results = ResultsFile(args.output, COLUMNS)
    try:
        rows = {_key(row): row for row in results.read()}
    except (ResultsFileError, OSError, UnicodeDecodeError) as exc:
        print(f"kschedfw sweep: {exc}", file=sys.stderr)
        return 2
    todo = sum(run.key() not in rows for run in runs)
    if todo < len(runs):
        print(f"kschedfw sweep: {len(runs) - todo} of {len(runs)} runs already in {args.output}; "
              f"running {todo}", file=sys.stderr)

    def write(run: Run, row: dict[str, str]) -> None:
        results.append([row])
        rows[run.key()] = row

    try:
        if todo:
            with executor(ray=args.ray, workers=args.workers) as ex:
                run_all(simulate_row, runs, key=Run.key, done=rows, executor=ex, on_result=write,
                        progress=args.progress, description="simulations")
    except ExecutorError as exc:
        print(f"kschedfw sweep: {exc}", file=sys.stderr)
        return 2
    failed = [run for run in runs if rows[run.key()]["error"]]
    if failed:
        print(f"kschedfw sweep: {len(failed)} of {len(runs)} runs failed; their error is in {args.output} "
              "(delete a row to run it again)", file=sys.stderr)
        return 1
    return 0


def _key(row: dict[str, str]) -> tuple[str, ...]:
    from kschedfw.sweep.matrix import KEY_COLUMNS
    return tuple(row[c] for c in KEY_COLUMNS)


def _check_paths(args: argparse.Namespace) -> list[str]:
    """Paths that do not exist: said before any run, rather than in every row."""
    problems = [f"--config {p}: no such file or directory" for p in args.config if not os.path.isfile(p)]
    problems += [f"--cluster {p}: standard input cannot be swept (every run reads its cluster again, and a "
                 "rerun resumes by path): save it to a file" if p == STDIN else
                 f"--cluster {p}: no such file or directory" for p in args.cluster if not os.path.exists(p)]
    output_dir = os.path.dirname(os.path.abspath(args.output))
    if not os.path.isdir(output_dir):
        problems.append(f"--output {args.output}: no such directory")
    return problems

