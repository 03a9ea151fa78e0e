"""`kschedfw run`: schedule a real cluster's pods through its kube-apiserver, as kube-scheduler."""

from __future__ import annotations

import argparse
import logging
import os
import signal
import sys
from typing import Any


def add_parser(subparsers: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    parser = subparsers.add_parser(
        "run", help="schedule a real cluster through its API server",
        description="Watch a Kubernetes cluster and schedule the pods of this configuration's profiles "
                    "(their schedulerName), binding them through the API server as kube-scheduler does. "
                    "Credentials: --kubeconfig, else clientConnection.kubeconfig, else in-cluster, $KUBECONFIG "
                    "or ~/.kube/config. SIGTERM or Ctrl-C stops it.")
    parser.add_argument("--config", "-c", help="KubeSchedulerConfiguration file (default: upstream defaults)")
    parser.add_argument("--kubeconfig", help="kubeconfig file of the cluster")
    parser.add_argument("--dry-run", action="store_true",
                        help="shadow mode: decide without writing anything; print each decision (would bind, "
                             "would stay pending, would be preempted) as it is made, and a summary at the end")
    parser.add_argument("--output", "-o", choices=("table", "json"), default="table",
                        help="--dry-run's format, as simulate's: table rows, or JSON lines with simulate's pod "
                             "fields and a final {\"summary\": ...} line")
    parser.add_argument("--seed", type=int, default=0, help="seed for tie-breaking (default 0)")
    parser.add_argument("--feature-gates", default="", metavar="NAME=true|false,...")
    parser.add_argument("--sync-timeout", type=float, default=120.0, metavar="SECONDS",
                        help="give up when the informers have not listed everything by then (default 120)")
    parser.add_argument("-v", "--verbose", action="count", default=0, help="log more (-v info, -vv debug)")
    from kschedfw.serving.flags import add_arguments
    add_arguments(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from kschedfw.cluster.kube.credentials import CredentialsError
    from kschedfw.kube_runner import KubeRunner
    from kschedfw.cli.gates import feature_gates_of
    from kschedfw.cli.simulate import load_config_or_report
    from kschedfw.framework.registry import default_registry
    from kschedfw.framework.runtime import FrameworkError

    logging.basicConfig(level=(logging.WARNING, logging.INFO, logging.DEBUG)[min(args.verbose, 2)],
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s", stream=sys.stderr)
    gates = feature_gates_of(args, "run")
    if gates is None:
        return 2
    registry = default_registry()
    # the gates reach plugin-args validation too (a gated VolumeBinding shape, ...)
    config = load_config_or_report(args.config, registry, gates, "run")
    if isinstance(config, int):
        return config

    from kschedfw.cluster.kube.decisions import DecisionPrinter
    from kschedfw.cluster.kube.preflight import PreflightError
    printer = DecisionPrinter(args.output)
    try:
        runner = KubeRunner(config, registry, kubeconfig=args.kubeconfig, dry_run=args.dry_run, seed=args.seed,
                            feature_gates=gates, on_decision=printer if args.dry_run else None, notify=_say,
                            pending_reasons=args.output == "json")
    except CredentialsError as exc:
        _say(str(exc))
        return 2
    except FrameworkError as exc:
        _say(f"cannot build the scheduler: {exc}")
        return 1
    from kschedfw.serving.options import ServingError, start_servers
    try:
        servers = start_servers(args, runner.client.connection, runner.health_endpoints(), runner.metrics_text, _say)
    except ServingError as exc:
        _say(str(exc))
        runner.close()
        return 2
    warning = runner.lease_warning()
    if warning:
        _say(f"warning: {warning}")

    def on_signal(signum: int, frame: Any) -> None:
        runner.stop()

    previous = {s: signal.signal(s, on_signal) for s in (signal.SIGTERM, signal.SIGINT)}
    try:
        try:
            runner.preflight()
        except (PreflightError, CredentialsError) as exc:  # an exec plugin can fail on first use
            _say(str(exc))
            return 2
        if not runner.start(args.sync_timeout):
            unserved = runner.backend.unserved_messages()
            why = f": {'; '.join(unserved)}" if unserved else \
                " (is the API server reachable, and are list/watch allowed?)"
            _say(f"the informers did not sync within {args.sync_timeout:g}s: "
                 f"{', '.join(runner.backend.unsynced())} not listed{why}")
            return 1
        runner.run()
        if runner.lost_leadership:
            # upstream exits at once: binds in flight are abandoned, the new leader redoes them
            _say("leaderelection lost")
            sys.stdout.flush()
            os._exit(1)
        if args.dry_run:
            printer.summary()
    finally:
        runner.close()
        for server in servers:
            server.stop()
        for s, handler in previous.items():
            signal.signal(s, handler)
    _say(_stopped(runner.scheduler.bound_count, args.dry_run))
    errored = printer.failed_with_error()
    if errored:  # a shadow run reports as simulate does; a real one keeps exiting 0, as kube-scheduler
        names = ", ".join(errored[:3]) + (", ..." if len(errored) > 3 else "")
        _say(f"{len(errored)} pod{'s' if len(errored) > 1 else ''} would have failed with an error "
             f"(SchedulerError), not for want of a node: {names}; exit status 1")
        return 1
    return 0


def _stopped(bound: int, dry_run: bool) -> str:
    """The last line; a dry run counts the binds it decided but never sent."""
    pods = f"{bound} pod{'' if bound == 1 else 's'}"
    if dry_run:
        return f"dry run stopped: {pods} would have been bound, nothing was written"
    return f"stopped after binding {pods}"


def _say(message: str) -> None:
    """What an operator must see at any verbosity, on stderr."""
    print(f"kschedfw run: {message}", file=sys.stderr, flush=True)
