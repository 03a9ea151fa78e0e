"""Generated clusters for end-to-end benchmarks, deterministic from a seed.

* ``basic``: scheduler_perf's SchedulingBasic shape (nodes of 4 cpu / 32Gi / 110 pods, pause
  pods requesting 100m / 500Mi), as one ``kubectl get -o yaml``-style List;
* ``mixed``: nodes in zones and racks with a few sizes, and pods of several kinds mixing
  required and preferred topology spread, pod affinity and pod anti-affinity, with resource
  requests of a few sizes (the "mixed 2000-node cluster" the benchmark page measures).

Run ``python benchmarks/clusters.py basic --nodes 5000 --pods 3000 -o basic.yaml`` to write one.
"""

from __future__ import annotations

import argparse
import random
import sys
from typing import Any

import yaml

_Dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


def _node(name: str, labels: dict[str, str], cpu: str, memory: str, pods: str = "110") -> dict[str, Any]:
    labels = {"kubernetes.io/hostname": name, **labels}
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels},
            "status": {"capacity": {"cpu": cpu, "memory": memory, "pods": pods},
                       "allocatable": {"cpu": cpu, "memory": memory, "pods": pods},
                       "conditions": [{"type": "Ready", "status": "True"}]}}


def _pod(name: str, labels: dict[str, str], cpu: str, memory: str, **spec: Any) -> dict[str, Any]:
    container = {"name": "pause", "image": "registry.k8s.io/pause:3.10.2",
                 "resources": {"requests": {"cpu": cpu, "memory": memory},
                               "limits": {"cpu": cpu, "memory": memory}}}
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "default", "labels": labels},
            "spec": {"containers": [container], **spec}}


def basic(nodes: int, pods: int, seed: int = 0) -> list[dict[str, Any]]:
    """SchedulingBasic's objects: ``nodes`` identical nodes and ``pods`` pending pause pods."""
    del seed  # nothing random: kept for a uniform signature
    items = [_node(f"node-{i}", {}, "4", "32Gi") for i in range(nodes)]
    items += [_pod(f"pod-{i}", {}, "100m", "500Mi") for i in range(pods)]
    return items


_ZONE, _RACK = "topology.kubernetes.io/zone", "example.com/rack"


def _term(key: str, app: str) -> dict[str, Any]:
    return {"topologyKey": key, "labelSelector": {"matchLabels": {"app": app}}}


def _spread(key: str, app: str, skew: int, hard: bool) -> dict[str, Any]:
    return {"maxSkew": skew, "topologyKey": key,
            "whenUnsatisfiable": "DoNotSchedule" if hard else "ScheduleAnyway",
            "labelSelector": {"matchLabels": {"app": app}}}


def mixed(nodes: int, pods: int, seed: int = 0) -> list[dict[str, Any]]:
    """Nodes in 4 zones of 25-node racks, three sizes; pods in groups (apps) of 50, each app of
    one kind: plain, zone spread (hard), host spread (soft), affinity to a "cache" app's zone
    (required) or host (preferred), anti-affinity per host (required, one per node) or per rack
    (preferred). Everything is drawn from ``random.Random(seed)``."""
    rng = random.Random(seed)
    sizes = (("8", "32Gi"), ("16", "64Gi"), ("32", "128Gi"))
    items = []
    for i in range(nodes):
        cpu, memory = sizes[rng.randrange(len(sizes))]
        labels = {_ZONE: f"zone-{i % 4}", _RACK: f"rack-{i // 25}"}
        items.append(_node(f"node-{i}", labels, cpu, memory))
    requests = (("100m", "128Mi"), ("250m", "512Mi"), ("500m", "1Gi"), ("1", "2Gi"))
    kinds = ("plain", "zone-spread", "host-spread", "zone-affinity", "host-affinity",
             "host-anti", "rack-anti")
    n = 0
    app_index = 0
    while n < pods:
        kind = kinds[rng.randrange(len(kinds))]
        app = f"app-{app_index}"
        cache = f"cache-{app_index % 10}"
        app_index += 1
        cpu, memory = requests[rng.randrange(len(requests))]
        for _ in range(min(50, pods - n)):
            spec: dict[str, Any] = {}
            labels = {"app": app, "kind": kind}
            if kind == "zone-spread":
                spec["topologySpreadConstraints"] = [_spread(_ZONE, app, 1, True)]
            elif kind == "host-spread":
                spec["topologySpreadConstraints"] = [_spread("kubernetes.io/hostname", app, 2, False)]
            elif kind == "zone-affinity":
                if n % 10 == 0:  # the first pods of an app are the cache it follows
                    labels = {"app": cache, "kind": "cache"}
                else:
                    spec["affinity"] = {"podAffinity": {
                        "requiredDuringSchedulingIgnoredDuringExecution": [_term(_ZONE, cache)]}}
            elif kind == "host-affinity":
                spec["affinity"] = {"podAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
                    {"weight": 10, "podAffinityTerm": _term("kubernetes.io/hostname", cache)}]}}
            elif kind == "host-anti":
                spec["affinity"] = {"podAntiAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": [_term("kubernetes.io/hostname", app)]}}
            elif kind == "rack-anti":
                spec["affinity"] = {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
                    {"weight": 50, "podAffinityTerm": _term(_RACK, app)}]}}
            items.append(_pod(f"pod-{n}", labels, cpu, memory, **spec))
            n += 1
    return items


GENERATORS = {"basic": basic, "mixed": mixed}


def as_list(items: list[dict[str, Any]]) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "List", "items": items}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("kind", choices=sorted(GENERATORS))
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--pods", type=int, default=3000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("-o", "--output", default="-", help="file to write (default: stdout)")
    args = parser.parse_args(argv)
    data = as_list(GENERATORS[args.kind](args.nodes, args.pods, args.seed))
    if args.output == "-":
        yaml.dump(data, sys.stdout, Dumper=_Dumper, sort_keys=False)
    else:
        with open(args.output, "w", encoding="utf-8") as fh:
            yaml.dump(data, fh, Dumper=_Dumper, sort_keys=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
