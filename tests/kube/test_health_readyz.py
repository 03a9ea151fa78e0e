"""/readyz tells the truth against a real API server: it fails while the server does not answer
(beyond the runner's threshold) and passes again once it is back; on the secure port, the probes
need no review, so they answer while the API server is down."""

from __future__ import annotations

from kschedfw.serving.options import start_servers
from kschedfw.testing.controlplane import ControlPlane, free_port
from tests.kube.helpers import wait_for
from tests.kube.test_deploy import https_get as http_get, serving_flags
from tests.kube.test_run import start_runner


def test_readyz_fails_while_the_api_server_is_down_and_recovers(control_plane: ControlPlane, tmp_path, namespace):
    runner, thread = start_runner(control_plane, tmp_path, f"ready-{namespace}")
    runner.unreachable_not_ready_after = 1.0  # the default (10 s) would only make the test slower
    flags = serving_flags(["--bind-address", "127.0.0.1", "--secure-port", str(free_port())])
    [health] = start_servers(flags, runner.client.connection, runner.health_endpoints(), runner.metrics_text,
                             lambda _: None)
    url = health.url
    try:
        wait_for(lambda: http_get(url + "/readyz") == (200, "ok"), what="ready")
        control_plane.stop_apiserver()
        try:
            status, body = wait_for(lambda: (r := http_get(url + "/readyz"))[0] == 500 and r, timeout=20,
                                    what="/readyz failing")
            assert "[-]apiserver-reachable failed: reason withheld\n" in body
            assert "[+]informer-sync ok\n" in body and body.endswith("readyz check failed\n")
            assert http_get(url + "/healthz") == (200, "ok")  # liveness: a restart would not help
        finally:
            control_plane.start_apiserver()
        wait_for(lambda: http_get(url + "/readyz") == (200, "ok"), timeout=20, what="/readyz ok again")
    finally:
        health.stop()
        runner.stop()
        thread.join(10)
        runner.close()
