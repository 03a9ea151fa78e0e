"""Start-up checks (``kschedfw run``): a connection dropped once (a flaky proxy) is tried again;
a server that never answers is reported unreachable, with the cause."""

from __future__ import annotations

import pytest

from kschedfw.cluster.kube import preflight as preflight_module
from kschedfw.cluster.kube.client import TransportError
from kschedfw.cluster.kube.preflight import Access, PreflightError, preflight


class FlakyClient:
    """Answers every SelfSubjectReview/AccessReview as allowed, after ``drops`` dropped connections."""

    class connection:
        server = "https://127.0.0.1:6443"

    def __init__(self, drops: int) -> None:
        self.drops = drops
        self.requests = 0

    def request(self, method, path, body=None, **kwargs):
        self.requests += 1
        if self.drops:
            self.drops -= 1
            raise TransportError(method, path, ConnectionResetError("EOF occurred in violation of protocol"),
                                 maybe_sent=True)
        return {"status": {"allowed": True, "userInfo": {"username": "system:kube-scheduler"}}}


@pytest.fixture(autouse=True)
def no_waiting(monkeypatch):
    monkeypatch.setattr(preflight_module, "UNREACHABLE_RETRY_DELAYS", (0.0, 0.0, 0.0))


def test_one_dropped_connection_is_tried_again():
    client = FlakyClient(drops=1)
    preflight(client, "kubeconfig", [Access("list", "pods")])  # no PreflightError
    assert client.requests == 3  # the dropped whoami, then whoami and the access review


def test_a_server_that_never_answers_is_unreachable():
    client = FlakyClient(drops=100)
    with pytest.raises(PreflightError, match="cannot reach the API server at https://127.0.0.1:6443: "
                                             "EOF occurred in violation of protocol"):
        preflight(client, "kubeconfig", [Access("list", "pods")])
    assert client.requests == 4  # the first try and three more
