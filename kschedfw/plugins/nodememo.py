"""Per-node results remembered across scheduling cycles, for pods that ask the same.

A Filter or Score result that depends only on the pod's requests (say) and on the NodeInfo is
the same for the next pod with the same requests on every node that did not change since. The
cache bumps ``NodeInfo.generation`` on every pod added or removed and on every node update (and
replaces ``NodeInfo.node``), so an entry ``node_info -> (generation, node, result)`` stays valid
while both still match. One cycle changes one node, so consecutive pods of a workload (replicas
of one template) recompute one node instead of hundreds.

Entries are keyed by the NodeInfo object itself (identity hash): a clone made for a preemption
dry run or a nominated-pods pass is another key, and plugins only use a memo for the cycle's own
CycleState, never for the clones those paths create.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Generic, Hashable, Iterable, Sized, TypeVar

if TYPE_CHECKING:
    from kschedfw.api import Node
    from kschedfw.fwk.interface import Handle
    from kschedfw.fwk.types import NodeInfo

__all__ = ["NodeMemo", "Memo", "cluster_size", "wanted", "memo_score", "memo_scores"]

V = TypeVar("V")
W = TypeVar("W")
#: One cycle's memo: ``{node_info: (generation, node, result)}``.
Memo = dict["NodeInfo", tuple[int, "Node", V]]


def wanted(handle: Handle | None) -> bool:
    """Whether a plugin built with ``handle`` may use its memos and the other incremental fast
    paths (InterPodAffinity's and PodTopologySpread's use of the cache's label and affinity term
    indexes): the scheduler's ``fast_paths`` (``Handle.fast_paths``). Off runs the plain path,
    e.g. to check that both give the same placements (benchmarks/mixed_workload.py --check); a
    plugin built without a Handle (a unit test) keeps them on."""
    return bool(getattr(handle, "fast_paths", True))


def cluster_size(handle: Handle | None, nodes: Sized) -> int:
    """How many nodes the snapshot holds (PreScore sees only the feasible ones)."""
    snapshot = getattr(handle, "snapshot", None)
    if snapshot is not None:
        try:
            return max(len(snapshot), len(nodes))
        except TypeError:
            pass
    return len(nodes)


class NodeMemo(Generic[V]):
    """Memos for the recently seen pod keys (a key: whatever the result depends on besides the
    node): at least ``keep`` of them, and up to ``most`` while that many memos of the whole
    cluster hold at most ``entries`` node results. Replicas of a template need one key; a trace of many pod shapes (the Alibaba GPU
    trace: a few dozen popular ones in turn) finds its shape still remembered on a small
    cluster, where the extra keys cost little memory, and gets ``keep`` on a large one."""

    __slots__ = ("_memos", "_keep", "_most", "_entries")

    def __init__(self, keep: int = 4, most: int = 64, entries: int = 100_000) -> None:
        self._memos: dict[Hashable, Memo[V]] = {}
        self._keep = keep
        self._most = max(keep, most)
        self._entries = entries

    def for_key(self, key: Hashable, num_nodes: int) -> Memo[V]:
        """The memo for ``key``: ``{node_info: (generation, node, result)}``. A memo grown past
        twice the cluster (removed nodes, or many node updates) starts afresh, so it holds no
        old NodeInfos for long."""
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
        self._memos.clear()


def memo_score(memo: Memo[V], fast: Callable[[NodeInfo], V], node_info: NodeInfo) -> V | None:
    """One node's score from a cycle's ``memo`` (NodeInfo -> (generation, node, value)), computed
    with ``fast(node_info)`` and remembered on a miss; None for a NodeInfo without a node (the
    caller takes its plain path)."""
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
    read inline: this runs once per scored node."""
    get = memo.get

    def miss(ni: NodeInfo) -> V | W:
        value = memo_score(memo, fast, ni)
        return plain(ni) if value is None else value

    return [hit[2] if (hit := get(ni)) is not None and hit[1] is ni.node and hit[0] == ni.generation
            else miss(ni) for ni in nodes]
