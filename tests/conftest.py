"""Fixtures every test folder shares: one throwaway etcd + kube-apiserver per test session, for
every real-server test (skipped, with the reason, when no binaries are found)."""

from __future__ import annotations

from typing import Iterator

import pytest

from kschedfw.testing.controlplane import ControlPlane, find_assets, missing_assets_reason


@pytest.fixture(scope="session")
def control_plane() -> Iterator[ControlPlane]:
    assets = find_assets()
    if assets is None:
        pytest.skip(missing_assets_reason())
    with ControlPlane(assets) as cp:
        yield cp
