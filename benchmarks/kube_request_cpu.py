#!/usr/bin/env python3
"""CPU of the calling process per one-shot request (an events.k8s.io Event POST, as the
scheduler writes one per bound pod), through urllib3's connection pool (kschedfw's transport
before), the standard library's http.client, and kschedfw.cluster.kube.transport (HTTP/1.1
written and read directly on a kept-alive socket per thread), alternating rounds against one
throwaway kube-apiserver.

    KSCHEDFW_KUBE_ASSETS=DIR python benchmarks/kube_request_cpu.py [--requests 400] [--rounds 3]
"""

from __future__ import annotations

import argparse
import http.client
import itertools
import json
import sys
import time
import urllib.parse
from pathlib import Path

import urllib3

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from kschedfw.cluster.kube.credentials import load_connection  # noqa: E402
from kschedfw.cluster.kube.transport import Transport  # noqa: E402
from kschedfw.testing.controlplane import ControlPlane, find_assets, missing_assets_reason  # noqa: E402

PATH = "/apis/events.k8s.io/v1/namespaces/bench/events"
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
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    assets = find_assets()
    if assets is None:
        print(missing_assets_reason(), file=sys.stderr)
        return 2
    with ControlPlane(assets) as cp:
        cp.api("POST", "/api/v1/namespaces", {"metadata": {"name": "bench"}})
        conn = load_connection(cp.kubeconfig)
        url = urllib.parse.urlsplit(conn.server)
        headers = {"Accept": "application/json", "User-Agent": "bench", "Content-Type": "application/json"}
        auth = conn.authorization()
        if auth:
            headers["Authorization"] = auth
        pool = urllib3.HTTPSConnectionPool(url.hostname or "", url.port or 443, ssl_context=conn.ssl_context,
                                           maxsize=8, block=False, retries=False)
        transport = Transport(url.hostname or "", url.port or 443, ssl_context=conn.ssl_context, https=True,
                              timeout=30)

        def via_urllib3() -> None:
            r = pool.urlopen("POST", PATH, body=event(), headers=dict(headers), preload_content=True, timeout=30,
                             redirect=False)
            assert r.status == 201, r.status
            json.loads(r.data)

        stdlib = http.client.HTTPSConnection(url.hostname or "", url.port or 443, context=conn.ssl_context,
                                             timeout=30)

        def via_http_client() -> None:
            stdlib.request("POST", PATH, body=event(), headers=dict(headers))
            r = stdlib.getresponse()
            data = r.read()
            assert r.status == 201, r.status
            json.loads(data)

        def via_transport() -> None:
            status, data = transport.request("POST", PATH, event(), dict(headers))
            assert status == 201, status
            json.loads(data)

        ways = (("urllib3_pool_us", via_urllib3), ("http_client_us", via_http_client),
                ("kschedfw_transport_us", via_transport))
        results: dict[str, list[int]] = {name: [] for name, _ in ways}
        for _ in range(args.rounds):
            for name, fn in ways:
                fn()
                start = time.process_time()
                for _ in range(args.requests):
                    fn()
                results[name].append(round((time.process_time() - start) / args.requests * 1e6))
        print(json.dumps({"cpu_us_per_request": results}))
        pool.close()
        stdlib.close()
        transport.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
