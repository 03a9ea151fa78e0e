#!/usr/bin/env python3
"""CPU per request and per watch event for the client choices of kschedfw.cluster.kube, against a
throwaway kube-apiserver (KSCHEDFW_KUBE_ASSETS): lightkube's httpx client vs kschedfw's KubeClient
for a GET of one ~2 KB pod, and decoding (whole with json; lean with kschedfw.cluster.kube.leanpod)
+ kschedfw.api parsing of one watch event. benchmarks/kube_request_cpu.py compares transports.

    KSCHEDFW_KUBE_ASSETS=DIR python benchmarks/kube_client.py
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from kschedfw.cluster.kube import leanpod  # noqa: E402
from kschedfw.cluster.kube.client import KubeClient  # noqa: E402
from kschedfw.cluster.kube.credentials import load_connection  # noqa: E402
from kschedfw.cluster.kube.resources import BY_KIND, parse_api_object  # noqa: E402
from kschedfw.testing.controlplane import ControlPlane, find_assets, missing_assets_reason  # noqa: E402

N = 300


def per_call_us(fn, n: int = N) -> float:
    fn()
    start = time.process_time()
    for _ in range(n):
        fn()
    return (time.process_time() - start) / n * 1e6


def main() -> int:
    assets = find_assets()
    if assets is None:
        print(missing_assets_reason(), file=sys.stderr)
        return 2
    with ControlPlane(assets) as cp:
        cp.api("POST", "/api/v1/namespaces", {"metadata": {"name": "m"}})
        pod = cp.api("POST", "/api/v1/namespaces/m/pods", {
            "metadata": {"name": "p", "labels": {"app": "web", "tier": "frontend"}},
            "spec": {"schedulerName": "kschedfw", "containers": [{"name": "c", "image": "nginx", "resources": {
                "requests": {"cpu": "100m", "memory": "64Mi"}}}], "affinity": {"nodeAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{"matchExpressions": [
                        {"key": "zone", "operator": "In", "values": ["a", "b"]}]}]}}}}})
        path = "/api/v1/namespaces/m/pods/p"
        results = {"pod_json_bytes": len(json.dumps(pod))}
        try:
            from lightkube.config import client_adapter
            from lightkube.config.kubeconfig import KubeConfig
            httpx_client = client_adapter.Client(KubeConfig.from_file(str(cp.kubeconfig)).get(),
                                                 client_adapter.ConnectionParams())
            results["httpx_us_per_get"] = round(per_call_us(lambda: httpx_client.get(path).content))
        except ImportError:
            pass
        ours = KubeClient(load_connection(cp.kubeconfig), qps=0, burst=1)
        results["kschedfw_kubeclient_us_per_get"] = round(per_call_us(lambda: ours.request("GET", path)))
        event = json.dumps({"type": "MODIFIED", "object": pod}).encode()
        results["json_decode_us_per_event"] = round(per_call_us(lambda: json.loads(event), 3000), 1)
        lean = leanpod.pod_event_decoder()
        results["lean_decode_us_per_event"] = round(per_call_us(lambda: lean(event), 3000), 1)
        obj = json.loads(event)["object"]
        results["parse_us_per_pod"] = round(per_call_us(lambda: parse_api_object(BY_KIND["Pod"], obj), 3000), 1)
        lean_obj = lean(event)["object"]
        results["parse_us_per_lean_pod"] = round(
            per_call_us(lambda: parse_api_object(BY_KIND["Pod"], lean_obj), 3000), 1)
        print(json.dumps(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
