"""Filter: one node (upstream RunFilterPlugins), one node with nominated pods, and the search over
the snapshot's nodes that the scheduling cycle runs (upstream findNodesThatPassFilters).

The search has one path. It takes the nodes a chunk at a time, each chunk as long as the number
of feasible nodes still wanted, so it visits exactly the nodes a node-by-node loop would; in a
chunk each plugin takes the nodes that passed the plugins before it, through its whole-list form
when it declares one (``filter_nodes``, see :mod:`kschedfw.fwk.hookspecs`) and the chunk is worth
it, else a call per node. A node's status is its first rejecting plugin's, as node by node. A
chunk in which a plugin raised or returned anything but None, a Success or a plain rejection is
taken again one node at a time, which gives upstream's first error and the guard's report. A
whole-list form meets the per-node hook's guard itself: raising, returning a list of the wrong
length or a value that is neither None nor a Status is an Error naming the plugin, as the hook's
would be.

With fast paths on, when every Filter plugin of the cycle gives a verdict key (the plugins'
``filter_verdict_key``) and no node has nominated pods, each node's outcome (passed, or its
rejection) is kept per key under the node's stamp (:mod:`kschedfw.fwk.node_reuse`): the next
pod with the same keys, a replica of one template, reads each unchanged node's outcome in one
pass instead of one pass per plugin, and only the nodes changed since run the plugins.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Collection, Hashable

from kschedfw.fwk.cycle_state import CycleState
from kschedfw.fwk.node_reuse import NodeMemo
from kschedfw.framework.guard import PluginFaults
from kschedfw.framework.nominated import PLAIN, NominatedContext, NominatedPods
from kschedfw.framework.plans import Plan, Plans
from kschedfw.framework.plugin_results import filter_raised, filter_returned, not_one_per_node
from kschedfw.fwk.status import Code, Status
from kschedfw.fwk.types import NodeInfo

if TYPE_CHECKING:
    from kschedfw.api import Pod

__all__ = ["NodeFiltering"]

_REJECTED_CODES = frozenset({Code.Unschedulable, Code.UnschedulableAndUnresolvable, Code.Pending})
#: below this many candidate nodes the whole-list forms' bookkeeping costs more than the calls they save
_MIN_WHOLE_LIST_NODES = 16
#: a node whose outcome is not kept (or no longer holds) for the cycle's verdict key
_UNKNOWN: Any = object()


def _round_slice(nodes: list[NodeInfo], first: int, count: int) -> list[NodeInfo]:
    """``count`` nodes from index ``first`` round the list (``count`` at most its length):
    the search's next chunk, without copying the whole list turned to its start."""
    first %= len(nodes)
    end = first + count
    if end <= len(nodes):
        return nodes[first:end]
    return nodes[first:] + nodes[:end - len(nodes)]


class NodeFiltering:
    """:class:`~kschedfw.framework.runtime.Framework`'s Filter, run over the
    :class:`~kschedfw.framework.plans.Plans` it is given: their Filter list, its plugins'
    whole-list forms and verdict keys, and the AddPod extensions of the nominated-pods pass."""

    def __init__(self, faults: PluginFaults, nominated: NominatedPods, *, fast_paths: bool,
                 outcomes: NodeMemo[Status | None] | None = None) -> None:
        self.faults = faults
        self.nominated = nominated
        self.fast_paths = fast_paths
        #: each node's outcome per Filter verdict key (see the module's docstring)
        self.outcomes: NodeMemo[Status | None] = outcomes if outcomes is not None \
            else NodeMemo(keeps=fast_paths)

    @staticmethod
    def filters_to_run(plans: Plans, state: CycleState) -> Plan:
        """The Filter plugins this cycle runs: those PreFilter did not skip."""
        plan = state.filter_plan
        if plan is None:  # PreFilter did not run (tests, tools): honour any skips recorded
            skip = state.skip_filter_plugins
            plan = tuple(p for p in plans.filter if p[0] not in skip)
        return plan

    @staticmethod
    def add_pod_extensions(plans: Plans, state: CycleState) -> Plan:
        """The AddPod extensions of the PreFilter plugins that did not skip this cycle."""
        skip = state.skip_filter_plugins
        extensions = plans.pre_filter_add_pod
        if not skip:
            return extensions
        return tuple(entry for entry in extensions if entry[0] not in skip)

    def filter_verdict_key(self, plans: Plans, plan: Plan, state: CycleState, pod: "Pod") -> Hashable | None:
        """A key such that pods with equal keys get the same status from ``plan`` on the same
        NodeInfo: the plan's plugins' ``filter_verdict_key`` answers, None when one of them
        has none (or gives None, or raises), or without fast paths."""
        if not self.fast_paths:
            return None
        keys = plans.verdict_keys
        parts = []
        for name, _ in plan:
            verdict_key = keys.get(name)
            if verdict_key is None:
                return None
            try:
                part = verdict_key(state, pod)
                hash(part)
            except Exception:
                return None
            if part is None:
                return None
            parts.append((name, part))
        return tuple(parts)

    def filter_nodes(self, plans: Plans, state: CycleState, pod: "Pod", nodes: list[NodeInfo], start: int, to_find: int,
                     nominated_nodes: Collection[str] = ()
                     ) -> tuple[list[NodeInfo], list[tuple[NodeInfo, Status]], Status | None]:
        """Filter ``nodes`` from index ``start`` round the list until ``to_find`` fit: (feasible,
        rejected with their statuses, in visiting order, the first error status or None). Each
        node gets what :meth:`run_filter_plugins` gives it, or, for a node in
        ``nominated_nodes``, what :meth:`run_filter_plugins_with_nominated_pods` gives it."""
        plan = self.filters_to_run(plans, state)
        forms: list[Callable[..., Any] | None] | None = None
        filter_forms = plans.filter_forms
        if filter_forms and len(nodes) >= _MIN_WHOLE_LIST_NODES:
            forms = [filter_forms.get(fn) for _, fn in plan]
            if not any(forms):
                forms = None
        nominated = None
        if nominated_nodes:
            extensions = self.add_pod_extensions(plans, state)
            key = self.filter_verdict_key(plans, plan, state, pod) if not extensions else None
            nominated = self.nominated.begin(state, pod, extensions, key, nominated_nodes)
        elif self.fast_paths:
            key = self.filter_verdict_key(plans, plan, state, pod)
            if key is not None:
                return self._filter_kept(state, pod, nodes, start, to_find, plan, forms,
                                         self.outcomes.for_key(key, len(nodes)))
        feasible: list[NodeInfo] = []
        rejected: list[tuple[NodeInfo, Status]] = []
        to_find = max(to_find, 1)  # a search stops after its first feasible node at the least
        pos, total = 0, len(nodes)
        while pos < total and (wanted := to_find - len(feasible)) > 0:
            chunk = _round_slice(nodes, start + pos, min(wanted, total - pos))
            pos += len(chunk)
            if len(chunk) > 1:
                failed = self._filter_chunk(state, pod, chunk, plan, forms, nominated)
                if isinstance(failed, Status):  # a whole-list form's fault
                    return feasible, rejected, failed
                if failed is not None:
                    if not failed:
                        feasible.extend(chunk)
                        continue
                    for ni in chunk:
                        status = failed.get(ni)
                        if status is None:
                            feasible.append(ni)
                        else:
                            rejected.append((ni, status))
                    continue
            for ni in chunk:  # one node, or a chunk with something to report: node by node
                status = self.filter_one(state, pod, ni, plan, nominated)
                if status is None:
                    feasible.append(ni)
                elif status.code in _REJECTED_CODES:
                    rejected.append((ni, status))
                else:
                    return feasible, rejected, status
        return feasible, rejected, None

    def _filter_kept(self, state: CycleState, pod: "Pod", nodes: list[NodeInfo], start: int, to_find: int,
                     plan: Plan, forms: list[Callable[..., Any] | None] | None, kept: dict[NodeInfo, Any]
                     ) -> tuple[list[NodeInfo], list[tuple[NodeInfo, Status]], Status | None]:
        """:meth:`filter_nodes`'s search with the outcomes ``kept`` for the cycle's verdict key:
        the same chunks, each node's outcome read from ``kept`` while its stamp holds, the
        others' worked out as in the plain search and kept. A chunk whose new nodes need the
        node-by-node pass takes it in visiting order, kept outcomes included, so the first error
        is the one the plain search stops at. HOT PATH: the outcomes are read inline (the rule
        of :mod:`kschedfw.fwk.node_reuse`)."""
        feasible: list[NodeInfo] = []
        rejected: list[tuple[NodeInfo, Status]] = []
        to_find = max(to_find, 1)
        get = kept.get
        pos, total = 0, len(nodes)
        while pos < total and (wanted := to_find - len(feasible)) > 0:
            chunk = _round_slice(nodes, start + pos, min(wanted, total - pos))
            pos += len(chunk)
            known = [hit[2] if (hit := get(ni)) is not None and hit[1] is ni.node and hit[0] == ni.generation
                     else _UNKNOWN for ni in chunk]
            passed = known.count(None)
            if passed == len(known):  # every node passed before and is unchanged
                feasible.extend(chunk)
                continue
            unknown = known.count(_UNKNOWN)
            if unknown < 8:  # the usual case: the few nodes changed since (C-level searches)
                at = -1
                new = [chunk[at := known.index(_UNKNOWN, at + 1)] for _ in range(unknown)]
            else:
                new = [ni for ni, outcome in zip(chunk, known) if outcome is _UNKNOWN]
            failed: dict[NodeInfo, Status] | None
            if len(new) == 1:
                outcome = self.filter_one(state, pod, new[0], plan, None)
                failed = {} if outcome is None else {new[0]: outcome}
            else:
                chunk_outcome = self._filter_chunk(state, pod, new, plan, forms, None)
                if isinstance(chunk_outcome, Status):  # a whole-list form's fault
                    return feasible, rejected, chunk_outcome
                failed = chunk_outcome
            if not failed and failed is not None and passed + unknown == len(known):
                for ni in new:  # they passed too
                    kept[ni] = (ni.generation, ni.node, None)
                feasible.extend(chunk)
                continue
            for ni, outcome in zip(chunk, known):
                if outcome is _UNKNOWN:
                    outcome = failed.get(ni) if failed is not None else self.filter_one(state, pod, ni, plan, None)
                    if outcome is not None and outcome.code not in _REJECTED_CODES:
                        return feasible, rejected, outcome
                    kept[ni] = (ni.generation, ni.node, outcome)
                if outcome is None:
                    feasible.append(ni)
                else:
                    rejected.append((ni, outcome))
        return feasible, rejected, None

    def _filter_chunk(self, state: CycleState, pod: "Pod", chunk: list[NodeInfo], plan: Plan,
                      forms: list[Callable[..., Any] | None] | None,
                      nominated: NominatedContext | None) -> dict[NodeInfo, Status] | Status | None:
        """The rejected nodes of ``chunk`` with their statuses (the others are feasible), or None
        when a plugin raised or returned something else: the chunk is then taken node by node;
        or the Error of a whole-list form that broke the guard's rules."""
        failed: dict[NodeInfo, Status] = {}
        survivors: list[NodeInfo] | None = chunk
        if nominated is not None:
            survivors = self.nominated.filter_chunk(nominated, state, pod, chunk, failed)
            if survivors is None:
                return None
        for index, (name, fn) in enumerate(plan):
            if not survivors:
                break
            form = forms[index] if forms is not None else None
            results = None
            if form is not None:
                try:
                    results = form(state, pod, survivors)
                except Exception as exc:
                    return filter_raised(self.faults, name, exc)
                wrong = None if results is None or type(results) is list and len(results) == len(survivors) \
                    else not_one_per_node(self.faults, name, "Filter", results, len(survivors))
                if wrong is not None:
                    return Status(Code.Error, (f'running "{name}" filter plugin: {wrong.message()}',), plugin=name)
            from_form = results is not None
            if results is None:
                try:
                    results = [fn(state, pod, ni) for ni in survivors]
                except Exception:
                    return None
            if results.count(None) == len(results):  # every node passed: the usual case
                continue
            passed = []
            for ni, status in zip(survivors, results):
                if status is None:
                    passed.append(ni)
                elif type(status) is Status and status.code in _REJECTED_CODES:
                    status.plugin = name
                    failed[ni] = status
                elif type(status) is Status and status.code is Code.Success:
                    passed.append(ni)
                else:
                    # a whole-list form's value that is no Status breaks the guard's rules
                    wrong = next((v for v in results if v is not None and not isinstance(v, Status)), None) \
                        if from_form else None
                    return None if wrong is None else filter_returned(self.faults, name, wrong)
            survivors = passed
        return failed

    def filter_one(self, state: CycleState, pod: "Pod", ni: NodeInfo, plan: Plan,
                    nominated: NominatedContext | None) -> Status | None:
        """One node's status: ``plan``'s plugins in order until the first non-success (upstream
        RunFilterPlugins), or, for a node with nominations, the nominated-pods pass. HOT PATH: a
        plugin returning None (most calls) costs the call alone."""
        if nominated is not None and ni.name in nominated.nodes:
            status = self.nominated.outcome(nominated, state, pod, ni)
            if status is not PLAIN:
                return None if status is None or status.code is Code.Success else status
        name = ""
        try:
            for name, fn in plan:
                status = fn(state, pod, ni)
                if status is not None:
                    if type(status) is Status and status.code in _REJECTED_CODES:
                        status.plugin = name
                        return status
                    status = filter_returned(self.faults, name, status)
                    if status is not None:
                        return status
        except Exception as exc:
            return filter_raised(self.faults, name, exc)
        return None
