"""Pods recently bound to each node, whose load the metrics may not show yet (upstream
``pkg/trimaran/handler.go``, PodAssignEventHandler).

Every pod seen assigned to a node (added with a node, or bound later) is remembered with the time
it was seen. Every 5 minutes entries older than 60 seconds are dropped. Times come from the
scheduler's clock, so a simulation is deterministic; the 5-minute cleanup runs when the cache is
read at or after each 5-minute mark since the handler was created.
"""

from __future__ import annotations

import bisect
from typing import TYPE_CHECKING, Callable

import attrs

if TYPE_CHECKING:
    from kschedfw.api import Pod
    from kschedfw.fwk.interface import Handle, WatchEvent

CACHE_CLEANUP_INTERVAL_SECONDS = 5 * 60
METRICS_AGENT_REPORTING_INTERVAL_SECONDS = 60


@attrs.define
class PodInfo:
    timestamp: float  # Unix seconds, when the pod was seen assigned
    pod: "Pod"


class PodAssignEventHandler:
    """node name -> [PodInfo], in the order pods were seen."""

    def __init__(self, now: Callable[[], float]) -> None:
        self.now = now
        self.scheduled_pods_cache: dict[str, list[PodInfo]] = {}
        self._next_cleanup = now() + CACHE_CLEANUP_INTERVAL_SECONDS

    # ------------------------------------------------------------------ informer callbacks
    def follow(self, handle: "Handle") -> None:
        """Follow assigned pods through ``handle.subscribe``, after listing the pods already
        there, as an informer does."""
        for pod in handle.lister.list("Pod"):
            if pod.node_name:
                self.on_add(pod)
        handle.subscribe("Pod", self._on_watch_event)

    def _on_watch_event(self, event: "WatchEvent") -> None:
        old, new = event.old, event.new
        old_assigned = old is not None and bool(old.node_name)
        new_assigned = new is not None and bool(new.node_name)
        if event.type == "ADDED":
            if new_assigned:
                self.on_add(new)
        elif event.type == "MODIFIED":
            # a filtering event handler: only assigned pods pass its filter
            if new_assigned and not old_assigned:
                self.on_add(new)
            elif new_assigned and old_assigned:
                self.on_update(old, new)
            elif old_assigned and not new_assigned:
                self.on_delete(old)
        elif event.type == "DELETED" and old_assigned:
            self.on_delete(old)

    def on_add(self, pod: "Pod") -> None:
        self._update_cache(pod)

    def on_update(self, old: "Pod", new: "Pod") -> None:
        if old.node_name != new.node_name:
            self._update_cache(new)

    def on_delete(self, pod: "Pod") -> None:
        infos = self.scheduled_pods_cache.get(pod.node_name)
        if infos is None:
            return
        for i, info in enumerate(infos):
            if info.pod.uid == pod.uid:
                del infos[i]
                break

    def _update_cache(self, pod: "Pod") -> None:
        if not pod.node_name:
            return
        self.scheduled_pods_cache.setdefault(pod.node_name, []).append(PodInfo(self.now(), pod))

    # ------------------------------------------------------------------ reading
    def pods_on(self, node_name: str) -> list[PodInfo]:
        self._maybe_cleanup()
        return self.scheduled_pods_cache.get(node_name, [])

    def _maybe_cleanup(self) -> None:
        now = self.now()
        if now < self._next_cleanup:
            return
        while self._next_cleanup <= now:
            self._next_cleanup += CACHE_CLEANUP_INTERVAL_SECONDS
        self.cleanup_cache(now)

    def cleanup_cache(self, now: float | None = None) -> None:
        """Drop entries seen more than 60 s ago (entries are in time order); drop empty nodes."""
        now = self.now() if now is None else now
        for node_name in list(self.scheduled_pods_cache):
            infos = self.scheduled_pods_cache[node_name]
            keys = [info.timestamp + METRICS_AGENT_REPORTING_INTERVAL_SECONDS for info in infos]
            first_recent = bisect.bisect_right(keys, now)  # first entry with timestamp + 60 > now
            if first_recent == len(infos):
                continue  # upstream keeps a node whose entries are all old (sort.Search found none)
            kept = infos[first_recent:]
            if kept:
                self.scheduled_pods_cache[node_name] = kept
            else:
                del self.scheduled_pods_cache[node_name]
