"""Fault injection against a real control plane, for kschedfw and kube-scheduler alike.

The same scenario (a backlog of pods, a fault mid-way, then recovery) runs through either
scheduler as a subprocess; the outcome is measured from the API server (final placements) and
its audit log (who bound what, and when), never from the scheduler's own account:

    with FaultRun("apiserver-kill", "kschedfw", assets, workdir, Sizes.from_env()) as run:
        outcome = run.play()
    outcome.violations()   # [] when every invariant held

Pieces usable alone: :class:`TcpProxy` (a loopback proxy that drops or delays), :class:`Process`
(a scheduler process with signals and a restart log), :func:`read_audit` and the invariant
checks (:func:`double_binds`, :func:`overcommitted_nodes`, :func:`writes_after`).
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import json
import os
import random
import select
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator

from kschedfw.testing.controlplane import APIError, ControlPlane, free_port

__all__ = ["AUDIT_POLICY", "SCENARIOS", "SCHEDULERS", "FaultRun", "Outcome", "Process", "Sizes", "TcpProxy",
           "double_binds", "overcommitted_nodes", "read_audit", "writes_after"]

SCHEDULER_NAME = "fault-scheduler"
NAMESPACE = "faults"
LEASE = "fault-scheduler"
SCHEDULERS = ("kube-scheduler", "kschedfw")
ROOT = Path(__file__).resolve().parents[3]

#: what the invariants need, at Metadata level: binds, status writes, events, lease writes
AUDIT_POLICY = json.dumps({
    "apiVersion": "audit.k8s.io/v1", "kind": "Policy", "omitStages": ["RequestReceived"],
    "rules": [
        {"level": "Metadata", "verbs": ["create"], "resources": [{"group": "", "resources": ["pods/binding", "bindings"]}]},
        {"level": "Metadata", "verbs": ["patch", "update"], "resources": [{"group": "", "resources": ["pods/status"]}]},
        {"level": "Metadata", "verbs": ["create", "patch", "update"],
         "resources": [{"group": "", "resources": ["events"]}, {"group": "events.k8s.io", "resources": ["events"]}]},
        {"level": "Metadata", "verbs": ["create", "update", "patch"],
         "resources": [{"group": "coordination.k8s.io", "resources": ["leases"]}]},
        {"level": "None"},
    ]})

#: a deposed leader's writes that matter: placements, pod status, events
SCHEDULING_WRITES = (("create", "pods", "binding"), ("create", "bindings", ""), ("patch", "pods", "status"),
                     ("update", "pods", "status"), ("create", "events", ""))


# ---------------------------------------------------------------------- sizes
@dataclasses.dataclass(frozen=True)
class Sizes:
    """Identical nodes and identical pods, so the capacity-limited expectation is exact."""
    nodes: int = 30
    pods: int = 270
    node_cpu_milli: int = 4000
    pod_cpu_milli: int = 500
    pause: float = 38.0  # seconds the API server stays stopped (kschedfw's client timeout is 30s)
    settle: float = 90.0  # seconds after the fault to wait for every fitting pod

    @classmethod
    def from_env(cls, **overrides: Any) -> "Sizes":
        """``FAULT_NODES``, ``FAULT_PODS``, ``FAULT_PAUSE``, ``FAULT_SETTLE`` override the defaults."""
        env = {"nodes": "FAULT_NODES", "pods": "FAULT_PODS", "pause": "FAULT_PAUSE", "settle": "FAULT_SETTLE"}
        values: dict[str, Any] = {}
        for field, var in env.items():
            if os.environ.get(var):
                values[field] = type(getattr(cls, field))(os.environ[var])
        return cls(**{**values, **overrides})

    @property
    def expected(self) -> int:
        return min(self.pods, self.nodes * (self.node_cpu_milli // self.pod_cpu_milli))


# ---------------------------------------------------------------------- a TCP proxy that misbehaves
class TcpProxy:
    """Raw TCP from 127.0.0.1:``port`` to ``target`` (TLS passes through untouched), which can
    close every connection every ``drop_every`` seconds and delay each server-to-client chunk
    by a random ``delay`` = (low, high) seconds."""

    def __init__(self, target_port: int, *, drop_every: float | None = None,
                 delay: tuple[float, float] | None = None) -> None:
        self.target = ("127.0.0.1", target_port)
        self.drop_every = drop_every
        self.delay = delay
        self.drops = 0
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = self._listener.getsockname()[1]
        self.url = f"https://127.0.0.1:{self.port}"
        self._conns: set[socket.socket] = set()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []

    def __enter__(self) -> "TcpProxy":
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> None:
        self._spawn(self._accept)
        if self.drop_every:
            self._spawn(self._dropper)

    def stop(self) -> None:
        self._stop.set()
        self._listener.close()
        self.drop_all()

    def drop_all(self) -> None:
        """Close every open connection (both sides) at once."""
        with self._lock:
            conns, self._conns = list(self._conns), set()
            if conns:  # counted before closing: whoever sees the close may read the count at once
                self.drops += 1
        for s in conns:
            _close(s)

    def _spawn(self, target: Callable[..., None], *args: Any) -> None:
        thread = threading.Thread(target=target, args=args, daemon=True, name="fault-proxy")
        thread.start()
        self._threads.append(thread)

    def _accept(self) -> None:
        while not self._stop.is_set():
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            try:
                server = socket.create_connection(self.target, timeout=5)
            except OSError:
                _close(client)
                continue
            with self._lock:
                self._conns.update((client, server))
            self._spawn(self._pump, client, server, None)
            self._spawn(self._pump, server, client, self.delay)

    def _pump(self, src: socket.socket, dst: socket.socket, delay: tuple[float, float] | None) -> None:
        try:
            while not self._stop.is_set():
                ready, _, _ = select.select([src], [], [], 0.5)
                if not ready:
                    continue
                data = src.recv(65536)
                if not data:
                    break
                if delay:
                    time.sleep(random.uniform(*delay))
                dst.sendall(data)
        except (OSError, ValueError):
            pass
        finally:
            for s in (src, dst):
                with self._lock:
                    self._conns.discard(s)
                _close(s)

    def _dropper(self) -> None:
        assert self.drop_every
        while not self._stop.wait(self.drop_every):
            self.drop_all()


def _close(s: socket.socket) -> None:
    try:
        s.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    s.close()


# ---------------------------------------------------------------------- scheduler processes
def _die_with_parent() -> None:
    try:
        import ctypes
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, int(signal.SIGKILL))  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


class Process:
    """One scheduler replica: a command, a log file, signals by pid, and a record of every exit
    (the harness restarts an exited replica as a kubelet would, when asked to)."""

    def __init__(self, name: str, command: list[str], log_path: Path, env: dict[str, str] | None = None) -> None:
        self.name = name
        self.command = command
        self.log_path = log_path
        self.env = env
        self.proc: subprocess.Popen[bytes] | None = None
        self.exits: list[int] = []  # return codes of exits the harness did not cause
        self.restarts = 0
        self._exit_accounted = False

    def start(self) -> None:
        with open(self.log_path, "ab") as log:
            self.proc = subprocess.Popen(self.command, stdout=log, stderr=subprocess.STDOUT,
                                         stdin=subprocess.DEVNULL, env=self.env,
                                         preexec_fn=_die_with_parent if sys.platform.startswith("linux") else None)
        self._exit_accounted = False

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def send(self, sig: signal.Signals) -> None:
        if self.alive:
            assert self.proc is not None
            os.kill(self.proc.pid, sig)

    def kill(self) -> None:
        """SIGKILL, as a crash or an OOM kill would (not recorded as an exit of its own)."""
        self._exit_accounted = True
        self.send(signal.SIGKILL)
        if self.proc is not None:
            self.proc.wait(timeout=15)

    def terminate(self, timeout: float = 30.0) -> int | None:
        """SIGTERM and wait: the return code, or None when it had to be killed."""
        if not self.alive:
            return None if self.proc is None else self.proc.returncode
        assert self.proc is not None
        self._exit_accounted = True
        self.send(signal.SIGCONT)
        self.send(signal.SIGTERM)
        try:
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=15)
            return None

    def poll_exit(self) -> int | None:
        """The return code of an exit nobody asked for, recorded once; None otherwise."""
        if self.proc is None or self.alive or self._exit_accounted:
            return None
        code = self.proc.returncode
        self.exits.append(code)
        self._exit_accounted = True
        return code

    def cleanup(self) -> None:
        if self.alive:
            assert self.proc is not None
            self.send(signal.SIGCONT)
            self.proc.kill()
            self.proc.wait(timeout=15)

    def history(self) -> str:
        """What became of it: its exits of its own, restarts, and its state now."""
        if self.alive:
            now = "alive"
        elif self.proc is not None and self.proc.returncode == -signal.SIGKILL:
            now = "killed"
        else:
            now = f"exited {self.proc.returncode if self.proc else '?'}"
        exits = f"exit codes {self.exits}, " if self.exits else ""
        restarts = f"{self.restarts} restart(s), " if self.restarts else ""
        return f"{exits}{restarts}{now}"

    def log_tail(self, lines: int = 15) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""


def scheduler_config(kubeconfig: Path, leader_elect: bool) -> dict[str, Any]:
    """The same KubeSchedulerConfiguration for both schedulers; short leases keep tests fast."""
    return {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
            "clientConnection": {"kubeconfig": str(kubeconfig)},
            "leaderElection": {"leaderElect": leader_elect, "resourceName": LEASE, "resourceNamespace": "kube-system",
                               "leaseDuration": "4s", "renewDeadline": "3s", "retryPeriod": "1s"},
            "profiles": [{"schedulerName": SCHEDULER_NAME}]}


def scheduler_command(kind: str, assets: Path, config: Path, kubeconfig: Path) -> tuple[list[str], dict[str, str]]:
    if kind == "kube-scheduler":
        return ([str(assets / "kube-scheduler"), f"--config={config}", "--bind-address=127.0.0.1",
                 f"--secure-port={free_port()}", "-v=2"], dict(os.environ))
    if kind == "kschedfw":
        env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
        return ([sys.executable, "-m", "kschedfw.cli.main", "run", "--config", str(config), "--kubeconfig",
                 str(kubeconfig), "--secure-port", "0", "--health-address", "127.0.0.1:0", "-v"], env)
    raise ValueError(f"unknown scheduler {kind!r}: one of {', '.join(SCHEDULERS)}")


# ---------------------------------------------------------------------- the audit log
def read_audit(path: Path) -> list[dict[str, Any]]:
    """The completed requests of an audit log (JSON lines), in the order written; a line cut by
    a killed server is skipped."""
    events = []
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return []
    for line in text.splitlines():
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if event.get("stage") == "ResponseComplete":
            events.append(event)
    return events


def _ref(event: dict[str, Any]) -> tuple[str, str, str]:
    ref = event.get("objectRef") or {}
    return event.get("verb", ""), ref.get("resource", ""), ref.get("subresource", "")


def _code(event: dict[str, Any]) -> int:
    return int((event.get("responseStatus") or {}).get("code") or 0)


def _when(event: dict[str, Any]) -> _dt.datetime:
    return _dt.datetime.fromisoformat(event["requestReceivedTimestamp"].replace("Z", "+00:00"))


def accepted_binds(events: Iterable[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    for e in events:
        if _ref(e) in (("create", "pods", "binding"), ("create", "bindings", "")) and 200 <= _code(e) < 300:
            yield e


def double_binds(events: Iterable[dict[str, Any]]) -> dict[str, int]:
    """Pods with more than one successful bind: namespace/name -> count."""
    counts: dict[str, int] = {}
    for e in accepted_binds(events):
        ref = e["objectRef"]
        key = f"{ref.get('namespace')}/{ref.get('name')}"
        counts[key] = counts.get(key, 0) + 1
    return {k: n for k, n in counts.items() if n > 1}


def lease_holder_since(events: Iterable[dict[str, Any]], user: str, after: _dt.datetime) -> _dt.datetime | None:
    """When ``user`` first wrote the scheduler's lease successfully after ``after`` (a takeover)."""
    for e in events:
        ref = e.get("objectRef") or {}
        if (ref.get("resource") == "leases" and ref.get("name") == LEASE and e["user"]["username"] == user
                and 200 <= _code(e) < 300 and _when(e) > after):
            return _when(e)
    return None


def writes_after(events: Iterable[dict[str, Any]], user: str, since: _dt.datetime) -> list[dict[str, Any]]:
    """Scheduling writes (binds, pod status, events) ``user`` sent after ``since``, whatever the answer."""
    return [e for e in events if e["user"]["username"] == user and _ref(e) in SCHEDULING_WRITES
            and _when(e) > since]


# ---------------------------------------------------------------------- final state
def cpu_milli(quantity: str) -> int:
    if quantity.endswith("m"):
        return int(quantity[:-1])
    return int(float(quantity) * 1000)


def overcommitted_nodes(nodes: list[dict[str, Any]], pods: list[dict[str, Any]]) -> dict[str, int]:
    """Nodes whose bound pods request more cpu than allocatable: node -> requested millicpu."""
    allocatable = {n["metadata"]["name"]: cpu_milli(n["status"]["allocatable"]["cpu"]) for n in nodes}
    used: dict[str, int] = {}
    for p in pods:
        node = p["spec"].get("nodeName")
        if node:
            used[node] = used.get(node, 0) + sum(
                cpu_milli(c.get("resources", {}).get("requests", {}).get("cpu", "0")) for c in p["spec"]["containers"])
    return {n: u for n, u in used.items() if u > allocatable.get(n, 0)}


def unschedulable_after_bind(pods: list[dict[str, Any]]) -> list[str]:
    """Bound pods whose PodScheduled condition says False (reported unschedulable after the bind)."""
    out = []
    for p in pods:
        cond = next((c for c in p["status"].get("conditions") or [] if c["type"] == "PodScheduled"), None)
        if p["spec"].get("nodeName") and cond and cond.get("status") == "False":
            out.append(p["metadata"]["name"])
    return out


# ---------------------------------------------------------------------- outcomes
@dataclasses.dataclass
class Outcome:
    scenario: str
    scheduler: str
    expected: int
    bound: int = 0
    double_binds: dict[str, int] = dataclasses.field(default_factory=dict)
    overcommitted: dict[str, int] = dataclasses.field(default_factory=dict)
    unschedulable_after_bind: list[str] = dataclasses.field(default_factory=list)
    deposed_writes: int = 0  # scheduling writes from a deposed leader, any answer
    deposed_writes_ok: int = 0  # of which the server accepted
    process: str = ""  # what happened to the replicas
    unexpected_exits: list[str] = dataclasses.field(default_factory=list)
    seconds_to_bind_all: float | None = None
    notes: list[str] = dataclasses.field(default_factory=list)
    missed: str = ""  # why the fault did not test what it should (then the run proves nothing)

    def violations(self) -> list[str]:
        out = [f"the fault missed: {self.missed}"] if self.missed else []
        if self.bound != self.expected:
            out.append(f"{self.bound}/{self.expected} fitting pods bound")
        if self.double_binds:
            out.append(f"bound twice: {sorted(self.double_binds)[:5]}")
        if self.overcommitted:
            worst = max(self.overcommitted, key=self.overcommitted.__getitem__)
            out.append(f"{len(self.overcommitted)} nodes overcommitted ({worst}: {self.overcommitted[worst]}m cpu "
                       f"requested)")
        if self.unschedulable_after_bind:
            out.append(f"{len(self.unschedulable_after_bind)} bound pods PodScheduled=False "
                       f"(e.g. {self.unschedulable_after_bind[:3]})")
        if self.deposed_writes:
            out.append(f"{self.deposed_writes} writes from the deposed leader ({self.deposed_writes_ok} accepted)")
        if self.unexpected_exits:
            out.append(f"unexpected exits: {self.unexpected_exits}")
        return out

    def broken(self) -> list[str]:
        """The invariants that failed, by short name (a table cell)."""
        checks = {"fault missed": self.missed, "bound != fitting": self.bound != self.expected,
                  "double binds": self.double_binds, "overcommit": self.overcommitted,
                  "bound+unschedulable": self.unschedulable_after_bind, "deposed writes": self.deposed_writes,
                  "exits": self.unexpected_exits}
        return [name for name, failed in checks.items() if failed]

    def row(self) -> dict[str, str]:
        return {"bound": f"{self.bound}/{self.expected}", "double binds": str(len(self.double_binds)),
                "overcommits": str(len(self.overcommitted)),
                "bound+unschedulable": str(len(self.unschedulable_after_bind)),
                "deposed writes": f"{self.deposed_writes} ({self.deposed_writes_ok} ok)",
                "process": self.process,
                "time to bind all": "-" if self.seconds_to_bind_all is None else f"{self.seconds_to_bind_all:.1f}s"}


# ---------------------------------------------------------------------- one run of one scenario
@dataclasses.dataclass(frozen=True)
class Scenario:
    name: str
    description: str
    play: Callable[["FaultRun"], None]
    replicas: int = 1
    leader_elect: bool = False
    proxy: dict[str, Any] | None = None  # TcpProxy keyword arguments
    held_back: float = 0.0  # the fraction of the pods the scenario creates itself, later


class FaultRun:
    """A fresh control plane (with an audit log), nodes, RBAC'd scheduler users and replicas of
    one scheduler; :meth:`play` runs the scenario and measures the :class:`Outcome`. Everything
    started is stopped on exit, a stopped process continued first."""

    def __init__(self, scenario: str, scheduler: str, assets: Path, workdir: Path, sizes: Sizes | None = None) -> None:
        if scheduler not in SCHEDULERS:
            raise ValueError(f"unknown scheduler {scheduler!r}")
        self.scenario = SCENARIOS[scenario]
        self.scheduler = scheduler
        self.assets = Path(assets)
        self.workdir = Path(workdir)
        self.sizes = sizes or Sizes.from_env()
        self.audit_log = self.workdir / "audit.log"
        self.cp: ControlPlane | None = None
        self.proxy: TcpProxy | None = None
        self.replicas: list[Process] = []
        self.users: list[str] = []
        self.outcome = Outcome(self.scenario.name, scheduler, self.sizes.expected)
        self.restart_exited = True
        self.allowed_exits: set[str] = set()  # replicas that may exit on their own (a lost lease)
        self._t0 = 0.0
        self._created = 0

    # ------------------------------------------------------------------ lifecycle
    def __enter__(self) -> "FaultRun":
        try:
            self.setup()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def setup(self) -> None:
        self.workdir.mkdir(parents=True, exist_ok=True)
        policy = self.workdir / "audit-policy.json"
        policy.write_text(AUDIT_POLICY)
        self.cp = ControlPlane(self.assets, workdir=self.workdir / "cp", extra_apiserver_flags=[
            f"--audit-policy-file={policy}", f"--audit-log-path={self.audit_log}", "--audit-log-format=json"])
        self.cp.start()
        self._rbac()
        for i in range(self.sizes.nodes):
            self.cp.create_ready_node(f"node-{i:03d}", cpu=f"{self.sizes.node_cpu_milli}m", memory="64Gi")
        if self.scenario.proxy is not None:
            self.proxy = TcpProxy(self.cp.port, **self.scenario.proxy)
            self.proxy.start()
        for i in range(self.scenario.replicas):
            self.replicas.append(self._replica(i))

    def close(self) -> None:
        try:
            for r in self.replicas:
                r.cleanup()
            if self.proxy is not None:
                self.proxy.stop()
        finally:
            if self.cp is not None:
                self.cp.resume_apiserver()  # a stopped server would not see SIGTERM
                self.cp.stop()

    def _rbac(self) -> None:
        assert self.cp is not None
        api = self.cp.api
        api("POST", "/api/v1/namespaces", {"metadata": {"name": NAMESPACE}})
        core = [{"apiGroups": ["*"], "resources": ["*"], "verbs": ["get", "list", "watch"]},
                {"apiGroups": [""], "resources": ["pods"], "verbs": ["delete", "patch", "update"]},
                {"apiGroups": [""], "resources": ["pods/status"], "verbs": ["patch", "update"]},
                {"apiGroups": ["", "events.k8s.io"], "resources": ["events"], "verbs": ["create", "patch", "update"]},
                {"apiGroups": ["coordination.k8s.io"], "resources": ["leases"], "verbs": ["create", "update", "patch"]},
                {"apiGroups": ["authentication.k8s.io"], "resources": ["tokenreviews"], "verbs": ["create"]},
                {"apiGroups": ["authorization.k8s.io"], "resources": ["subjectaccessreviews"], "verbs": ["create"]}]
        bind = [{"apiGroups": [""], "resources": ["pods/binding", "bindings"], "verbs": ["create"]}]
        for role, rules in (("fault-scheduler-core", core), ("fault-scheduler-bind", bind)):
            api("POST", "/apis/rbac.authorization.k8s.io/v1/clusterroles", {"metadata": {"name": role}, "rules": rules})
            self.grant(role)

    def grant(self, role: str) -> None:
        """Bind ``role`` to every scheduler replica's service account (the group of the namespace)."""
        assert self.cp is not None
        self.cp.api("POST", "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", {
            "metadata": {"name": role},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role},
            "subjects": [{"kind": "Group", "apiGroup": "rbac.authorization.k8s.io",
                          "name": f"system:serviceaccounts:{NAMESPACE}"}]})

    def revoke(self, role: str) -> None:
        assert self.cp is not None
        self.cp.api("DELETE", f"/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/{role}")

    def _replica(self, index: int) -> Process:
        """A replica with its own service account, so the audit log tells replicas apart."""
        assert self.cp is not None
        sa = f"replica-{index}"
        self.cp.api("POST", f"/api/v1/namespaces/{NAMESPACE}/serviceaccounts", {"metadata": {"name": sa}})
        token = self.cp.api("POST", f"/api/v1/namespaces/{NAMESPACE}/serviceaccounts/{sa}/token",
                            {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
                             "spec": {"expirationSeconds": 3600}})["status"]["token"]
        self.users.append(f"system:serviceaccount:{NAMESPACE}:{sa}")
        kubeconfig = self.workdir / f"{sa}.kubeconfig"
        text = self.cp.kubeconfig_text(token, sa)
        if self.proxy is not None:
            text = text.replace(self.cp.url, self.proxy.url)
        kubeconfig.write_text(text)
        config = self.workdir / f"{sa}.config.json"
        config.write_text(json.dumps(scheduler_config(kubeconfig, self.scenario.leader_elect)))
        command, env = scheduler_command(self.scheduler, self.assets, config, kubeconfig)
        return Process(sa, command, self.workdir / f"{sa}.{self.scheduler}.log", env)

    # ------------------------------------------------------------------ what scenarios use
    def create_pods(self, count: int) -> None:
        """``count`` more identical pods of the scheduler's name (four threads: fast enough
        that the backlog is there before the scheduler is half-way)."""
        assert self.cp is not None
        cp, start = self.cp, self._created
        self._created += count

        def create(i: int) -> None:
            cp.api("POST", f"/api/v1/namespaces/{NAMESPACE}/pods", {
                "apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"p-{i:04d}", "namespace": NAMESPACE},
                "spec": {"schedulerName": SCHEDULER_NAME, "terminationGracePeriodSeconds": 0,
                         "containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10", "resources": {
                             "requests": {"cpu": f"{self.sizes.pod_cpu_milli}m", "memory": "64Mi"}}}]}})

        from concurrent.futures import ThreadPoolExecutor
        with ThreadPoolExecutor(4) as pool:
            list(pool.map(create, range(start, start + count)))

    def pods(self) -> list[dict[str, Any]]:
        assert self.cp is not None
        return self.cp.api("GET", f"/api/v1/namespaces/{NAMESPACE}/pods", timeout=30)["items"]

    def bound_count(self) -> int:
        try:
            return sum(1 for p in self.pods() if p["spec"].get("nodeName"))
        except (OSError, APIError):
            return -1  # the server is down: not an answer

    def start_replicas(self) -> None:
        self._t0 = time.monotonic()
        for r in self.replicas:
            r.start()

    def wait(self, condition: Callable[[], bool], timeout: float, what: str) -> bool:
        """Poll ``condition`` while restarting replicas that exit; False (noted) on timeout."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self.supervise()
            if condition():
                return True
            time.sleep(0.2)
        self.outcome.notes.append(f"timed out ({timeout:.0f}s) waiting for {what}")
        return False

    def supervise(self) -> None:
        """Record an exit nobody caused and, like a kubelet, start the replica again."""
        for r in self.replicas:
            code = r.poll_exit()
            if code is not None:
                self.outcome.notes.append(f"{r.name} exited {code}: {_last_line(r)}")
                if self.restart_exited:
                    r.restarts += 1
                    r.start()

    def wait_bound(self, at_least: int, timeout: float) -> bool:
        return self.wait(lambda: self.bound_count() >= at_least, timeout, f"{at_least} pods bound")

    def wait_mid_backlog(self) -> None:
        """Wait for a quarter of the expected binds, where faults strike, and note how many
        were bound by then (a fault after the backlog is gone tests nothing)."""
        self.wait_bound(max(1, self.sizes.expected // 4), 60)
        self.outcome.notes.append(f"fault at {self.bound_count()}/{self.sizes.expected} bound")

    def leader(self) -> Process:
        """The replica that holds the lease now (its user wrote it last, successfully)."""
        def holder() -> Process | None:
            for e in reversed(read_audit(self.audit_log)):
                ref = e.get("objectRef") or {}
                if ref.get("resource") == "leases" and ref.get("name") == LEASE and 200 <= _code(e) < 300:
                    user = e["user"]["username"]
                    return self.replicas[self.users.index(user)] if user in self.users else None
            return None
        deadline = time.monotonic() + 30
        while (found := holder()) is None:
            if time.monotonic() > deadline:
                raise AssertionError("no replica took the lease")
            self.idle(0.2)
        return found

    def idle(self, seconds: float) -> None:
        """Let ``seconds`` pass, restarting replicas that exit meanwhile."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            self.supervise()
            time.sleep(min(0.2, max(0.0, deadline - time.monotonic())))

    # ------------------------------------------------------------------ the whole run
    @property
    def held_back(self) -> int:
        return int(self.sizes.pods * self.scenario.held_back)

    def play(self) -> Outcome:
        self.create_pods(self.sizes.pods - self.held_back)
        self.start_replicas()
        self.scenario.play(self)
        self._finish()
        return self.outcome

    def _finish(self) -> None:
        """Wait for every fitting pod, give late double binds a moment, then measure."""
        expected = self.sizes.expected
        if self.wait(lambda: self.bound_count() >= expected, self.sizes.settle, "every fitting pod bound"):
            self.outcome.seconds_to_bind_all = time.monotonic() - self._t0
        self.idle(3.0)  # late writes, late exits
        pods = self.pods()
        assert self.cp is not None
        nodes = self.cp.api("GET", "/api/v1/nodes")["items"]
        events = read_audit(self.audit_log)
        o = self.outcome
        o.bound = sum(1 for p in pods if p["spec"].get("nodeName"))
        o.double_binds = double_binds(events)
        o.overcommitted = overcommitted_nodes(nodes, pods)
        o.unschedulable_after_bind = unschedulable_after_bind(pods)
        o.unexpected_exits = [f"{r.name}: {code}" for r in self.replicas if r.name not in self.allowed_exits
                              for code in r.exits]
        o.process = "; ".join(f"{r.name}: {r.history()}" for r in self.replicas)


def _last_line(r: Process) -> str:
    lines = [line for line in r.log_tail(30).splitlines() if line.strip()]
    return lines[-1][:200] if lines else ""


# ---------------------------------------------------------------------- the scenarios
def _apiserver_kill(run: FaultRun) -> None:
    assert run.cp is not None
    run.wait_mid_backlog()
    run.cp.kill_apiserver()
    time.sleep(2)
    run.cp.start_apiserver()


def _apiserver_stop(run: FaultRun) -> None:
    assert run.cp is not None
    run.wait_mid_backlog()
    run.cp.pause_apiserver()
    try:
        run.idle(run.sizes.pause)
    finally:
        run.cp.resume_apiserver()


def _etcd_restart(run: FaultRun) -> None:
    assert run.cp is not None
    run.wait_mid_backlog()
    run.cp.stop_etcd()
    time.sleep(3)
    run.cp.start_etcd()


def _through_proxy(run: FaultRun) -> None:
    """The proxy misbehaves from the start; nothing more to do."""


def _leader_kill(run: FaultRun) -> None:
    run.wait_mid_backlog()
    leader = run.leader()
    leader.kill()
    run.outcome.notes.append(f"killed the leader {leader.name}")


def _leader_stop(run: FaultRun) -> None:
    """Pause the leader past its lease; new pods arrive while the follower takes over; after
    SIGCONT the old leader must not bind, patch pod status or post events."""
    run.restart_exited = False  # a deposed leader exits, as upstream's does: leave it
    run.wait_mid_backlog()
    leader = run.leader()
    run.allowed_exits.add(leader.name)
    old_user = run.users[run.replicas.index(leader)]
    new_user = next(u for u in run.users if u != old_user)
    stopped_at = _dt.datetime.now(_dt.timezone.utc)
    leader.send(signal.SIGSTOP)
    try:
        run.create_pods(run.held_back)
        run.wait(lambda: lease_holder_since(read_audit(run.audit_log), new_user, stopped_at) is not None, 30,
                 "the follower to take the lease")
        run.idle(3)  # the follower schedules a while with the old leader still frozen
    finally:
        leader.send(signal.SIGCONT)
    run.outcome.notes.append(f"paused the leader {leader.name}")
    run.wait(lambda: not leader.alive, 15, "the deposed leader to exit")
    took = lease_holder_since(read_audit(run.audit_log), new_user, stopped_at)
    if took:
        deposed = writes_after(read_audit(run.audit_log), old_user, took)
        run.outcome.deposed_writes = len(deposed)
        run.outcome.deposed_writes_ok = sum(1 for e in deposed if 200 <= _code(e) < 300)
    else:
        run.outcome.missed = "the follower never took the lease"


def _sigterm_restart(run: FaultRun) -> None:
    run.wait_mid_backlog()
    replica = run.replicas[0]
    code = replica.terminate()
    run.outcome.notes.append(f"SIGTERM: exit code {code}")
    replica.restarts += 1
    replica.start()


def _rbac_revoked(run: FaultRun) -> None:
    run.wait_mid_backlog()
    run.revoke("fault-scheduler-bind")
    before = run.bound_count()
    try:
        run.idle(8)
    finally:
        run.grant("fault-scheduler-bind")
    alive = all(r.alive for r in run.replicas)
    run.outcome.notes.append(f"while revoked: {'stayed alive' if alive else 'exited'}, "
                             f"binds {before} -> {run.bound_count()}")


SCENARIOS: dict[str, Scenario] = {s.name: s for s in (
    Scenario("apiserver-kill", "API server SIGKILL mid-backlog, restarted on the same port", _apiserver_kill),
    Scenario("apiserver-stop", "API server SIGSTOP past the client timeouts, then SIGCONT", _apiserver_stop),
    Scenario("etcd-restart", "etcd stopped mid-backlog, started again on the same data", _etcd_restart),
    Scenario("proxy-drop", "every connection to the API server dropped each second", _through_proxy,
             proxy={"drop_every": 1.0}),
    Scenario("proxy-delay", "every response chunk delayed 200-500ms", _through_proxy,
             proxy={"delay": (0.2, 0.5)}),
    Scenario("leader-kill", "leader SIGKILL with a second replica", _leader_kill, replicas=2, leader_elect=True),
    Scenario("leader-stop", "leader SIGSTOP past its lease, pods arriving, then SIGCONT", _leader_stop,
             replicas=2, leader_elect=True, held_back=0.3),
    Scenario("sigterm-restart", "SIGTERM mid-backlog, then started again", _sigterm_restart),
    Scenario("rbac-revoked", "pods/binding permission removed mid-run, then restored", _rbac_revoked),
)}
