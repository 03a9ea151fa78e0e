#!/usr/bin/env python3
"""CPU of the calling process per one-shot request, through each HTTP client of
benchmarks/http_transports.py: kschedfw's transport (HTTP/1.1 written and read directly on a
kept-alive socket per thread), the standard library's http.client, urllib3's connection pool,
and libcurl through pycurl (HTTP/1.1, and HTTP/2 over TLS), alternating rounds against one
throwaway kube-apiserver. Two requests: an events.k8s.io Event POST (the scheduler writes one per
bound pod) and a GET of one pod (about 2 KB of JSON). Prints each round's µs per request and the
median.

    KSCHEDFW_KUBE_ASSETS=DIR python benchmarks/kube_request_cpu.py [--requests 400] [--rounds 5]
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import statistics
import sys
import time
import urllib.parse
from pathlib import Path
from typing import Callable

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from http_transports import BY_NAME  # noqa: E402

from kschedfw.cluster.kube.credentials import load_connection  # noqa: E402
from kschedfw.testing.controlplane import ControlPlane, find_assets, missing_assets_reason  # noqa: E402

EVENTS = "/apis/events.k8s.io/v1/namespaces/bench/events"
POD = "/api/v1/namespaces/bench/pods/p"
_names = itertools.count()


def event() -> bytes:
    return json.dumps({
        "apiVersion": "events.k8s.io/v1", "kind": "Event", "metadata": {"name": f"e{next(_names)}", "namespace": "bench"},
        "eventTime": "2026-01-01T00:00:00.000000Z", "type": "Normal", "reason": "Scheduled", "action": "Binding",
        "note": "Successfully assigned bench/p to node-1", "reportingController": "bench",
        "reportingInstance": "bench-host", "regarding": {"apiVersion": "v1", "kind": "Pod", "namespace": "bench",
                                                         "name": "p", "uid": "u"}}, separators=(",", ":")).encode()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--requests", type=int, default=400)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    assets = find_assets()
    if assets is None:
        print(missing_assets_reason(), file=sys.stderr)
        return 2
    with ControlPlane(assets) as cp:
        os.environ["KSCHEDFW_BENCH_CAFILE"] = str(cp.ca_file)
        cp.api("POST", "/api/v1/namespaces", {"metadata": {"name": "bench"}})
        cp.api("POST", "/api/v1/namespaces/bench/pods", {
            "metadata": {"name": "p", "labels": {"app": "web", "tier": "frontend"}},
            "spec": {"containers": [{"name": "c", "image": "nginx", "resources": {
                "requests": {"cpu": "100m", "memory": "64Mi"}}}]}})
        conn = load_connection(cp.kubeconfig)
        url = urllib.parse.urlsplit(conn.server)
        headers = {"Accept": "application/json", "User-Agent": "bench"}
        auth = conn.authorization()
        if auth:
            headers["Authorization"] = auth
        post_headers = {**headers, "Content-Type": "application/json"}
        names = [name for name in BY_NAME if not name.startswith("pycurl") or _has_pycurl()]
        transports = {name: BY_NAME[name](url.hostname or "", url.port or 443, ssl_context=conn.ssl_context,
                                          https=True, timeout=30) for name in names}

        def post(name: str) -> Callable[[], None]:
            transport = transports[name]

            def run() -> None:
                answer = transport.request("POST", EVENTS, event(), dict(post_headers))
                assert answer.status == 201, answer.status
                json.loads(answer.body)
            return run

        def get(name: str) -> Callable[[], None]:
            transport = transports[name]

            def run() -> None:
                answer = transport.request("GET", POD, None, dict(headers))
                assert answer.status == 200, answer.status
                json.loads(answer.body)
            return run

        results: dict[str, dict[str, list[int]]] = {"event_post": {n: [] for n in names},
                                                    "pod_get": {n: [] for n in names}}
        for _ in range(args.rounds):
            for request, make in (("event_post", post), ("pod_get", get)):
                for name in names:
                    fn = make(name)
                    fn()
                    start = time.process_time()
                    for _ in range(args.requests):
                        fn()
                    results[request][name].append(round((time.process_time() - start) / args.requests * 1e6))
        for transport in transports.values():
            transport.close()
    print(json.dumps({"cpu_us_per_request": results,
                      "median_us": {request: {name: statistics.median(runs) for name, runs in by_name.items()}
                                    for request, by_name in results.items()}}, indent=1))
    return 0


def _has_pycurl() -> bool:
    try:
        import pycurl  # noqa: F401
    except ImportError:
        print("kube_request_cpu: pycurl is not installed, its rows are left out", file=sys.stderr)
        return False
    return True


if __name__ == "__main__":
    sys.exit(main())
