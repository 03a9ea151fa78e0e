"""Leader election on a coordination.k8s.io/v1 Lease, as client-go's leaderelection package:
acquire (retrying every ``retry_period``), renew while leading, give up leadership when a renew
has not succeeded for ``renew_deadline``, release the lease on a clean stop.

A lease held by someone else counts as expired only after ``lease_duration`` has passed on *our*
clock since we last saw its record change (client-go's observedTime), never by comparing clocks.

Leadership is a fence, not a flag: :meth:`LeaderElector.holds_lease` is false as soon as the last
successful renew is ``renew_deadline`` old, even before the elector thread notices (a process
resumed after SIGSTOP must not write another byte as leader). A renew counts from when it was
*sent*, not from when its answer was read: a process stopped while the answer was on its way
must not take its late reading as a fresh lease.
"""

from __future__ import annotations

import datetime as _dt
import logging
import random
import socket
import threading
import time
import uuid
from typing import Any, Callable

from kschedfw.cluster.kube.client import KubeClient
from kschedfw.api.timestamps import micro_time
from kschedfw.fwk.interface import Conflict, NotFound

__all__ = ["LeaderElector", "default_identity", "WATCHDOG_TOLERANCE"]

log = logging.getLogger(__name__)

#: kube-scheduler's leader-election healthz watchdog (NewLeaderHealthzAdaptor(20s)): /healthz
#: fails once the leader's lease has gone unrenewed this long past its duration
WATCHDOG_TOLERANCE = 20.0


def default_identity() -> str:
    """Upstream: hostname + "_" + a uuid, unique per process."""
    return f"{socket.gethostname()}_{uuid.uuid4()}"


class LeaderElector:
    def __init__(self, client: KubeClient, namespace: str, name: str, *, identity: str | None = None,
                 lease_duration: float = 15.0, renew_deadline: float = 10.0, retry_period: float = 2.0,
                 on_started_leading: Callable[[], None] | None = None,
                 on_stopped_leading: Callable[[], None] | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.client = client
        self.namespace = namespace
        self.path = f"/apis/coordination.k8s.io/v1/namespaces/{namespace}/leases"
        self.name = name
        self.identity = identity or default_identity()
        self.lease_duration = lease_duration
        self.renew_deadline = renew_deadline
        self.retry_period = retry_period
        self.on_started_leading = on_started_leading
        self.on_stopped_leading = on_stopped_leading
        self.clock = clock
        self.leading = threading.Event()
        #: the lease was lost (not renewed within renew_deadline), not released on a stop
        self.lost = False
        self._stop = threading.Event()
        self._observed: tuple[Any, float] | None = None  # (holder record, our monotonic time)
        self._lease: dict[str, Any] | None = None
        self._last_renew = float("-inf")

    @property
    def description(self) -> str:
        """``namespace/name``, as upstream names the lock in its messages."""
        return f"{self.namespace}/{self.name}"

    def stop(self) -> None:
        self._stop.set()

    def holds_lease(self) -> bool:
        """Leading, and the last successful renew is younger than ``renew_deadline``: the only
        condition under which this process may write as the scheduler."""
        return self.leading.is_set() and self.clock() - self._last_renew < self.renew_deadline

    def check(self, tolerance: float = WATCHDOG_TOLERANCE) -> str | None:
        """client-go's healthz watchdog: None while healthy; a reason when the lease we hold
        (as last observed) has not been renewed for ``lease_duration + tolerance``."""
        observed = self._observed
        if observed is None or (observed[0] or {}).get("holderIdentity") != self.identity:
            return None  # a standby is healthy
        if self.clock() - observed[1] > self.lease_duration + tolerance:
            return f"failed election to renew leadership on lease {self.name}"
        return None

    def run(self) -> None:
        """Acquire, then renew until stopped or lost; release on a clean stop."""
        acquired: float | None = None
        while not self._stop.is_set():
            acquired = self._try_acquire_or_renew()
            if acquired is not None:
                break
            self._stop.wait(self.retry_period * (1 + random.random() * 1.2))
        if self._stop.is_set() or acquired is None:
            return
        self._last_renew = acquired
        log.info("became leader of lease %s as %s", self.description, self.identity)
        self.leading.set()
        if self.on_started_leading:
            self.on_started_leading()
        while not self._stop.wait(self.retry_period):
            if self._deadline_passed():
                break  # we slept through the deadline (SIGSTOP): no renew after it
            renewed = self._try_acquire_or_renew()
            if renewed is not None:
                self._last_renew = renewed
            elif self._deadline_passed():
                break
        self.lost = self._deadline_passed()
        self.leading.clear()
        if self.lost:
            log.info("lost lease %s: not renewed within %gs", self.description, self.renew_deadline)
        else:
            self._release()
        if self.on_stopped_leading:
            self.on_stopped_leading()

    def _deadline_passed(self) -> bool:
        return self.clock() - self._last_renew >= self.renew_deadline

    # ------------------------------------------------------------------ one attempt
    def _spec(self, acquire_time: str, transitions: int) -> dict[str, Any]:
        now = micro_time(_dt.datetime.now(_dt.timezone.utc))
        return {"holderIdentity": self.identity, "leaseDurationSeconds": max(1, int(round(self.lease_duration))),
                "acquireTime": acquire_time or now, "renewTime": now, "leaseTransitions": transitions}

    def _try_acquire_or_renew(self) -> float | None:
        """One attempt; on success, our clock's time when it began (the lease runs from there),
        else None."""
        started = self.clock()
        try:
            try:
                lease = self.client.request("GET", f"{self.path}/{self.name}")
            except NotFound:
                body = {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": {"name": self.name},
                        "spec": self._spec("", 0)}
                self._lease = self.client.request("POST", self.path, body=body)
                self._observed = (self._lease["spec"], started)
                return started
            spec = lease.get("spec") or {}
            if self._observed is None or self._observed[0] != spec:
                self._observed = (spec, self.clock())
            holder = spec.get("holderIdentity") or ""
            held_by_other = holder and holder != self.identity
            duration = float(spec.get("leaseDurationSeconds") or self.lease_duration)
            if held_by_other and self._observed[1] + duration > self.clock():
                return None
            transitions = int(spec.get("leaseTransitions") or 0)
            mine = holder == self.identity
            new_spec = self._spec(spec.get("acquireTime", "") if mine else "", transitions if mine else transitions + 1)
            body = {**lease, "spec": new_spec}
            self._lease = self.client.request("PUT", f"{self.path}/{self.name}", body=body)
            self._observed = (self._lease["spec"], started)
            return started
        except Conflict:
            return None  # someone else wrote it first
        except Exception as exc:  # the API server is unreachable: count as a failed attempt
            log.warning("lease %s: %s", self.description, exc)
            return None

    def _release(self) -> None:
        """client-go ReleaseOnCancel: empty holder, so the next candidate need not wait."""
        if not self._lease:
            return
        spec = dict(self._lease.get("spec") or {})
        spec.update(holderIdentity="", leaseDurationSeconds=1,
                    renewTime=micro_time(_dt.datetime.now(_dt.timezone.utc)))
        try:
            self.client.request("PUT", f"{self.path}/{self.name}", body={**self._lease, "spec": spec})
        except Exception as exc:
            log.warning("could not release lease %s: %s", self.description, exc)
