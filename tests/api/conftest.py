from pathlib import Path

import pytest

FIXTURES = Path(__file__).parent / "fixtures"


@pytest.fixture
def fixtures() -> Path:
    return FIXTURES


@pytest.fixture(scope="session")
def snapshot_objects():
    from kschedfw.api import load_manifests
    return load_manifests(FIXTURES / "snapshot-kubectl.yaml")
