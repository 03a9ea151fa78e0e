#!/usr/bin/env python3
"""Memory per cached pod and CPU per pod watch event, whole objects against lean ones.

    python benchmarks/kube_pod_memory.py [--pods 2000] [--shape recorded|running]

The pods are the 35 recorded by a real v1.36.2 API server (tests/kube/fixtures/recorded-pods.json),
cycled to PODS with distinct names and uids, each as one watch-event line. ``--shape running``
gives each the fields a running Deployment pod carries besides (written here, typical of a
v1.36 cluster: ReplicaSet owner and pod-template-hash, the kube-api-access projected volume,
env, probes, mounts, managedFields of three managers, container statuses, pod IPs). For each way of decoding
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


RUNNING_METADATA = {
    "generateName": "web-7d9c6b5f4-", "labels": {"app": "web", "pod-template-hash": "7d9c6b5f4"},
    "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-7d9c6b5f4",
                         "uid": "3f0c1b8e-5d1e-4a53-9d0e-0f5a2b7c9e11", "controller": True,
                         "blockOwnerDeletion": True}],
    "managedFields": [
        {"manager": "kube-controller-manager", "operation": "Update", "apiVersion": "v1",
         "time": "2026-11-21T23:57:35Z", "fieldsType": "FieldsV1", "fieldsV1": {
             "f:metadata": {"f:generateName": {}, "f:labels": {".": {}, "f:app": {}, "f:pod-template-hash": {}},
                            "f:ownerReferences": {".": {}, "k:{\"uid\":\"3f0c1b8e\"}": {}}},
             "f:spec": {"f:containers": {"k:{\"name\":\"main\"}": {
                 ".": {}, "f:env": {".": {}, "k:{\"name\":\"LOG_LEVEL\"}": {".": {}, "f:name": {}, "f:value": {}}},
                 "f:image": {}, "f:imagePullPolicy": {}, "f:livenessProbe": {}, "f:name": {}, "f:ports": {},
                 "f:readinessProbe": {}, "f:resources": {}, "f:terminationMessagePath": {},
                 "f:terminationMessagePolicy": {}, "f:volumeMounts": {}}},
                 "f:dnsPolicy": {}, "f:enableServiceLinks": {}, "f:restartPolicy": {}, "f:schedulerName": {},
                 "f:securityContext": {}, "f:terminationGracePeriodSeconds": {}}}},
        {"manager": "kube-scheduler", "operation": "Update", "apiVersion": "v1", "time": "2026-11-21T23:57:36Z",
         "fieldsType": "FieldsV1", "subresource": "status",
         "fieldsV1": {"f:status": {"f:conditions": {".": {}, "k:{\"type\":\"PodScheduled\"}": {}}}}},
        {"manager": "kubelet", "operation": "Update", "apiVersion": "v1", "time": "2026-11-21T23:57:40Z",
         "fieldsType": "FieldsV1", "subresource": "status", "fieldsV1": {"f:status": {
             "f:conditions": {}, "f:containerStatuses": {}, "f:hostIP": {}, "f:hostIPs": {}, "f:phase": {},
             "f:podIP": {}, "f:podIPs": {}, "f:startTime": {}}}}],
}
RUNNING_CONTAINER = {
    "env": [{"name": "LOG_LEVEL", "value": "info"}, {"name": "POD_NAME", "valueFrom": {"fieldRef": {
        "apiVersion": "v1", "fieldPath": "metadata.name"}}}],
    "ports": [{"containerPort": 8080, "name": "http", "protocol": "TCP"}],
    "livenessProbe": {"httpGet": {"path": "/healthz", "port": 8080, "scheme": "HTTP"}, "periodSeconds": 10,
                      "timeoutSeconds": 1, "successThreshold": 1, "failureThreshold": 3},
    "readinessProbe": {"httpGet": {"path": "/ready", "port": 8080, "scheme": "HTTP"}, "periodSeconds": 5,
                       "timeoutSeconds": 1, "successThreshold": 1, "failureThreshold": 3},
    "volumeMounts": [{"name": "kube-api-access-x7k2p", "readOnly": True,
                      "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount"}],
}
RUNNING_SPEC = {
    "serviceAccountName": "default", "serviceAccount": "default", "nodeName": "node-1",
    "volumes": [{"name": "kube-api-access-x7k2p", "projected": {"defaultMode": 420, "sources": [
        {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
        {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
        {"downwardAPI": {"items": [{"path": "namespace", "fieldRef": {"apiVersion": "v1",
                                                                      "fieldPath": "metadata.namespace"}}]}}]}}],
}
RUNNING_STATUS = {
    "phase": "Running", "hostIP": "10.0.0.11", "hostIPs": [{"ip": "10.0.0.11"}], "podIP": "10.244.1.23",
    "podIPs": [{"ip": "10.244.1.23"}], "startTime": "2026-11-21T23:57:36Z", "qosClass": "Burstable",
    "conditions": [{"type": t, "status": "True", "lastProbeTime": None, "lastTransitionTime": "2026-11-21T23:57:40Z"}
                   for t in ("PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady", "PodScheduled")],
    "containerStatuses": [{"name": "main", "ready": True, "restartCount": 0, "started": True,
                           "image": "registry.k8s.io/pause:3.10",
                           "imageID": "registry.k8s.io/pause@sha256:ee6521f290b2168b6e0935a181d4cff9be1ac3f505666ef0e3c98fae8199917a",
                           "containerID": "containerd://0d3f1e2a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f6",
                           "state": {"running": {"startedAt": "2026-11-21T23:57:39Z"}}, "lastState": {},
                           "volumeMounts": [{"name": "kube-api-access-x7k2p", "readOnly": True, "recursiveReadOnly": "Disabled",
                                             "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount"}]}],
}


def running(pod: dict) -> dict:
    pod["metadata"].update(json.loads(json.dumps(RUNNING_METADATA)))
    pod["spec"].update(json.loads(json.dumps(RUNNING_SPEC)))
    for container in pod["spec"]["containers"]:
        container.update(json.loads(json.dumps(RUNNING_CONTAINER)))
    pod["status"] = json.loads(json.dumps(RUNNING_STATUS))
    return pod


def event_lines(count: int, shape: str = "recorded") -> list[bytes]:
    recorded = json.loads((ROOT / "tests/kube/fixtures/recorded-pods.json").read_text())
    lines = []
    for i in range(count):
        template = recorded[i % len(recorded)]
        pod = numbered(template, i, f"{template['metadata']['name']}-{i}", shape)
        lines.append(json.dumps({"type": "ADDED", "object": pod}).encode())
    return lines


def numbered(template: dict, i: int, name: str, shape: str) -> dict:
    """A copy of the recorded pod ``template`` as the ``i``-th pod, named ``name`` (a uid of its own),
    running when ``shape`` says so."""
    pod = json.loads(json.dumps(template))
    if shape == "running":
        pod = running(pod)
    pod["metadata"]["name"] = name
    pod["metadata"]["uid"] = f"{pod['metadata']['uid'][:-8]}{i:08d}"
    return pod


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
    parser.add_argument("--shape", choices=("recorded", "running"), default="recorded")
    args = parser.parse_args()
    lines = event_lines(args.pods, args.shape)
    print(json.dumps({"json_bytes_per_event": round(sum(map(len, lines)) / len(lines))}))
    for name in DECODERS:
        print(json.dumps(measure(lines, name)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
