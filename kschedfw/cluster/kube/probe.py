"""Whether the API server answers, asked every few seconds: informers that only re-watch, and an
idle scheduler, send no request a failure could be counted on, and a hung server (accepting
connections, never answering) is only noticed after a request's full timeout. A cheap GET of
``/version`` on a client of its own with a short timeout keeps :class:`Reachability` current."""

from __future__ import annotations

from kschedfw.cluster.kube.client import KubeClient
from kschedfw.cluster.kube.credentials import Connection
from kschedfw.cluster.kube.loop import BackgroundLoop

__all__ = ["ReachabilityProbe", "PROBE_PERIOD", "PROBE_TIMEOUT"]

PROBE_PERIOD = 2.0  # seconds between probes
PROBE_TIMEOUT = 5.0  # seconds to wait for an answer: a server slower than this counts as not answering


class ReachabilityProbe(BackgroundLoop):
    thread_name = "apiserver-probe"

    def __init__(self, connection: Connection, *, period: float = PROBE_PERIOD, timeout: float = PROBE_TIMEOUT) -> None:
        self.client = KubeClient(connection, qps=1 / period, burst=1, timeout=timeout)
        self.reachability = self.client.reachability
        self.period = period
        super().__init__()

    def _run(self) -> None:
        while True:
            try:
                self.client.request("GET", "/version")
            except Exception:  # any answer, even an error status, means the server answers
                pass
            if self._stop.wait(self.period):
                break
        self.client.close()
