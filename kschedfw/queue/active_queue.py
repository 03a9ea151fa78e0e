"""activeQ: the heap the scheduler pops from, plus the in-flight bookkeeping (upstream
``active_queue.go``).

A pod is *in flight* from ``pop`` until ``done``. While any pod is in flight, every cluster
event the queue receives is appended to one ordered list, interleaved with markers for the
popped pods; when a pod comes back unschedulable, the events after its marker are replayed
through the queueing hints. ``done`` removes the marker and drops the events no in-flight pod
can need any more.
"""

from __future__ import annotations

import builtins
import logging
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator

import attrs

from kschedfw.fwk.events import ClusterEvent
from kschedfw.fwk.types import QueuedPodInfo
from kschedfw.queue._heap import KeyedHeap, MakeEntry

if TYPE_CHECKING:
    from kschedfw.api import Pod

log = logging.getLogger(__name__)


@attrs.frozen(slots=True)
class InFlightEvent:
    """A cluster event received while some pod was in flight (upstream ``clusterEvent``)."""

    event: ClusterEvent
    old_obj: Any = None
    new_obj: Any = None


class _Node:
    __slots__ = ("value", "prev", "next")

    def __init__(self, value: Any) -> None:
        self.value = value
        self.prev: _Node | None = None
        self.next: _Node | None = None


class _LinkedList:
    """Doubly linked list: O(1) append, unlink and pop-front."""

    __slots__ = ("head", "tail", "size")

    def __init__(self) -> None:
        self.head: _Node | None = None
        self.tail: _Node | None = None
        self.size = 0

    def append(self, value: Any) -> _Node:
        node = _Node(value)
        if self.tail is None:
            self.head = self.tail = node
        else:
            node.prev = self.tail
            self.tail.next = node
            self.tail = node
        self.size += 1
        return node

    def unlink(self, node: _Node) -> None:
        if node.prev is None:
            self.head = node.next
        else:
            node.prev.next = node.next
        if node.next is None:
            self.tail = node.prev
        else:
            node.next.prev = node.prev
        node.prev = node.next = None
        self.size -= 1

    def __iter__(self) -> Iterator[Any]:
        node = self.head
        while node is not None:
            yield node.value
            node = node.next


def pod_uid(pod: Pod) -> str:
    """The id in-flight tracking uses: the uid (``namespace/name`` if a pod has none)."""
    return pod.uid or pod.key


class ActiveQueue:
    """The heap ordered by the profile's QueueSort ``less``, and the in-flight pods/events."""

    __slots__ = ("_heap", "_in_flight_pods", "_in_flight_events", "_sched_cycle")

    def __init__(self, make_entry: MakeEntry) -> None:
        self._heap = KeyedHeap(make_entry)
        self._in_flight_pods: dict[str, _Node] = {}
        self._in_flight_events = _LinkedList()
        self._sched_cycle = 0

    # -- the heap
    def __len__(self) -> int:
        return len(self._heap)

    def has(self, key: str) -> bool:
        return key in self._heap

    def get(self, key: str) -> QueuedPodInfo | None:
        return self._heap.get(key)

    def add(self, qpi: QueuedPodInfo) -> None:
        """Add, or update in place when a pod with the same key is already there."""
        self._heap.add_or_update(qpi)

    def update(self, new_pod: Any, old_key: str) -> QueuedPodInfo | None:
        qpi = self._heap.get(old_key)
        if qpi is None:
            return None
        qpi.pod = new_pod
        self._heap.add_or_update(qpi)
        return qpi

    def delete(self, key: str) -> bool:
        return self._heap.delete(key) is not None

    def list(self) -> builtins.list[QueuedPodInfo]:
        return self._heap.ordered()

    def values(self) -> Iterable[QueuedPodInfo]:
        return self._heap.values()

    # -- popping
    @property
    def scheduling_cycle(self) -> int:
        return self._sched_cycle

    def pop(self, pop_backoff: Callable[[], QueuedPodInfo | None] | None = None
            ) -> QueuedPodInfo | None:
        """The head of the heap, or (when it is empty and ``pop_backoff`` is given) whatever
        ``pop_backoff`` returns; the pod is marked in flight. ``None`` when there is nothing."""
        while True:
            qpi = self._heap.pop()
            if qpi is None and pop_backoff is not None:
                qpi = pop_backoff()
            if qpi is None:
                return None
            if self.move_to_in_flight(qpi):
                return qpi
            log.error("discarding the popped pod %s: the same pod is tracked in multiple places "
                      "in the scheduler", qpi.pod.key)

    def move_to_in_flight(self, qpi: QueuedPodInfo) -> bool:
        qpi.attempts += 1
        uid = pod_uid(qpi.pod)
        if uid in self._in_flight_pods:
            return False
        self._in_flight_pods[uid] = self._in_flight_events.append(qpi.pod)
        self._sched_cycle += 1
        return True

    # -- in-flight pods and events
    def add_events_if_pod_in_flight(self, old_pod: Any, new_pod: Any,
                                    events: Iterable[ClusterEvent]) -> bool:
        """Record ``events`` (about ``new_pod`` itself) when that pod is in flight."""
        if pod_uid(new_pod) not in self._in_flight_pods:
            return False
        for event in events:
            self._in_flight_events.append(InFlightEvent(event, old_pod, new_pod))
        return True

    def add_event_if_any_in_flight(self, old_obj: Any, new_obj: Any, event: ClusterEvent) -> bool:
        if not self._in_flight_pods:
            return False
        self._in_flight_events.append(InFlightEvent(event, old_obj, new_obj))
        return True

    def cluster_events_for_pod(self, uid: str) -> builtins.list[InFlightEvent] | None:
        """The events received after the pod was popped; ``None`` if it is not in flight."""
        node = self._in_flight_pods.get(uid)
        if node is None:
            return None
        out = []
        node = node.next
        while node is not None:
            if isinstance(node.value, InFlightEvent):
                out.append(node.value)
            node = node.next
        return out

    def done(self, uid: str) -> None:
        node = self._in_flight_pods.pop(uid, None)
        if node is None:
            return
        events = self._in_flight_events
        events.unlink(node)
        # Drop the events at the front: only pods popped after them could still need them.
        while events.head is not None and isinstance(events.head.value, InFlightEvent):
            events.unlink(events.head)

    def in_flight_pods(self) -> builtins.list[Any]:
        return [node.value for node in self._in_flight_pods.values()]

    def in_flight_events(self) -> builtins.list[Any]:
        """The raw list: popped pods and InFlightEvents, in arrival order (for tests/debugging)."""
        return list(self._in_flight_events)

    def clear_in_flight(self) -> None:
        for uid in list(self._in_flight_pods):
            self.done(uid)
