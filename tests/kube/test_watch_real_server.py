"""The pod informer against a real kube-apiserver: the server's own pod bookmark line advances
the version with no failure, a fault after a healthy watch waits the initial backoff (not the
grown one), and a stopped (hung) API server is noticed within the client's timeouts and the
informer carries on once it runs again."""

from __future__ import annotations

import logging
import os
import random
import re
import signal
import time

from kschedfw.cluster.kube import leanpod
from kschedfw.cluster.kube.client import KubeClient
from kschedfw.cluster.kube.credentials import load_connection
from kschedfw.cluster.kube.informer import Informer
from kschedfw.cluster.kube.ratelog import RateLimitedLog
from kschedfw.cluster.kube.resources import BY_KIND
from kschedfw.cluster.kube.transport import NotConnected
from tests.kube.helpers import pod_manifest, wait_for
from tests.kube.test_informer import Recorder
from tests.kube.test_watch_decoding import REAL_BOOKMARK

LOGGER = "kschedfw.cluster.kube.informer"


class ZeroJitter(random.Random):
    def random(self) -> float:
        return 0.0


class FaultyClient:
    """The real client, except that the watches numbered in ``refuse`` are refused when they
    open, and once ``bookmark_rv`` is set every real watch starts with the server's pod bookmark
    line at that version."""

    def __init__(self, client: KubeClient) -> None:
        self.client = client
        self.refuse: set[int] = set()
        self.bookmark_rv = ""
        self.calls = 0

    def get(self, *args, **kwargs):
        return self.client.get(*args, **kwargs)

    def watch(self, path, params, *, inactivity_timeout, decode):
        self.calls += 1
        if self.calls in self.refuse:
            raise NotConnected("cannot connect: [Errno 111] Connection refused")
        if self.bookmark_rv:
            yield decode(REAL_BOOKMARK.replace(b'"230"', f'"{self.bookmark_rv}"'.encode()))
        yield from self.client.watch(path, params, inactivity_timeout=inactivity_timeout, decode=decode)


def delays(caplog) -> list[float]:
    return [float(m.group(1)) for r in caplog.records
            if (m := re.search(r"failed to watch pods: .*retrying in ([0-9.]+)s", r.getMessage()))]


def test_a_real_bookmark_then_a_fault_after_a_healthy_watch_waits_the_initial_backoff(control_plane, namespace,
                                                                                       caplog):
    caplog.set_level(logging.DEBUG, LOGGER)
    real = KubeClient(load_connection(control_plane.kubeconfig))
    client = FaultyClient(real)
    client.refuse = {1, 2, 3}
    recorder = Recorder(namespace)
    informer = Informer(client, BY_KIND["Pod"], recorder, decode_event=leanpod.pod_event_decoder(),  # type: ignore[arg-type]
                        decode_page=leanpod.pod_list_decoder(), initial_backoff=0.2, max_backoff=3.2,
                        backoff_reset=3.0, inactivity_timeout=1.0, rng=ZeroJitter(), failures=RateLimitedLog(logging.getLogger("kschedfw.cluster.kube.informer")))
    control_plane.api("POST", f"/api/v1/namespaces/{namespace}/pods", pod_manifest("p1", namespace))
    informer.start()
    try:
        assert informer.synced.wait(20)
        wait_for(lambda: client.calls >= 4, what="the fourth watch")
        assert delays(caplog) == [0.2, 0.4, 0.8]  # three refusals in a row: the backoff grows
        control_plane.api("POST", f"/api/v1/namespaces/{namespace}/pods", pod_manifest("p2", namespace))
        wait_for(lambda: "p2" in recorder.names("ADDED"), what="ADDED p2")
        # a version only a bookmark can carry to the pod informer: the next watch starts with one
        cm = control_plane.api("POST", f"/api/v1/namespaces/{namespace}/configmaps", {"metadata": {"name": "rv"}})
        client.bookmark_rv = cm["metadata"]["resourceVersion"]
        wait_for(lambda: informer.resource_version == client.bookmark_rv, what="the bookmark's version")
        time.sleep(3.5)  # a healthy watch (silent ones reopened each second) for longer than the reset interval
        assert informer.lists == 1 and not [r for r in caplog.records if r.levelno >= logging.WARNING
                                            and "failed to watch" not in r.getMessage()]
        client.refuse = {client.calls + 1}
        wait_for(lambda: len(delays(caplog)) == 4, what="one more refusal")
        assert delays(caplog)[-1] == 0.2  # not 1.6: the backoff started over
        control_plane.api("POST", f"/api/v1/namespaces/{namespace}/pods", pod_manifest("p3", namespace))
        wait_for(lambda: "p3" in recorder.names("ADDED"), what="ADDED p3")
        assert any("pods: watch recovered" in r.getMessage() for r in caplog.records)
    finally:
        informer.stop()
        real.close()


def test_a_hung_api_server_is_noticed_and_the_informer_carries_on(control_plane, namespace, caplog):
    """SIGSTOP the API server: the open watch goes silent (inactivity timeout), the next
    requests time out with the client timeout; after SIGCONT the informer relists, sees new pods
    and watches again."""
    caplog.set_level(logging.INFO, LOGGER)
    client = KubeClient(load_connection(control_plane.kubeconfig), timeout=1.0)
    recorder = Recorder(namespace)
    informer = Informer(client, BY_KIND["Pod"], recorder, decode_event=leanpod.pod_event_decoder(),
                        decode_page=leanpod.pod_list_decoder(), inactivity_timeout=1.0, initial_backoff=0.2,
                        max_backoff=0.8, failures=RateLimitedLog(logging.getLogger("kschedfw.cluster.kube.informer")))
    informer.start()
    pid = control_plane._apiserver.pid  # type: ignore[union-attr]
    try:
        assert informer.synced.wait(20)
        watches = informer.watches
        os.kill(pid, signal.SIGSTOP)
        try:
            wait_for(lambda: any("failed to watch pods" in r.getMessage() or "failed to list pods" in r.getMessage()
                                 for r in caplog.records), timeout=10, what="the hung server noticed")
        finally:
            os.kill(pid, signal.SIGCONT)
        control_plane.api("POST", f"/api/v1/namespaces/{namespace}/pods", pod_manifest("after-hang", namespace))
        wait_for(lambda: "after-hang" in recorder.names("ADDED"), timeout=20, what="ADDED after-hang")
        # the relist after the hang may deliver after-hang before the new watch is open
        wait_for(lambda: informer.watches > watches, timeout=10, what="a new watch after the hang")
        assert any("recovered after" in r.getMessage() for r in caplog.records)
    finally:
        os.kill(pid, signal.SIGCONT)
        informer.stop()
        client.close()
