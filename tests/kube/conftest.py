"""One throwaway etcd + kube-apiserver per test session (skipped when no binaries are found)."""

from __future__ import annotations

import itertools
from typing import Iterator

import pytest

from kschedfw.testing.controlplane import ControlPlane, find_assets, missing_assets_reason

_names = itertools.count(1)


@pytest.fixture(scope="session")
def control_plane() -> Iterator[ControlPlane]:
    assets = find_assets()
    if assets is None:
        pytest.skip(missing_assets_reason())
    with ControlPlane(assets) as cp:
        yield cp


@pytest.fixture
def namespace(control_plane: ControlPlane) -> str:
    """A fresh namespace per test, so tests sharing the server do not see each other's pods."""
    name = f"t{next(_names)}"
    control_plane.api("POST", "/api/v1/namespaces", {"metadata": {"name": name}})
    return name
