"""The composition root of ``kschedfw run`` (its embedded sibling is :mod:`kschedfw.simulation`):
one scheduler process against a real API server, upstream's order: informers, wait for their
caches, leader election (when configured), then schedule until stopped or the lease is lost.

With leader election, writes are fenced by :meth:`LeaderElector.holds_lease` and the loop stops
the moment it turns false: a deposed leader abandons its work, as kube-scheduler exits."""

from __future__ import annotations

import functools
import logging
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Mapping, cast

import attrs

from kschedfw.cluster.kube.backend import KubeBackend
from kschedfw.cluster.kube.client import KubeClient
from kschedfw.cluster.kube.credentials import load_connection
from kschedfw.cluster.kube.health import Check, ping
from kschedfw.cluster.kube.leaderelection import LeaderElector
from kschedfw.cluster.kube.preflight import PREFLIGHT_TIMEOUT, preflight, required_access
from kschedfw.cluster.kube.probe import ReachabilityProbe
from kschedfw.fwk.features import enabled
from kschedfw.metrics import SchedulerMetrics
from kschedfw.scheduler import Scheduler
from kschedfw.scheduler.pending_reason import pending_reason

if TYPE_CHECKING:
    from kschedfw.cluster.kube.decisions import Decision
    from kschedfw.config.expand import SchedulerConfig
    from kschedfw.framework.registry import Registry

__all__ = ["KubeRunner", "UPSTREAM_LEASE_NAME"]

log = logging.getLogger(__name__)

UPSTREAM_LEASE_NAME = "kube-scheduler"
MAX_IDLE_WAIT = 1.0  # seconds; also bounds how late a periodic queue flush or metrics refresh runs
#: seconds without any answer from the API server before /readyz fails: longer than a restart of
#: kube-apiserver or a dropped kept-alive connection (a few seconds), shorter than the kubelet's
#: default readiness failure window (3 x 10 s), so an operator sees it before anything restarts
UNREACHABLE_NOT_READY_AFTER = 10.0


class KubeRunner:
    def __init__(self, config: "SchedulerConfig", registry: "Registry", *, kubeconfig: str | Path | None = None,
                 dry_run: bool = False, seed: int = 0, feature_gates: Mapping[str, bool] | None = None,
                 on_decision: Callable[["Decision"], None] | None = None,
                 informer_options: dict[str, Any] | None = None,
                 notify: Callable[[str], None] | None = None, pending_reasons: bool = False) -> None:
        """``pending_reasons``: a dry run's Pending decisions carry the structured reason
        (``run --dry-run -o json``); the loop then keeps each pod's last failure for it."""
        connection_config = config.document.get("clientConnection") or {}
        kubeconfig = kubeconfig or connection_config.get("kubeconfig") or None
        #: where the credentials came from, for messages
        self.credentials = str(kubeconfig) if kubeconfig else \
            "the default kubeconfig (in-cluster service account, $KUBECONFIG or ~/.kube/config)"
        #: what an operator must see at default verbosity (waiting for the lease, leading, lost)
        self.notify = notify or log.info
        self.unreachable_not_ready_after = UNREACHABLE_NOT_READY_AFTER
        self.client = KubeClient(load_connection(kubeconfig), qps=float(connection_config.get("qps") or 50),
                                 burst=int(connection_config.get("burst") or 100))
        # upstream: events go through a client of their own, with its own QPS budget
        self.event_client = KubeClient(self.client.connection, qps=self.client.limiter.qps,
                                       burst=self.client.limiter.burst)
        # and so does leader election (upstream's "leader-election" client): the lease is renewed
        # whatever the scheduling writes queue, and only the scheduling clients are fenced
        self.lease_client = KubeClient(self.client.connection, qps=self.client.limiter.qps,
                                       burst=self.client.limiter.burst)
        self.probe = ReachabilityProbe(self.client.connection)
        if on_decision is not None and pending_reasons:
            on_decision = functools.partial(self._with_pending_reason, on_decision)
        self.backend = KubeBackend(self.client, dry_run=dry_run, on_decision=on_decision,
                                   informer_options=informer_options, event_client=self.event_client,
                                   lean_pods=not config.document.get("extenders"), feature_gates=feature_gates)
        # Scheduler is still annotated with MemoryCluster; KubeBackend implements the Backend contract
        self.metrics = SchedulerMetrics(generic_workload=enabled(feature_gates, "GenericWorkload"))
        self.scheduler = Scheduler(config, registry, cast(Any, self.backend), seed=seed, record_attempts=False,
                                   feature_gates=feature_gates, metrics=self.metrics)
        self.scheduler.attempt_log.keep_failures = pending_reasons
        self.stopping = threading.Event()
        self.dry_run = dry_run
        self.elector: LeaderElector | None = None
        self.lost_leadership = False
        self._next_publish = 0.0

    def _with_pending_reason(self, on_decision: Callable[["Decision"], None], decision: "Decision") -> None:
        """A Pending decision is made while its failure is handled, after the failure was kept
        (and is let go of here: the next attempt keeps its own)."""
        if decision.status == "Pending":
            pod = self.backend.get("Pod", *reversed(decision.pod.split("/", 1)))
            failure = self.scheduler.attempt_log.failures.pop(pod.uid, None) if pod is not None else None
            decision = attrs.evolve(decision, pending_reason=pending_reason(failure))
        on_decision(decision)

    def lease_warning(self) -> str | None:
        """Upstream's lease name is for the scheduler serving ``default-scheduler``: another
        scheduler keeping it would fight kube-scheduler for leadership."""
        le = self.scheduler.config.document.get("leaderElection") or {}
        serves_default = "default-scheduler" in self.scheduler.frameworks
        if le.get("leaderElect") and le.get("resourceName") == UPSTREAM_LEASE_NAME and not serves_default:
            return (f"leaderElection.resourceName is {UPSTREAM_LEASE_NAME!r} (upstream's) but no profile serves "
                    f"default-scheduler: give this scheduler its own lease name")
        return None

    @property
    def lease(self) -> tuple[str, str] | None:
        """(namespace, name) of the Lease this process competes for, None without leader election."""
        le = self.scheduler.config.document.get("leaderElection") or {}
        if not le.get("leaderElect") or self.dry_run:
            return None
        return le.get("resourceNamespace") or "kube-system", le.get("resourceName") or UPSTREAM_LEASE_NAME

    def preflight(self) -> None:
        """Fail fast (PreflightError) when the API server cannot be reached, refuses the
        credentials or denies a right the scheduler needs; see :mod:`.preflight`."""
        client = KubeClient(self.client.connection, qps=self.client.limiter.qps, burst=self.client.limiter.burst,
                            timeout=PREFLIGHT_TIMEOUT)
        try:
            preflight(client, self.credentials, required_access(writes=not self.dry_run, lease=self.lease),
                      self.lease)
        finally:
            client.close()

    def start(self, sync_timeout: float | None = None) -> bool:
        """Start the informers and wait for their first lists; False on timeout."""
        self.probe.start()
        self.backend.start()
        for message in self.backend.unserved_messages():
            self.notify(message)
        return self.backend.wait_for_sync(sync_timeout)

    def run(self) -> None:
        """Schedule until :meth:`stop` (from any thread or a signal handler) or, with leader
        election, until the lease is lost (then ``lost_leadership`` is true: the caller must exit
        at once, abandoning in-flight work, as upstream does)."""
        lease = self.lease
        if lease is None:
            self._announce_scheduling()
            self._schedule()
            return
        elector = self.elector = self._elector(lease)
        self.backend.write_fence = elector.holds_lease
        self.metrics.leader_status.labels(elector.name).set(0)
        thread = threading.Thread(target=elector.run, name="leader-election", daemon=True)
        thread.start()
        self.notify(f"informers synced; waiting to acquire lease {elector.description} as {elector.identity}")
        try:
            while not elector.leading.is_set() and not self.stopping.is_set():
                self.backend.deliver(timeout=0.2)  # stand by with fresh caches
            if not self.stopping.is_set():
                self.notify(f"became leader of lease {elector.description}")
                self._announce_scheduling()
                self._schedule()
        finally:
            # deposed: the deadline passed, whether or not the elector's thread has noticed yet
            self.lost_leadership = elector.lost or (elector.leading.is_set() and not elector.holds_lease())
            elector.stop()
            if self.lost_leadership:
                self.metrics.leader_status.labels(elector.name).set(0)
                self.notify(f"lost lease {elector.description}: not renewed within {elector.renew_deadline:g}s")
            else:
                thread.join(30)  # releases the lease

    def _elector(self, lease: tuple[str, str]) -> LeaderElector:
        from kschedfw.api.validation import parse_duration
        le = self.scheduler.config.document.get("leaderElection") or {}
        elector = LeaderElector(
            self.lease_client, *lease,
            lease_duration=parse_duration(le.get("leaseDuration") or "15s") / 1e9,
            renew_deadline=parse_duration(le.get("renewDeadline") or "10s") / 1e9,
            retry_period=parse_duration(le.get("retryPeriod") or "2s") / 1e9)
        gauge = self.metrics.leader_status.labels(elector.name)
        elector.on_started_leading = lambda: gauge.set(1)

        def stopped_leading() -> None:
            gauge.set(0)
            self.stop()
        elector.on_stopped_leading = stopped_leading
        return elector

    def _announce_scheduling(self) -> None:
        self.notify(f"informers synced, scheduling for {', '.join(self.scheduler.frameworks)}"
                    f"{' (dry run)' if self.dry_run else ''}")

    # ------------------------------------------------------------------ the loop
    def _schedule(self) -> None:
        """The core's one loop in real time: before each cycle the scheduler applies what the
        informers (and finished binds) delivered; when nothing is ready, block on the inbox until the next
        deadline (at most MAX_IDLE_WAIT, so flushes and metrics stay timely)."""
        self._publish()
        self.scheduler.run(stop=self._between_cycles, idle=self._idle)

    def _between_cycles(self) -> bool:
        if self.elector is not None and not self.elector.holds_lease():
            return True  # deposed (or resumed after the deadline): not one more cycle
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

    def health_endpoints(self) -> dict[str, dict[str, Check]]:
        """kube-scheduler's: /healthz the leader-election watchdog (with leader election), /livez
        ping; /readyz also shutdown, informers synced, and the API server answering."""
        def leader_election() -> str | None:
            return self.elector.check() if self.elector is not None else None

        def shutdown() -> str | None:
            return "process is shutting down" if self.stopping.is_set() else None

        def informer_sync() -> str | None:
            if not self.backend.informers:
                return "informers not started"
            unsynced = self.backend.unsynced()
            return f"not synced: {', '.join(unsynced)}" if unsynced else None

        def apiserver_reachable() -> str | None:
            silent = max(self.client.reachability.unreachable_for(), self.probe.reachability.unreachable_for())
            if silent > self.unreachable_not_ready_after:
                return f"the API server at {self.client.connection.server} has not answered for {silent:.0f}s"
            return None

        healthz: dict[str, Check] = {"ping": ping}
        if self.lease is not None:
            healthz["leaderElection"] = leader_election
        readyz = {**healthz, "shutdown": shutdown, "informer-sync": informer_sync,
                  "apiserver-reachable": apiserver_reachable}
        return {"healthz": healthz, "livez": {"ping": ping}, "readyz": readyz}

    def metrics_text(self) -> str:
        """/metrics: upstream's scheduler metrics (prometheus-client renders them thread-safely)."""
        return self.metrics.render().decode()

    def stop(self) -> None:
        self.stopping.set()
        self.backend.wake()

    def close(self) -> None:
        self.probe.stop()
        self.backend.stop()
        self.client.close()
        self.event_client.close()
        self.lease_client.close()
