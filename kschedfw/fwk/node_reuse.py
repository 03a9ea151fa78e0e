"""Reusing per-node results across scheduling cycles: the one rule and the memo that follows it.

The rule (:class:`NodeStamp`): a value worked out from a snapshot NodeInfo (and from nothing else
that can change unseen) is still right while the NodeInfo is the same object (a clone made for a
preemption dry run or a nominated-pods pass is another node), with the same ``generation`` and
the same ``node`` object. The cache keeps it so: it bumps ``generation`` on every pod added or
removed, on every node update and whenever the node's ``image_states`` change, and replaces
``node`` rather than changing it in place. Whatever else a value depends on (the pod's requests,
the pods nominated to the node) is part of the key or the entry that holds the stamp, checked
beside it, never instead of it.

The facility (:class:`NodeMemo`): a plugin asks its Handle for one (``handle.node_memo()``) and
never builds its own nor asks whether fast paths are on. The runtime owns its lifetime (it dies
with the profile and the runtime may clear it) and the switch: with the scheduler's fast paths
off the Handle gives a memo that keeps nothing, so the plugin takes its plain path with no branch
of its own. One memo holds a :data:`Memo` (``{node_info: (generation, node, value)}``) per key;
one cycle changes one node, so the next pod with the same key (a replica of one template)
recomputes one node instead of hundreds.

A hot path may read an entry inline (``hit[0] == ni.generation and hit[1] is ni.node``, see
:func:`memo_scores`); it then says so with a comment naming this rule.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Generic, Hashable, Iterable, Sized, TypeVar

import attrs

from kschedfw.fwk.types import NodeInfo

if TYPE_CHECKING:
    from kschedfw.fwk.interface import Handle

__all__ = ["NodeStamp", "NodeMemo", "Memo", "memo_score", "memo_scores", "cluster_size"]

V = TypeVar("V")
W = TypeVar("W")
#: One key's memo: ``{node_info: (generation, node, value)}`` (the stamp, then the value).
Memo = dict[NodeInfo, tuple[int, Any, V]]


@attrs.define(slots=True, eq=False)
class NodeStamp:
    """What a kept value was worked out from: the snapshot NodeInfo and its changing parts
    (a class to extend with what else the value depends on)."""

    source: NodeInfo
    generation: int
    node: Any

    @classmethod
    def of(cls, node_info: NodeInfo) -> NodeStamp:
        return cls(node_info, node_info.generation, node_info.node)

    def matches(self, node_info: NodeInfo) -> bool:
        """Whether ``node_info`` is still what this stamp was taken from (the rule above)."""
        return self.source is node_info and self.generation == node_info.generation \
            and self.node is node_info.node


class _KeepsNothing(dict[NodeInfo, tuple[int, Any, V]]):
    """The :data:`Memo` of a memo that keeps nothing: every write is dropped."""

    def __setitem__(self, key: NodeInfo, value: tuple[int, Any, V]) -> None:
        return None


class NodeMemo(Generic[V]):
    """Memos for the recently seen keys (a key: whatever the value depends on besides the node):
    at least ``keep`` of them, and up to ``most`` while that many memos of the whole cluster hold
    at most ``entries`` node values. Replicas of a template need one key; a trace of many pod
    shapes (a few dozen popular ones in turn) finds its shape still remembered on a small
    cluster, where the extra keys cost little memory, and gets ``keep`` on a large one.

    Get one from the Handle (``handle.node_memo()``); ``keeps=False`` is the memo the Handle
    gives with the fast paths off."""

    __slots__ = ("_memos", "_keep", "_most", "_entries", "keeps")

    def __init__(self, keep: int = 4, most: int = 64, entries: int = 100_000, *, keeps: bool = True) -> None:
        self._memos: dict[Hashable, Memo[V]] = {}
        self._keep = keep
        self._most = max(keep, most)
        self._entries = entries
        #: False: every :meth:`for_key` gives an empty memo that drops what is written to it
        self.keeps = keeps

    def for_key(self, key: Hashable, num_nodes: int) -> Memo[V]:
        """The memo for ``key``. A memo grown past twice the cluster (removed nodes, or many
        node updates) starts afresh, so it holds no old NodeInfos for long."""
        if not self.keeps:
            return _KeepsNothing()
        memos = self._memos
        memo = memos.pop(key, None)
        if memo is None or len(memo) > 2 * num_nodes + 64:
            memo = {}
        memos[key] = memo  # most recently used last
        keep = self._keep
        if len(memos) > keep:
            fits = max(keep, min(self._most, self._entries // max(num_nodes, 1)))
            while len(memos) > fits:
                del memos[next(iter(memos))]
        return memo

    def clear(self) -> None:
        """Forget every key (the runtime's call: see ``Handle.node_memo``)."""
        self._memos.clear()


def memo_score(memo: Memo[V], fast: Callable[[NodeInfo], V], node_info: NodeInfo) -> V | None:
    """One node's value from ``memo``, worked out with ``fast(node_info)`` and remembered on a
    miss; None for a NodeInfo without a node (the caller takes its plain path)."""
    node = node_info.node
    if node is None:
        return None
    hit = memo.get(node_info)
    if hit is not None and hit[0] == node_info.generation and hit[1] is node:
        return hit[2]
    value = fast(node_info)
    memo[node_info] = (node_info.generation, node, value)
    return value


def memo_scores(memo: Memo[V], fast: Callable[[NodeInfo], V], nodes: Iterable[NodeInfo],
                plain: Callable[[NodeInfo], W]) -> list[V | W]:
    """:func:`memo_score` for each of ``nodes`` at once (the whole-list form of a memoized Score,
    see hookspecs.WholeListScore); a NodeInfo without a node goes to ``plain(node_info)``. Hits are
    read inline (the rule of this module): this runs once per scored node."""
    get = memo.get

    def miss(ni: NodeInfo) -> V | W:
        value = memo_score(memo, fast, ni)
        return plain(ni) if value is None else value

    return [hit[2] if (hit := get(ni)) is not None and hit[1] is ni.node and hit[0] == ni.generation
            else miss(ni) for ni in nodes]


def cluster_size(handle: Handle | None, nodes: Sized) -> int:
    """How many nodes the snapshot holds (PreScore sees only the feasible ones): the
    ``num_nodes`` to give :meth:`NodeMemo.for_key`."""
    if handle is None:
        return len(nodes)
    return max(len(handle.snapshot), len(nodes))
