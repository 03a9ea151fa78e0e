"""The shipped kube-scheduler, started once per scenario at ``-v=10`` against the test API server."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path
from typing import Any, Callable

from kschedfw.testing.controlplane import ControlPlane, free_port

from tests.differential.klog import SchedulerLog


class KubeScheduler:
    """``with KubeScheduler(cp, config, folder) as ks``: started, its informers synced; ``ks.log``
    follows what it writes."""

    def __init__(self, cp: ControlPlane, config: dict[str, Any], folder: Path, feature_gates: str = "") -> None:
        self.binary = cp.assets / "kube-scheduler"
        self.folder = folder
        self.config_path = folder / "kube-scheduler.yaml"
        self.config_path.write_text(json.dumps({
            **config, "clientConnection": {"kubeconfig": str(cp.kubeconfig)},
            "leaderElection": {"leaderElect": False}}))
        self.log_path = folder / "kube-scheduler.log"
        self.log = SchedulerLog(self.log_path)
        self.feature_gates = feature_gates
        self._proc: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> "KubeScheduler":
        with open(self.log_path, "wb") as out:
            self._proc = subprocess.Popen(
                [str(self.binary), f"--config={self.config_path}", "--bind-address=127.0.0.1",
                 f"--secure-port={free_port()}", "-v=10",
                 *([f"--feature-gates={self.feature_gates}"] if self.feature_gates else [])],
                stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        try:
            # pods created before its informers synced would arrive in one initial list: wait
            self.wait(lambda: self.log.synced, 60, "kube-scheduler's informers")
        except BaseException:
            self.__exit__()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        proc, self._proc = self._proc, None
        if proc is not None and proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(15)
        self.log.close()

    def wait(self, condition: Callable[[], Any], timeout: float, what: str) -> Any:
        """Poll the log (tightly: it is read incrementally) until ``condition()`` holds."""
        deadline = time.monotonic() + timeout
        while True:
            self.log.poll()
            value = condition()
            if value:
                return value
            if self._proc is not None and self._proc.poll() is not None:
                raise RuntimeError(f"kube-scheduler exited ({self._proc.returncode}) waiting for {what}; "
                                   f"see {self.log_path}")
            if time.monotonic() > deadline:
                raise TimeoutError(f"timed out waiting for {what}; see {self.log_path}")
            time.sleep(0.005)
