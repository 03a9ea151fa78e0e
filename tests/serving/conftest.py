"""Fixtures of the serving tests."""

from __future__ import annotations

import pytest

from kschedfw.serving.server import Server
from kschedfw.serving.tls import ServingTLS
from tests.serving.test_tls import echo_user


@pytest.fixture
def serve():
    """Start servers answering with the caller's user (``serve(tls)``); stopped after the test."""
    started = []

    def start(tls: ServingTLS) -> Server:
        server = Server(("127.0.0.1", 0), echo_user, tls)
        server.start()
        started.append(server)
        return server
    yield start
    for server in started:
        server.stop()
