"""The unschedulable pod pool (upstream ``unschedulable_pods.go``): pods that were tried and
rejected, and *gated* pods (rejected by a PreEnqueue plugin, never tried). Keyed by
``namespace/name``.

Besides the map, the pool keeps what the queue needs to stay fast with large pools: the gated
count (``scheduler_pending_pods{queue="gated"}``), a min-heap of entry timestamps for the
5-minute leftover flush, and the subset of pods an assigned-pod event can help (pods with
required pod-affinity terms, or rejected by PodTopologySpread).
"""

from __future__ import annotations

import heapq
import itertools
from typing import Callable, Iterator

from kschedfw.fwk.types import QueuedPodInfo

POD_TOPOLOGY_SPREAD = "PodTopologySpread"


def _cross_topology_candidate(qpi: QueuedPodInfo) -> bool:
    if POD_TOPOLOGY_SPREAD in qpi.unschedulable_plugins:
        return True
    affinity = qpi.pod.affinity
    return bool(affinity is not None and affinity.pod_affinity is not None
                and affinity.pod_affinity.required)


class UnschedulablePods:
    __slots__ = ("pod_infos", "_gated", "gated_count", "_by_time", "_seq", "_cross", "_groups", "_ungated")

    def __init__(self) -> None:
        self.pod_infos: dict[str, QueuedPodInfo] = {}
        self._gated: dict[str, bool] = {}  # the gated state each entry was counted with
        self.gated_count = 0
        self._by_time: list[tuple[float, int, QueuedPodInfo]] = []
        self._seq = itertools.count()
        self._cross: dict[str, QueuedPodInfo] = {}
        # gated pods grouped by (schedulerName, gating plugin): an event the plugin does not
        # care about skips the whole group without looking at its pods
        self._groups: dict[tuple[str, str], dict[str, QueuedPodInfo]] = {}
        self._ungated: dict[str, QueuedPodInfo] = {}

    def __len__(self) -> int:
        return len(self.pod_infos)

    def __contains__(self, key: str) -> bool:
        return key in self.pod_infos

    def get(self, key: str) -> QueuedPodInfo | None:
        return self.pod_infos.get(key)

    def values(self) -> Iterator[QueuedPodInfo]:
        return iter(self.pod_infos.values())

    def add_or_update(self, qpi: QueuedPodInfo) -> bool:
        """Store ``qpi``; returns True when the pod was not in the pool before."""
        key = qpi.pod.key
        gated = bool(qpi.gating_plugin)
        new = key not in self.pod_infos
        if not new:
            was_gated = self._gated[key]
            if was_gated != gated:
                self.gated_count += 1 if gated else -1
            old = self.pod_infos[key]
            push = old is not qpi or old.timestamp != qpi.timestamp
        else:
            if gated:
                self.gated_count += 1
            push = True
        if not new:
            self._ungroup(key, self.pod_infos[key])
        self.pod_infos[key] = qpi
        self._gated[key] = gated
        if gated:
            self._groups.setdefault((qpi.pod.scheduler_name, qpi.gating_plugin), {})[key] = qpi
        else:
            self._ungated[key] = qpi
        if push:
            heapq.heappush(self._by_time, (qpi.timestamp, next(self._seq), qpi))
            if len(self._by_time) > 2 * len(self.pod_infos) + 64:
                self._compact()
        if _cross_topology_candidate(qpi):
            self._cross[key] = qpi
        else:
            self._cross.pop(key, None)
        return new

    def delete(self, key: str) -> QueuedPodInfo | None:
        qpi = self.pod_infos.pop(key, None)
        if qpi is None:
            return None
        if self._gated.pop(key):
            self.gated_count -= 1
        self._cross.pop(key, None)
        self._ungroup(key, qpi)
        return qpi

    def _ungroup(self, key: str, qpi: QueuedPodInfo) -> None:
        if self._ungated.pop(key, None) is not None:
            return
        for group_key, group in self._groups.items():
            if group.pop(key, None) is not None:
                if not group:
                    del self._groups[group_key]
                return

    def candidates(self, gating_plugin_cares: Callable[[str, str], bool]) -> list[QueuedPodInfo]:
        """Pods an event may move: every ungated pod, and gated pods whose gating plugin
        (per schedulerName) ``gating_plugin_cares`` about the event."""
        out = list(self._ungated.values())
        for (scheduler_name, plugin), group in self._groups.items():
            if gating_plugin_cares(scheduler_name, plugin):
                out.extend(group.values())
        return out

    def cross_topology_candidates(self) -> list[QueuedPodInfo]:
        return list(self._cross.values())

    # -- the leftover flush
    def _valid(self, entry: tuple[float, int, QueuedPodInfo]) -> bool:
        ts, _, qpi = entry
        return self.pod_infos.get(qpi.pod.key) is qpi and qpi.timestamp == ts

    def pop_expired(self, expired: Callable[[float], bool]) -> list[QueuedPodInfo]:
        """Take out of the time index (not out of the pool) every pod whose timestamp satisfies
        ``expired``, oldest first. A pod put back with the same timestamp is indexed again."""
        out = []
        seen: set[int] = set()
        heap = self._by_time
        while heap:
            entry = heap[0]
            if not self._valid(entry):
                heapq.heappop(heap)
                continue
            if not expired(entry[0]):
                break
            heapq.heappop(heap)
            if id(entry[2]) not in seen:
                seen.add(id(entry[2]))
                out.append(entry[2])
        return out

    def oldest(self, eligible: Callable[[QueuedPodInfo], bool]) -> QueuedPodInfo | None:
        """The pod with the oldest timestamp among those ``eligible`` for the leftover flush.
        Ineligible pods are dropped from the time index; they return to it when re-stored."""
        heap = self._by_time
        while heap:
            entry = heap[0]
            if self._valid(entry) and eligible(entry[2]):
                return entry[2]
            heapq.heappop(heap)
        return None

    def _compact(self) -> None:
        self._by_time = [e for e in self._by_time if self._valid(e)]
        heapq.heapify(self._by_time)

    def clear(self) -> None:
        self.pod_infos.clear()
        self._gated.clear()
        self.gated_count = 0
        self._by_time.clear()
        self._cross.clear()
        self._groups.clear()
        self._ungated.clear()
