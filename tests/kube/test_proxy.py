"""HTTP proxies as client-go uses them: the kubeconfig cluster's ``proxy-url`` for every request,
else HTTPS_PROXY / HTTP_PROXY unless NO_PROXY names the host (loopback never proxied from the
environment); through a loopback CONNECT proxy to the real API server, and the rules alone."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kschedfw.cluster.kube.client import KubeClient, TransportError
from kschedfw.cluster.kube.credentials import CredentialsError, load_connection
from kschedfw.cluster.kube.proxy import Proxy, bypassed_by_no_proxy, choose_proxy, parse_proxy_url
from kschedfw.cluster.kube.transport import NotConnected, Transport
from tests.kube.faults.connectproxy import ConnectProxy
from kschedfw.testing.controlplane import ControlPlane

PROXY_VARIABLES = ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "NO_PROXY", "no_proxy")


@pytest.fixture(autouse=True)
def no_proxy_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in PROXY_VARIABLES:
        monkeypatch.delenv(name, raising=False)


def kubeconfig(tmp_path: Path, cp: ControlPlane, *, server: str | None = None, proxy_url: str | None = None) -> Path:
    """The control plane's admin kubeconfig, for another server name (then without TLS
    verification: the serving certificate names only 127.0.0.1 and localhost) or a proxy-url."""
    config = json.loads(cp.kubeconfig.read_text())
    cluster = config["clusters"][0]["cluster"]
    if server is not None:
        cluster["server"] = server
        del cluster["certificate-authority"]
        cluster["insecure-skip-tls-verify"] = True
    if proxy_url is not None:
        cluster["proxy-url"] = proxy_url
    path = tmp_path / f"kubeconfig-{len(list(tmp_path.iterdir()))}"
    path.write_text(json.dumps(config))
    return path


def port_of(cp: ControlPlane) -> int:
    return int(cp.url.rsplit(":", 1)[1])


def test_kubeconfig_proxy_url_carries_requests_and_watches(control_plane: ControlPlane, tmp_path: Path) -> None:
    with ConnectProxy() as proxy:
        client = KubeClient(load_connection(kubeconfig(tmp_path, control_plane, proxy_url=proxy.url)), qps=0, burst=1)
        try:
            assert client.get("/api/v1/namespaces/default")["metadata"]["name"] == "default"
            events = client.watch("/api/v1/namespaces", {"fieldSelector": "metadata.name=default"},
                                  inactivity_timeout=10)
            assert next(events)["object"]["metadata"]["name"] == "default"
            events.close()
        finally:
            client.close()
        # a loopback server too: proxy-url applies to every host, CA verification through the tunnel
        assert proxy.requests == [f"127.0.0.1:{port_of(control_plane)}"] * 2


def test_https_proxy_from_the_environment_reaches_a_name_only_the_proxy_resolves(
        control_plane: ControlPlane, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    authority = f"apiserver.test:{port_of(control_plane)}"
    with ConnectProxy(hosts={"apiserver.test": "127.0.0.1"}) as proxy:
        monkeypatch.setenv("HTTPS_PROXY", proxy.url)
        monkeypatch.setenv("NO_PROXY", "example.com,10.0.0.0/8")
        client = KubeClient(load_connection(kubeconfig(tmp_path, control_plane, server=f"https://{authority}")),
                            qps=0, burst=1)
        try:
            assert client.get("/api/v1/namespaces/default")["metadata"]["name"] == "default"
        finally:
            client.close()
        assert proxy.requests == [authority]


def test_no_proxy_host_is_reached_directly(control_plane: ControlPlane, tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    with ConnectProxy(hosts={"apiserver.test": "127.0.0.1"}) as proxy:
        monkeypatch.setenv("https_proxy", proxy.url)
        monkeypatch.setenv("no_proxy", ".test")
        server = f"https://apiserver.test:{port_of(control_plane)}"
        connection = load_connection(kubeconfig(tmp_path, control_plane, server=server))
        assert connection.proxy is None
        client = KubeClient(connection, qps=0, burst=1, timeout=5)
        try:
            with pytest.raises(TransportError) as failure:  # only the proxy knows the name
                client.get("/api/v1/namespaces/default")
        finally:
            client.close()
        assert isinstance(failure.value.__cause__, NotConnected) and not failure.value.maybe_sent
        assert proxy.requests == []


def test_environment_proxy_skips_a_loopback_server_and_proxy_url_wins(
        control_plane: ControlPlane, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with ConnectProxy() as from_env, ConnectProxy() as from_kubeconfig:
        monkeypatch.setenv("HTTPS_PROXY", from_env.url)
        for path, expected in ((kubeconfig(tmp_path, control_plane), []),
                               (kubeconfig(tmp_path, control_plane, proxy_url=from_kubeconfig.url),
                                [f"127.0.0.1:{port_of(control_plane)}"])):
            client = KubeClient(load_connection(path), qps=0, burst=1)
            try:
                client.get("/api/v1/namespaces/default")
            finally:
                client.close()
            assert from_kubeconfig.requests == expected
        assert from_env.requests == []


def test_a_refused_tunnel_is_a_connection_failure(control_plane: ControlPlane, tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    with ConnectProxy() as proxy:  # it tunnels to loopback addresses only
        monkeypatch.setenv("HTTPS_PROXY", proxy.url)
        server = f"https://apiserver.test:{port_of(control_plane)}"
        client = KubeClient(load_connection(kubeconfig(tmp_path, control_plane, server=server)), qps=0, burst=1)
        try:
            with pytest.raises(TransportError) as failure:
                client.get("/api/v1/namespaces/default")
        finally:
            client.close()
        assert "403" in str(failure.value) and not failure.value.maybe_sent
        assert proxy.requests == [f"apiserver.test:{port_of(control_plane)}"]


def test_unsupported_proxy_scheme_is_refused_at_load(control_plane: ControlPlane, tmp_path: Path) -> None:
    with pytest.raises(CredentialsError, match="only http:// proxies"):
        load_connection(kubeconfig(tmp_path, control_plane, proxy_url="socks5://127.0.0.1:1080"))


def test_plain_http_through_a_proxy_sends_absolute_form_with_its_credentials() -> None:
    import socket
    import threading

    listener = socket.create_server(("127.0.0.1", 0))
    seen: list[bytes] = []

    def answer_once() -> None:
        conn, _ = listener.accept()
        with conn:
            data = b""
            while b"\r\n\r\n" not in data:
                data += conn.recv(4096)
            seen.append(data)
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}")

    thread = threading.Thread(target=answer_once, daemon=True)
    thread.start()
    proxy = parse_proxy_url(f"http://user:p%40ss@127.0.0.1:{listener.getsockname()[1]}")
    transport = Transport("apiserver.test", 8080, ssl_context=None, https=False, timeout=5, proxy=proxy)
    try:
        assert transport.request("GET", "/api/v1/nodes", None, {}).body == b"{}"
    finally:
        transport.close()
        thread.join(5)
        listener.close()
    head = seen[0].decode()
    assert head.startswith("GET http://apiserver.test:8080/api/v1/nodes HTTP/1.1\r\n")
    assert "Proxy-Authorization: Basic dXNlcjpwQHNz\r\n" in head  # user:p@ss


# ------------------------------------------------------------------ the rules alone
@pytest.mark.parametrize("no_proxy, host, port, bypassed", [
    ("*", "apiserver.example.com", 443, True),
    ("example.com", "example.com", 443, True),
    ("example.com", "apiserver.example.com", 443, True),
    ("example.com", "notexample.com", 443, False),
    (".example.com", "example.com", 443, False),
    (".example.com", "apiserver.example.com", 443, True),
    ("*.example.com", "apiserver.example.com", 443, True),
    ("example.com:6443", "example.com", 6443, True),
    ("example.com:6443", "example.com", 443, False),
    ("10.0.0.0/8, 192.168.1.1", "10.96.0.1", 443, True),
    ("10.0.0.0/8 192.168.1.1", "192.168.1.1", 443, True),
    ("10.0.0.0/8,192.168.1.1", "192.168.1.2", 443, False),
    ("[fd00::1]:443", "fd00::1", 443, True),
    ("", "example.com", 443, False),
])
def test_no_proxy_matching(no_proxy: str, host: str, port: int, bypassed: bool) -> None:
    assert bypassed_by_no_proxy(host, port, no_proxy) is bypassed


def test_choose_proxy_as_client_go() -> None:
    env = {"HTTPS_PROXY": "proxy.corp:3128", "http_proxy": "http://plain.corp:8080", "NO_PROXY": "internal.corp"}
    assert choose_proxy("https://k8s.example.com:6443", None, env) == Proxy("proxy.corp", 3128)
    assert choose_proxy("http://k8s.example.com", None, env) == Proxy("plain.corp", 8080)
    assert choose_proxy("https://api.internal.corp", None, env) is None
    assert choose_proxy("https://localhost:6443", None, env) is None
    assert choose_proxy("https://[::1]:6443", None, env) is None
    assert choose_proxy("https://api.internal.corp", "http://kc.corp:1", env) == Proxy("kc.corp", 1)
    assert choose_proxy("https://k8s.example.com", None, {}) is None
    with pytest.raises(ValueError, match="HTTPS_PROXY in the environment: .* only http:// proxies"):
        choose_proxy("https://k8s.example.com", None, {"HTTPS_PROXY": "https://tls.corp"})


def test_unsupported_environment_proxy_is_refused_at_load_naming_the_variable(
        control_plane: ControlPlane, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HTTPS_PROXY", "socks5://127.0.0.1:1080")
    server = f"https://apiserver.test:{port_of(control_plane)}"
    with pytest.raises(CredentialsError, match="^HTTPS_PROXY in the environment: .*only http:// proxies"):
        load_connection(kubeconfig(tmp_path, control_plane, server=server))


def test_kschedfw_run_schedules_through_the_proxy(control_plane: ControlPlane, namespace: str,
                                                  tmp_path: Path) -> None:
    import signal

    from tests.kube.helpers import pod_manifest, wait_for
    from tests.kube.test_cli_run import kschedfw

    node, scheduler_name = f"{namespace}-proxied", f"kschedfw-{namespace}"
    control_plane.create_ready_node(node, cpu="2", memory="4Gi")
    config_file = tmp_path / "config.yaml"
    config_file.write_text("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
                           f"leaderElection:\n  leaderElect: false\nprofiles:\n- schedulerName: {scheduler_name}\n")
    with ConnectProxy() as proxy:
        proc = kschedfw("run", "--config", str(config_file), "--secure-port", "0", "--health-address", "127.0.0.1:0", "--kubeconfig",
                        str(kubeconfig(tmp_path, control_plane, proxy_url=proxy.url)))
        try:
            control_plane.api("POST", f"/api/v1/namespaces/{namespace}/pods",
                              pod_manifest("p", namespace, scheduler=scheduler_name,
                                           nodeSelector={"kubernetes.io/hostname": node}))
            bound = wait_for(lambda: control_plane.api("GET", f"/api/v1/namespaces/{namespace}/pods/p")
                             ["spec"].get("nodeName"), timeout=60, what="the pod bound by `kschedfw run`")
            proc.send_signal(signal.SIGTERM)
            _, err = proc.communicate(timeout=30)
            assert proc.returncode == 0, err
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.communicate()
            control_plane.api("DELETE", f"/api/v1/nodes/{node}")
    assert bound == node
    # the informers' watches, the binder, the event writer: every connection went through the tunnel
    assert len(proxy.requests) >= 3 and set(proxy.requests) == {f"127.0.0.1:{port_of(control_plane)}"}
