"""`kschedfw simulate`: schedule a cluster's pending pods on the embedded cluster and report."""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from importlib import resources
from typing import TYPE_CHECKING, Any

import attrs

from kschedfw.cli.gates import add_feature_gates_option, feature_gates_of
from kschedfw.cli.jsonout import print_json
from kschedfw.gcpause import frozen

if TYPE_CHECKING:
    from kschedfw.cluster.inputs.manifests import Inputs, Rejection
    from kschedfw.config.expand import SchedulerConfig
    from kschedfw.fwk.features import FeatureGates
    from kschedfw.framework.registry import Registry
    from kschedfw.simulation import GroupOutcome, PodOutcome, SimulationResult
    from kschedfw.trace.replay import Replay

DEMO = "demo/cluster.yaml"
#: up to this many nodes the report keeps every node's verdict and scores for every pod;
#: beyond, each attempt's rejections per plugin and its best three nodes (bounded memory)
REPORT_DETAIL_NODES = 50


def add_parser(subparsers: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    parser = subparsers.add_parser(
        "simulate", help="schedule pods on the embedded cluster",
        description="Schedule every pending pod of CLUSTER (manifests: files, folders, `kubectl get -o yaml` "
                    "Lists, or a Scenario of timed steps) until nothing more can happen, then report where "
                    "each pod went and why the others did not. With no CLUSTER a small demo runs. "
                    "Objects that cannot be read or that the API server would refuse are each "
                    "reported (`rejected ...`) and the others simulated; the exit status is then 1, as "
                    "when a pod's last attempt failed with an error (SchedulerError: a plugin that raised, "
                    "...) rather than for want of a node.")
    parser.add_argument("cluster", nargs="*", metavar="CLUSTER_OR_SCENARIO",
                        help="manifest files or folders, or a Scenario; `-` reads standard input")
    parser.add_argument("--config", "-c", help="KubeSchedulerConfiguration file (default: upstream defaults)")
    parser.add_argument("--kubeconfig", metavar="K",
                        help="instead of CLUSTER, the live cluster of this kubeconfig, listed read-only as "
                             "`kschedfw record` lists it (nothing is written to it)")
    add_replay_options(parser)
    parser.add_argument("--seed", type=int, default=0, help="seed for tie-breaking (default 0)")
    add_feature_gates_option(parser)
    add_run_options(parser)
    parser.add_argument("--output", "-o", choices=("table", "json"), default="table")
    parser.add_argument("--write-out", metavar="FILE", help="write the resulting objects as YAML")
    parser.add_argument("--explain", metavar="[NAMESPACE/]POD", action="append", default=[],
                        help="show this pod's scheduling attempts as they happened: each node's filter "
                             "verdict, every score, preemption, Permit waits, what would wake it "
                             "(repeatable; `all`: a summary of every pod). A bare POD is in -n's "
                             "namespace, or without -n the one pod of that name in any namespace")
    parser.add_argument("--namespace", "-n", metavar="NAMESPACE",
                        help="the namespace of --explain's bare pod names, as kubectl's -n")
    parser.add_argument("--audit-hints", action="store_true",
                        help="audit the plugins' queueing hints: each event after which a pending pod would "
                             "have fitted but whose hints skipped it (with how long the pod then waited), "
                             "and the requeues that did not help, per plugin and event")
    parser.add_argument("--report", metavar="FILE.html",
                        help="write a self-contained HTML report: nodes by region and zone with their "
                             "usage, other resources and DRA devices, pod groups, pending pods by reason, "
                             "preempted and deleted pods, each pod's explanation as tables")
    parser.add_argument("--report-group-by", metavar="LABEL", action="append", default=[],
                        help="also group the report's nodes by this label key, after region and zone "
                             "(repeatable or comma-separated; e.g. rack)")
    parser.add_argument("--progress", choices=("auto", "always", "never"), default="auto",
                        help="progress bar on stderr (auto: on a terminal, for large runs)")
    parser.add_argument("--debug", action="store_true", default=argparse.SUPPRESS,
                        help="same as kschedfw --debug")
    parser.set_defaults(func=run)


def add_replay_options(parser: argparse.ArgumentParser) -> None:
    """`--replay TRACE` and its window (`simulate` and `diff` take them)."""
    parser.add_argument("--replay", metavar="TRACE",
                        help="instead of CLUSTER, replay a `kschedfw record` trace on the simulated clock: "
                             "its first list as the starting cluster, then every recorded change at its "
                             "time, kschedfw making its own bindings; reports how often its decisions "
                             "agreed with the recorded scheduler's. Where the recorded node scores as high "
                             "as kschedfw's pick it is taken (that tie was the recorded scheduler's coin "
                             "toss), unless --ties name")
    parser.add_argument("--from", dest="replay_from", metavar="T",
                        help="with --replay: start the replay at T, a duration after the trace's start "
                             "(90s, 1h) or an RFC 3339 time; the cluster as it was then is the start")
    parser.add_argument("--until", dest="replay_until", metavar="T",
                        help="with --replay: end the replay at T (as --from); default the trace's end")


def add_run_options(parser: argparse.ArgumentParser) -> None:
    """The options that change how a run schedules (kschedfw extensions, not upstream); `sweep`
    takes them too."""
    parser.add_argument("--once", action="store_true",
                        help="give each pending pod exactly one scheduling attempt: a pod that does not fit "
                             "is reported Pending and never retried (capacity planning; not upstream)")
    parser.add_argument("--ties", choices=("random", "name"), default="random",
                        help="break ties between the best-scored nodes at random (upstream, from the "
                             "run's seed) or by the smallest node name (not upstream); default random")


def run(args: argparse.Namespace) -> int:
    with contextlib.ExitStack() as until_reported:
        return _run(args, until_reported)


@attrs.frozen
class Loaded:
    """What a run simulates: the registry and configuration, and the admitted inputs with the
    objects the API server would have refused."""

    registry: "Registry"
    config: "SchedulerConfig"
    inputs: "Inputs"
    refused: list["Rejection"]
    replay: "Replay | None" = None

    def rejected(self, result: "SimulationResult") -> list["Rejection"]:
        """Every object left out: unreadable, refused at creation, or refused during the run."""
        from kschedfw.cluster.inputs.manifests import locate_rejections, unreadable
        return ([unreadable(exc) for exc in self.inputs.malformed] + self.refused
                + locate_rejections(result.rejected, self.inputs.located))


def load_run(config_path: str | None, cluster_paths: list[str], gates: "FeatureGates",
             command: str, kubeconfig: str | None = None, replay: "ReplayWindow | None" = None) -> Loaded | int:
    """The configuration and the cluster files (or the live cluster of ``kubeconfig``) of one
    run, or the exit code after the reasons went to stderr (see :func:`load_config_or_report`,
    :func:`read_inputs_or_report` and :func:`live_inputs_or_report`)."""
    from kschedfw.cluster.inputs.manifests import admit, ignored_kinds
    from kschedfw.framework.registry import default_registry
    from kschedfw.plugins.dynamicresources.cel import compile_error
    registry = default_registry()
    config = load_config_or_report(config_path, registry, gates, command)
    if isinstance(config, int):
        return config
    if sum((bool(cluster_paths), kubeconfig is not None, replay is not None)) > 1:
        print(f"kschedfw {command}: give one of CLUSTER files, --kubeconfig or --replay", file=sys.stderr)
        return 2
    replayed: "Replay | None" = None
    if replay is not None:
        read = replay_or_report(replay, command)
        if isinstance(read, int):
            return read
        replayed = read
        inputs: "Inputs | int" = read.inputs()
    elif kubeconfig is not None:
        inputs = live_inputs_or_report(kubeconfig, command)
    else:
        inputs = read_inputs_or_report(cluster_paths, every_malformed=True)
    if isinstance(inputs, int):
        return inputs
    for warning in ignored_kinds(inputs.located):
        print(warning, file=sys.stderr)
    inputs, refused = admit(inputs, gates, compile_error)
    return Loaded(registry, config, inputs, refused, replayed)


@attrs.frozen
class ReplayWindow:
    """`--replay TRACE --from T --until T` as given."""

    path: str
    start: str | None = None
    until: str | None = None


def replay_window(args: argparse.Namespace, command: str) -> "ReplayWindow | None | int":
    """The replay asked for (None: none), or 2 after the reason went to stderr (--from without --replay)."""
    if args.replay is None:
        if args.replay_from is not None or args.replay_until is not None:
            print(f"kschedfw {command}: --from and --until go with --replay", file=sys.stderr)
            return 2
        return None
    return ReplayWindow(args.replay, args.replay_from, args.replay_until)


def replay_or_report(window: ReplayWindow, command: str) -> "Replay | int":
    """The trace read for its window, or 2 after the reason (file and line) went to stderr."""
    from kschedfw.trace.reader import TraceError
    from kschedfw.trace.replay import load_replay, parse_instant
    try:
        start = None if window.start is None else parse_instant(window.start, "--from")
        until = None if window.until is None else parse_instant(window.until, "--until")
        return load_replay(window.path, start, until)
    except (TraceError, ValueError) as exc:
        print(f"kschedfw {command}: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"kschedfw {command}: {window.path}: cannot read: {exc.strerror or exc}", file=sys.stderr)
        return 2


def _run(args: argparse.Namespace, until_reported: contextlib.ExitStack) -> int:
    from kschedfw.cli.podnames import resolve_pod_names
    from kschedfw.explain import ALL, DecisionLog, render, render_group
    from kschedfw.report import node_facts, pod_groups, render_html
    from kschedfw.framework.runtime import FrameworkError
    from kschedfw.simulation import Simulation

    gates = feature_gates_of(args, "simulate")
    if gates is None:
        return 2
    window = replay_window(args, "simulate")
    if isinstance(window, int):
        return window
    loaded = load_run(args.config, args.cluster, gates, "simulate", kubeconfig=args.kubeconfig, replay=window)
    if isinstance(loaded, int):
        return loaded
    registry, config, inputs = loaded.registry, loaded.config, loaded.inputs
    objects, steps = inputs.objects, [*inputs.steps, *(loaded.replay.steps if loaded.replay else ())]
    pod_keys = [o.key for o in objects if type(o).__name__ == "Pod"] + [
        o.key for s in steps for o in s.objects if type(o).__name__ == "Pod"]
    explain, errors = resolve_pod_names(args.explain, pod_keys, args.namespace, keep=(ALL,))
    group_by = [k.strip() for value in args.report_group_by for k in value.split(",") if k.strip()]
    if group_by and not args.report:
        errors.append("--report-group-by needs --report")
    if args.report and not os.path.isdir(os.path.dirname(os.path.abspath(args.report))):
        errors.append(f"--report {args.report}: no such directory")
    if errors:  # before the run, which may be long
        for error in errors:
            print(f"kschedfw simulate: {error}", file=sys.stderr)
        return 2
    try:
        with progress_bar(args.progress, len(pod_keys)) as on_progress:
            sim = Simulation(config, registry, objects, steps, seed=args.seed, on_progress=on_progress,
                             feature_gates=gates, once=args.once, ties=args.ties)
            sim.cluster.refused_on_input.update((r.object, r.reason) for r in loaded.refused)
            # each pending pod's last Diagnosis (a status per node) is kept only for the JSON reports
            sim.scheduler.attempt_log.keep_failures = args.output == "json" or bool(args.explain or args.report)
            # the loaded cluster stays out of cycle collection until the report is out: the
            # loop's and the report's full collections would each walk all of it again
            until_reported.enter_context(frozen())
            log = None
            if args.explain or args.report:
                log = DecisionLog(sim.scheduler, explain,
                                  summarize_all=ALL in explain or bool(args.report),
                                  detail_up_to=REPORT_DETAIL_NODES if args.report else 0).attach()
            watch = None
            if loaded.replay is not None:
                from kschedfw.trace.agreement import AgreementWatch
                watch = AgreementWatch(sim.scheduler, loaded.replay.pods).attach(follow_ties=args.ties != "name")
            audit = None
            if args.audit_hints:
                from kschedfw.hintaudit import HintAudit
                audit = HintAudit(sim.scheduler).attach()
            result = sim.run(loaded.replay.end if loaded.replay is not None else None)
    except FrameworkError as exc:
        print(f"kschedfw simulate: cannot build the scheduler: {exc}", file=sys.stderr)
        return 1
    if args.write_out:
        _write_out(args.write_out, result)
    rejected = loaded.rejected(result)
    payload = simulation_json(result, rejected) if args.output == "json" or args.report else None
    agreed = None
    if watch is not None:
        from kschedfw.trace.agreement import agreement
        agreed = agreement(watch)
        if payload is not None:
            payload["agreement"] = agreed.as_json()
    audited = audit.report() if audit is not None else None
    if audited is not None and payload is not None:
        payload["hintAudit"] = audited.as_json()
    asked = [k for k in explain if k != ALL]
    explained: list[dict[str, Any]] = []
    groups_explained: list[dict[str, Any]] = []
    if log is not None and explain:
        explained = log.explain(result, None if ALL in explain else asked)
        groups_explained = log.explain_groups(result, None if ALL in explain else asked)
    if args.report:
        assert log is not None and payload is not None
        every = explained if ALL in explain else log.explain(result)
        try:
            with open(args.report, "w", encoding="utf-8") as fh:
                fh.write(render_html(payload, every, facts=node_facts(result, group_by),
                                     pod_groups=pod_groups(result, payload["pods"]), group_by=group_by))
        except OSError as exc:
            print(f"kschedfw simulate: cannot write {args.report}: {exc.strerror or exc}", file=sys.stderr)
            return 2
    if args.output == "json":
        assert payload is not None
        if explained:
            payload["explain"] = explained
        if groups_explained:
            payload["explainPodGroups"] = groups_explained
        print_json(payload)
    else:
        _print_table(result, rejected)
        if agreed is not None:
            from kschedfw.trace.agreement import render_agreement
            print("\n".join(render_agreement(agreed)))
        if audited is not None:
            print("\n".join(audited.render()))
        for explanation in explained:
            print()
            print(render(explanation))
        for group in groups_explained:
            print()
            print(render_group(group))
    if rejected:
        count = f"{len(rejected)} object{'s' if len(rejected) > 1 else ''}"
        print(f"kschedfw simulate: {count} rejected; exit status 1, as `kubectl create -f` "
              "exits when the API server refuses an object", file=sys.stderr)
    errored = result.failed_with_error()
    if errored:
        print(f"kschedfw simulate: {failed_with_error_line(errored)}; exit status 1", file=sys.stderr)
    return 1 if rejected or errored else 0


def failed_with_error_line(errored: list["PodOutcome"]) -> str:
    """``2 pods failed with an error (SchedulerError), not for want of a node: default/a, ...``"""
    from kschedfw.api.pod import SCHEDULER_ERROR
    names = ", ".join(p.key for p in errored[:3]) + (", ..." if len(errored) > 3 else "")
    count = f"{len(errored)} pod{'s' if len(errored) > 1 else ''}"
    return f"{count} failed with an error ({SCHEDULER_ERROR}), not for want of a node: {names}"


def load_config_or_report(path: str | None, registry: "Registry", gates: "FeatureGates",
                          command: str) -> "SchedulerConfig | int":
    """The configuration at ``path`` (upstream defaults when None), or the exit code after the
    reasons went to stderr: 2 when it cannot be read (as for a cluster file: ``error: --config
    PATH: no such file or directory``), 1 when it is not valid."""
    from kschedfw.config.validate import default_config, load_config_text
    if not path:
        return default_config(registry, gates)
    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
    except FileNotFoundError:
        print(f"error: --config {path}: no such file or directory", file=sys.stderr)
        return 2
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        print(f"error: --config {path}: cannot read file: {reason}", file=sys.stderr)
        return 2
    config, diagnostics = load_config_text(text, path, registry, gates)
    if config is None:
        for d in diagnostics:
            print(d.render(), file=sys.stderr)
        print(f"kschedfw {command}: {path} is not a valid configuration", file=sys.stderr)
        return 1
    for d in diagnostics:  # warnings, e.g. documents after the first, which are ignored
        print(d.render(), file=sys.stderr)
    return config


def read_inputs_or_report(paths: list[str], *, every_malformed: bool = False) -> "Inputs | int":
    """The cluster files (the demo when there are none), or the exit code after the reason went
    to stderr: 2 when they cannot be used at all, 1 when an object is invalid. With
    ``every_malformed`` the objects that cannot be read are left in ``Inputs.malformed`` for
    the caller to report, and the others are used."""
    from kschedfw.api.load import UnusableInput
    from kschedfw.cluster.inputs.manifests import read_inputs
    from kschedfw.api.field import ManifestError
    try:
        if paths:
            inputs = read_inputs(paths)
        else:
            with resources.as_file(resources.files("kschedfw") / DEMO) as demo:
                inputs = read_inputs([demo])
        if inputs.malformed and not every_malformed:
            raise inputs.malformed[0]
        return inputs
    except ManifestError as exc:
        print(f"error: {exc}", file=sys.stderr)
        unusable = isinstance(exc, UnusableInput) or exc.detail.startswith(("no such file",
                                                                            "cannot read"))
        return 2 if unusable else 1  # 2: could not run, as `validate` says it


def live_inputs_or_report(kubeconfig: str, command: str) -> "Inputs | int":
    """The live cluster listed as `kschedfw record` lists it, or 2 after the reason went to
    stderr (a kubeconfig that cannot be used, a server that does not answer, a kind not listed
    within a minute: RBAC)."""
    from kschedfw.cluster.kube.client import KubeClient
    from kschedfw.cluster.kube.credentials import CredentialsError, load_connection
    from kschedfw.cluster.kube.informer import describe
    from kschedfw.trace.inputs import snapshot_inputs
    from kschedfw.trace.recorder import NotListed, server_version, take_snapshot
    try:
        client = KubeClient(load_connection(kubeconfig))
    except CredentialsError as exc:
        print(f"kschedfw {command}: {exc}", file=sys.stderr)
        return 2
    try:
        server_version(client)
        objects = take_snapshot(client)
    except NotListed as exc:
        print(f"kschedfw {command}: cannot list the cluster: {exc}", file=sys.stderr)
        return 2
    except Exception as exc:  # whatever the client raises: no answer, refused credentials
        print(f"kschedfw {command}: cannot reach the API server at {client.connection.server}: "
              f"{describe(exc, 'get', '/version')}", file=sys.stderr)
        return 2
    finally:
        client.close()
    return snapshot_inputs(objects, f"the cluster of {kubeconfig}")


class _NoProgress:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: Any) -> None:
        return None


def progress_bar(mode: str, total: int, description: str = "binding pods") -> Any:
    """A context giving an ``on_progress`` callback (None without a bar) for ``--progress mode``."""
    if mode == "never" or (mode == "auto" and (total < 2000 or not sys.stderr.isatty())):
        return _NoProgress()
    from kschedfw.cli.progress import BindProgress
    return BindProgress(total, description)


def simulation_json(result: "SimulationResult", rejected: list["Rejection"]) -> dict[str, Any]:
    """`simulate -o json`'s report (`sweep` writes its summary and nodes in each row)."""
    from kschedfw.report import node_usage
    out = {
        "pods": [_pod_json(p) for p in result.pods],
        "summary": result.summary(),
        "pdbViolations": [{"pdb": b.pdb, "rule": b.rule, "disruptionsAllowed": b.disruptions_allowed,
                           "description": b.describe(), "evicted": keys}
                          for b, keys in result.broken_budgets().items()],
        "rejected": [{"object": r.object, "source": r.where, "reason": r.reason} for r in rejected],
        "simulatedSeconds": result.end_time,
        "nodes": node_usage(result),
    }
    groups = result.pod_groups()
    if groups:
        out["podGroups"] = [group_json(g) for g in groups]
    return out


def group_json(g: "GroupOutcome") -> dict[str, Any]:
    """A PodGroup in `simulate -o json`: its policy, pods, how many are bound, the condition the
    scheduler wrote, and when it is not scheduled why (its ``pendingReason``)."""
    out: dict[str, Any] = {"podGroup": g.key, "policy": g.policy, "minCount": g.min_count, "pods": list(g.pods),
                           "bound": g.bound, "condition": None}
    if g.condition is not None:
        status, reason, message = g.condition
        out["condition"] = {"type": "PodGroupScheduled", "status": status, "reason": reason, "message": message}
    reason_data = g.pending_reason()
    if reason_data is not None:
        out["pendingReason"] = reason_data
    out["message"] = g.line()
    return out


def _pod_json(p: "PodOutcome") -> dict[str, Any]:
    out: dict[str, Any] = {"pod": p.key, "schedulerName": p.scheduler_name, "status": p.status, "node": p.node,
           "reason": p.reason, "message": p.message, "nominatedNodeName": p.nominated_node}
    if p.deleted_at is not None:  # Preempted, Deleted
        out.update(deletedBy=p.deleted_by, deletedAt=p.deleted_at, goneAt=p.gone_at)
    if p.broken_budgets:
        out["pdbViolations"] = [b.pdb for b in p.broken_budgets]
    reason = p.pending_reason()
    if reason is not None:  # Pending, Gated
        out["pendingReason"] = reason
    return out


def _print_table(result: "SimulationResult", rejected: list["Rejection"]) -> None:
    rows = [(p.key, p.scheduler_name, p.status, p.node or p.nominated_node and f"(nominated {p.nominated_node})" or "",
             _reason_text(p) if p.status not in ("Bound", "Running") else "") for p in result.pods]
    headers = ("POD", "SCHEDULER", "STATUS", "NODE", "REASON")
    widths = [max([len(h)] + [len(str(r[i])) for r in rows]) for i, h in enumerate(headers[:-1])]
    for row in (headers, *rows):
        print("  ".join(str(v).ljust(w) for v, w in zip(row[:-1], widths)) + "  " + row[-1])
    print()
    summary = result.summary()
    for profile, counts in summary.items():
        text = ", ".join(f"{counts[k]} {k.lower()}" for k in sorted(counts)) or "no pods"
        print(f"{profile}: {text}")
    for group in result.pod_groups():
        print(group.line())
    for budget, keys in result.broken_budgets().items():
        print(f"preemption evicted {', '.join(keys)} despite {budget.describe()}")
    for r in rejected:
        print(f"rejected {r.object}" + (f" ({r.where})" if r.where else "") + f": {r.reason}")


def _reason_text(p: Any) -> str:
    """The REASON column: the message, led by the reason when the attempt failed with an error
    (the STATUS stays Pending, as kubectl shows such a pod)."""
    from kschedfw.api.pod import SCHEDULER_ERROR
    return f"{SCHEDULER_ERROR}: {p.message}" if p.reason == SCHEDULER_ERROR and p.status == "Pending" else p.message


def _write_out(path: str, result: Any) -> None:
    from kschedfw.api.dump import write_list
    write_list(path, result.written_objects())
