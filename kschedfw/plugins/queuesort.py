"""PrioritySort: the default QueueSort plugin (upstream ``queuesort``).

Higher priority first; among equal priorities, the pod that entered the queue earlier first.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kschedfw import hookimpl

if TYPE_CHECKING:
    from kschedfw.fwk.interface import Handle
    from kschedfw.fwk.types import QueuedPodInfo


class PrioritySort:
    """Orders the active queue by ``spec.priority`` (missing = 0), then by queue timestamp."""

    name = "PrioritySort"

    def __init__(self, args: dict[str, Any] | None = None, handle: Handle | None = None) -> None:
        self.handle = handle

    @hookimpl
    def less(self, pod_info_a: QueuedPodInfo, pod_info_b: QueuedPodInfo) -> bool:
        p1 = pod_info_a.pod.effective_priority
        p2 = pod_info_b.pod.effective_priority
        return p1 > p2 or (p1 == p2 and pod_info_a.timestamp < pod_info_b.timestamp)

    def sort_key(self, pod_info: QueuedPodInfo) -> tuple[int, float]:
        """The order of :meth:`less` as a key (smaller first): the queue's fast path."""
        return (-pod_info.pod.effective_priority, pod_info.timestamp)
