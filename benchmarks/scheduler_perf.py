#!/usr/bin/env python3
"""Run upstream's scheduler_perf workloads on kschedfw's embedded cluster and report throughput.

    python benchmarks/scheduler_perf.py WORKLOAD_DIR_OR_CONFIG                 # list test cases
    python benchmarks/scheduler_perf.py DIR --test SchedulingBasic             # its 500Nodes workload
    python benchmarks/scheduler_perf.py DIR --test SchedulingBasic --workload 5Nodes
    python benchmarks/scheduler_perf.py DIR --test SchedulingBasic,TopologySpreading --output json

WORKLOAD_DIR_OR_CONFIG is a ``performance-config.yaml``, its folder, or a folder of such folders
(upstream's ``test/integration/scheduler_perf`` layout: ``misc/``, ``affinity/``, ... beside
``templates/``). ``--test`` and ``--workload`` take comma-separated names (``all`` for every one);
without ``--workload`` the test case's ``500Nodes`` workload runs (else another 500-size one, else
the first, smallest, one). See benchmarks/README.md.
"""

from __future__ import annotations

import argparse
import io
import json
import pstats
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the harness is benchmarks.perf, beside this file

from benchmarks.perf.runner import (ConfigProblem, RunOptions, WorkloadResult, build_config,  # noqa: E402
                                    run_workload)
from benchmarks.perf.workload import (TestCase, WorkloadError, default_workload, find_test_case,  # noqa: E402
                                      load_test_cases, unroll)
from kschedfw.fwk.features import FeatureGateError, parse_feature_gates  # noqa: E402
from kschedfw.framework.registry import default_registry  # noqa: E402


def _named_gates(text: str) -> set[str]:
    """The gate names written in a ``--feature-gates`` value (the others keep the workload's)."""
    return {item.partition("=")[0].strip() for item in text.split(",") if item.strip()}


def _fmt(v: float | None, digits: int = 1) -> str:
    return "-" if v is None else f"{v:,.{digits}f}"


def list_cases(cases: list[TestCase]) -> None:
    for tc in cases:
        print(f"{tc.name}  ({tc.config_path.parent.name}/{tc.config_path.name})")
        for w in tc.workloads:
            params = " ".join(f"{k}={v}" for k, v in w.params.items())
            extra = []
            if w.labels:
                extra.append("labels=" + ",".join(w.labels))
            if w.threshold_value:
                extra.append(f"threshold={w.threshold_value:g}")
            try:
                u = unroll(tc, w)
                if u.unsupported:
                    extra.append("UNSUPPORTED: " + "; ".join(f"{o.opcode} ({o.reason})" for o in u.unsupported))
            except WorkloadError as exc:
                extra.append(f"INVALID: {exc}")
            print(f"    {w.name:<45} {params}" + (f"   [{'; '.join(extra)}]" if extra else ""))


def _select(cases: list[TestCase], tests: str, workloads: str | None) -> list[tuple[TestCase, Any]]:
    chosen = cases if tests == "all" else [find_test_case(cases, t.strip()) for t in tests.split(",") if t.strip()]
    out = []
    for tc in chosen:
        if workloads is None:
            out.append((tc, default_workload(tc)))
        elif workloads == "all":
            out.extend((tc, w) for w in tc.workloads)
        else:
            names = [n.strip() for n in workloads.split(",") if n.strip()]
            matched = [w for w in tc.workloads if w.name in names]
            if not matched and len(chosen) == 1:
                tc.workload(names[0])  # raises, listing the workloads
            out.extend((tc, w) for w in matched)
    return out


def render_table(results: list[WorkloadResult]) -> str:
    headers = ["test case / workload", "status", "pods/s", "pods/CPU-s", "e2e pods/s", "sampled", "threshold*",
               "measured", "init s", "bound", "pending", "batching", "profile"]
    rows = []
    for r in results:
        m = r.measured
        rows.append([
            f"{r.test_case}/{r.workload}", r.status,
            _fmt(m.throughput if m else None), _fmt(m.cpu_throughput if m else None),
            _fmt(m.e2e_throughput if m else None),
            _fmt(m.sampled_average if m else None),
            (_fmt(r.threshold, 0) if r.threshold else
             f"{r.reference_threshold:g} ({r.reference_workload})" if r.reference_threshold else "-"),
            (f"{m.bound_pods}/{m.expected_pods}" if m and m.expected_pods is not None
             else str(m.bound_pods) if m else "-"),
            _fmt(r.init_seconds, 2), str(r.total_bound),
            str(r.pending_total) + (f" (+{r.pending_end.get('gated', 0)} gated)" if r.pending_end.get("gated") else ""),
            "on" if r.feature_gates.get("OpportunisticBatching", False) else "off",
            r.profile_note,
        ])
    widths = [max(len(h), *(len(row[i]) for row in rows)) if rows else len(h) for i, h in enumerate(headers)]
    lines = ["  ".join(h.ljust(widths[i]) for i, h in enumerate(headers)),
             "  ".join("-" * w for w in widths)]
    for row in rows:
        lines.append("  ".join(c.ljust(widths[i]) if i in (0, 1, 11, 12) else c.rjust(widths[i])
                               for i, c in enumerate(row)))
    notes = []
    for r in results:
        if r.error:
            notes.append(f"{r.test_case}/{r.workload}: {r.status.upper()}: {r.error}")
        for w in r.warnings:
            notes.append(f"{r.test_case}/{r.workload}: warning: {w}")
    lines.append("")
    lines.append("pods/s: measured pods / wall seconds in the scheduling loop; pods/CPU-s: per CPU second of "
                 "this process; e2e: including building and submitting the pods; sampled: upstream's "
                 "SchedulingThroughput Average method (1 s samples).")
    lines.append("* threshold: the workload's threshold in performance-config.yaml, else (in brackets) that "
                 "of the test case's benchmark workload (upstream CI, Go, usually 5000 nodes): not comparable "
                 "one to one.")
    lines.extend(notes)
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("path", metavar="WORKLOAD_DIR_OR_CONFIG")
    ap.add_argument("--test", help="test case name(s), comma-separated, or 'all'; omit to list them")
    ap.add_argument("--workload", help="workload name(s), comma-separated, or 'all' "
                                       "(default: 500Nodes, else a 500-size one, else the first)")
    ap.add_argument("--config", help="KubeSchedulerConfiguration file (default: the test case's "
                                     "schedulerConfigPath, else the default profile)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--output", choices=("table", "json"), default="table")
    ap.add_argument("--pace", choices=("wall", "instant"), default="wall",
                    help="wall: the simulated clock follows the wall clock while scheduling (churn and "
                         "rate-limited deletes interleave as upstream); instant: time only moves when idle")
    ap.add_argument("--stall-timeout", type=float, default=600.0,
                    help="simulated seconds without a bind before an op is declared stuck (upstream: 10 min)")
    ap.add_argument("--allow-missing-plugins", action="store_true",
                    help="if a default plugin cannot be loaded, run without it (results are labelled)")
    ap.add_argument("--profile", action="store_true",
                    help="cProfile the scheduling loop of the measured phase and print the hot spots")
    ap.add_argument("--profile-top", type=int, default=30)
    ap.add_argument("--profile-sort", default="cumulative",
                    help="pstats sort key of the printed profile (e.g. tottime)")
    ap.add_argument("--profile-out", metavar="FILE",
                    help="also save the raw cProfile stats (one workload: FILE; more: FILE.<n>)")
    ap.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    ap.add_argument("--feature-gates", metavar="NAME=true|false,...", default="",
                    help="gates for every workload, over its featureGates. As upstream's harness, "
                         "OpportunisticBatching is off unless the workload names it: "
                         "OpportunisticBatching=true measures with batching on (v1.36's default)")
    args = ap.parse_args(argv)
    try:
        gate_overrides = {k: v for k, v in parse_feature_gates(args.feature_gates).items()
                          if args.feature_gates and k in _named_gates(args.feature_gates)}
    except FeatureGateError as exc:
        print(f"error: --feature-gates: {exc}", file=sys.stderr)
        return 2

    try:
        cases = load_test_cases(args.path)
    except WorkloadError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if not args.test:
        list_cases(cases)
        return 0
    try:
        selected = _select(cases, args.test, args.workload)
    except WorkloadError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2

    registry = default_registry()
    config, note, config_error = None, "", None
    try:
        config, note = build_config(registry, args.config, allow_missing_plugins=args.allow_missing_plugins)
    except ConfigProblem as exc:
        config_error = exc
        if args.config:
            print(f"error: {exc}", file=sys.stderr)
            return 2

    def progress(text: str) -> None:
        if not args.quiet:
            print(f"  {text}", file=sys.stderr, flush=True)

    results: list[WorkloadResult] = []
    for tc, w in selected:
        if not args.quiet:
            print(f"{tc.name}/{w.name} ...", file=sys.stderr, flush=True)
        try:
            unrolled = unroll(tc, w)
        except WorkloadError as exc:
            results.append(WorkloadResult(test_case=tc.name, workload=w.name, status="error", error=str(exc),
                                          params=dict(w.params), threshold=w.threshold_value))
            continue
        options = RunOptions(seed=args.seed, pace=args.pace, stall_timeout=args.stall_timeout,
                             profile=args.profile, progress=progress, feature_gates=gate_overrides)
        use_config = config if (config is not None and (args.config or not tc.scheduler_config_path)) else None
        if use_config is None and config_error is not None and not tc.scheduler_config_path:
            results.append(WorkloadResult(test_case=tc.name, workload=w.name, status="error",
                                          error=str(config_error), params=dict(w.params),
                                          threshold=w.threshold_value,
                                          feature_gates=dict(w.feature_gates)))
            continue
        if use_config is not None:
            from benchmarks.perf.runner import WorkloadRunner
            result = WorkloadRunner(unrolled, use_config, registry, options, profile_note=note).run()
        else:
            result = run_workload(unrolled, registry, allow_missing_plugins=args.allow_missing_plugins,
                                  options=options)
        results.append(result)
        if not args.quiet:
            m = result.measured
            print(f"  -> {result.status}" + (f", {_fmt(m.throughput)} pods/s" if m else "")
                  + (f": {result.error}" if result.error else ""), file=sys.stderr, flush=True)
        if args.profile and result.profile is not None:
            buf = io.StringIO()
            stats = pstats.Stats(result.profile, stream=buf)
            stats.sort_stats(args.profile_sort).print_stats(args.profile_top)
            if args.profile_out:
                stats.dump_stats(args.profile_out if len(selected) == 1
                                 else f"{args.profile_out}.{len(results)}")
            print(f"\n=== cProfile of the measured scheduling loop: {tc.name}/{w.name} ===", file=sys.stderr)
            print(buf.getvalue(), file=sys.stderr)

    if args.output == "json":
        print(json.dumps([r.to_dict() for r in results], indent=2))
    else:
        print(render_table(results))
    return 0 if all(r.status == "ok" for r in results) else 1


if __name__ == "__main__":
    try:
        sys.exit(main())
    except BrokenPipeError:  # e.g. piped into head
        sys.stderr.close()
        sys.exit(1)
