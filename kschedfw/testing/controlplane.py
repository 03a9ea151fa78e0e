"""A throwaway Kubernetes control plane (etcd + kube-apiserver on loopback) for tests.

The counterpart of controller-runtime's envtest: real upstream binaries, found through
``KSCHEDFW_KUBE_ASSETS`` (a folder holding ``etcd``, ``kube-apiserver`` and, for differential
tests, ``kube-scheduler``) or else ``KUBEBUILDER_ASSETS``, are started in a temporary folder with
a self-signed serving certificate, a static admin token and RBAC, and stopped by their pid.
Plugin authors can use it in their own tests::

    from kschedfw.testing.controlplane import ControlPlane, find_assets
    assets = find_assets()            # None: skip the test
    with ControlPlane(assets) as cp:
        cp.api("POST", "/api/v1/namespaces", {"metadata": {"name": "t"}})
        ...  # cp.kubeconfig is an admin kubeconfig file

There is no kubelet and no controller-manager: see :meth:`ControlPlane.create_ready_node` and
:meth:`ControlPlane.delete_pods`.
:meth:`ControlPlane.start_kube_scheduler` adds the shipped kube-scheduler; ``kschedfw
controlplane`` starts all of it from the command line, for a manual try.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import secrets
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

__all__ = ["ASSET_VARIABLES", "ControlPlane", "ControlPlaneError", "find_assets", "missing_assets_reason",
           "APIError"]

ASSET_VARIABLES = ("KSCHEDFW_KUBE_ASSETS", "KUBEBUILDER_ASSETS")
_REQUIRED = ("etcd", "kube-apiserver")


class ControlPlaneError(RuntimeError):
    """The control plane could not be started (the message includes the end of its log)."""


class APIError(RuntimeError):
    """A non-2xx answer to :meth:`ControlPlane.api`; ``status`` and ``body`` are the server's."""

    def __init__(self, status: int, body: Any) -> None:
        super().__init__(f"HTTP {status}: {body}")
        self.status = status
        self.body = body


def find_assets() -> Path | None:
    """The first folder named by ``KSCHEDFW_KUBE_ASSETS`` / ``KUBEBUILDER_ASSETS`` that holds
    executable ``etcd`` and ``kube-apiserver``; None when there is none."""
    for var in ASSET_VARIABLES:
        folder = os.environ.get(var)
        if folder and all(os.access(Path(folder, name), os.X_OK) for name in _REQUIRED):
            return Path(folder)
    return None


def missing_assets_reason() -> str:
    """Why :func:`find_assets` found nothing, phrased for ``pytest.skip``."""
    for var in ASSET_VARIABLES:
        folder = os.environ.get(var)
        if folder:
            missing = [n for n in _REQUIRED if not os.access(Path(folder, n), os.X_OK)]
            return f"{var}={folder} lacks executable {', '.join(missing)}"
    return (f"no Kubernetes binaries: set {ASSET_VARIABLES[0]} (or {ASSET_VARIABLES[1]}) to a folder "
            f"holding etcd and kube-apiserver")


def _die_with_parent() -> None:
    """In the child before exec (Linux): get SIGKILL when the test process dies, so a killed
    test run leaves no server behind (on SIGTERM, an API server whose etcd is gone lingers)."""
    try:
        import ctypes
        import signal
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, int(signal.SIGKILL))  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def _popen(args: list[str], log_path: Path) -> "subprocess.Popen[bytes]":
    # a process group of its own: a terminal's Ctrl-C reaches only the parent, which stops the
    # servers in order (kube-apiserver first: one whose etcd went first lingers)
    with open(log_path, "ab") as log:
        return subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                preexec_fn=_die_with_parent if sys.platform.startswith("linux") else None,
                                process_group=0)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]  # (host, port) for AF_INET
        return port


class ControlPlane:
    """One loopback etcd + kube-apiserver in a temporary folder; ``start()`` waits for /readyz."""

    def __init__(self, assets: Path | str, *, workdir: Path | str | None = None,
                 extra_apiserver_flags: list[str] | None = None, ready_timeout: float = 90.0) -> None:
        self.assets = Path(assets)
        self._own_workdir = workdir is None
        self.workdir = Path(workdir) if workdir else Path(tempfile.mkdtemp(prefix="kschedfw-cp-"))
        self.extra_apiserver_flags = list(extra_apiserver_flags or [])
        self.ready_timeout = ready_timeout
        self.token = secrets.token_hex(16)
        self.etcd_port = free_port()
        self.port = free_port()
        self.url = f"https://127.0.0.1:{self.port}"
        self.kubeconfig = self.workdir / "admin.kubeconfig"
        self.ca_file = self.workdir / "ca.crt"
        self._etcd: subprocess.Popen[bytes] | None = None
        self._apiserver: subprocess.Popen[bytes] | None = None
        self._scheduler: subprocess.Popen[bytes] | None = None
        self.scheduler_port: int | None = None
        self._ssl = None  # type: ssl.SSLContext | None

    # ------------------------------------------------------------------ lifecycle
    def __enter__(self) -> "ControlPlane":
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> None:
        try:
            self._write_credentials()
            self._start_etcd()
            self.start_apiserver()
        except BaseException:
            self.stop()
            raise

    def stop(self) -> None:
        """Stop what was started (by pid) and remove the temporary folder."""
        self.stop_kube_scheduler()
        self.stop_apiserver()
        _terminate(self._etcd)
        self._etcd = None
        if self._own_workdir:
            shutil.rmtree(self.workdir, ignore_errors=True)

    def start_apiserver(self) -> None:
        if self._apiserver is not None:
            return
        d = self.workdir
        args = [
            str(self.assets / "kube-apiserver"),
            "--bind-address=127.0.0.1", f"--secure-port={self.port}",
            f"--etcd-servers=http://127.0.0.1:{self.etcd_port}",
            f"--tls-cert-file={d / 'serving.crt'}", f"--tls-private-key-file={d / 'serving.key'}",
            f"--client-ca-file={self.ca_file}", f"--token-auth-file={d / 'tokens.csv'}",
            "--authorization-mode=RBAC",
            "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
            f"--service-account-key-file={d / 'sa.pub'}", f"--service-account-signing-key-file={d / 'sa.key'}",
            "--service-cluster-ip-range=10.0.0.0/24", "--disable-admission-plugins=ServiceAccount",
            *self.extra_apiserver_flags,
        ]
        self._apiserver = _popen(args, d / "kube-apiserver.log")
        self._wait_ready(self._apiserver, "kube-apiserver", "/readyz")

    def stop_apiserver(self) -> None:
        _terminate(self._apiserver)
        self._apiserver = None

    def start_kube_scheduler(self, extra_flags: list[str] | None = None) -> None:
        """Start the shipped ``kube-scheduler`` against this server (profile ``default-scheduler``,
        no leader election) and wait for its /readyz, which waits for its informers."""
        if self._scheduler is not None:
            return
        binary = self.assets / "kube-scheduler"
        if not os.access(binary, os.X_OK):
            raise ControlPlaneError(f"no executable kube-scheduler in {self.assets}")
        config = self.workdir / "kube-scheduler.yaml"
        config.write_text(json.dumps({
            "apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
            "clientConnection": {"kubeconfig": str(self.kubeconfig)}, "leaderElection": {"leaderElect": False}}))
        self.scheduler_port = free_port()
        self._scheduler = _popen([str(binary), f"--config={config}", "--bind-address=127.0.0.1",
                                  f"--secure-port={self.scheduler_port}", *(extra_flags or [])],
                                 self.workdir / "kube-scheduler.log")
        # its serving certificate is self-signed: readiness is all that is read from it
        self._wait_ready(self._scheduler, "kube-scheduler", "/readyz", url=f"https://127.0.0.1:{self.scheduler_port}")

    def stop_kube_scheduler(self) -> None:
        _terminate(self._scheduler)
        self._scheduler = None

    def check_running(self) -> None:
        """Raise :class:`ControlPlaneError` (with the end of its log) when a process this
        control plane started has exited."""
        for name, proc in (("etcd", self._etcd), ("kube-apiserver", self._apiserver),
                           ("kube-scheduler", self._scheduler)):
            if proc is not None and proc.poll() is not None:
                raise ControlPlaneError(f"{name} exited with code {proc.returncode}:\n{self._log_tail(name)}")

    def restart_apiserver(self) -> None:
        """Stop kube-apiserver and start it again on the same port (etcd keeps the data)."""
        self.stop_apiserver()
        self.start_apiserver()

    # ------------------------------------------------------------------ faults (the fault harness in tests)
    def kill_apiserver(self) -> None:
        """SIGKILL kube-apiserver, as a crash would (no graceful shutdown); start it again with
        :meth:`start_apiserver` on the same port."""
        proc, self._apiserver = self._apiserver, None
        if proc is not None and proc.poll() is None:
            proc.kill()
            proc.wait(timeout=15)

    def pause_apiserver(self) -> None:
        """SIGSTOP kube-apiserver: its sockets stay open and answer nothing (a hung server)."""
        if self._apiserver is not None and self._apiserver.poll() is None:
            os.kill(self._apiserver.pid, signal.SIGSTOP)

    def resume_apiserver(self) -> None:
        """SIGCONT after :meth:`pause_apiserver` (harmless when it runs)."""
        if self._apiserver is not None and self._apiserver.poll() is None:
            os.kill(self._apiserver.pid, signal.SIGCONT)

    def stop_etcd(self) -> None:
        """Stop etcd (SIGTERM, by pid); its data folder stays for :meth:`start_etcd`."""
        _terminate(self._etcd)
        self._etcd = None

    def start_etcd(self) -> None:
        """Start etcd again on the same port and data folder."""
        if self._etcd is None:
            self._start_etcd()

    # ------------------------------------------------------------------ plumbing
    def _write_credentials(self) -> None:
        try:
            import cryptography  # noqa: F401 - the certificates are made with it
        except ImportError:
            raise ModuleNotFoundError(
                "ControlPlane makes its certificates with the cryptography package, which is not "
                "installed: pip install '.[testing]' in the kschedfw clone (or pip install 'cryptography>=42')",
                name="cryptography") from None
        from kschedfw.testing._certs import write_ca_and_serving_cert, write_rsa_key_pair
        d = self.workdir
        d.mkdir(parents=True, exist_ok=True)
        write_ca_and_serving_cert(self.ca_file, d / "serving.crt", d / "serving.key")
        write_rsa_key_pair(d / "sa.key", d / "sa.pub")
        (d / "tokens.csv").write_text(f'{self.token},admin,admin,"system:masters"\n')
        self.kubeconfig.write_text(self.kubeconfig_text(self.token, "admin"))
        os.chmod(self.kubeconfig, 0o600)

    def kubeconfig_text(self, token: str, user: str) -> str:
        """A kubeconfig for this server with a bearer token (JSON is valid YAML)."""
        return json.dumps({
            "apiVersion": "v1", "kind": "Config", "current-context": user,
            "clusters": [{"name": "cp", "cluster": {"server": self.url,
                                                     "certificate-authority": str(self.ca_file)}}],
            "users": [{"name": user, "user": {"token": token}}],
            "contexts": [{"name": user, "context": {"cluster": "cp", "user": user}}],
        }, indent=1)

    def _start_etcd(self) -> None:
        d = self.workdir
        args = [str(self.assets / "etcd"), "--data-dir", str(d / "etcd"),
                "--listen-client-urls", f"http://127.0.0.1:{self.etcd_port}",
                "--advertise-client-urls", f"http://127.0.0.1:{self.etcd_port}",
                "--listen-peer-urls", "http://127.0.0.1:0",
                "--initial-advertise-peer-urls", "http://127.0.0.1:2380",
                "--initial-cluster", "default=http://127.0.0.1:2380", "--log-level", "warn"]
        self._etcd = _popen(args, d / "etcd.log")
        self._wait_ready(self._etcd, "etcd", "/health", url=f"http://127.0.0.1:{self.etcd_port}")

    def _wait_ready(self, proc: subprocess.Popen[bytes], name: str, path: str, url: str | None = None) -> None:
        deadline = time.monotonic() + self.ready_timeout
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                raise ControlPlaneError(f"{name} exited with code {proc.returncode}:\n{self._log_tail(name)}")
            try:
                if url:  # etcd (plain HTTP) or kube-scheduler (its self-signed certificate)
                    context = _unverified() if url.startswith("https:") else None
                    with urllib.request.urlopen(url + path, timeout=2, context=context) as r:
                        if r.status == 200:
                            return
                elif self.api("GET", path, raw=True) == "ok":
                    return
            except (OSError, APIError):
                pass
            time.sleep(0.2)
        raise ControlPlaneError(f"{name} not ready after {self.ready_timeout:.0f}s:\n{self._log_tail(name)}")

    def _log_tail(self, name: str, lines: int = 20) -> str:
        try:
            return "\n".join((self.workdir / f"{name}.log").read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no log)"

    # ------------------------------------------------------------------ an admin client for fixtures
    def ssl_context(self) -> ssl.SSLContext:
        if self._ssl is None:
            self._ssl = ssl.create_default_context(cafile=str(self.ca_file))
        return self._ssl

    def api(self, method: str, path: str, body: Any = None, *, content_type: str = "application/json",
            raw: bool = False, timeout: float = 10.0) -> Any:
        """One admin request (stdlib only, for test fixtures); the decoded JSON answer, the text
        when ``raw``; :class:`APIError` on a non-2xx status."""
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.url + path, data=data, method=method, headers={
            "Authorization": f"Bearer {self.token}", "Accept": "application/json",
            **({"Content-Type": content_type} if data is not None else {})})
        try:
            with urllib.request.urlopen(req, context=self.ssl_context(), timeout=timeout) as r:
                text = r.read().decode()
        except urllib.error.HTTPError as exc:
            text = exc.read().decode(errors="replace")
            try:
                payload: Any = json.loads(text)
            except ValueError:
                payload = text
            raise APIError(exc.code, payload) from None
        if raw:
            return text
        return json.loads(text) if text else None

    def delete_pods(self, namespace: str) -> None:
        """Delete every pod of ``namespace`` at once (grace 0). There is no controller manager here
        to empty a deleted namespace, and a pending pod left behind is one more pod every later
        kube-scheduler start must try first."""
        self.api("DELETE", f"/api/v1/namespaces/{namespace}/pods", {"gracePeriodSeconds": 0})

    def create_ready_node(self, name: str, *, cpu: str = "4", memory: str = "8Gi", pods: str = "110",
                          labels: dict[str, str] | None = None, taints: list[dict[str, str]] | None = None,
                          extra_allocatable: dict[str, str] | None = None) -> dict[str, Any]:
        """Create a Node as a kubelet would have it: Ready, with capacity, no not-ready taint
        (there is no kubelet here, and the server keeps the status sent with a Node POST)."""
        allocatable = {"cpu": cpu, "memory": memory, "pods": pods, **(extra_allocatable or {})}
        now = _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
        node = {
            "apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, **(labels or {})}},
            "spec": {"taints": list(taints or [])},
            "status": {"capacity": allocatable, "allocatable": allocatable,
                       "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady",
                                       "message": "ready", "lastHeartbeatTime": now, "lastTransitionTime": now}]},
        }
        created: dict[str, Any] = self.api("POST", "/api/v1/nodes", node)
        # TaintNodesByCondition may add the not-ready taint at create; drop it again.
        taints_now = (created.get("spec") or {}).get("taints") or []
        kept = [t for t in taints_now if not t.get("key", "").startswith("node.kubernetes.io/not-ready")]
        if len(kept) != len(taints_now):
            created = self.api("PATCH", f"/api/v1/nodes/{name}", {"spec": {"taints": kept or None}},
                               content_type="application/merge-patch+json")
        return created


def _unverified() -> ssl.SSLContext:
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    return context


def _terminate(proc: subprocess.Popen[bytes] | None) -> None:
    if proc is None or proc.poll() is not None:
        return
    proc.terminate()
    try:
        proc.wait(timeout=15)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=15)
