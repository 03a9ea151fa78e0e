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
def namespace(control_plane: ControlPlane) -> str:
    """A fresh namespace per test, so tests sharing the server do not see each other's pods."""
    name = f"t{next(_names)}"
    control_plane.api("POST", "/api/v1/namespaces", {"metadata": {"name": name}})
    return name


@pytest.fixture
def backend(control_plane: ControlPlane) -> Iterator[KubeBackend]:
    """kschedfw's kube backend on the session's API server, stopped after the test."""
    client = KubeClient(load_connection(control_plane.kubeconfig))
    backend = KubeBackend(client)
    yield backend
    backend.stop()
    client.close()
