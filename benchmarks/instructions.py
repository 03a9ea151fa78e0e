#!/usr/bin/env python3
"""Count the instructions a tree executes on upstream's scheduler_perf workloads, and compare two trees.

Timing runs on a shared two-core machine spread by far more than 5%, so an A/B of a refactoring
counts work instead: valgrind's instruction count ("Ir", ``cachegrind --cache-sim=no``), which
does not depend on what else the machine runs. Each workload runs twice: as published and from a
copy of the workload folders with every ``measurePods`` set to 1; the difference is the measured
phase (creating and scheduling the measured pods). ``--pace instant``, ``PYTHONHASHSEED=0``.

    python benchmarks/instructions.py count SCHEDULER_PERF_DIR --tree TREE -o a.json [--test T,...]
    python benchmarks/instructions.py compare a.json b.json     # a Markdown table, b against a

``TREE`` is a checkout of kschedfw (default: this one); its own ``benchmarks/scheduler_perf.py``
runs, with the interpreter running this script. ``SCHEDULER_PERF_DIR`` is upstream's layout
(``misc/``, ``affinity/``, ... beside ``templates/``); ``--folders`` picks the folders (default:
misc, affinity, topology_spreading) and each test case runs its default workload (500 nodes).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

_IR = re.compile(r"I\s+refs:\s+([\d,]+)")
_MEASURE = re.compile(r"^(\s+measurePods:\s*)\d+", re.MULTILINE)
_TEST_LINE = re.compile(r"^(\S+)\s+\(")


def _perf(tree: Path, args: list[str], *, valgrind: bool) -> tuple[str, int | None]:
    """stdout of the tree's scheduler_perf.py, and its instruction count when run under valgrind."""
    cmd = [sys.executable, str(tree / "benchmarks" / "scheduler_perf.py"), *args]
    if valgrind:
        cmd = ["valgrind", "--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file=/dev/null", *cmd]
    env = dict(os.environ, PYTHONHASHSEED="0", PYTHONPATH=str(tree))
    done = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
    match = _IR.search(done.stderr)
    return done.stdout, int(match.group(1).replace(",", "")) if match else None


def test_cases(tree: Path, folder: Path) -> list[str]:
    """The test cases the tree's harness lists in ``folder``."""
    out, _ = _perf(tree, [str(folder)], valgrind=False)
    return [m.group(1) for line in out.splitlines() if (m := _TEST_LINE.match(line))]


def init_only_copy(source: Path, into: Path) -> Path:
    """A copy of the workload folders with every ``measurePods`` set to 1."""
    copy = into / source.name
    shutil.copytree(source, copy)
    for config in copy.rglob("performance-config.yaml"):
        config.write_text(_MEASURE.sub(r"\g<1>1", config.read_text()))
    return copy


def count(tree: Path, root: Path, folders: list[str], tests: set[str] | None) -> list[dict[str, object]]:
    rows: list[dict[str, object]] = []
    with tempfile.TemporaryDirectory() as tmp:
        init_root = init_only_copy(root, Path(tmp))
        for folder in folders:
            for test in test_cases(tree, root / folder):
                if tests is not None and test not in tests:
                    continue
                common = ["--test", test, "--pace", "instant", "--output", "json", "--quiet"]
                out, whole = _perf(tree, [str(root / folder), *common], valgrind=True)
                _, init = _perf(tree, [str(init_root / folder), *common], valgrind=True)
                try:
                    result = json.loads(out)[0]
                except (ValueError, IndexError):
                    result = {"status": "no result", "workload": "?"}
                row = {"test": test, "workload": result.get("workload"), "status": result.get("status"),
                       "measured_pods": sum(m.get("expected_pods", 0) for m in result.get("measurements", [])),
                       "ir_whole": whole, "ir_init_only": init,
                       "ir_measured": whole - init if whole is not None and init is not None else None,
                       "placements_digest": result.get("placements_digest")}
                print(json.dumps(row), file=sys.stderr)
                rows.append(row)
    return rows


def compare(before: list[dict[str, object]], after: list[dict[str, object]]) -> str:
    """A Markdown table of ``after`` against ``before``, test by test."""
    by_test = {(r["test"], r["workload"]): r for r in before}
    lines = ["| Workload | measured pods | before: Ir of the measured phase | after | change | placements |",
             "|---|---|---|---|---|---|"]
    for row in after:
        old = by_test.get((row["test"], row["workload"]))
        if old is None:
            continue
        a, b = old["ir_measured"], row["ir_measured"]
        change = f"{(b - a) / a * 100:+.1f}%" if isinstance(a, int) and isinstance(b, int) and a > 0 else "–"
        same = "same digest" if old["placements_digest"] == row["placements_digest"] else "DIFFERENT"
        fmt = (lambda v: f"{v / 1e9:.2f} G" if isinstance(v, int) else "–")
        lines.append(f"| {row['test']} {row['workload']} | {row['measured_pods']} | {fmt(a)} | {fmt(b)} "
                     f"| {change} | {same} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("count", help="count one tree's instructions")
    run.add_argument("root", type=Path, help="upstream's scheduler_perf folder")
    run.add_argument("--tree", type=Path, default=Path(__file__).resolve().parents[1])
    run.add_argument("--folders", default="misc,affinity,topology_spreading")
    run.add_argument("--test", default="", help="comma-separated test cases (default: all)")
    run.add_argument("-o", "--output", type=Path, required=True)
    cmp = sub.add_parser("compare", help="compare two counts")
    cmp.add_argument("before", type=Path)
    cmp.add_argument("after", type=Path)
    args = parser.parse_args(argv)
    if args.command == "compare":
        print(compare(json.loads(args.before.read_text()), json.loads(args.after.read_text())))
        return 0
    if shutil.which("valgrind") is None:
        print("instructions.py: valgrind is not installed", file=sys.stderr)
        return 2
    tests = set(args.test.split(",")) if args.test else None
    rows = count(args.tree.resolve(), args.root.resolve(), args.folders.split(","), tests)
    args.output.write_text(json.dumps(rows, indent=1) + "\n")
    return 0 if all(r["ir_measured"] is not None for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
