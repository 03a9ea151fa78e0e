"""Memory per node and per pod at scale (the target: 15,000 nodes and 100,000 pods in 2 GiB).

Builds the embedded cluster and the scheduler's cache with ``--nodes`` nodes (SchedulingBasic's
shape) and ``--pods`` pods already bound round-robin, then schedules ``--pending`` more pods;
reports the resident memory added by the nodes, by the bound pods, and the scheduling rate of
the pending ones. Generated objects are parsed as ``simulate`` parses manifests.

    python benchmarks/memory_scale.py --nodes 15000 --pods 100000 --pending 1000
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import clusters  # noqa: E402


def rss_bytes() -> int:
    with open("/proc/self/statm", encoding="ascii") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--nodes", type=int, default=15000)
    parser.add_argument("--pods", type=int, default=100000)
    parser.add_argument("--pending", type=int, default=1000)
    args = parser.parse_args(argv)

    from kschedfw.api.load import parse_object
    from kschedfw.config.validate import default_config
    from kschedfw.framework.registry import default_registry
    from kschedfw.simulation import Simulation

    registry = default_registry()
    config = default_config(registry)
    gc.collect()
    base = rss_bytes()
    nodes = [parse_object(m) for m in clusters.basic(args.nodes, 0)]
    sim = Simulation(config, registry, nodes)
    gc.collect()
    with_nodes = rss_bytes()
    bound = []
    for i, m in enumerate(clusters.basic(0, args.pods)):
        m["spec"]["nodeName"] = f"node-{i % args.nodes}"
        bound.append(parse_object(m))
    for pod in bound:
        sim.cluster.try_create(pod)
    del bound
    sim.run()
    gc.collect()
    with_pods = rss_bytes()
    for i, m in enumerate(clusters.basic(0, args.pending)):
        m["metadata"]["name"] = f"pending-{i}"
        sim.cluster.try_create(parse_object(m))
    t0, c0 = time.perf_counter(), time.process_time()
    result = sim.run()
    t1, c1 = time.perf_counter(), time.process_time()
    placed = sum(1 for p in result.pods if p.status == "Bound")
    mib = 1024 * 1024
    print(f"{args.nodes} nodes: {(with_nodes - base) / mib:.0f} MiB, "
          f"{(with_nodes - base) / max(args.nodes, 1) / 1024:.1f} KiB per node")
    print(f"{args.pods} bound pods: {(with_pods - with_nodes) / mib:.0f} MiB, "
          f"{(with_pods - with_nodes) / max(args.pods, 1) / 1024:.1f} KiB per pod")
    print(f"total resident: {rss_bytes() / mib:.0f} MiB")
    print(f"{placed} of {args.pending} pending pods scheduled: {placed / (t1 - t0):.1f} pods/s "
          f"({placed / max(c1 - c0, 1e-9):.1f} pods/CPU-s)")
    return 0 if placed == args.pending else 1


if __name__ == "__main__":
    sys.exit(main())
