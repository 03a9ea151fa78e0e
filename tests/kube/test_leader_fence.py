"""LeaderElector as a fence: holds_lease() is false the moment the last renew is renew_deadline
old (a process resumed after SIGSTOP sees it before its elector thread runs), the loop never
renews after the deadline, and the healthz watchdog fails a leader whose lease went stale."""

from __future__ import annotations

import copy
import threading

from kschedfw.cluster.kube.leaderelection import WATCHDOG_TOLERANCE, LeaderElector
from kschedfw.fwk.interface import NotFound
from tests.kube.helpers import wait_for


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class LeaseStore:
    """The Lease endpoints of an API server, in memory; ``fail`` makes every request fail."""

    def __init__(self) -> None:
        self.lease: dict | None = None
        self.fail = False
        self.writes = 0
        self.refused = 0

    def request(self, method: str, path: str, body: dict | None = None, **_: object) -> dict:
        if self.fail:
            self.refused += 1
            raise ConnectionRefusedError("the API server is down")
        if method == "GET":
            if self.lease is None:
                raise NotFound("not found")
            return copy.deepcopy(self.lease)
        self.writes += 1
        assert body is not None
        self.lease = copy.deepcopy(body)
        return copy.deepcopy(body)


def elector(store: LeaseStore, clock: FakeClock, identity: str = "me", **kwargs) -> LeaderElector:
    return LeaderElector(store, "kube-system", "fence", identity=identity, lease_duration=15,  # type: ignore[arg-type]
                         renew_deadline=10, retry_period=2, clock=clock, **kwargs)


def test_holds_lease_turns_false_after_the_renew_deadline_without_a_renewal():
    store, clock = LeaseStore(), FakeClock()
    e = elector(store, clock)
    assert not e.holds_lease()  # not leading yet
    assert e._try_acquire_or_renew() == clock.now
    e._last_renew = clock.now
    e.leading.set()
    clock.now += 9.9
    assert e.holds_lease()
    clock.now += 0.1
    assert not e.holds_lease()  # the elector thread has not run: the fence alone says it


def test_after_sleeping_past_the_deadline_the_loop_gives_up_without_renewing():
    """SIGSTOP longer than the deadline, then SIGCONT: no renew after the deadline, no release."""
    store, clock = LeaseStore(), FakeClock()
    stopped = threading.Event()
    e = elector(store, clock, on_stopped_leading=stopped.set)
    e.retry_period = 0.05
    thread = threading.Thread(target=e.run, daemon=True)
    thread.start()
    wait_for(e.holds_lease, what="leadership")
    writes = store.writes
    clock.now += 10  # the process "slept" through the deadline
    assert stopped.wait(5)
    thread.join(5)
    assert e.lost and not e.leading.is_set() and not e.holds_lease()
    assert store.writes == writes  # neither a renew nor a release after the deadline
    assert store.lease["spec"]["holderIdentity"] == "me"


class SlowAnswers(LeaseStore):
    """The server takes a renew, then the process is stopped before it reads the answer."""

    def __init__(self, clock: FakeClock) -> None:
        super().__init__()
        self.clock = clock
        self.stop_after_write = False

    def request(self, method: str, path: str, body: dict | None = None, **kw: object) -> dict:
        answer = super().request(method, path, body, **kw)
        if method == "PUT" and self.stop_after_write:
            self.clock.now += 30  # SIGSTOP with the answer on its way, SIGCONT past the lease
        return answer


def test_a_renew_whose_answer_is_read_late_counts_from_when_it_was_sent():
    # the server took the renew at t; the process read its answer at t + 30, after another
    # replica could take the expired lease: the fence counts from t, so it is already closed
    clock = FakeClock()
    store = SlowAnswers(clock)
    e = elector(store, clock)
    e.retry_period = 0.02
    thread = threading.Thread(target=e.run, daemon=True)
    thread.start()
    wait_for(e.holds_lease, what="leadership")
    resumed_at = clock.now + 30
    store.stop_after_write = True
    thread.join(5)  # the loop ends: the renew it read late was already past the deadline
    assert clock.now == resumed_at and e.lost and not e.holds_lease()


def test_renew_failures_lose_the_lease_at_the_deadline_and_a_clean_stop_releases_it():
    store, clock = LeaseStore(), FakeClock()
    e = elector(store, clock)
    e.retry_period = 0.02
    thread = threading.Thread(target=e.run, daemon=True)
    thread.start()
    wait_for(e.holds_lease, what="leadership")
    store.fail = True
    clock.now += 5
    wait_for(lambda: store.refused >= 2, what="failed renews")
    assert e.holds_lease() and not e.lost  # failures within the deadline are tolerated
    clock.now += 5
    thread.join(5)
    assert e.lost and not thread.is_alive()

    store.fail = False
    clean = elector(store, clock)
    clean.retry_period = 0.02
    clock.now += 20  # the lost leader's record has expired
    thread = threading.Thread(target=clean.run, daemon=True)
    thread.start()
    wait_for(clean.holds_lease, what="the second elector's leadership")
    clean.stop()
    thread.join(5)
    assert not clean.lost and store.lease["spec"]["holderIdentity"] == ""  # released


def test_watchdog_fails_a_leader_whose_lease_is_stale_beyond_the_tolerance():
    store, clock = LeaseStore(), FakeClock()
    e = elector(store, clock)
    assert e.check() is None  # never observed
    assert e._try_acquire_or_renew() is not None
    clock.now += 15 + WATCHDOG_TOLERANCE
    assert e.check() is None
    clock.now += 0.5
    assert e.check() == "failed election to renew leadership on lease fence"

    standby = elector(store, clock, identity="other")
    assert standby._try_acquire_or_renew() is None  # our record was just observed: not expired for it
    clock.now += 100
    assert standby.check() is None  # a standby is never unhealthy for leadership
