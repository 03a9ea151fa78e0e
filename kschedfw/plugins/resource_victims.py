"""Victim selection by arithmetic when only NodeResourcesFit can change its verdict.

DefaultPreemption's dry run (upstream ``SelectVictimsOnNode``) copies the state and the node,
removes every lower-priority pod, runs Filter, then adds the victims back one by one, running
Filter again each time. That is a NodeInfo and a CycleState clone per node and a Filter pass per
victim, for a hundred nodes or more per preemptor.

When this cycle's Filter plan holds only NodeResourcesFit and plugins whose verdict depends on the
node alone (``kschedfw.plugins.filter_key.NODE_ONLY_FILTERS``: none looks at the pods on it), and
no PreFilter AddPod/RemovePod extension runs, the answer follows from sums: the node fits when the
pod count and each resource NodeResourcesFit checks stay within allocatable once the victims'
requests are subtracted and those of the nominated pods added. Adding pods only raises the sums,
so the second nominated-pods pass (without them) cannot fail where the first passed. The node-only
plugins' verdict is the one they give on the node as it is; a node they reject is handed to the
plain path, as is every node that does not fit with all victims gone (its status is computed the
plain way, once, and remembered).

Results are remembered per node for the next preemptor with the same priority, request and PDBs
while the node is unchanged (the rule of :mod:`kschedfw.fwk.node_reuse`) and so are the pods
nominated to it, and, for a result with victims, while their order cannot depend on the clock
(every victim has a start time). Consecutive preemptors then recompute only the node the previous one changed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Sequence

from kschedfw.fwk.node_reuse import Memo, NodeMemo
from kschedfw.fwk.status import Code, Status
from kschedfw.fwk.types import same_objects
from kschedfw.plugins.filter_key import NODE_ONLY_FILTERS
from kschedfw.plugins.noderesources.fit import NodeResourcesFit, fit_request_key
from kschedfw.preemption.pdb import filter_pods_with_pdb_violation

if TYPE_CHECKING:
    from kschedfw.api import Pod, PodDisruptionBudget
    from kschedfw.fwk.cycle_state import CycleState
    from kschedfw.fwk.interface import FilterFunction, Handle
    from kschedfw.fwk.types import NodeInfo, NodeToStatus

__all__ = ["ResourceVictimSelector", "VictimMemo", "VictimKey", "victim_memo", "resource_only_plan"]

#: ``(victims, num_pdb_violations, status)``, as ``select_victims_on_node`` returns it
VictimResult = tuple[list["Pod"], int, Status]
PlainSelect = Callable[["NodeInfo"], VictimResult]
#: what Filter's request checks: ``(resource name, amount)`` per checked resource
Checks = tuple[tuple[str, int], ...]
#: per node (after the stamp of fwk.node_reuse): the nominated pods it was worked out with, and the result
VictimEntry = tuple[tuple["Pod", ...], VictimResult]
#: per-node results for the last few (priority, request, PDBs) keys (a Handle's node_memo)
VictimMemo = NodeMemo[VictimEntry]

_MEMO_KEYS = 4
ERR_NO_VICTIMS = "No preemption victims found for incoming pod"


def resource_only_plan(handle: "Handle", state: "CycleState"
                       ) -> tuple[tuple[FilterFunction, ...], str, tuple[FilterFunction, ...]] | None:
    """``(node-only filters before NodeResourcesFit, its name, node-only filters after it)`` when
    this cycle's Filter plugins allow the arithmetic, else None (any other plugin, a subclass, a
    second NodeResourcesFit, a plugin the engine wraps this cycle, or an AddPod/RemovePod
    extension that runs)."""
    if handle.pre_filter_extensions_to_run(state):
        return None
    before: list[FilterFunction] = []
    after: list[FilterFunction] = []
    fit_name = ""
    for name, fn in handle.filter_plugins_to_run(state):
        kind = type(getattr(fn, "__self__", None))
        if kind is NodeResourcesFit and not fit_name:
            fit_name = name
        elif kind in NODE_ONLY_FILTERS:
            (after if fit_name else before).append(fn)
        else:
            return None
    if not fit_name:
        return None
    return tuple(before), fit_name, tuple(after)


class VictimKey:
    """What a remembered result depends on besides the node: the preemptor's priority, its
    request and the PDBs, these compared by identity (a changed PDB is a new object)."""

    __slots__ = ("priority", "checks", "pdbs", "_hash")

    def __init__(self, priority: int, checks: Checks, pdbs: Sequence[PodDisruptionBudget]) -> None:
        self.priority = priority
        self.checks = checks
        self.pdbs = tuple(pdbs)
        self._hash = hash((priority, checks, tuple(id(p) for p in self.pdbs)))

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other: object) -> bool:
        return isinstance(other, VictimKey) and self.priority == other.priority \
            and self.checks == other.checks and same_objects(self.pdbs, other.pdbs)


def victim_memo(handle: "Handle") -> VictimMemo:
    """The memo a DefaultPreemption keeps across attempts, from its Handle."""
    return handle.node_memo(keep=_MEMO_KEYS, most=_MEMO_KEYS)


class ResourceVictimSelector:
    """``select(node_info)`` for one preemption attempt: what DefaultPreemption's
    ``select_victims_on_node`` gives on copies of the state and the node, without copying them.
    The victims list may be shared with later calls: copy it before changing it.

    Build with :meth:`build`, which returns None when the arithmetic does not apply.
    """

    __slots__ = ("_pod", "_priority", "_checks", "_before", "_after", "_fit_name",
                 "_statuses", "_nominated_nodes", "_nominated", "_pdbs", "_sort", "_plain", "_memo", "_state")

    def __init__(self, *, handle: "Handle", pod: "Pod", state: "CycleState", checks: Checks,
                 before: tuple[FilterFunction, ...], fit_name: str, after: tuple[FilterFunction, ...],
                 statuses: "NodeToStatus | None", pdbs: list["PodDisruptionBudget"],
                 sort: Callable[[list["Pod"]], list["Pod"]], plain: PlainSelect,
                 memo: Memo[VictimEntry] | None) -> None:
        self._pod = pod
        self._priority = pod.effective_priority
        self._checks = checks
        self._state = state
        self._before = before
        self._fit_name = fit_name
        self._after = after
        self._statuses: dict[str, Status] | None = dict(statuses.items()) if statuses is not None else None
        # the nodes with nominated pods (a live view), and the pods to add on one (worked out
        # once per node and cycle, for Filter and this dry run alike)
        self._nominated_nodes = handle.nominated_node_names()
        to_add = handle.nominated_pods_to_add
        self._nominated: Callable[[str], Sequence["Pod"]] = lambda node_name: to_add(state, pod, node_name)
        self._pdbs = pdbs
        self._sort = sort
        self._plain = plain
        self._memo = memo

    @classmethod
    def build(cls, handle: "Handle", state: "CycleState", pod: "Pod", *, statuses: "NodeToStatus | None",
              pdbs: list["PodDisruptionBudget"], sort: Callable[[list["Pod"]], list["Pod"]],
              plain: PlainSelect, memos: VictimMemo | None, num_nodes: int) -> "ResourceVictimSelector | None":
        """The selector for ``pod`` in this cycle, or None when the plain path must run.
        ``statuses`` are Filter's verdicts this cycle (a node rejected by NodeResourcesFit passed
        the plugins before it); ``plain`` is the plain selection on copies; ``sort`` orders
        victims most important first; ``memos`` (None: none) keeps results across attempts."""
        shape = resource_only_plan(handle, state)
        if shape is None:
            return None
        request = fit_request_key(state)
        if request is None:
            return None  # NodeResourcesFit would report an error: the plain path says which
        milli_cpu, memory, ephemeral_storage, scalars = request
        checks: list[tuple[str, int]] = []
        for name, amount in (("cpu", milli_cpu), ("memory", memory), ("ephemeral-storage", ephemeral_storage)):
            if amount > 0:  # NodeResourcesFit skips zero requests of these three
                checks.append((name, amount))
        checks.extend(scalars)
        before, fit_name, after = shape
        key = tuple(checks)
        memo = memos.for_key(VictimKey(pod.effective_priority, key, pdbs), num_nodes) if memos is not None else None
        return cls(handle=handle, pod=pod, state=state, checks=key, before=before, fit_name=fit_name, after=after,
                   statuses=statuses, pdbs=pdbs, sort=sort, plain=plain, memo=memo)

    # ------------------------------------------------------------------ per node
    def _node_only_pass(self, fns: tuple[FilterFunction, ...], node_info: "NodeInfo") -> bool:
        """True when every plugin in ``fns`` accepts the node (None); anything else (a status,
        even Success, or an exception) sends the node down the plain path."""
        state, pod = self._state, self._pod
        try:
            for fn in fns:
                if fn(state, pod, node_info) is not None:
                    return False
        except Exception:
            return False
        return True

    def __call__(self, node_info: "NodeInfo") -> VictimResult:
        name = node_info.name
        if self._before:
            main = self._statuses.get(name) if self._statuses is not None else None
            # Rejected by NodeResourcesFit in Filter: the plugins before it accepted this node.
            if (main is None or main.plugin != self._fit_name) and not self._node_only_pass(self._before, node_info):
                return self._plain(node_info)
        if self._after and not self._node_only_pass(self._after, node_info):
            return self._plain(node_info)
        nominated: Sequence["Pod"] = self._nominated(name) if name in self._nominated_nodes else ()
        memo = self._memo
        if memo is not None:
            hit = memo.get(node_info)
            if hit is not None and hit[0] == node_info.generation and hit[1] is node_info.node \
                    and same_objects(hit[2][0], nominated):
                return hit[2][1]  # (the rule of fwk.node_reuse, inlined, and the nominated pods)
        priority = self._priority
        potential = [p for p in node_info.pods if p.effective_priority < priority]
        if potential:
            result, keep = self._select(node_info, potential, nominated)
        else:
            result, keep = ([], 0, Status(Code.UnschedulableAndUnresolvable, (ERR_NO_VICTIMS,))), True
        if memo is not None and keep:
            memo[node_info] = (node_info.generation, node_info.node, (tuple(nominated), result))
        return result

    def _select(self, node_info: "NodeInfo", potential: list["Pod"], nominated: Sequence["Pod"]
                ) -> tuple[VictimResult, bool]:
        """The result and whether it may be remembered."""
        checks = self._checks
        alloc = node_info.node.allocatable if node_info.node is not None else {}
        # fits <=> count <= pods_limit and used[i] <= limits[i] for every checked resource
        pods_limit = alloc.get("pods", 0) - 1
        limits = [alloc.get(name, 0) - amount for name, amount in checks]
        requested = node_info.requested
        used = [requested.get(name, 0) for name, _ in checks]
        index = {name: i for i, (name, _) in enumerate(checks)}
        count = len(node_info.pods) - len(potential) + len(nominated)
        for p in nominated:
            for rname, amount in p.node_delta()[0]:
                i = index.get(rname)
                if i is not None:
                    used[i] += amount
        vectors: dict[int, list[tuple[int, int]]] = {}
        for p in potential:
            vector = [(index[rname], amount) for rname, amount in p.node_delta()[0] if rname in index]
            vectors[id(p)] = vector
            for i, amount in vector:
                used[i] -= amount
        if count > pods_limit or any(u > lim for u, lim in zip(used, limits)):
            # No fit even with every victim gone: the plain path gives the exact status.
            result = self._plain(node_info)
            status = result[2]  # kept when it is a rejection (an Error is met again next time)
            return result, not result[0] and status is not None and status.is_rejected()
        ordered = self._sort(potential)
        violating, non_violating = filter_pods_with_pdb_violation(ordered, self._pdbs)
        victims: list["Pod"] = []
        num_violating = 0
        for group, is_violating in ((violating, True), (non_violating, False)):
            for victim in group:
                vector = vectors[id(victim)]
                fits = count + 1 <= pods_limit
                if fits:
                    for i, amount in vector:
                        if used[i] + amount > limits[i]:
                            fits = False
                            break
                if fits:  # reprieved: it stays
                    count += 1
                    for i, amount in vector:
                        used[i] += amount
                else:
                    victims.append(victim)
                    if is_violating:
                        num_violating += 1
        if violating and non_violating:
            victims = self._sort(victims)
        timeless = all(p.start_time is not None for p in potential)
        return (victims, num_violating, Status(Code.Success)), timeless
