"""The one rule for anything the runtime keeps about a snapshot NodeInfo from one cycle to the next.

Invariant: a value worked out from a snapshot NodeInfo (and from nothing else that can change
unseen) is still right while its :class:`NodeStamp` matches that NodeInfo: the same object
(identity: a clone made for a preemption dry run or a nominated-pods pass is another node), the
same ``generation``, the same ``node`` object and the same ``image_states`` object. The cache
keeps it so: it bumps ``generation`` on every pod added or removed and on every node update, and
replaces ``node`` (and ``image_states`` when images move) rather than changing them in place.

Whatever else the value depends on (the pods nominated to the node, the pod being scheduled) is
part of the entry that holds the stamp and checked beside it, never instead of it.
"""

from __future__ import annotations

from typing import Any

import attrs

from kschedfw.fwk.types import NodeInfo

__all__ = ["NodeStamp"]


@attrs.define(slots=True, eq=False)
class NodeStamp:
    """What a kept value was worked out from: the snapshot NodeInfo and its changing parts."""

    source: NodeInfo
    generation: int
    node: Any
    image_states: Any

    @classmethod
    def of(cls, node_info: NodeInfo) -> "NodeStamp":
        return cls(node_info, node_info.generation, node_info.node, node_info.image_states)

    def matches(self, node_info: NodeInfo) -> bool:
        """Whether ``node_info`` is still what this stamp was taken from (the invariant above)."""
        return self.source is node_info and self.generation == node_info.generation \
            and self.node is node_info.node and self.image_states is node_info.image_states
