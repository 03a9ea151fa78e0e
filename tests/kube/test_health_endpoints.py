"""HealthServer answers as k8s.io/apiserver's healthz handler: ``ok``, ``[+]``/``[-]`` lines
(reasons withheld), ``?verbose``, ``?exclude=``, one check by its path, /metrics."""

from __future__ import annotations

import pytest

from kschedfw.cluster.kube.health import HealthServer, ping
from tests.kube.test_cli_run import http_get


@pytest.fixture
def server():
    state = {"ready": False}
    endpoints = {"healthz": {"ping": ping},
                 "readyz": {"ping": ping, "informer-sync": lambda: None if state["ready"] else "not synced: pods"}}
    health = HealthServer(("127.0.0.1", 0), endpoints, lambda: "up 1\n")
    health.start()
    yield f"http://127.0.0.1:{health.address[1]}", state
    health.stop()


def test_a_failing_check_is_named_with_its_reason_withheld(server):
    url, state = server
    assert http_get(url + "/readyz") == (500, "[+]ping ok\n[-]informer-sync failed: reason withheld\n"
                                              "readyz check failed\n")
    assert http_get(url + "/readyz/informer-sync") == (500, "internal server error: not synced: pods\n")
    assert http_get(url + "/readyz?exclude=informer-sync") == (200, "ok")
    assert http_get(url + "/healthz") == (200, "ok")
    state["ready"] = True
    assert http_get(url + "/readyz") == (200, "ok")
    assert http_get(url + "/readyz?verbose") == (200, "[+]ping ok\n[+]informer-sync ok\nreadyz check passed\n")
    assert http_get(url + "/readyz/informer-sync") == (200, "ok")


def test_unknown_paths_and_metrics(server):
    url, _ = server
    assert http_get(url + "/metrics") == (200, "up 1\n")
    assert http_get(url + "/livez")[0] == 404  # not configured here
    assert http_get(url + "/readyz/nope")[0] == 404
    assert http_get(url + "/healthz?verbose&exclude=nope") == (
        200, '[+]ping ok\nwarn: some health checks cannot be excluded: no matches for "nope"\nhealthz check passed\n')
