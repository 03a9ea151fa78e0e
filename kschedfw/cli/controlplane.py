"""`kschedfw controlplane`: a throwaway etcd + kube-apiserver (and optionally kube-scheduler) on
loopback, for trying a plugin under `kschedfw run` by hand; gone on Ctrl-C or SIGTERM."""

from __future__ import annotations

import argparse
import os
import signal
import sys
import time
from pathlib import Path
from typing import Any

_POLL_SECONDS = 0.5


class _Stop(BaseException):
    """Raised from the signal handler, so a start still waiting for readiness is abandoned too
    (ControlPlane.start stops what it started on any exception)."""


def add_parser(subparsers: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    parser = subparsers.add_parser(
        "controlplane", help="start a throwaway local control plane to try plugins against",
        description="Start etcd and kube-apiserver on loopback from upstream binaries (and kube-scheduler "
                    "with --with-kube-scheduler), write an admin kubeconfig and wait; Ctrl-C or SIGTERM stops "
                    "everything and removes its files. Binaries: --assets, else KSCHEDFW_KUBE_ASSETS, else "
                    "KUBEBUILDER_ASSETS. There is no kubelet: --nodes creates Ready nodes to schedule onto.")
    parser.add_argument("--assets", metavar="DIR", help="folder holding etcd, kube-apiserver (and kube-scheduler)")
    parser.add_argument("--kubeconfig", metavar="FILE",
                        help="write the admin kubeconfig here too (removed again on exit); by default it is "
                             "only in the control plane's temporary folder, whose path is printed")
    parser.add_argument("--nodes", type=int, default=0, metavar="N",
                        help="create N Ready nodes, node-1..node-N (4 cpu, 8Gi each; default 0)")
    parser.add_argument("--with-kube-scheduler", action="store_true",
                        help="also run the shipped kube-scheduler (it serves schedulerName default-scheduler)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from kschedfw.testing.controlplane import ControlPlane, ControlPlaneError

    assets = _assets(args)
    if isinstance(assets, str):
        _say(assets)
        return 2
    if args.nodes < 0:
        _say(f"--nodes: must not be negative, got {args.nodes}")
        return 2
    if args.with_kube_scheduler and not os.access(assets / "kube-scheduler", os.X_OK):
        _say(f"--with-kube-scheduler: no executable kube-scheduler in {assets}")
        return 2

    def stop(signum: int, frame: Any) -> None:
        raise _Stop

    previous = {s: signal.signal(s, stop) for s in (signal.SIGTERM, signal.SIGINT)}
    cp = ControlPlane(assets)
    copy = Path(args.kubeconfig) if args.kubeconfig else None
    status = 0
    try:
        try:
            _say(f"starting etcd and kube-apiserver from {assets} ...")
            cp.start()
            if args.with_kube_scheduler:
                cp.start_kube_scheduler()
            for i in range(1, args.nodes + 1):
                cp.create_ready_node(f"node-{i}")
            kubeconfig = cp.kubeconfig
            if copy is not None:
                _write_atomically(copy, cp.kubeconfig.read_text())
                kubeconfig = copy
            _print_usage(cp, kubeconfig, args)
            while True:
                time.sleep(_POLL_SECONDS)
                cp.check_running()
        except ModuleNotFoundError as exc:  # cryptography, for the certificates
            _say(str(exc))
            status = 2
        except (ControlPlaneError, OSError) as exc:
            _say(str(exc))
            status = 1
    except _Stop:
        _say("stopping")
    finally:
        for s in previous:  # a second Ctrl-C must not cut the teardown short
            signal.signal(s, signal.SIG_IGN)
        cp.stop()
        if copy is not None:
            copy.unlink(missing_ok=True)
        for s, handler in previous.items():
            signal.signal(s, handler)
    if status == 0:
        _say("stopped; its processes and files are gone")
    return status


def _assets(args: argparse.Namespace) -> Path | str:
    """The binaries' folder, or why there is none (the message for exit 2)."""
    from kschedfw.testing.controlplane import ASSET_VARIABLES, find_assets, missing_assets_reason
    if args.assets:
        folder = Path(args.assets)
        missing = [n for n in ("etcd", "kube-apiserver") if not os.access(folder / n, os.X_OK)]
        if missing:
            return f"--assets {folder}: no executable {', '.join(missing)} there"
        return folder
    found = find_assets()
    if found is not None:
        return found
    return (f"{missing_assets_reason()}; or give --assets DIR. Binaries of the minor version you mimic "
            f"(v1.36): `setup-envtest use -p path` (controller-runtime) prints such a folder; "
            f"kube-scheduler comes from a Kubernetes release or source tree. ({' / '.join(ASSET_VARIABLES)})")


def _write_atomically(path: Path, text: str) -> None:
    """Whoever waits for the file reads it whole (and it holds a token: owner-only)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f".{path.name}.partial")
    partial.write_text(text)
    os.chmod(partial, 0o600)
    os.replace(partial, path)


def _print_usage(cp: Any, kubeconfig: Path, args: argparse.Namespace) -> None:
    running = "etcd, kube-apiserver" + (", kube-scheduler" if args.with_kube_scheduler else "")
    nodes = f"nodes node-1..node-{args.nodes}" if args.nodes else "no nodes (--nodes N creates some)"
    lines = [f"control plane ready at {cp.url}: {running}; {nodes}",
             f"kubeconfig: {kubeconfig}",
             "",
             f"  kubectl --kubeconfig {kubeconfig} get nodes,pods -A",
             f"  kschedfw run --kubeconfig {kubeconfig} --config my-scheduler.yaml"]
    if args.with_kube_scheduler:
        lines.append("  (kube-scheduler serves default-scheduler: give your profiles other schedulerNames)")
    lines += ["", f"logs and certificates in {cp.workdir}; Ctrl-C or SIGTERM stops it and removes them"]
    print("\n".join(lines), flush=True)


def _say(message: str) -> None:
    print(f"kschedfw controlplane: {message}", file=sys.stderr, flush=True)
