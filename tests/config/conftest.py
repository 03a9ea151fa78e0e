import pytest

from .fakes import FakeRegistry


@pytest.fixture
def registry() -> FakeRegistry:
    return FakeRegistry()


@pytest.fixture
def full_registry() -> FakeRegistry:
    return FakeRegistry().with_out_of_tree()
