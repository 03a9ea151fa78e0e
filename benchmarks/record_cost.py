#!/usr/bin/env python3
"""CPU and memory of `kschedfw record` per 1,000 watch events.

    python benchmarks/record_cost.py [--pods 5000] [--shape recorded|running]

The recorder (its informers, the lean pod decoding, the field dropping, the gzip writer) reads
from an in-memory API server: each of PODS pods (the 35 recorded by a real v1.36.2 server,
cycled, see benchmarks/kube_pod_memory.py) is created, bound (a MODIFIED with spec.nodeName and
its PodScheduled condition: a Bound decision) and deleted, three watch events each. Reported:
CPU µs per event and CPU seconds per 1,000 events of the recording process, compressed trace
bytes per 1,000 events, and the peak Python memory the recording held (tracemalloc, a second
run) at PODS and at 4 x PODS: the trace streams to disk, so the peak does not grow with the
number of events.
"""

from __future__ import annotations

import argparse
import gc
import json
import sys
import tempfile
import threading
import time
import tracemalloc
from pathlib import Path
from typing import Any, Callable, Iterator

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.kube_pod_memory import event_lines  # noqa: E402
from kschedfw.cluster.kube.resources import BY_KIND  # noqa: E402
from kschedfw.trace.recorder import Recorder  # noqa: E402
from kschedfw.trace.writer import TraceWriter  # noqa: E402


def watch_lines(pods: int, shape: str) -> list[bytes]:
    """Per pod: ADDED, MODIFIED (bound), DELETED."""
    out = []
    for line in event_lines(pods, shape):
        pod = json.loads(line)["object"]
        pod["spec"].pop("nodeName", None)
        pod["metadata"]["resourceVersion"] = "1"
        out.append(json.dumps({"type": "ADDED", "object": pod}).encode())
        bound = json.loads(json.dumps(pod))
        bound["spec"]["nodeName"] = "node-1"
        bound["metadata"]["resourceVersion"] = "2"
        bound.setdefault("status", {})["conditions"] = [
            {"type": "PodScheduled", "status": "True", "lastTransitionTime": "2026-01-01T00:00:00Z"}]
        out.append(json.dumps({"type": "MODIFIED", "object": bound}).encode())
        out.append(json.dumps({"type": "DELETED", "object": bound}).encode())
    return out


class MemoryServer:
    """What the informers ask of a client: an empty first list for every kind, then one watch
    of the pods that streams ``lines``; every other watch waits until the end."""

    def __init__(self, lines: list[bytes]) -> None:
        self.lines = lines
        self.done = threading.Event()
        self.stop = threading.Event()
        self._served = False

    def get(self, path: str, *, decode: Callable[[bytes], Any] | None = None, **params: Any) -> Any:
        return (decode or json.loads)(b'{"kind":"List","metadata":{"resourceVersion":"1"},"items":[]}')

    def watch(self, path: str, params: Any, *, inactivity_timeout: float,
              decode: Callable[[bytes], Any]) -> Iterator[Any]:
        if path == BY_KIND["Pod"].path and not self._served:
            self._served = True
            for line in self.lines:
                yield decode(line)
            self.done.set()
        self.stop.wait()


def record(lines: list[bytes], path: Path) -> tuple[float, int]:
    """CPU seconds of recording ``lines`` and the trace's size."""
    server = MemoryServer(lines)
    writer = TraceWriter(path)
    recorder = Recorder(server, writer.write, resources=(BY_KIND["Pod"],))  # type: ignore[arg-type]
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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pods", type=int, default=5000)
    parser.add_argument("--shape", choices=("recorded", "running"), default="recorded")
    args = parser.parse_args()
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
