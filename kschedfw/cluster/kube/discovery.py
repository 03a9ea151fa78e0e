"""Which optional APIs (resource claims, contrib plugins' custom resources...) the server serves,
asked again until each appears. Upstream's informers for an API not served yet simply retry
their list with the reflector's backoff; here discovery is retried the same way (0.8 s doubling
to 30 s, jittered) and an informer starts once its API shows up, so a CRD installed or an API
enabled after start-up is watched without a restart."""

from __future__ import annotations

import logging
import random
from typing import Callable, Iterable

import urllib3.exceptions

from kschedfw.cluster.kube.client import ApiError, KubeClient
from kschedfw.cluster.kube.loop import BackgroundLoop
from kschedfw.cluster.kube.resources import Resource

__all__ = ["discover", "LateDiscovery"]

log = logging.getLogger(__name__)

_FAILURES = (LookupError, ApiError, OSError, urllib3.exceptions.HTTPError)


def discover(client: KubeClient, resources: Iterable[Resource]) -> tuple[list[Resource], list[Resource]]:
    """``(served, missing)``: required resources are always served; an optional one is when
    its group-version's discovery document lists it (a failed discovery counts as missing)."""
    served: list[Resource] = []
    missing: list[Resource] = []
    listings: dict[str, set[str]] = {}
    for resource in resources:
        if not resource.optional:
            served.append(resource)
            continue
        plurals = listings.get(resource.discovery_path)
        if plurals is None:
            try:
                listing = client.get(resource.discovery_path)
                plurals = {r.get("name") for r in (listing or {}).get("resources") or []}
            except _FAILURES as exc:
                log.debug("discovery of %s: %s", resource.discovery_path, exc)
                plurals = set()
            listings[resource.discovery_path] = plurals
        (served if resource.plural in plurals else missing).append(resource)
    return served, missing


class LateDiscovery(BackgroundLoop):
    """A thread asking discovery again for ``missing`` until every one is served (or
    :meth:`stop`), calling ``found(resource)`` for each as it appears."""

    thread_name = "late-discovery"

    def __init__(self, client: KubeClient, missing: Iterable[Resource], found: Callable[[Resource], None], *,
                 initial_backoff: float = 0.8, max_backoff: float = 30.0, rng: random.Random | None = None) -> None:
        self.client = client
        self.missing = list(missing)
        self.found = found
        self.initial_backoff = initial_backoff
        self.max_backoff = max_backoff
        self.rng = rng or random.Random()
        super().__init__()

    def start(self) -> None:
        log.info("not served yet, watched once they appear: %s", ", ".join(r.path for r in self.missing))
        super().start()

    def _run(self) -> None:
        backoff = self.initial_backoff
        while self.missing and not self._stop.wait(backoff * (1 + self.rng.random() * 0.5)):
            try:
                served, self.missing = discover(self.client, self.missing)
                for resource in served:
                    log.info("%s is served now: watching it", resource.path)
                    self.found(resource)
            except Exception:  # never let the thread die silently
                log.exception("late discovery failed")
            backoff = min(backoff * 2, self.max_backoff)
