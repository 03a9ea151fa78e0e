"""``world``: each contract test runs once on the embedded cluster and once on a real API server
(the session's control plane from tests/conftest.py; the real case is skipped, with the reason,
without binaries)."""

from __future__ import annotations

from typing import Iterator

import pytest

from tests.contract.worlds import EmbeddedWorld, KubeWorld


@pytest.fixture(params=["embedded", "kube"])
def world(request: pytest.FixtureRequest) -> Iterator[EmbeddedWorld | KubeWorld]:
    made = EmbeddedWorld() if request.param == "embedded" else KubeWorld(request.getfixturevalue("control_plane"))
    yield made
    made.close()
