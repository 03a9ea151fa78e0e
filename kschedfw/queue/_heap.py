"""A binary heap of queued pods keyed by ``namespace/name`` (upstream ``backend/heap``).

Push, pop and removal are O(log n): removal and update are lazy (the stale entry stays in the
list and is skipped when it reaches the top; the list is rebuilt when stale entries dominate).
Each entry carries a sequence number given when the pod entered the heap, so pods that compare
equal come out first-in first-out, which makes every run reproducible.
"""

from __future__ import annotations

import heapq
import itertools
from typing import Any, Callable, Iterator

from kschedfw.fwk.types import QueuedPodInfo

#: A tuple (or tuple subclass) ending with (sequence number, QueuedPodInfo), its sort keys first.
Entry = tuple[Any, ...]
MakeEntry = Callable[[QueuedPodInfo, int], Entry]
LessFunc = Callable[[QueuedPodInfo, QueuedPodInfo], bool]


class _LessEntry(tuple[Any, ...]):
    """Base of the comparator-ordered entries built by :func:`less_entry_factory`."""

    __slots__ = ()


def less_entry_factory(less: LessFunc, primary: Callable[[QueuedPodInfo], float] | None = None
                       ) -> MakeEntry:
    """Entries ordered by ``primary(qpi)`` (if given), then by ``less``, then first-in first-out.

    An entry is ``(primary, seq, qpi)`` or ``(seq, qpi)``; ``less`` is called at most twice per
    comparison (``a < b``, else ``b < a``, else the sequence decides)."""
    if primary is None:
        class _Entry(_LessEntry):
            __slots__ = ()

            def __lt__(self, other: Entry) -> bool:
                a, b = self[1], other[1]
                if less(a, b):
                    return True
                if less(b, a):
                    return False
                earlier: bool = self[0] < other[0]
                return earlier
        return lambda qpi, seq: _Entry((seq, qpi))

    class _PrimaryEntry(_LessEntry):
        __slots__ = ()

        def __lt__(self, other: Entry) -> bool:
            first: bool
            if self[0] != other[0]:
                first = self[0] < other[0]
                return first
            a, b = self[2], other[2]
            if less(a, b):
                return True
            if less(b, a):
                return False
            first = self[1] < other[1]
            return first
    return lambda qpi, seq: _PrimaryEntry((primary(qpi), seq, qpi))


def key_entry_factory(*keys: Callable[[QueuedPodInfo], Any]) -> MakeEntry:
    """Entries ordered by the tuple of ``keys(qpi)``, then first-in first-out (fast: C compares)."""
    if len(keys) == 1:
        k0 = keys[0]
        return lambda qpi, seq: (k0(qpi), seq, qpi)
    if len(keys) == 2:
        k0, k1 = keys
        return lambda qpi, seq: (k0(qpi), k1(qpi), seq, qpi)
    return lambda qpi, seq: (*(k(qpi) for k in keys), seq, qpi)


class KeyedHeap:
    """Min-heap of QueuedPodInfo, at most one per pod key."""

    __slots__ = ("_entries", "_live", "_seq", "_make")

    def __init__(self, make_entry: MakeEntry) -> None:
        self._entries: list[Entry] = []
        self._live: dict[str, Entry] = {}
        self._seq = itertools.count()
        self._make = make_entry

    def __len__(self) -> int:
        return len(self._live)

    def __contains__(self, key: str) -> bool:
        return key in self._live

    def get(self, key: str) -> QueuedPodInfo | None:
        entry = self._live.get(key)
        if entry is None:
            return None
        qpi: QueuedPodInfo = entry[-1]
        return qpi

    def add_or_update(self, qpi: QueuedPodInfo) -> None:
        """Insert ``qpi``, or replace the entry with its key (keeping its place among equals)."""
        key = qpi.pod.key
        old = self._live.get(key)
        if old is not None:
            # The old entry's position in the list may now be wrong: leave it as a stale entry.
            seq = old[-2]
        else:
            seq = next(self._seq)
        entry = self._make(qpi, seq)
        self._live[key] = entry
        heapq.heappush(self._entries, entry)
        if old is not None:
            self._maybe_compact()

    def delete(self, key: str) -> QueuedPodInfo | None:
        entry = self._live.pop(key, None)
        if entry is None:
            return None
        self._maybe_compact()
        qpi: QueuedPodInfo = entry[-1]
        return qpi

    def peek(self) -> QueuedPodInfo | None:
        entries, live = self._entries, self._live
        while entries:
            top = entries[0]
            if live.get(top[-1].pod.key) is top:
                qpi: QueuedPodInfo = top[-1]
                return qpi
            heapq.heappop(entries)
        return None

    def pop(self) -> QueuedPodInfo | None:
        entries, live = self._entries, self._live
        while entries:
            top = heapq.heappop(entries)
            key = top[-1].pod.key
            if live.get(key) is top:
                del live[key]
                qpi: QueuedPodInfo = top[-1]
                return qpi
        return None

    def values(self) -> Iterator[QueuedPodInfo]:
        """Entries in no particular order."""
        return (e[-1] for e in self._live.values())

    def ordered(self) -> list[QueuedPodInfo]:
        """Entries in the order ``pop`` would return them (O(n log n); for reporting)."""
        return [e[-1] for e in sorted(self._live.values())]

    def clear(self) -> None:
        self._entries.clear()
        self._live.clear()

    def _maybe_compact(self) -> None:
        if len(self._entries) > 2 * len(self._live) + 64:
            self._entries = list(self._live.values())
            heapq.heapify(self._entries)
