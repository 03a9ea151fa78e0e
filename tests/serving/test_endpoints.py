"""The endpoints answer as k8s.io/apiserver's healthz handler (``ok``, ``[+]``/``[-]`` lines with
reasons withheld, ``?verbose``, ``?exclude=``, one check by its path) and /metrics; the plain
server serves them without any authentication, only where asked."""

from __future__ import annotations

import argparse
import urllib.request

import pytest

from kschedfw.serving.endpoints import Endpoints, Reply
from kschedfw.serving.flags import add_arguments
from kschedfw.serving.options import ServingError, start_servers


def test_checks_verbose_exclude_and_one_check():
    state = {"ready": False}
    endpoints = Endpoints({"healthz": {"ping": lambda: None},
                           "readyz": {"ping": lambda: None,
                                      "informer-sync": lambda: None if state["ready"] else "not synced: pods"}},
                          lambda: "up 1\n")
    assert endpoints.get("/readyz") == Reply(500, "[+]ping ok\n[-]informer-sync failed: reason withheld\n"
                                                  "readyz check failed\n")
    assert endpoints.get("/readyz/informer-sync") == Reply(500, "internal server error: not synced: pods\n")
    assert endpoints.get("/readyz?exclude=informer-sync") == Reply(200, "ok")
    assert endpoints.get("/readyz?exclude=nope").body.endswith(
        'warn: some health checks cannot be excluded: no matches for "nope"\nreadyz check failed\n')
    state["ready"] = True
    assert endpoints.get("/readyz?verbose") == Reply(200, "[+]ping ok\n[+]informer-sync ok\nreadyz check passed\n")
    assert endpoints.get("/metrics") == Reply(200, "up 1\n", "text/plain; version=0.0.4; charset=utf-8")
    assert endpoints.get("/livez").status == 404
    assert endpoints.get("/readyz/nope").status == 404


def parse(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    return parser.parse_args(list(argv))


def test_plain_endpoint_is_off_unless_asked_and_then_loopback_and_announced():
    said: list[str] = []
    assert start_servers(parse("--secure-port", "0"), None, {}, lambda: "", said.append) == []
    [server] = start_servers(parse("--secure-port", "0", "--health-address", "0"), None,
                             {"healthz": {"ping": lambda: None}}, lambda: "m 1\n", said.append)
    try:
        assert server.address[0] == "127.0.0.1"
        assert "WITHOUT authentication" in said[0] and said[0].endswith(f"health and metrics on {server.url}")
        with urllib.request.urlopen(server.url + "/healthz", timeout=5) as answer:
            assert answer.read() == b"ok"
    finally:
        server.stop()


def test_a_port_in_use_names_the_flag():
    [server] = start_servers(parse("--secure-port", "0", "--health-address", "0"), None, {}, lambda: "",
                             lambda _: None)
    try:
        with pytest.raises(ServingError, match=f"--health-address {server.address[1]}: cannot listen"):
            start_servers(parse("--secure-port", "0", "--health-address", str(server.address[1])), None, {},
                          lambda: "", lambda _: None)
    finally:
        server.stop()


@pytest.mark.parametrize("argv, message", [
    (("--secure-port", "70000"), "--secure-port 70000"),
    (("--secure-port", "0", "--health-address", "nowhere"), "--health-address"),
])
def test_bad_flags_are_serving_errors(argv, message):
    with pytest.raises(ServingError, match=message):
        start_servers(parse(*argv), None, {}, lambda: "", lambda _: None)
