"""Fixtures for scheduler tests: the kit's builders with this suite's defaults (8Gi nodes,
pods requesting 100m of cpu)."""

from __future__ import annotations

import functools

import pytest

from kschedfw.testing import make_node, make_pod


@pytest.fixture
def node():
    return functools.partial(make_node, memory="8Gi")


@pytest.fixture
def pod():
    return functools.partial(make_pod, cpu="100m")
