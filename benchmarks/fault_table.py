"""The fault scenarios of tests/kube/test_faults.py through kube-scheduler and kschedfw, side by
side as a markdown table (the outcome measured from the API server and its audit log).

    KSCHEDFW_KUBE_ASSETS=... python benchmarks/fault_table.py [--scenarios a,b] [--nodes 30 --pods 270]

Each scenario and scheduler gets a fresh control plane; --keep leaves their folders (logs, audit
log) for a look afterwards.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from kschedfw.testing.controlplane import find_assets, missing_assets_reason  # noqa: E402
from tests.kube.faults.harness import SCENARIOS, SCHEDULERS, FaultRun, Outcome, Sizes  # noqa: E402

COLUMNS = ("bound", "double binds", "overcommits", "bound+unschedulable", "deposed writes", "time to bind all",
           "process", "broken")


def table(outcomes: dict[tuple[str, str], Outcome], scenarios: list[str], schedulers: list[str]) -> str:
    """One row per scenario; per scheduler, its columns (and what broke, if anything)."""
    header = ["scenario"] + [f"{s}: {c}" for s in schedulers for c in COLUMNS]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for name in scenarios:
        cells = [name]
        for s in schedulers:
            o = outcomes.get((name, s))
            if o is None:
                cells += ["-"] * len(COLUMNS)
                continue
            row = {**o.row(), "broken": ", ".join(o.broken()) or "none"}
            cells += [row[c] for c in COLUMNS]
        lines.append("| " + " | ".join(c.replace("|", "/") for c in cells) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scenarios", default=",".join(SCENARIOS), help="comma-separated (default: all)")
    parser.add_argument("--schedulers", default=",".join(SCHEDULERS), help="comma-separated (default: both)")
    defaults = Sizes.from_env()
    parser.add_argument("--nodes", type=int, default=defaults.nodes)
    parser.add_argument("--pods", type=int, default=defaults.pods)
    parser.add_argument("--pause", type=float, default=defaults.pause,
                        help="seconds the API server stays stopped in apiserver-stop")
    parser.add_argument("--settle", type=float, default=defaults.settle,
                        help="seconds to wait for every fitting pod after the fault")
    parser.add_argument("--keep", action="store_true", help="keep each run's folder (logs, audit log)")
    args = parser.parse_args(argv)
    assets = find_assets()
    if assets is None:
        print(f"fault_table: {missing_assets_reason()}", file=sys.stderr)
        return 2
    scenarios = [s for s in args.scenarios.split(",") if s]
    schedulers = [s for s in args.schedulers.split(",") if s]
    unknown = [s for s in scenarios if s not in SCENARIOS] + [s for s in schedulers if s not in SCHEDULERS]
    if unknown:
        print(f"fault_table: unknown {unknown}; scenarios: {', '.join(SCENARIOS)}", file=sys.stderr)
        return 2
    sizes = Sizes(nodes=args.nodes, pods=args.pods, pause=args.pause, settle=args.settle)
    outcomes: dict[tuple[str, str], Outcome] = {}
    for name in scenarios:
        for scheduler in schedulers:
            workdir = Path(tempfile.mkdtemp(prefix=f"fault-{name}-{scheduler}-"))
            started = time.monotonic()
            with FaultRun(name, scheduler, assets, workdir, sizes) as run:
                outcomes[(name, scheduler)] = o = run.play()
            print(f"{name} / {scheduler}: {time.monotonic() - started:.0f}s, "
                  f"{'; '.join(o.violations()) or 'ok'}; {'; '.join(o.notes)}"
                  f"{f' (kept {workdir})' if args.keep else ''}", file=sys.stderr, flush=True)
            if not args.keep:
                shutil.rmtree(workdir, ignore_errors=True)
    print(f"{sizes.nodes} nodes of {sizes.node_cpu_milli}m cpu, {sizes.pods} pods of {sizes.pod_cpu_milli}m: "
          f"{sizes.expected} fit\n")
    print(table(outcomes, scenarios, schedulers))
    print("\nScenarios:\n" + "\n".join(f"- {name}: {SCENARIOS[name].description}" for name in scenarios))
    notes = [f"- {name} / {s}: {'; '.join(o.notes)}" for (name, s), o in outcomes.items() if o.notes]
    if notes:
        print("\nWhat happened during the faults:\n" + "\n".join(notes))
    return 0


if __name__ == "__main__":
    sys.exit(main())
