#!/usr/bin/env python3
"""CPU and memory of `kschedfw record` per 1,000 watch events.

    python benchmarks/record_cost.py [--pods 5000] [--shape recorded|running]
    python benchmarks/record_cost.py --nodes 5000 --listed-pods 100000 --pods 20000


The recorder (its informers, the lean pod decoding, the field dropping, the gzip writer) reads
from an in-memory API server: each of PODS pods (the 35 recorded by a real v1.36.2 server,
cycled, see benchmarks/kube_pod_memory.py) is created, bound (a MODIFIED with spec.nodeName and
its PodScheduled condition: a Bound decision) and deleted, three watch events each. Reported:
CPU µs per event and CPU seconds per 1,000 events of the recording process, compressed trace
bytes per 1,000 events, and the peak Python memory the recording held (tracemalloc, a second
run) at PODS and at 4 x PODS: the trace streams to disk, so the peak does not grow with the
number of events.

With ``--nodes`` and ``--listed-pods`` the server's first lists hold that cluster (nodes as a
kubelet registers them, with 20 images each; the pods bound across them), served in pages as a
real server does, and the churn comes after; reported then: the peak resident memory of the
whole recording process (its high-water mark, one fresh process per run) at PODS and at 4 x PODS
churned pods, which bounds what recording that cluster costs and shows it does not grow with
the events.
"""

from __future__ import annotations

import argparse
import gc
import json
import resource
import subprocess
import sys
import tempfile
import threading
import time
import tracemalloc
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.kube_pod_memory import event_lines, numbered  # noqa: E402
from kschedfw.cluster.kube.resources import BY_KIND  # noqa: E402
from kschedfw.trace.recorder import Recorder  # noqa: E402
from kschedfw.trace.writer import TraceWriter  # noqa: E402


def watch_lines(pods: int, shape: str) -> list[bytes]:
    """Per pod: ADDED, MODIFIED (bound), DELETED."""
    return list(churn(pods, shape))


def churn(pods: int, shape: str) -> Iterator[bytes]:
    """:func:`watch_lines` one at a time (the 35 recorded pods cycled, as ``event_lines``)."""
    templates = [json.loads(line)["object"] for line in event_lines(35, "recorded")]
    for i in range(pods):
        pod = numbered(templates[i % len(templates)], i, f"churn-{i}", shape)
        pod["spec"].pop("nodeName", None)
        pod["metadata"]["resourceVersion"] = "1"
        yield json.dumps({"type": "ADDED", "object": pod}).encode()
        bound = json.loads(json.dumps(pod))
        bound["spec"]["nodeName"] = "node-1"
        bound["metadata"]["resourceVersion"] = "2"
        bound.setdefault("status", {})["conditions"] = [
            {"type": "PodScheduled", "status": "True", "lastTransitionTime": "2026-01-01T00:00:00Z"}]
        yield json.dumps({"type": "MODIFIED", "object": bound}).encode()
        yield json.dumps({"type": "DELETED", "object": bound}).encode()


def node_object(i: int) -> dict[str, Any]:
    """A node as a v1.36 kubelet registers it (labels, capacity, conditions, 20 images)."""
    name = f"node-{i}"
    return {"metadata": {"name": name, "uid": f"00000000-0000-4000-8000-{i:012d}", "resourceVersion": "1",
                         "labels": {"kubernetes.io/hostname": name, "kubernetes.io/os": "linux",
                                    "kubernetes.io/arch": "amd64", "node.kubernetes.io/instance-type": "m6i.2xlarge",
                                    "topology.kubernetes.io/region": "eu-west-1",
                                    "topology.kubernetes.io/zone": f"eu-west-1{'abc'[i % 3]}"},
                         "annotations": {"node.alpha.kubernetes.io/ttl": "0",
                                         "volumes.kubernetes.io/controller-managed-attach-detach": "true"}},
            "spec": {"podCIDR": f"10.{i // 256 % 256}.{i % 256}.0/24", "providerID": f"aws:///eu-west-1a/i-{i:017x}"},
            "status": {"capacity": {"cpu": "8", "memory": "32386524Ki", "pods": "110", "ephemeral-storage": "104845292Ki"},
                       "allocatable": {"cpu": "7910m", "memory": "31369692Ki", "pods": "110",
                                       "ephemeral-storage": "95551679124"},
                       "conditions": [{"type": t, "status": "False" if t != "Ready" else "True",
                                       "lastHeartbeatTime": "2026-12-01T10:00:00Z",
                                       "lastTransitionTime": "2026-11-01T10:00:00Z", "reason": f"Kubelet{t}",
                                       "message": f"kubelet reports {t}"}
                                      for t in ("MemoryPressure", "DiskPressure", "PIDPressure", "Ready")],
                       "addresses": [{"type": "InternalIP", "address": f"10.0.{i // 256 % 256}.{i % 256}"},
                                     {"type": "Hostname", "address": name}],
                       "nodeInfo": {"kubeletVersion": "v1.36.2", "containerRuntimeVersion": "containerd://2.1.0",
                                    "kernelVersion": "6.8.0", "osImage": "Ubuntu 24.04", "operatingSystem": "linux",
                                    "architecture": "amd64", "machineID": f"{i:032x}", "systemUUID": f"{i:032x}",
                                    "bootID": f"{i:032x}", "kubeProxyVersion": ""},
                       "images": [{"names": [f"registry.example.com/team-{k}/app@sha256:{k:064x}",
                                             f"registry.example.com/team-{k}/app:v{k}"],
                                   "sizeBytes": 50_000_000 + k * 1_000_000} for k in range(20)]}}


class ListedCluster:
    """Pages of nodes and of pods bound across them, made as they are asked for."""

    def __init__(self, nodes: int, pods: int) -> None:
        self.nodes, self.pods = nodes, pods
        self.templates = [json.loads(line)["object"] for line in event_lines(35, "recorded")]

    def page(self, path: str, start: int, limit: int) -> tuple[list[dict[str, Any]], int]:
        if path == BY_KIND["Node"].path:
            end = min(self.nodes, start + limit)
            return [node_object(i) for i in range(start, end)], end if end < self.nodes else 0
        if path == BY_KIND["Pod"].path:
            end = min(self.pods, start + limit)
            items = []
            for i in range(start, end):
                pod = json.loads(json.dumps(self.templates[i % len(self.templates)]))
                pod["metadata"].update(name=f"listed-{i}", uid=f"{pod['metadata']['uid'][:-8]}{i:08d}",
                                       resourceVersion="1")
                pod["spec"]["nodeName"] = f"node-{i % max(self.nodes, 1)}"
                items.append(pod)
            return items, end if end < self.pods else 0
        return [], 0


class MemoryServer:
    """What the informers ask of a client: an empty first list for every kind, then one watch
    of the pods that streams ``lines``; every other watch waits until the end."""

    def __init__(self, lines: Iterable[bytes], listed: ListedCluster | None = None) -> None:
        self.lines = lines
        self.listed = listed
        self.done = threading.Event()
        self.stop = threading.Event()
        self._served = False

    def get(self, path: str, *, decode: Callable[[bytes], Any] | None = None, **params: Any) -> Any:
        items: list[dict[str, Any]] = []
        meta: dict[str, Any] = {"resourceVersion": "1"}
        if self.listed is not None:
            start = int(params.get("continue") or 0)
            items, more = self.listed.page(path, start, int(params.get("limit") or 500))
            if more:
                meta["continue"] = str(more)
        return (decode or json.loads)(json.dumps({"kind": "List", "metadata": meta, "items": items}).encode())

    def watch(self, path: str, params: Any, *, inactivity_timeout: float,
              decode: Callable[[bytes], Any]) -> Iterator[Any]:
        if path == BY_KIND["Pod"].path and not self._served:
            self._served = True
            for line in self.lines:
                yield decode(line)
            self.done.set()
        self.stop.wait()


def record(lines: Iterable[bytes], path: Path, listed: ListedCluster | None = None) -> tuple[float, int]:
    """CPU seconds of recording ``lines`` and the trace's size."""
    server = MemoryServer(lines, listed)
    writer = TraceWriter(path)
    kinds = (BY_KIND["Node"], BY_KIND["Pod"]) if listed is not None else (BY_KIND["Pod"],)
    recorder = Recorder(server, writer.write, resources=kinds)  # type: ignore[arg-type]
    recorder.start()
    recorder.wait_for_sync()
    start = time.process_time()
    server.done.wait()
    cpu = time.process_time() - start
    server.stop.set()
    recorder.stop()
    writer.close()
    return cpu, writer.bytes_written


def peak_memory(lines: list[bytes], path: Path) -> int:
    gc.collect()
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    record(lines, path)
    peak = tracemalloc.get_traced_memory()[1] - base
    tracemalloc.stop()
    return peak


def peak_rss(nodes: int, listed_pods: int, pods: int, shape: str) -> dict[str, Any]:
    """One recording of the listed cluster and ``pods`` churned, in a fresh process: its peak
    resident memory, CPU seconds and trace size."""
    out = subprocess.run([sys.executable, __file__, "--one-run", "--nodes", str(nodes), "--listed-pods",
                          str(listed_pods), "--pods", str(pods), "--shape", shape],
                         check=True, capture_output=True, text=True).stdout
    result: dict[str, Any] = json.loads(out)
    return result


def one_run(args: argparse.Namespace) -> int:
    with tempfile.TemporaryDirectory() as tmp:
        trace = Path(tmp) / "trace.jsonl.gz"
        start = time.process_time()
        _, size = record(churn(args.pods, args.shape), trace, ListedCluster(args.nodes, args.listed_pods))
        cpu = time.process_time() - start
    print(json.dumps({"events": 3 * args.pods, "cpu_s": round(cpu, 2), "trace_bytes": size,
                      "peak_rss_bytes": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024}))
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pods", type=int, default=5000)
    parser.add_argument("--shape", choices=("recorded", "running"), default="recorded")
    parser.add_argument("--nodes", type=int, default=0, help="nodes in the server's first list")
    parser.add_argument("--listed-pods", type=int, default=0, help="bound pods in the server's first list")
    parser.add_argument("--one-run", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one_run:
        return one_run(args)
    if args.nodes or args.listed_pods:
        baseline = peak_rss(0, 0, 0, args.shape)
        report = {"nodes": args.nodes, "listed_pods": args.listed_pods, "empty_cluster": baseline,
                  "churn": peak_rss(args.nodes, args.listed_pods, args.pods, args.shape),
                  "churn_4x": peak_rss(args.nodes, args.listed_pods, 4 * args.pods, args.shape)}
        print(json.dumps(report))
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        trace = Path(tmp) / "trace.jsonl.gz"
        lines = watch_lines(args.pods, args.shape)
        cpu, size = record(lines, trace)
        events = len(lines)
        report: dict[str, Any] = {
            "events": events, "json_bytes_per_event": round(sum(map(len, lines)) / events),
            "cpu_us_per_event": round(cpu / events * 1e6, 1), "cpu_s_per_1000_events": round(cpu / events * 1000, 3),
            "trace_bytes_per_1000_events": round(size / events * 1000)}
        report["peak_bytes"] = peak_memory(lines, trace)
        del lines
        more = watch_lines(args.pods * 4, args.shape)
        report["peak_bytes_4x_events"] = peak_memory(more, trace)
    print(json.dumps(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
