#!/usr/bin/env python3
"""Replay speed: simulated seconds per wall second of `kschedfw simulate --replay`.

    python benchmarks/replay_speed.py [--nodes 1000] [--events 20000] [--hours 24]

A synthetic trace is written first (not timed): NODES nodes listed, 40% of them already half full
of bound pods, then EVENTS watch events spread evenly over HOURS hours, as a recorder sees a busy
cluster: pod arrivals (each followed by the recorded scheduler's binding, a MODIFIED the replay
drops, its Bound decision and the kubelet's Running update), pod deletions, node heartbeats (a
MODIFIED that changes nothing the scheduler reads) and node label changes. Timed: reading the
trace and the replay to its end (`load_replay`, then the simulation with the agreement watch), as
`simulate --replay` runs them. Reported: wall seconds of each, the simulated span, and the ratio;
the goal is at least 1,000 (a day replayed in under 90 s).
"""

from __future__ import annotations

import argparse
import platform
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from kschedfw.trace.writer import TraceWriter  # noqa: E402


def _node(i: int, rv: int, zone: str) -> dict[str, Any]:
    amounts = {"cpu": "16", "memory": "64Gi", "pods": "110"}
    name = f"node-{i:04d}"
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "resourceVersion": str(rv),
                         "labels": {"kubernetes.io/hostname": name, "topology.kubernetes.io/zone": zone}},
            "status": {"allocatable": amounts, "capacity": amounts,
                       "conditions": [{"type": "Ready", "status": "True", "lastHeartbeatTime": f"t{rv}"}]}}


def _pod(name: str, cpu: str, node: str = "", phase: str = "Pending") -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}", "labels": {"app": name[:5]}},
            "spec": {"schedulerName": "default-scheduler", "priority": 0, "terminationGracePeriodSeconds": 0,
                     "containers": [{"name": "c", "image": "i", "resources": {"requests": {"cpu": cpu,
                                                                                        "memory": "1Gi"}}}],
                     **({"nodeName": node} if node else {})},
            "status": {"phase": phase}}


class _Clock:
    def __init__(self, start: float) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now


def write_trace(path: Path, nodes: int, events: int, hours: float, seed: int = 0) -> dict[str, int]:
    """The synthetic trace; returns how many events of each sort it holds."""
    rng = random.Random(seed)
    start = 1_800_000_000.0
    clock = _Clock(start)
    writer = TraceWriter(path, server="synthetic", clock=clock)
    zones = ("a", "b", "c")
    writer.write({"type": "list", "object": {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "default"}}})
    for i in range(nodes):
        writer.write({"type": "list", "object": _node(i, 1, zones[i % 3])})
    running: list[tuple[str, str, str]] = []  # (pod, cpu, node)
    for i in range(nodes * 2 // 5):
        for j in range(8):
            name, cpu, node = f"old-{i}-{j}", "1", f"node-{i:04d}"
            writer.write({"type": "list", "object": _pod(name, cpu, node, "Running")})
            running.append((name, cpu, node))
    writer.write({"type": "synced"})
    step = hours * 3600.0 / events
    counts = {"arrivals": 0, "deletions": 0, "heartbeats": 0, "label changes": 0}
    written, serial, rv = 0, 0, 1
    while written < events:
        clock.now = start + (written + 1) * step
        roll = rng.random()
        if roll < 0.45 or not running:  # an arrival: ADDED, the recorded binding, Running: 3 events
            serial += 1
            name, cpu = f"p-{serial}", rng.choice(("250m", "500m", "1", "2"))
            node = f"node-{rng.randrange(nodes):04d}"
            writer.write({"type": "event", "event": "ADDED", "object": _pod(name, cpu)})
            writer.write({"type": "event", "event": "MODIFIED", "object": _pod(name, cpu, node)})
            writer.write({"type": "decision", "decision": "Bound", "pod": f"default/{name}", "uid": f"uid-{name}",
                          "scheduler": "default-scheduler", "node": node})
            writer.write({"type": "event", "event": "MODIFIED", "object": _pod(name, cpu, node, "Running")})
            running.append((name, cpu, node))
            counts["arrivals"] += 1
            written += 3
        elif roll < 0.80:
            name, cpu, node = running.pop(rng.randrange(len(running)))
            writer.write({"type": "event", "event": "DELETED", "object": _pod(name, cpu, node, "Running")})
            counts["deletions"] += 1
            written += 1
        else:
            rv += 1
            i = rng.randrange(nodes)
            node = _node(i, rv, zones[i % 3])
            if roll < 0.97:
                counts["heartbeats"] += 1
            else:
                node["metadata"]["labels"]["pool"] = rng.choice(("x", "y"))
                counts["label changes"] += 1
            writer.write({"type": "event", "event": "MODIFIED", "object": node})
            written += 1
    writer.close()
    return counts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--nodes", type=int, default=1000)
    parser.add_argument("--events", type=int, default=20000)
    parser.add_argument("--hours", type=float, default=24.0, help="simulated span of the events")
    args = parser.parse_args(argv)
    from kschedfw.config.validate import default_config
    from kschedfw.framework.registry import default_registry
    from kschedfw.simulation import Simulation
    from kschedfw.trace.agreement import AgreementWatch, agreement
    from kschedfw.trace.replay import load_replay

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "synthetic.jsonl.gz"
        counts = write_trace(path, args.nodes, args.events, args.hours)
        started = time.perf_counter()
        replay = load_replay(path)
        read = time.perf_counter() - started
        registry = default_registry()
        sim = Simulation(default_config(registry), registry, replay.objects, replay.steps)
        watch = AgreementWatch(sim.scheduler, replay.pods).attach()
        result = sim.run(replay.end)
        agreed = agreement(watch)
        wall = time.perf_counter() - started
    bound = sum(p.status == "Bound" for p in result.pods)
    print(f"machine: {platform.machine()}, {platform.python_implementation()} {platform.python_version()}")
    print(f"trace: {args.nodes} nodes, {args.events} events over {args.hours:g} h "
          f"({', '.join(f'{n} {k}' for k, n in counts.items())})")
    print(f"replayed: {agreed.node.compared} arrivals bound by kschedfw ({bound} still bound at the end); node "
          f"agreement {agreed.node.agreed}/{agreed.node.compared} (the synthetic recorded nodes are random)")
    print(f"wall: {wall:.1f} s ({read:.1f} s reading the trace), simulated {replay.end:.0f} s, "
          f"speed {replay.end / wall:,.0f}x real time")
    return 0


if __name__ == "__main__":
    sys.exit(main())
