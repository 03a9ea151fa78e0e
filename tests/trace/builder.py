"""Traces written by hand for the replay's tests: nodes, pods, and the lines a recorder writes
for them (its clock moves half a second per line)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kschedfw.trace.writer import TraceWriter

NAMESPACE = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "default"}}


def node(name: str, cpu: str = "4", rv: str = "1", **meta: Any) -> dict[str, Any]:
    amounts = {"cpu": cpu, "memory": "8Gi", "pods": "110"}
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "resourceVersion": rv, "labels": {"kubernetes.io/hostname": name}, **meta},
            "status": {"allocatable": amounts, "capacity": amounts}}


def pod(name: str, cpu: str = "100m", *, node_name: str = "", phase: str = "Pending", priority: int = 0,
        scheduler: str = "default-scheduler", **extra: Any) -> dict[str, Any]:
    status: dict[str, Any] = {"phase": phase, **extra.pop("status", {})}
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}", **extra.pop("metadata", {})},
            "spec": {"schedulerName": scheduler, "priority": priority, "terminationGracePeriodSeconds": 0,
                     "containers": [{"name": "c", "image": "i", "resources": {"requests": {"cpu": cpu}}}],
                     **({"nodeName": node_name} if node_name else {}), **extra},
            "status": status}


def listed(*objects: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"type": "list", "object": o} for o in objects] + [{"type": "synced"}]


def event(kind: str, obj: dict[str, Any]) -> dict[str, Any]:
    return {"type": "event", "event": kind, "object": obj}


def bound(name: str, node_name: str, scheduler: str = "default-scheduler") -> dict[str, Any]:
    return {"type": "decision", "decision": "Bound", "pod": f"default/{name}", "uid": f"uid-{name}",
            "scheduler": scheduler, "node": node_name}


def failed(name: str, message: str = "0/2 nodes are available") -> dict[str, Any]:
    return {"type": "decision", "decision": "FailedScheduling", "pod": f"default/{name}", "uid": f"uid-{name}",
            "scheduler": "default-scheduler", "message": message}


def binding(name: str, node_name: str, cpu: str = "100m", **extra: Any) -> list[dict[str, Any]]:
    """What a trace holds when the recorded scheduler binds a pod: the pod update, the decision,
    then the kubelet's status update."""
    return [event("MODIFIED", pod(name, cpu, node_name=node_name, **extra)), bound(name, node_name),
            event("MODIFIED", pod(name, cpu, node_name=node_name, phase="Running", **extra))]


class _Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        self.now += 0.5
        return self.now


def write(path: Path, lines: list[dict[str, Any]]) -> Path:
    writer = TraceWriter(path, server="v1.36.2", clock=_Clock())
    for line in lines:
        writer.write(line)
    writer.close()
    return path
