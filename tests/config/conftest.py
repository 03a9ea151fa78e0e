import pytest

from .fakes import FakeCatalog


@pytest.fixture
def catalog() -> FakeCatalog:
    return FakeCatalog()


@pytest.fixture
def full_catalog() -> FakeCatalog:
    return FakeCatalog().with_out_of_tree()
