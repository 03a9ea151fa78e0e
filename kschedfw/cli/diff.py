"""`kschedfw diff`: the same cluster under two configurations or two feature-gate sets."""

from __future__ import annotations

import argparse
import os
import sys
import textwrap
from typing import TYPE_CHECKING, Any

from kschedfw.cli.jsonout import print_json

if TYPE_CHECKING:
    from kschedfw.cluster.inputs.manifests import Inputs
    from kschedfw.diff import Comparison, NodeUsage, PodChange, Reason
    from kschedfw.simulation import PodOutcome

WIDTH = 100

EPILOG = """\
When pods move, A is simulated a second time (to the same result) so that it can explain its own
choice for each move: memory stays bounded, at the cost of up to three runs.

exit status, as diff(1) has it: 0 when every pod ends the same on both sides, 1 when some pod
ends differently, 2 when the comparison could not run (unreadable or invalid configuration,
bad cluster files or feature gates). Upstream kube-scheduler has nothing to follow here.
"""


def add_parser(subparsers: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    parser = subparsers.add_parser(
        "diff", help="compare two configurations (or feature-gate sets) on one cluster",
        formatter_class=argparse.RawDescriptionHelpFormatter, epilog=EPILOG,
        description=textwrap.fill("Simulate CLUSTER twice with the same seed, as A and B, and report each pod that "
                    "ends differently (moves, becomes pending, gets scheduled) with the plugin that "
                    "decided it, and each node's requests before (A) and after (B). Give --config "
                    "and/or --feature-gates twice; given once (or not at all) a setting is the same "
                    "on both sides. With no CLUSTER the demo cluster is used.", 79))
    parser.add_argument("cluster", nargs="*", metavar="CLUSTER_OR_SCENARIO",
                        help="manifest files or folders, or a Scenario; `-` reads standard input")
    parser.add_argument("--config", "-c", action="append", default=[], metavar="FILE",
                        help="KubeSchedulerConfiguration of A, then of B; \"\" or none: upstream defaults")
    parser.add_argument("--feature-gates", action="append", default=[], metavar="NAME=true|false,...",
                        help="feature gates of A, then of B; \"\" or none: v1.36 defaults")
    from kschedfw.cli.simulate import add_replay_options
    add_replay_options(parser)
    parser.add_argument("--seed", type=int, default=0, help="seed for tie-breaking, both sides (default 0)")
    parser.add_argument("--output", "-o", choices=("text", "json"), default="text")
    parser.add_argument("--report", metavar="FILE.html",
                        help="also write the comparison as a self-contained HTML page: A and B side by "
                             "side, each pod that moved with the deciding plugins' score difference")
    parser.add_argument("--progress", choices=("auto", "always", "never"), default="auto",
                        help="progress bars on stderr (auto: on a terminal, for large runs)")
    parser.add_argument("--debug", action="store_true", default=argparse.SUPPRESS,
                        help="same as kschedfw --debug")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from kschedfw.cli.gates import parse_gates_or_report
    from kschedfw.cli.simulate import (load_config_or_report, progress_bar, read_inputs_or_report, replay_or_report,
                                       replay_window)
    from kschedfw.cluster.inputs.manifests import admit, ignored_kinds
    from kschedfw.plugins.dynamicresources.cel import compile_error
    from kschedfw.diff import Setup, compare
    from kschedfw.framework.registry import default_registry
    from kschedfw.framework.runtime import FrameworkError

    for option, values in (("--config", args.config), ("--feature-gates", args.feature_gates)):
        if len(values) > 2:
            print(f"kschedfw diff: {option} given {len(values)} times: at most twice (A, then B)",
                  file=sys.stderr)
            return 2
    if args.report and not os.path.isdir(os.path.dirname(os.path.abspath(args.report))):
        print(f"kschedfw diff: --report {args.report}: no such directory", file=sys.stderr)
        return 2
    registry = default_registry()
    configs = _pair(args.config, None)
    gate_texts = _pair(args.feature_gates, "")
    window = replay_window(args, "diff")
    if isinstance(window, int):
        return window
    replay = None
    if window is not None:
        if args.cluster:
            print("kschedfw diff: give either CLUSTER files or --replay, not both", file=sys.stderr)
            return 2
        read = replay_or_report(window, "diff")
        if isinstance(read, int):
            return read
        replay = read
        inputs: "Inputs | int" = replay.inputs()
    else:
        inputs = read_inputs_or_report(args.cluster)
    if isinstance(inputs, int):
        return 2
    for warning in ignored_kinds(inputs.located):
        print(warning, file=sys.stderr)
    setups = []
    refusals: list[list[Any]] = []
    for config_path, gate_text in zip(configs, gate_texts):
        gates = parse_gates_or_report(gate_text, "diff")
        if gates is None:
            return 2
        config = load_config_or_report(config_path or None, registry, gates, "diff")
        if isinstance(config, int):
            return 2
        admitted, refused = admit(inputs, gates, compile_error)
        refusals.append(refused)
        refused_pods = {r.object.removeprefix("Pod "): r.reason for r in refused if r.object.startswith("Pod ")}
        steps = (*admitted.steps, *(replay.steps if replay is not None else ()))
        setups.append(Setup(_label(config_path, gate_text), config, gates, tuple(admitted.objects), steps,
                            refused_pods, until=replay.end if replay is not None else None,
                            recorded=replay.pods if replay is not None else None))
    for r in refusals[0]:  # refused on one side only is a difference, reported as such
        if r in refusals[1]:
            print(f"rejected {r.object}" + (f" ({r.where})" if r.where else "") + f": {r.reason}",
                  file=sys.stderr)
    try:
        pods = sum(1 for o in setups[0].objects if type(o).__name__ == "Pod") + sum(
            1 for s in setups[0].steps for o in s.objects if type(o).__name__ == "Pod")
        comparison = compare(setups[0], setups[1], registry, seed=args.seed,
                             progress=lambda side: progress_bar(args.progress, pods, side))
    except FrameworkError as exc:
        print(f"kschedfw diff: cannot build the scheduler: {exc}", file=sys.stderr)
        return 2
    if args.report:
        from kschedfw.report import render_diff_html
        try:
            with open(args.report, "w", encoding="utf-8") as fh:
                fh.write(render_diff_html(as_json(comparison)))
        except OSError as exc:
            print(f"kschedfw diff: cannot write {args.report}: {exc.strerror or exc}", file=sys.stderr)
            return 2
    if args.output == "json":
        print_json(as_json(comparison))
    else:
        print(render(comparison))
    return 1 if comparison.differs else 0


def _pair(values: list[str], default: Any) -> tuple[Any, Any]:
    """A's and B's value: one given value serves both sides."""
    if not values:
        return default, default
    return values[0], values[-1]


def _label(config: str | None, gates: str) -> str:
    label = f"--config {config}" if config else "default configuration"
    return label + (f" --feature-gates {gates}" if gates else "")


# ---------------------------------------------------------------------------------------- json
def as_json(c: "Comparison") -> dict[str, Any]:
    out = {
        "a": c.a.label, "b": c.b.label, "pods": c.pods,
        "summary": _counts(c),
        "changes": [{"pod": ch.pod, "change": ch.change,
                     "a": _outcome_json(ch.a, ch.devices_a), "b": _outcome_json(ch.b, ch.devices_b),
                     "decidedBy": {"a": _reason_json(ch.why_a), "b": _reason_json(ch.why_b)}}
                    for ch in c.changes],
        "nodes": [{"node": name_of(ua, ub), "a": _usage_json(ua), "b": _usage_json(ub)}
                  for ua, ub in _usage_pairs(c)],
    }
    if c.groups:
        counts = _group_counts(c)
        out["podGroups"] = {"compared": c.groups, **counts,
                            "changes": [{"podGroup": g.group, "change": g.change, "a": g.a, "b": g.b}
                                        for g in c.group_changes]}
    if c.agreement_a is not None and c.agreement_b is not None:
        out["agreement"] = {"a": c.agreement_a.as_json(), "b": c.agreement_b.as_json()}
    return out


def _group_counts(c: "Comparison") -> dict[str, int]:
    """How many PodGroups became schedulable (scheduled on B only) and unschedulable (on A only)."""
    return {"scheduled": sum(1 for g in c.group_changes if g.change == "scheduled"),
            "unscheduled": sum(1 for g in c.group_changes if g.change == "unscheduled")}


def _counts(c: "Comparison") -> dict[str, int]:
    counts = {"moved": 0, "unscheduled": 0, "scheduled": 0, "deleted": 0, "status": 0, "devices": 0}
    for ch in c.changes:
        counts[ch.change] += 1
    return counts


def _outcome_json(o: "PodOutcome", devices: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"status": o.status, "node": o.node, "message": o.message}
    if devices:
        out["claims"] = [{"name": name, "devices": list(allocated)} for name, allocated in devices]
    return out


def _reason_json(r: "Reason | None") -> dict[str, Any] | None:
    if r is None:
        return None
    out: dict[str, Any] = {"kind": r.kind}
    for key, value in (("chosen", r.chosen), ("other", r.other), ("plugins", list(r.plugins)),
                       ("scoreDifferences", dict(r.differences)), ("totals", dict(r.totals)),
                       ("rejectedNodes", dict(r.rejectors)), ("message", r.message),
                       ("preempted", list(r.preempted))):
        if value:
            out[key] = value
    return out


def _usage_json(u: "NodeUsage | None") -> dict[str, Any] | None:
    if u is None:
        return None
    return {"cpuRequested": u.cpu_requested, "cpuAllocatable": u.cpu_allocatable,
            "memoryRequested": u.memory_requested, "memoryAllocatable": u.memory_allocatable,
            "pods": u.pods}


def _usage_pairs(c: "Comparison") -> list[tuple["NodeUsage | None", "NodeUsage | None"]]:
    a = {u.node: u for u in c.usage_a}
    b = {u.node: u for u in c.usage_b}
    return [(a.get(n), b.get(n)) for n in sorted(set(a) | set(b))]


# ---------------------------------------------------------------------------------------- text
def render(c: "Comparison") -> str:
    """The comparison for a terminal, within 100 columns."""
    counts = _counts(c)
    lines = [f"A: {c.a.label}", f"B: {c.b.label}", ""]
    if not c.changes:
        lines.append(f"no differences: all {c.pods} pods end the same on both sides")
    else:
        names = {"moved": "moved", "unscheduled": "no longer scheduled", "scheduled": "newly scheduled",
                 "deleted": "preempted or deleted on one side", "status": "in another state",
                 "devices": "on other devices"}
        parts = [f"{n} {names[kind]}" for kind, n in counts.items() if n]
        lines.append(f"{len(c.changes)} of {c.pods} pods differ: " + ", ".join(parts))
    for ch in c.changes:
        lines.append("")
        lines.extend(_render_change(ch))
    if c.groups:
        lines.append("")
        lines.extend(_render_groups(c))
    lines.append("")
    lines.extend(_render_usage(c))
    if c.agreement_a is not None and c.agreement_b is not None:
        from kschedfw.trace.agreement import render_agreement
        for side, agreed in (("A", c.agreement_a), ("B", c.agreement_b)):
            lines.append("")
            lines.extend(f"{side} {line}" if i == 0 else line for i, line in enumerate(render_agreement(agreed)))
    return "\n".join(lines)


def _render_groups(c: "Comparison") -> list[str]:
    """The PodGroups scheduled on one side only, each with both sides' lines."""
    if not c.group_changes:
        return [f"pod groups: all {c.groups} end the same on both sides"]
    counts = _group_counts(c)
    parts = [text for text, n in ((f"{counts['scheduled']} became schedulable", counts["scheduled"]),
                                  (f"{counts['unscheduled']} became unschedulable", counts["unscheduled"])) if n]
    lines = [f"{len(c.group_changes)} of {c.groups} pod groups differ: " + ", ".join(parts)]
    for g in c.group_changes:
        lines.append("")
        lines.append(f"pod group {g.group}: " + ("unschedulable -> scheduled" if g.change == "scheduled"
                                                 else "scheduled -> unschedulable"))
        for side, line in (("A", g.a), ("B", g.b)):
            lines.extend(_wrap(f"{side}: {line}", "  ", "      "))
    return lines


def _where(o: "PodOutcome") -> str:
    if o.status in ("Bound", "Running", "Succeeded", "Failed"):
        return o.node
    return f"{o.status} on {o.node}" if o.deleted_at is not None and o.node else o.status


def _render_change(ch: "PodChange") -> list[str]:
    lines = [f"{ch.pod}: {_where(ch.a)} -> {_where(ch.b)}"]
    for side, why in (("B", ch.why_b), ("A", ch.why_a)):
        if why is not None:
            lines.extend(_wrap(f"{side}: {_render_reason(why)}", "  ", "      "))
    for side, devices in (("A", ch.devices_a), ("B", ch.devices_b)):
        for name, allocated in devices:
            lines.extend(_wrap(f"{side} claim {name}: " + (", ".join(allocated) or "not allocated"), "  ", "      "))
    return lines


def _render_reason(r: "Reason") -> str:
    text = _render_kind(r)
    return text + f" (after preempting {', '.join(r.preempted)})" if r.preempted else text


def _render_kind(r: "Reason") -> str:
    if r.kind == "preempted":
        return f"preempted by {r.other} on {r.chosen}"
    if r.kind == "score":
        ours, theirs = r.totals.get(r.chosen, "?"), r.totals.get(r.other, "?")
        if not r.totals:
            return f"{r.chosen} over {r.other}: no Score plugin ran, the seed picked among feasible nodes"
        if not r.plugins:
            return f"{r.chosen} over {r.other}, equal totals {ours}: the seed broke the tie"
        deciding = ", ".join(f"{p} {d:+d}" for p, d in r.differences.items())
        return f"{r.chosen} (total {ours}) over {r.other} ({theirs}): {deciding}"
    if r.kind == "filter":
        return f"{r.chosen}, as {r.other} was rejected by {r.plugins[0]}: {r.message}"
    if r.kind == "unevaluated":
        return f"{r.chosen}, as {r.other} was not among the nodes this cycle looked at"
    if r.kind == "only-feasible":
        return f"{r.chosen} was the only feasible node"
    if r.kind == "unschedulable":
        return f"rejected by {_rejectors(r.rejectors)}: {r.message}" if r.rejectors else r.message
    if r.kind == "pod-group":
        return f"with its pod group: {r.message}"
    if r.kind == "refused":
        return f"refused by the API server: {r.message}"
    if r.kind == "placed":
        return f"scheduled on {r.chosen}" + (f"; rejected elsewhere by {_rejectors(r.rejectors)}"
                                             if r.rejectors else "")
    return f"{r.chosen} (no score recorded for {r.other})"


def _rejectors(counts: Any) -> str:
    return ", ".join(f"{p} ({n} node{'s' if n != 1 else ''})"
                     for p, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))


def _wrap(text: str, first: str, rest: str) -> list[str]:
    return textwrap.wrap(text, WIDTH, initial_indent=first, subsequent_indent=rest,
                         break_on_hyphens=False) or [first]


def _render_usage(c: "Comparison") -> list[str]:
    """The nodes whose requests changed, one unit per resource (in the headers) and every column
    as wide as its content, node names never cut (as kubectl's tabular printer sizes them)."""
    pairs = _usage_pairs(c)
    changed = [(a, b) for a, b in pairs if _usage_json(a) != _usage_json(b)]
    if not pairs:
        return ["no nodes"]
    memory = [v for u in (x for pair in changed for x in pair) if u is not None
              for v in (u.memory_requested, u.memory_allocatable)]
    unit, size = _binary_unit(max(memory, default=0))
    header = ("NODE", "CPU A (cores)", "CPU B (cores)", f"MEMORY A ({unit})", f"MEMORY B ({unit})",
              "PODS A", "PODS B")
    rows = [(name_of(a, b), _cpu(a), _cpu(b), _mem(a, size), _mem(b, size), _pods(a), _pods(b))
            for a, b in changed]
    lines = ["requests / allocatable per node (A -> B): "
             + (f"{len(changed)} of {len(pairs)} nodes changed" if changed else f"all {len(pairs)} nodes unchanged")]
    if rows:
        widths = [max(len(r[i]) for r in (header, *rows)) for i in range(len(header))]
        for row in (header, *rows):
            cells = [row[0].ljust(widths[0])] + [v.rjust(w) for v, w in zip(row[1:], widths[1:])]
            lines.append("  ".join(cells).rstrip())
    return lines


def name_of(a: "NodeUsage | None", b: "NodeUsage | None") -> str:
    usage = a or b
    assert usage is not None, "a usage pair has a node on one side at least"
    return usage.node


def _cpu(u: "NodeUsage | None") -> str:
    if u is None:
        return "-"
    return (f"{_amount(u.cpu_requested, 1000)}/{_amount(u.cpu_allocatable, 1000)} "
            f"{_percent(u.cpu_requested, u.cpu_allocatable)}")


def _mem(u: "NodeUsage | None", size: int) -> str:
    if u is None:
        return "-"
    return (f"{_amount(u.memory_requested, size)}/{_amount(u.memory_allocatable, size)} "
            f"{_percent(u.memory_requested, u.memory_allocatable)}")


def _pods(u: "NodeUsage | None") -> str:
    return "-" if u is None else str(u.pods)


#: the binary units memory is shown in, largest first
_BINARY_UNITS = (("Ti", 2**40), ("Gi", 2**30), ("Mi", 2**20), ("Ki", 2**10))


def _binary_unit(largest: int) -> tuple[str, int]:
    """The largest binary unit in which ``largest`` bytes is at least 1 (Ki for less)."""
    return next(((u, size) for u, size in _BINARY_UNITS if largest >= size), _BINARY_UNITS[-1])


def _amount(value: int, unit: int) -> str:
    """``value / unit`` with at most three decimals (millicores in cores are exact), no trailing zeros."""
    return f"{value / unit:.3f}".rstrip("0").rstrip(".")


def _percent(used: int, total: int) -> str:
    return f"{100 * used / total:3.0f}%" if total else "  -%"
