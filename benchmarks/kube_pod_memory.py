#!/usr/bin/env python3
"""Memory per cached pod and CPU per pod watch event, whole objects against lean ones.

    python benchmarks/kube_pod_memory.py [--pods 2000]

The pods are the 35 recorded by a real v1.36.2 API server (tests/kube/fixtures/recorded-pods.json),
cycled to PODS with distinct names and uids, each as one watch-event line. For each way of decoding
(``whole``: json + parse as before; ``lean-msgspec`` and ``lean-python``: kschedfw.cluster.kube.leanpod),
the lines are decoded and parsed into the Pods the cache holds; reported: bytes held per cached pod
(tracemalloc, everything the Pods keep alive) and CPU µs per event (decode + parse).
"""

from __future__ import annotations

import argparse
import gc
import json
import sys
import time
import tracemalloc
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from kschedfw.cluster.kube import leanpod  # noqa: E402
from kschedfw.cluster.kube.resources import BY_KIND, parse_api_object  # noqa: E402

POD = BY_KIND["Pod"]


def event_lines(count: int) -> list[bytes]:
    recorded = json.loads((ROOT / "tests/kube/fixtures/recorded-pods.json").read_text())
    lines = []
    for i in range(count):
        pod = json.loads(json.dumps(recorded[i % len(recorded)]))
        pod["metadata"]["name"] = f"{pod['metadata']['name']}-{i}"
        pod["metadata"]["uid"] = f"{pod['metadata']['uid'][:-8]}{i:08d}"
        lines.append(json.dumps({"type": "ADDED", "object": pod}).encode())
    return lines


def whole(line: bytes) -> dict:
    return json.loads(line)


DECODERS = {"whole": whole, "lean-msgspec": leanpod.pod_event_decoder(True),
            "lean-python": leanpod.pod_event_decoder(False)}


def cache(lines: list[bytes], decode) -> list:
    return [parse_api_object(POD, decode(line)["object"]) for line in lines]


def measure(lines: list[bytes], name: str) -> dict:
    decode = DECODERS[name]
    cache(lines[:50], decode)  # warm up (imports, msgspec types)
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    pods = cache(lines, decode)
    gc.collect()
    held = tracemalloc.get_traced_memory()[0] - before
    tracemalloc.stop()
    del pods
    start = time.process_time()
    for _ in range(3):
        cache(lines, decode)
    cpu = (time.process_time() - start) / (3 * len(lines))
    return {"decoder": name, "pods": len(lines), "bytes_per_cached_pod": round(held / len(lines)),
            "us_per_event": round(cpu * 1e6, 1)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pods", type=int, default=2000)
    args = parser.parse_args()
    lines = event_lines(args.pods)
    print(json.dumps({"json_bytes_per_event": round(sum(map(len, lines)) / len(lines))}))
    for name in DECODERS:
        if name == "lean-msgspec" and not leanpod.HAVE_MSGSPEC:
            continue
        print(json.dumps(measure(lines, name)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
