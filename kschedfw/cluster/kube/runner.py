"""One scheduler process against a real API server, upstream's order: informers, wait for their
caches, leader election (when configured), then schedule until stopped or the lease is lost."""

from __future__ import annotations

import logging
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Mapping, cast

from kschedfw.cluster.kube.backend import KubeBackend
from kschedfw.cluster.kube.client import KubeClient
from kschedfw.cluster.kube.credentials import load_connection
from kschedfw.cluster.kube.leaderelection import LeaderElector

if TYPE_CHECKING:
    from kschedfw.cluster.kube.decisions import Decision
    from kschedfw.config.expand import SchedulerConfig
    from kschedfw.framework.registry import Registry

__all__ = ["KubeRunner", "UPSTREAM_LEASE_NAME"]

log = logging.getLogger(__name__)

UPSTREAM_LEASE_NAME = "kube-scheduler"
MAX_IDLE_WAIT = 1.0  # seconds; also bounds how late a periodic queue flush or metrics refresh runs


class KubeRunner:
    def __init__(self, config: "SchedulerConfig", registry: "Registry", *, kubeconfig: str | Path | None = None,
                 dry_run: bool = False, seed: int = 0, feature_gates: Mapping[str, bool] | None = None,
                 on_decision: Callable[["Decision"], None] | None = None,
                 informer_options: dict[str, Any] | None = None) -> None:
        from kschedfw.scheduler import Scheduler
        connection_config = config.document.get("clientConnection") or {}
        kubeconfig = kubeconfig or connection_config.get("kubeconfig") or None
        self.client = KubeClient(load_connection(kubeconfig), qps=float(connection_config.get("qps") or 50),
                                 burst=int(connection_config.get("burst") or 100))
        # upstream: events go through a client of their own, with its own QPS budget
        self.event_client = KubeClient(self.client.connection, qps=self.client.limiter.qps,
                                       burst=self.client.limiter.burst)
        self.backend = KubeBackend(self.client, dry_run=dry_run, on_decision=on_decision,
                                   informer_options=informer_options, event_client=self.event_client,
                                   lean_pods=not config.document.get("extenders"))
        # Scheduler is still annotated with MemoryCluster; KubeBackend implements the Backend contract
        self.scheduler = Scheduler(config, registry, cast(Any, self.backend), seed=seed, record_attempts=False,
                                   feature_gates=feature_gates)
        self.stopping = threading.Event()
        self.dry_run = dry_run
        self.elector: LeaderElector | None = None
        self.lost_leadership = False
        from kschedfw.metrics import SchedulerMetrics
        self.metrics = SchedulerMetrics()
        self.scheduler.enable_metrics(self.metrics)
        self._next_publish = 0.0

    def lease_warning(self) -> str | None:
        """Upstream's lease name is for the scheduler serving ``default-scheduler``: another
        scheduler keeping it would fight kube-scheduler for leadership."""
        le = self.scheduler.config.document.get("leaderElection") or {}
        serves_default = "default-scheduler" in self.scheduler.frameworks
        if le.get("leaderElect") and le.get("resourceName") == UPSTREAM_LEASE_NAME and not serves_default:
            return (f"leaderElection.resourceName is {UPSTREAM_LEASE_NAME!r} (upstream's) but no profile serves "
                    f"default-scheduler: give this scheduler its own lease name")
        return None

    def start(self, sync_timeout: float | None = None) -> bool:
        """Start the informers and wait for their first lists; False on timeout."""
        self.backend.start()
        return self.backend.wait_for_sync(sync_timeout)

    def run(self) -> None:
        """Schedule until :meth:`stop` (from any thread or a signal handler) or, with leader
        election, until the lease is lost (then ``lost_leadership`` is true, as upstream exits)."""
        le = self.scheduler.config.document.get("leaderElection") or {}
        if not le.get("leaderElect") or self.dry_run:
            self._schedule()
            return
        from kschedfw.config.k8svalidation import parse_duration
        self.elector = LeaderElector(
            self.client, le.get("resourceNamespace") or "kube-system", le.get("resourceName") or UPSTREAM_LEASE_NAME,
            lease_duration=parse_duration(le.get("leaseDuration") or "15s") / 1e9,
            renew_deadline=parse_duration(le.get("renewDeadline") or "10s") / 1e9,
            retry_period=parse_duration(le.get("retryPeriod") or "2s") / 1e9,
            on_stopped_leading=self.stop)
        thread = threading.Thread(target=self.elector.run, name="leader-election", daemon=True)
        thread.start()
        try:
            while not self.elector.leading.is_set() and not self.stopping.is_set():
                self.backend.deliver(timeout=0.2)  # stand by with fresh caches
            if not self.stopping.is_set():
                self._schedule()
        finally:
            self.elector.stop()
            thread.join(30)
            self.lost_leadership = self.elector.lost

    # ------------------------------------------------------------------ the loop
    def _schedule(self) -> None:
        """The core's one loop in real time: between cycles, apply what the informers (and
        finished binds) delivered; when nothing is ready, block on the inbox until the next
        deadline (at most MAX_IDLE_WAIT, so flushes and metrics stay timely)."""
        self._publish()
        self.scheduler.run(stop=self._between_cycles, idle=self._idle)

    def _between_cycles(self) -> bool:
        self.backend.deliver()
        if self.backend.clock.now() >= self._next_publish:
            self._publish()
        return self.stopping.is_set()

    def _idle(self, deadline: float | None) -> bool:
        now = self.backend.clock.now()
        wait = MAX_IDLE_WAIT if deadline is None else min(MAX_IDLE_WAIT, deadline - now)
        self.backend.deliver(timeout=max(wait, 0.001))
        return not self._between_cycles()

    # ------------------------------------------------------------------ health and metrics
    def _publish(self) -> None:
        """Refresh the gauges read from the queue (on the scheduler's thread, about once a second)."""
        self._next_publish = self.backend.clock.now() + 1.0
        self.metrics.publish(self.scheduler)

    def health_checks(self) -> dict[str, "Callable[[], bool]"]:
        """Upstream's readyz: informers synced; with leader election, a leader that has not lost its lease."""
        checks: dict[str, Callable[[], bool]] = {
            "informer-sync": lambda: all(i.synced.is_set() for i in self.backend.informers)}
        checks["leaderElection"] = lambda: not self.lost_leadership and not (self.elector and self.elector.lost)
        return checks

    def metrics_text(self) -> str:
        """/metrics: upstream's scheduler metrics (prometheus-client renders them thread-safely)."""
        return self.metrics.render().decode()

    def stop(self) -> None:
        self.stopping.set()
        self.backend.wake()

    def close(self) -> None:
        self.backend.stop()
        self.client.close()
        self.event_client.close()
