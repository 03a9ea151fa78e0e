"""Small builders for scheduler tests: manifests as dicts, parsed by the real api code."""

from __future__ import annotations

import pytest

from kschedfw.api import parse_object


def make_node(name, cpu="4", pods="110", labels=None, taints=None):
    spec = {"taints": taints} if taints else {}
    return parse_object({"apiVersion": "v1", "kind": "Node",
                         "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, **(labels or {})}},
                         "spec": spec, "status": {"allocatable": {"cpu": cpu, "memory": "8Gi", "pods": pods}}})


def make_pod(name, cpu="100m", priority=None, node=None, scheduler="default-scheduler", labels=None, gates=None,
             namespace="default"):
    spec = {"schedulerName": scheduler,
            "containers": [{"name": "c", "image": "busybox", "resources": {"requests": {"cpu": cpu}}}]}
    if priority is not None:
        spec["priority"] = priority
    if node:
        spec["nodeName"] = node
    if gates:
        spec["schedulingGates"] = [{"name": g} for g in gates]
    return parse_object({"apiVersion": "v1", "kind": "Pod",
                         "metadata": {"name": name, "namespace": namespace, "labels": labels or {}}, "spec": spec})


@pytest.fixture
def node():
    return make_node


@pytest.fixture
def pod():
    return make_pod
