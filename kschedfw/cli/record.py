"""`kschedfw record`: write a trace of a live cluster (see :mod:`kschedfw.trace.format`)."""

from __future__ import annotations

import argparse
import logging
import signal
import sys
import threading
import time
from typing import Any

_STATUS = 10.0  # seconds between progress lines


def add_parser(subparsers: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    parser = subparsers.add_parser(
        "record", help="record a live cluster's objects, changes and scheduling decisions to a trace",
        description="List every kind the scheduler reads, then write every watch event with its time and "
                    "the decisions the cluster's schedulers made (bindings, nominations, FailedScheduling "
                    "events) to TRACE, a gzip JSON-lines file, until interrupted (Ctrl-C, SIGTERM) or "
                    "--duration. Read-only: list and watch rights suffice (deploy/record-rbac.yaml). "
                    "Progress goes to stderr.")
    parser.add_argument("--kubeconfig", help="kubeconfig file of the cluster (default: in-cluster, $KUBECONFIG, "
                                             "~/.kube/config)")
    parser.add_argument("--output", "-o", metavar="TRACE", required=True, help="the trace file to write")
    parser.add_argument("--duration", metavar="D", help="stop after this long (a duration: 90s, 10m, 1h30m)")
    parser.add_argument("--verbose", "-v", action="count", default=0, help="log informer faults (-vv: debug)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from kschedfw.api.validation import parse_duration
    from kschedfw.cluster.kube.client import KubeClient
    from kschedfw.cluster.kube.credentials import CredentialsError, load_connection
    from kschedfw.cluster.kube.informer import describe
    from kschedfw.trace.recorder import Recorder, server_version
    from kschedfw.trace.writer import TraceWriter

    logging.basicConfig(level=(logging.ERROR, logging.INFO, logging.DEBUG)[min(args.verbose, 2)],
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s", stream=sys.stderr)
    duration = None
    if args.duration:
        try:
            duration = parse_duration(args.duration) / 1e9
        except ValueError as exc:
            _say(f"--duration: {exc}")
            return 2
        if duration <= 0:
            _say(f"--duration {args.duration}: must be positive")
            return 2
    try:
        client = KubeClient(load_connection(args.kubeconfig))
    except CredentialsError as exc:
        _say(str(exc))
        return 2
    try:
        version = server_version(client)
    except Exception as exc:  # whatever the client raises: no answer, refused credentials
        _say(f"cannot reach the API server at {client.connection.server}: {describe(exc, 'get', '/version')}")
        client.close()
        return 2
    recorder = Recorder(client, lambda line: None)
    served = recorder.discover()
    try:
        writer = TraceWriter(args.output, server=version,
                             resources=[{"apiVersion": r.group_version, "kind": r.kind} for r in served])
    except OSError as exc:
        _say(f"cannot write {args.output}: {exc.strerror or exc}")
        client.close()
        return 2
    recorder.emit = writer.write
    stop = threading.Event()
    previous = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    in_main = threading.current_thread() is threading.main_thread()
    if in_main:
        for s in previous:
            signal.signal(s, lambda *_: stop.set())
    started = time.monotonic()
    synced = False
    try:
        _say(f"recording {version or 'the API server'} to {args.output}: listing {len(served)} kinds")
        recorder.start()
        synced = _wait_listed(recorder, stop, started, duration)
        if synced:
            _say(f"listed {writer.counts['listed']} objects; recording events"
                 + (f" for {args.duration}" if duration else " until interrupted"))
            while not stop.wait(_STATUS if duration is None else
                                max(0.0, min(_STATUS, started + duration - time.monotonic()))):
                if duration is not None and time.monotonic() >= started + duration:
                    break
                _say(_progress(writer))
    finally:
        recorder.stop()
        writer.close()
        client.close()
        if in_main:
            for s, handler in previous.items():
                signal.signal(s, handler)
    _say(f"stopped: {_progress(writer)} in {time.monotonic() - started:.0f}s")
    if not synced:
        _say(f"stopped before every kind was listed ({', '.join(recorder.unsynced())}): the trace has no "
             "initial cluster; exit status 1")
        return 1
    return 0


def _wait_listed(recorder: Any, stop: threading.Event, started: float, duration: float | None) -> bool:
    """Wait for every kind's first list, saying which are still unlisted now and then (RBAC...)."""
    while True:
        left = None if duration is None else started + duration - time.monotonic()
        if left is not None and left <= 0:
            return False
        if recorder.wait_for_sync(_STATUS if left is None else min(_STATUS, left), stop):
            return True
        if stop.is_set():
            return False
        _say(f"still listing: {', '.join(recorder.unsynced())}")


def _progress(writer: Any) -> str:
    counts = writer.counts
    return (f"{counts['listed']} objects listed, {counts['events']} events, {counts['decisions']} decisions, "
            f"{writer.bytes_written} bytes")


def _say(message: str) -> None:
    print(f"kschedfw record: {message}", file=sys.stderr, flush=True)
