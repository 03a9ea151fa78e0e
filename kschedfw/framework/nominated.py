"""Filter with nominated pods (upstream RunFilterPluginsWithNominatedPods and addGENominatedPods).

A pod must leave room on a node for the pods nominated to it with at least its priority: when
there are some, the node is filtered twice, once with those pods added (on a clone of the node,
and of the CycleState when an AddPod extension will change it) and, if that passes, once as it
is; when there are none, the node takes the plain Filter (:data:`PLAIN`).

Kept across cycles, per node, while the node's :class:`~kschedfw.fwk.node_reuse.NodeStamp`
matches (its invariant): the clone with the pods added (:class:`_KeptNode`), so the next pod that
must leave room for the same pods reuses it, and with a Filter verdict key (the Filter plugins'
``filter_verdict_key``, see :mod:`kschedfw.fwk.hookspecs`) the outcome of the two passes for that key.
An entry may also say which of the nominator's kept lists (``Nominator.kept_lists``) and which
priority its pods came from: a later pod of that priority then reuses it without asking the
nominator again, as long as that same list object is still the kept one. Nothing is kept without
``fast_paths``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Collection, Hashable, Mapping

import attrs

from kschedfw.fwk.cycle_state import CycleState
from kschedfw.fwk.node_reuse import NodeStamp
from kschedfw.fwk.status import Code, Status
from kschedfw.fwk.types import NodeInfo, same_objects

if TYPE_CHECKING:
    from kschedfw.api import Pod
    from kschedfw.framework.handle import Handle

__all__ = ["PLAIN", "NominatedPods", "NominatedContext"]

Plan = tuple[tuple[str, Callable[..., Any]], ...]
RunFilter = Callable[[CycleState, "Pod", NodeInfo], "Status | None"]
RunAddPod = Callable[[CycleState, "Pod", "Pod", NodeInfo], "Status | None"]

#: :meth:`NominatedPods.outcome`: no nominated pod to add, the node takes the plain Filter
PLAIN: Any = object()
_MISSING: Any = object()
_REJECTED_CODES = frozenset({Code.Unschedulable, Code.UnschedulableAndUnresolvable, Code.Pending})
#: outcomes kept per node (distinct verdict keys seen while the node and its nominations stayed put)
_KEPT_OUTCOMES = 8
#: distinct verdict keys interned before the table starts again
_INTERNED_KEYS = 4096


class _InternedKey:
    """One object per distinct Filter verdict key: the per-node outcome lookups then hash and
    compare by identity in C, where the key itself (tolerations, requests: attrs objects) would
    be hashed and compared in Python once per node with nominations."""

    __slots__ = ()


@attrs.define(slots=True, eq=False)
class _KeptNode(NodeStamp):
    """A node's nominated pods to add and its clone with them added (``info``, None when there
    are none); ``outcomes``: the two passes' status per verdict key (None: both passed);
    ``nominated``/``priority``: the nominator's kept list and the priority ``pods`` were derived
    from (None: not known to be)."""

    pods: list[Any] = attrs.Factory(list)
    info: NodeInfo | None = None
    outcomes: dict[Hashable, Status | None] = attrs.Factory(dict)
    nominated: list[Any] | None = None
    priority: int = 0


@attrs.define(slots=True, frozen=True)
class NominatedContext:
    """One Filter search's view of the nominations, worked out once: the nodes that have some,
    the AddPod extensions to run, the verdict key (None: outcomes are not kept), the nominator's
    kept lists (None: entries are not trusted without asking the nominator), the node the pod
    itself is nominated to, its priority, and this cycle's node -> pods to add."""

    nodes: Collection[str]
    extensions: Plan
    key: Hashable | None
    lists: Mapping[str, list[Any]] | None
    own: str
    priority: int
    cycle_pods: dict[str, list[Any]]


def _copy_kept(status: Status) -> Status:
    """A copy of a kept outcome (a plain Status with a tuple of reasons) to hand out, so that
    whoever changes it does not change the kept one; built without the generated __init__ and
    its converter, as it is on the hot path."""
    out = _new_object(Status)
    out.code = status.code
    out.reasons = status.reasons
    out.plugin = status.plugin
    out.error = status.error
    return out


_new_object = object.__new__


class NominatedPods:
    """The nominated-pods pass of one profile, and what it keeps between cycles."""

    def __init__(self, handle: "Handle", run_filter: RunFilter, run_add_pod: RunAddPod, *, keep: bool) -> None:
        self._handle = handle
        self._run_filter = run_filter
        self._run_add_pod = run_add_pod
        self._keep = keep
        self._kept: dict[str, _KeptNode] = {}
        self._interned: dict[Hashable, _InternedKey] = {}
        #: (cycle state, pod, nominator version, node name -> pods to add): see pods_to_add
        self._cycle: tuple[Any, Any, Any, dict[str, list[Any]]] = (None, None, None, {})

    def begin(self, state: CycleState, pod: "Pod", extensions: Plan, key: Hashable | None,
              nominated_nodes: Collection[str]) -> NominatedContext:
        """The context of one Filter search over nodes, ``nominated_nodes`` those with nominations."""
        kept = self._kept
        if len(kept) > 2 * len(nominated_nodes) + 64 or (kept and not nominated_nodes):
            # nominations moved on: keep only the nodes that still have some
            self._kept = {name: entry for name, entry in kept.items() if name in nominated_nodes}
        nominator = self._handle.nominator
        kept_lists = getattr(nominator, "kept_lists", None)
        node_of = getattr(nominator, "nominated_node_name", None)
        lists = kept_lists() if self._keep and kept_lists is not None and node_of is not None and pod.uid else None
        own = node_of(pod) if node_of is not None and lists is not None else ""
        interned: _InternedKey | None = None
        if key is not None and self._keep and not extensions:
            interned = self._interned.get(key)
            if interned is None:
                if len(self._interned) >= _INTERNED_KEYS:
                    self._interned.clear()  # outcomes kept under the old objects just stop matching
                interned = self._interned[key] = _InternedKey()
        return NominatedContext(nominated_nodes, extensions, interned,
                                lists, own, pod.effective_priority, self._cycle_pods(state, pod))

    def outcome(self, ctx: NominatedContext, state: CycleState, pod: "Pod", node_info: NodeInfo) -> Any:
        """A node with nominations: its two passes' status (None: both passed), or :data:`PLAIN`
        when ``pod`` must leave room for none of them. HOT PATH when hundreds of nodes have
        nominated pods: a kept entry derived from the nominator's list the pod would be given
        answers without asking the nominator."""
        name = node_info.name
        kept = self._kept.get(name)
        if kept is not None and not (kept.source is node_info and kept.generation == node_info.generation
                                     and kept.node is node_info.node):
            kept = None  # (NodeStamp.matches, the rule of fwk.node_reuse, inlined: once per node with nominations per cycle)
        lists = ctx.lists
        source = lists.get(name) if lists is not None and name != ctx.own else None
        if kept is not None and source is not None and kept.nominated is source and kept.priority == ctx.priority:
            to_add = ctx.cycle_pods[name] = kept.pods
            if not to_add:
                return PLAIN
            if ctx.extensions:
                # the kept clone was built without this cycle's AddPod extensions (an earlier
                # pod's PreFilter skipped them): the pods are the same, the CycleState must see them
                return self._two_passes(state, pod, node_info, to_add, ctx.extensions, None)
        else:
            to_add = self.pods_to_add(state, pod, name)
            if ctx.extensions or not self._keep:
                return self._two_passes(state, pod, node_info, to_add, ctx.extensions, None) if to_add else PLAIN
            if kept is None or not same_objects(kept.pods, to_add) or (to_add and kept.info is None):
                info = None
                if to_add:
                    info = node_info.clone()
                    for other in to_add:
                        info.add_pod(other)
                kept = self._kept[name] = _KeptNode(node_info, node_info.generation, node_info.node, to_add, info)
            self._derived(kept, source, ctx.priority, pod)
            if not to_add:
                return PLAIN
        key = ctx.key
        if key is not None:
            known = kept.outcomes.get(key, _MISSING)
            if known is not _MISSING:
                return None if known is None else _copy_kept(known)
        status = self._two_passes(state, pod, node_info, to_add, (), kept.info)
        if key is not None and (status is None or status.is_rejected()):
            # (an Error is not kept: the next pod meets the fault itself)
            if len(kept.outcomes) >= _KEPT_OUTCOMES:
                kept.outcomes.clear()
            kept.outcomes[key] = None if status is None else _copy_kept(status)
        return status

    def filter_chunk(self, ctx: NominatedContext, state: CycleState, pod: "Pod", chunk: list[NodeInfo],
                     failed: dict[NodeInfo, Status]) -> list[NodeInfo] | None:
        """A chunk of a Filter search: the nodes left for the plain Filter (those without
        nominations to leave room for), the rejections of the others put in ``failed``; None when
        a node's two passes gave anything but a success or a plain rejection (the chunk is then
        taken node by node). HOT PATH: :meth:`outcome`'s answer from a kept entry is inlined, as
        hundreds of nodes per pod may have nominations."""
        nodes, kept_map, lists, own = ctx.nodes, self._kept, ctx.lists, ctx.own
        priority, key, cycle_pods = ctx.priority, ctx.key, ctx.cycle_pods
        survivors: list[NodeInfo] = []
        for ni in chunk:
            name = ni.name
            if name not in nodes:
                survivors.append(ni)
                continue
            kept = kept_map.get(name) if lists is not None and name != own else None
            # (NodeStamp.matches, the rule of fwk.node_reuse, inlined)
            if kept is not None and lists is not None and kept.source is ni and kept.generation == ni.generation \
                    and kept.node is ni.node and kept.nominated is not None and kept.nominated is lists.get(name) \
                    and kept.priority == priority:
                pods = cycle_pods[name] = kept.pods
                if not pods:
                    survivors.append(ni)
                    continue
                if key is not None:
                    known = kept.outcomes.get(key, _MISSING)
                    if known is None:
                        continue  # passed both passes: not filtered again
                    if known is not _MISSING:  # (a kept outcome is a plain rejection)
                        failed[ni] = _copy_kept(known)
                        continue
            status = self.outcome(ctx, state, pod, ni)
            if status is PLAIN:
                survivors.append(ni)
            elif status is None or (type(status) is Status and status.code is Code.Success):
                continue  # passed both passes: not filtered again
            elif type(status) is Status and status.code in _REJECTED_CODES:
                failed[ni] = status
            else:
                return None
        return survivors

    def run(self, state: CycleState, pod: "Pod", node_info: NodeInfo, extensions: Plan) -> Status | None:
        """Upstream RunFilterPluginsWithNominatedPods for one node, nothing kept or reused."""
        to_add = self._nominated_to(pod, node_info.name)
        if not to_add:
            return self._run_filter(state, pod, node_info)
        return self._two_passes(state, pod, node_info, to_add, extensions, None)

    def _two_passes(self, state: CycleState, pod: "Pod", node_info: NodeInfo, to_add: list[Any],
                    extensions: Plan, with_pods: NodeInfo | None) -> Status | None:
        """Filter ``node_info`` with ``to_add`` added (``with_pods``, when given, is that node
        already), then, if that passed, as it is. The CycleState is cloned only when an AddPod
        extension will change it."""
        state_with = state
        if with_pods is None:
            with_pods = node_info.clone()
            if extensions:
                state_with = state.clone()
            for other in to_add:
                with_pods.add_pod(other)
                if extensions:
                    status = self._run_add_pod(state_with, pod, other, with_pods)
                    if status is not None:
                        return status
        status = self._run_filter(state_with, pod, with_pods)
        if status is None or status.is_success():
            status = self._run_filter(state, pod, node_info)
        return status

    def _derived(self, kept: _KeptNode, source: list[Any] | None, priority: int, pod: "Pod") -> None:
        """Mark ``kept`` as derived from the nominator's kept list ``source`` for ``priority``,
        after checking its pods are what that list gives a pod of that priority."""
        kept.nominated = None
        if source is None:
            return
        uid = pod.uid
        derived = [p for p in source if p.uid != uid and p.effective_priority >= priority]
        if same_objects(derived, kept.pods):
            kept.nominated = source
            kept.priority = priority

    def pods_to_add(self, state: CycleState, pod: "Pod", node_name: str) -> list[Any]:
        """The pods nominated to ``node_name`` that ``pod`` must leave room for (upstream
        addGENominatedPods: priority at least ``pod``'s, ``pod`` itself excluded), in nomination
        order. Worked out once per node and cycle (``state``) while the nominations stay as they
        are, for Filter and then preemption's dry run. Do not change the list."""
        nominator = self._handle.nominator
        if nominator is None:
            return []
        cycle = self._cycle  # (_cycle_pods, inlined: called per node by preemption's dry run)
        if cycle[0] is state and cycle[1] is pod and cycle[2] is not None \
                and cycle[2] == getattr(nominator, "version", None):
            known = cycle[3]
        else:
            known = self._cycle_pods(state, pod)
        to_add = known.get(node_name)
        if to_add is None:
            to_add = known[node_name] = self._nominated_to(pod, node_name)
        return to_add

    def _cycle_pods(self, state: CycleState, pod: "Pod") -> dict[str, list[Any]]:
        """node name -> pods to add, for this cycle while the nominator's version holds."""
        version = getattr(self._handle.nominator, "version", None)
        cycle = self._cycle
        if cycle[0] is not state or cycle[1] is not pod or cycle[2] != version or version is None:
            cycle = self._cycle = (state, pod, version, {})
        return cycle[3]

    def _nominated_to(self, pod: "Pod", node_name: str) -> list[Any]:
        nominator = self._handle.nominator
        nominated = nominator.nominated_pods_for_node(node_name) if nominator is not None else ()
        if not nominated:
            return []
        priority = pod.effective_priority
        uid = pod.uid
        return [p for p in nominated if p.uid != uid and p.effective_priority >= priority]
