"""``world``: each contract test runs once on the embedded cluster and once on a real API server
(one control plane for the folder; the real case is skipped, with the reason, without binaries)."""

from __future__ import annotations

from typing import Iterator

import pytest

from kschedfw.testing.controlplane import ControlPlane, find_assets, missing_assets_reason
from tests.contract.worlds import EmbeddedWorld, KubeWorld


@pytest.fixture(scope="session")
def control_plane() -> Iterator[ControlPlane]:
    assets = find_assets()
    if assets is None:
        pytest.skip(missing_assets_reason())
    with ControlPlane(assets) as cp:
        yield cp


@pytest.fixture(params=["embedded", "kube"])
def world(request: pytest.FixtureRequest) -> Iterator[EmbeddedWorld | KubeWorld]:
    made = EmbeddedWorld() if request.param == "embedded" else KubeWorld(request.getfixturevalue("control_plane"))
    yield made
    made.close()
