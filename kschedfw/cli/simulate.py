"""`kschedfw simulate`: schedule a cluster's pending pods on the embedded cluster and report."""

from __future__ import annotations

import argparse
import json
import sys
from importlib import resources
from typing import Any

from kschedfw.cli.gates import add_feature_gates_option, feature_gates_of

DEMO = "demo/cluster.yaml"


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "simulate", help="schedule pods on the embedded cluster",
        description="Schedule every pending pod of CLUSTER (manifests: files, folders, `kubectl get -o yaml` "
                    "Lists, or a Scenario of timed steps) until nothing more can happen, then report where "
                    "each pod went and why the others did not. With no CLUSTER a small demo runs.")
    parser.add_argument("cluster", nargs="*", metavar="CLUSTER_OR_SCENARIO")
    parser.add_argument("--config", "-c", help="KubeSchedulerConfiguration file (default: upstream defaults)")
    parser.add_argument("--seed", type=int, default=0, help="seed for tie-breaking (default 0)")
    add_feature_gates_option(parser)
    parser.add_argument("--output", "-o", choices=("table", "json"), default="table")
    parser.add_argument("--write-out", metavar="FILE", help="write the resulting objects as YAML")
    parser.add_argument("--explain", metavar="NAMESPACE/POD", action="append", default=[],
                        help="after the run, show how each node filters and scores this pod (repeatable)")
    parser.add_argument("--progress", choices=("auto", "always", "never"), default="auto",
                        help="progress bar on stderr (auto: on a terminal, for large runs)")
    parser.add_argument("--debug", action="store_true", default=argparse.SUPPRESS,
                        help="same as kschedfw --debug")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from kschedfw.api.load import UnusableInput
    from kschedfw.cluster.inputs import admit, ignored_kinds, locate_rejections, read_inputs
    from kschedfw.config.validate import default_config, load_config
    from kschedfw.errors import ManifestError
    from kschedfw.framework.registry import default_catalog
    from kschedfw.framework.runtime import FrameworkError
    from kschedfw.simulation import Simulation

    gates = feature_gates_of(args, "simulate")
    if gates is None:
        return 2
    registry = default_catalog()
    if args.config:
        try:
            config, diagnostics = load_config(args.config, registry, gates)
        except OSError as exc:
            print(f"kschedfw simulate: cannot read {args.config}: {exc.strerror or exc}", file=sys.stderr)
            return 2
        if config is None:
            for d in diagnostics:
                print(d.render() if hasattr(d, "render") else str(d), file=sys.stderr)
            print(f"kschedfw simulate: {args.config} is not a valid configuration", file=sys.stderr)
            return 1
        for d in diagnostics:  # warnings, e.g. documents after the first, which are ignored
            print(d.render(), file=sys.stderr)
    else:
        config = default_config(registry, gates)
    try:
        if args.cluster:
            inputs = read_inputs(args.cluster)
        else:
            with resources.as_file(resources.files("kschedfw") / DEMO) as demo:
                inputs = read_inputs([demo])
    except ManifestError as exc:
        print(f"error: {exc}", file=sys.stderr)
        unusable = isinstance(exc, UnusableInput) or exc.detail.startswith(("no such file",
                                                                            "cannot read"))
        return 2 if unusable else 1  # 2: could not run, as `validate` says it
    for warning in ignored_kinds(inputs.located):
        print(warning, file=sys.stderr)
    inputs, refused = admit(inputs, gates)
    objects, steps = inputs.objects, list(inputs.steps)
    pods = sum(1 for o in objects if type(o).__name__ == "Pod") + sum(
        1 for s in steps for o in s.objects if type(o).__name__ == "Pod")
    try:
        with _progress(args.progress, pods) as on_progress:
            sim = Simulation(config, registry, objects, steps, seed=args.seed, on_progress=on_progress,
                             feature_gates=gates)
            result = sim.run()
    except FrameworkError as exc:
        print(f"kschedfw simulate: cannot build the scheduler: {exc}", file=sys.stderr)
        return 1
    if args.write_out:
        _write_out(args.write_out, result)
    explanations = _explanations(result, args.explain)
    if explanations is None:
        return 1
    rejected = refused + locate_rejections(result.rejected, inputs.located)
    if args.output == "json":
        payload = _as_json(result, rejected)
        if explanations:
            payload["explain"] = [_explanation_json(e) for e in explanations]
        print(json.dumps(payload, indent=2))
    else:
        _print_table(result, rejected)
        for explanation in explanations:
            print()
            print(explanation.render())
    return 0


def _explanations(result: Any, keys: list[str]) -> list | None:
    from kschedfw.explain import explain
    out = []
    for key in keys:
        namespace, _, name = key.rpartition("/")
        pod = result.cluster.get("Pod", name, namespace or "default")
        if pod is None or pod.scheduler_name not in result.scheduler.frameworks:
            print(f"kschedfw simulate: --explain {key}: no such pod for any profile", file=sys.stderr)
            return None
        out.append(explain(result.scheduler, pod))
    return out


def _explanation_json(e: Any) -> dict:
    return {"pod": e.pod, "profile": e.profile, "message": e.message,
            "nodes": {n: {"fits": s is None, "plugin": s.plugin if s else "", "reason": s.message() if s else "",
                          "total": e.totals.get(n)} for n, s in e.node_statuses.items()},
            "scores": e.plugin_scores}


class _NoProgress:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: Any) -> None:
        return None


def _progress(mode: str, total: int) -> Any:
    if mode == "never" or (mode == "auto" and (total < 2000 or not sys.stderr.isatty())):
        return _NoProgress()
    from kschedfw.cli.progress import BindProgress
    return BindProgress(total)


def _as_json(result: Any, rejected: list) -> dict:
    return {
        "pods": [{"pod": p.key, "schedulerName": p.scheduler_name, "status": p.status, "node": p.node,
                  "reason": p.reason, "message": p.message, "nominatedNodeName": p.nominated_node}
                 for p in result.pods],
        "summary": result.summary(),
        "rejected": [{"object": r.object, "source": r.where, "reason": r.reason} for r in rejected],
        "simulatedSeconds": result.end_time,
    }


def _print_table(result: Any, rejected: list) -> None:
    rows = [(p.key, p.scheduler_name, p.status, p.node or p.nominated_node and f"(nominated {p.nominated_node})" or "",
             p.message if p.status not in ("Bound", "Running") else "") for p in result.pods]
    headers = ("POD", "SCHEDULER", "STATUS", "NODE", "REASON")
    widths = [max([len(h)] + [len(str(r[i])) for r in rows]) for i, h in enumerate(headers[:-1])]
    for row in (headers, *rows):
        print("  ".join(str(v).ljust(w) for v, w in zip(row[:-1], widths)) + "  " + row[-1])
    print()
    summary = result.summary()
    for profile, counts in summary.items():
        text = ", ".join(f"{counts[k]} {k.lower()}" for k in sorted(counts)) or "no pods"
        print(f"{profile}: {text}")
    for r in rejected:
        print(f"rejected {r.object}" + (f" ({r.where})" if r.where else "") + f": {r.reason}")


def _write_out(path: str, result: Any) -> None:
    from kschedfw.api.dump import write_list
    write_list(path, result.cluster.all_objects())
