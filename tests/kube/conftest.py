"""Per-test namespace and kube backend on the session's API server (``control_plane``, in
tests/conftest.py; skipped when no binaries are found)."""

from __future__ import annotations

import itertools
from typing import Iterator

import pytest

from kschedfw.cluster.kube.backend import KubeBackend
from kschedfw.cluster.kube.client import KubeClient
from kschedfw.cluster.kube.credentials import load_connection
from kschedfw.testing.controlplane import ControlPlane

_names = itertools.count(1)


@pytest.fixture
def namespace(control_plane: ControlPlane) -> Iterator[str]:
    """A fresh namespace per test, so tests sharing the server do not see each other's pods;
    its pods are deleted after the test."""
    name = f"t{next(_names)}"
    control_plane.api("POST", "/api/v1/namespaces", {"metadata": {"name": name}})
    yield name
    control_plane.delete_pods(name)


@pytest.fixture
def backend(control_plane: ControlPlane) -> Iterator[KubeBackend]:
    """kschedfw's kube backend on the session's API server, stopped after the test."""
    client = KubeClient(load_connection(control_plane.kubeconfig))
    backend = KubeBackend(client)
    yield backend
    backend.stop()
    client.close()


#: the workload-aware gates of kube-apiserver, kube-scheduler and kschedfw in the tests of that path
WORKLOAD_GATES = ("GenericWorkload=true,GangScheduling=true,TopologyAwareWorkloadScheduling=true,"
                  "WorkloadAwarePreemption=true")


@pytest.fixture(scope="session")
def workload_control_plane() -> Iterator[ControlPlane]:
    """An API server serving ``scheduling.k8s.io/v1alpha2`` with the workload gates on (started
    once, for the tests that need Workloads and PodGroups; skipped without binaries)."""
    from kschedfw.testing.controlplane import find_assets, missing_assets_reason
    assets = find_assets()
    if assets is None:
        pytest.skip(missing_assets_reason())
    with ControlPlane(assets, extra_apiserver_flags=[
            f"--feature-gates={WORKLOAD_GATES}", "--runtime-config=scheduling.k8s.io/v1alpha2=true"]) as cp:
        yield cp
