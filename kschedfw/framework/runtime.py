"""The per-profile runtime: plugins built once, hooks compiled into ordered plans, upstream rules.

pluggy is the registry and the validator; the plan holds bound methods in profile order, so
per-node work (Filter, Score) is a plain Python call. Every plugin call is guarded: an exception,
a return value of the wrong type or a bad score becomes an Error status naming the plugin, the
extension point and what came back, never a crash of the scheduling loop (see ``guard``).
"""

from __future__ import annotations

import logging
import numbers
import sys
from itertools import chain
from operator import add
from typing import TYPE_CHECKING, Any, Callable, Collection, Iterable, Mapping

import attrs
import pluggy

from kschedfw import hookspecs
from kschedfw.features import enabled as gate_enabled
from kschedfw.framework.batch import BatchMetrics, OpportunisticBatch, PodSignature
from kschedfw.framework.columnar import whole_list_filter, whole_list_score
from kschedfw.framework.cycle_state import CycleState
from kschedfw.framework.events import ActionType, ClusterEvent, ClusterEventWithHint, EventResource
from kschedfw.framework.guard import PluginFaults
from kschedfw.framework.handle import Handle
from kschedfw.framework.recorder import CycleRecord
from kschedfw.framework.hookcall import plan_callable
from kschedfw.framework.registry import Registry, implemented_hooks
from kschedfw.framework.status import Code, Status
from kschedfw.framework.types import (MAX_NODE_SCORE, MAX_PERMIT_TIMEOUT_SECONDS, MIN_NODE_SCORE,
                                      NodeInfo, NodePluginScores, NodeScore, NodeToStatus,
                                      PostFilterResult, PreBindPreFlightResult, PreFilterResult,
                                      same_objects)
from kschedfw.framework.waiting_pods import WaitingPod

if TYPE_CHECKING:
    from kschedfw.api import Pod
    from kschedfw.config.expand import ResolvedProfile
    from kschedfw.framework.recorder import CycleRecorder

log = logging.getLogger(__name__)

#: The signature fragment every pod gets (upstream fwk.SchedulerNameSignerName).
SCHEDULER_NAME_SIGNER_NAME = "v1.Pod.Spec.SchedulerName"
#: Extension points whose plugins must all sign pods for a profile to batch (upstream
#: computeBatchablePlugins).
_SIGNED_POINTS = ("pre_filter", "filter", "pre_score", "score")

#: Extension points whose plugins' events drive requeueing (upstream: PreEnqueue, PreFilter,
#: Filter, Reserve, Permit).
_EVENT_POINTS = ("pre_enqueue", "pre_filter", "filter", "reserve", "permit")
_ALL_EVENTS = ClusterEvent(EventResource.Wildcard, ActionType.All)


class FrameworkError(Exception):
    """A profile that cannot be built (a plugin constructor failed, a plugin is missing...)."""


_STATUS = "Status or None"
_REJECTED_CODES = frozenset({Code.Unschedulable, Code.UnschedulableAndUnresolvable, Code.Pending})
#: below this many candidate nodes a chunk's bookkeeping costs more than the calls it saves
_MIN_CHUNKED_NODES = 16
_INT_ONLY = {int}


def _describe_tuple_want(point: str) -> str:
    return {"PreFilter": "(PreFilterResult | None, Status | None) or Status or None",
            "PostFilter": "(PostFilterResult | None, Status | None) or Status or None",
            "Permit": "Status or (Status, timeout seconds) or None",
            "PreBindPreFlight": "(PreBindPreFlightResult | None, Status | None) or Status or None"}[point]


@attrs.define(slots=True, eq=False)
class _NodeWithPods:
    """A clone of a snapshot NodeInfo with nominated pods added, and what it was built from;
    ``outcomes``: the two passes' status per :func:`_nominated_pass_key` (None: both passed).
    ``nominated`` (the nominator's kept list of the node, see ``Nominator.kept_lists``) and
    ``priority``, when set, say ``pods`` is what a pod of that priority not nominated to the node
    adds while that list object is still the kept one (see :meth:`Framework._nominated_outcome`);
    ``info`` is None when ``pods`` is empty (the node takes the plain Filter)."""

    source: NodeInfo
    generation: int
    node: Any
    image_states: Any
    pods: list[Any]
    info: NodeInfo | None
    outcomes: dict[Any, Status | None] = attrs.Factory(dict)
    nominated: list[Any] | None = None
    priority: int = 0


@attrs.define(slots=True, frozen=True)
class _Nominated:
    """One :meth:`Framework.filter_nodes` call's view of the nominations: the nodes that have
    some, the AddPod extensions to run, the outcome key (:func:`_nominated_pass_key`), the
    nominator's kept lists (None: kept entries are not trusted without rebuilding), the node
    the pod itself is nominated to, its priority, and this cycle's node -> pods to add (see
    :meth:`Framework.nominated_pods_to_add`)."""

    nodes: Collection[str]
    extensions: tuple[tuple[str, Callable], ...]
    key: Any
    lists: Mapping[str, list[Any]] | None
    own: str
    priority: int
    cycle_pods: dict[str, list[Any]]


def _copy_kept(status: Status) -> Status:
    """A copy of a kept outcome (a plain Status with a tuple of reasons) to hand out, so that
    whoever changes the one it gets does not change the kept one; built without the generated
    __init__ and its converter, as it is on the hot path."""
    out = _new_object(Status)
    out.code = status.code
    out.reasons = status.reasons
    out.plugin = status.plugin
    out.error = status.error
    return out


_new_object = object.__new__

#: :meth:`Framework._nominated_outcome`: no nominated pod to add, the node takes the plain Filter
_PLAIN: Any = object()
_MISSING: Any = object()


#: outcomes kept per node (distinct pod keys seen while the node and its nominations stayed put)
_KEPT_OUTCOMES = 8


def _nominated_pass_key(plan: tuple[tuple[str, Callable], ...], state: CycleState, pod: "Pod") -> Any:
    """A key under which the nominated-pods passes' outcome on an unchanged node can be kept for
    later pods: when every Filter plugin of this cycle is an in-tree one whose status follows
    from the NodeInfo and a few fields of the pod (``kschedfw.plugins.filter_key``), else None.
    Only with the fast paths on (``Framework(..., fast_paths=True)``)."""
    from kschedfw.plugins.filter_key import filter_key
    return filter_key(plan, state, pod)


def _answering(results: dict[NodeInfo, Any], fn: Callable) -> Callable:
    """A per-node Filter giving what a whole-list form gave for its nodes (``fn`` for others)."""
    def filter_node(state: CycleState, pod: "Pod", node_info: NodeInfo) -> Any:
        return results[node_info] if node_info in results else fn(state, pod, node_info)
    return filter_node


class Framework:
    """One scheduling profile: its plugin instances and the compiled plan per extension point."""

    def __init__(self, profile: "ResolvedProfile", registry: Registry, handle: Handle | None = None,
                 *, fast_paths: bool = True, batch_metrics: BatchMetrics | None = None) -> None:
        self.profile = profile
        self.profile_name = profile.scheduler_name
        #: whether the plan uses the plugins' whole-list forms and the cross-cycle memos (the
        #: runtime's and, through ``handle.fast_paths``, the plugins'); off runs the plain path,
        #: which the fast one must equal
        self.fast_paths = fast_paths
        self.handle = handle if handle is not None else Handle(profile_name=profile.scheduler_name)
        self.handle.framework = self
        self.handle.profile_name = profile.scheduler_name
        self.handle.fast_paths = fast_paths
        self.percentage_of_nodes_to_score = profile.percentage_of_nodes_to_score
        self.plugins: dict[str, Any] = {}
        self.faults = PluginFaults()
        self._score_pool: dict[str, list[NodeScore] | None] = {}
        #: node name -> its snapshot NodeInfo with the nominated pods added (see filter_nodes)
        self._nominated_infos: dict[str, _NodeWithPods] = {}
        #: (cycle state, pod, nominator version, node name -> pods to add): see nominated_pods_to_add
        self._nominated_cycle: tuple[Any, Any, Any, dict[str, list["Pod"]]] = (None, None, None, {})
        self._pm = pluggy.PluginManager("kschedfw")
        self._pm.add_hookspecs(hookspecs)
        used = []
        for entries in profile.plugins.values():
            for entry in entries:
                if entry.name not in used:
                    used.append(entry.name)
        for name in used:
            try:
                cls = registry.load(name)
            except KeyError:
                raise FrameworkError(f'plugin "{name}" does not exist') from None
            except Exception as exc:
                raise FrameworkError(str(exc)) from None
            args = dict(profile.plugin_args.get(name, {}))
            try:
                instance = cls(args, self.handle)
            except Exception as exc:
                raise FrameworkError(f'initializing plugin "{name}": {exc}') from None
            self._pm.register(instance, name=name)
            self.plugins[name] = instance
        self._pm.check_pending()
        self._compile()
        #: gate OpportunisticBatching: this profile's batch (None with the gate off)
        self.batch: OpportunisticBatch | None = None
        if gate_enabled(self.handle.feature_gates, "OpportunisticBatching"):
            self.batch = OpportunisticBatch(self.profile_name, self.handle.clock.now, batch_metrics)

    # ------------------------------------------------------------------ plan
    def _bound(self, point: str, hook: str | None = None) -> tuple[tuple[str, Callable], ...]:
        hook = hook or point
        out = []
        for entry in self.profile.plugins.get(point, ()):
            plugin = self.plugins[entry.name]
            if hook in implemented_hooks(type(plugin)):
                out.append((entry.name, plan_callable(self._pm, plugin, hook)))
        return tuple(out)

    def _compile(self) -> None:
        self.pre_enqueue_plugins = self._bound("pre_enqueue")
        less = self._bound("less")
        self.less = less[0][1] if less else (lambda a, b: a.timestamp < b.timestamp)
        # the QueueSort plugin's optional sort_key(queued_pod_info) orders exactly like its less:
        # the queue then compares keys in C instead of calling less in Python
        sort_key = getattr(self.plugins[less[0][0]], "sort_key", None) if less else None
        self.queue_sort_key: Callable[[Any], Any] | None = sort_key if callable(sort_key) else None
        self.pre_filter_plugins = self._bound("pre_filter")
        self.add_pod_plugins = self._bound("pre_filter", "pre_filter_add_pod")
        self.remove_pod_plugins = self._bound("pre_filter", "pre_filter_remove_pod")
        self.filter_plugins = self._bound("filter")
        # the plugins' declared whole-list forms of Filter (hookspecs.WholeListFilter), by the
        # bound method they stand for (a timed copy of the plan for a sampled cycle finds none)
        self._filter_forms: dict[Callable, Callable] = {
            fn: form for name, fn in self.filter_plugins
            if (form := whole_list_filter(self.plugins[name])) is not None} if self.fast_paths else {}
        self.post_filter_plugins = self._bound("post_filter")
        self.pre_score_plugins = self._bound("pre_score")
        score = []
        for entry in self.profile.plugins.get("score", ()):
            plugin = self.plugins[entry.name]
            hooks = implemented_hooks(type(plugin))
            if "score" in hooks:
                normalize = plan_callable(self._pm, plugin, "normalize_score") if "normalize_score" in hooks else None
                score.append((entry.name, plan_callable(self._pm, plugin, "score"), entry.weight or 1, normalize))
                if normalize is not None:
                    self._score_pool[entry.name] = []
        self.score_plugins: tuple[tuple[str, Callable, int, Callable | None], ...] = tuple(score)
        # the plugins' declared whole-list forms of Score and NormalizeScore (hookspecs), used
        # while score_plugins is this list (metrics swap in timed copies for sampled cycles:
        # those call the timed per-node Score)
        self._score_plan_source = self.score_plugins
        self._score_plan = tuple((name, fn, weight, normalize,
                                  *(whole_list_score(self.plugins[name], normalize) if self.fast_paths else (None, None)))
                                 for name, fn, weight, normalize in score)
        self.reserve_plugins = self._bound("reserve")
        self.unreserve_plugins = tuple(reversed(self._bound("reserve", "unreserve")))
        self.permit_plugins = self._bound("permit")
        self.pre_bind_plugins = self._bound("pre_bind")
        self.pre_bind_pre_flight_plugins = self._bound("pre_bind", "pre_bind_pre_flight")
        self.bind_plugins = self._bound("bind")
        self.post_bind_plugins = self._bound("post_bind")
        self.sign_plugins, self.unsigned_plugins = self._compile_signers()
        self._last_refuser: int | None = None
        self._hints = self._compile_hints()

    def _compile_signers(self) -> tuple[tuple[tuple[str, Callable], ...], tuple[str, ...]]:
        """(signers, plugins that cannot sign): every distinct PreFilter, Filter, PreScore and
        Score plugin, in that order. One plugin that cannot sign turns signing off for the
        profile (upstream computeBatchablePlugins)."""
        signers: list[tuple[str, Callable]] = []
        unsigned: list[str] = []
        seen: set[str] = set()
        for point in _SIGNED_POINTS:
            for entry in self.profile.plugins.get(point, ()):
                if entry.name in seen:
                    continue
                seen.add(entry.name)
                plugin = self.plugins[entry.name]
                if "sign_pod" in implemented_hooks(type(plugin)):
                    signers.append((entry.name, plan_callable(self._pm, plugin, "sign_pod")))
                else:
                    unsigned.append(entry.name)
        return tuple(signers), tuple(unsigned)

    def _compile_hints(self) -> list[tuple[ClusterEvent, str, Callable | None]]:
        """(event, plugin, hint) for every plugin that can reject; upstream's wildcard fallback."""
        names: list[str] = []
        for point in _EVENT_POINTS:
            for entry in self.profile.plugins.get(point, ()):
                if entry.name not in names:
                    names.append(entry.name)
        hints: list[tuple[ClusterEvent, str, Callable | None]] = []
        for name in names:
            plugin = self.plugins[name]
            hooks = implemented_hooks(type(plugin))
            if "events_to_register" not in hooks:
                hints.append((_ALL_EVENTS, name, None))
                continue
            try:
                registered: Iterable[ClusterEventWithHint] = plugin.events_to_register() or ()
            except Exception as exc:
                raise FrameworkError(f'plugin "{name}" failed to register events: {exc}') from None
            default_hint = None
            if "queueing_hint" in hooks:
                default_hint = _event_bound_hint(plan_callable(self._pm, plugin, "queueing_hint"))
            for item in registered:
                fn = item.queueing_hint_fn
                if fn is None and default_hint is not None:
                    fn = default_hint(item.event)
                hints.append((item.event, name, fn))
        return hints

    # ------------------------------------------------------------------ queue side
    def queueing_hints(self) -> list[tuple[ClusterEvent, str, Callable | None]]:
        return self._hints

    def pre_enqueue_plugin_names(self) -> frozenset[str]:
        return frozenset(name for name, _ in self.pre_enqueue_plugins)

    def run_pre_enqueue_plugins(self, pod: "Pod", gating_plugin: str = "") -> Status | None:
        """First non-success; the plugin that gated the pod last time runs first, as upstream."""
        plugins = self.pre_enqueue_plugins
        if gating_plugin and len(plugins) > 1:
            plugins = tuple(sorted(plugins, key=lambda entry: entry[0] != gating_plugin))
        for name, fn in plugins:
            try:
                status = self._status(name, "PreEnqueue", fn(pod))
            except Exception as exc:
                return self._raised(name, "PreEnqueue", exc)
            if status is not None and not status.is_success():
                status.plugin = name
                return status
        return None

    def sign_pod(self, pod: "Pod") -> PodSignature:
        """Upstream SignPod: the pod's scheduling signature, or None when the profile cannot
        sign (a plugin lacks sign_pod) or a plugin refuses this pod (non-Success, raised, wrong
        type). Equal signatures mean equal Filter and Score results on the same nodes.

        The plugin that refused the previous pod is asked first: if it refuses again the answer
        (None) is the same as upstream's, without asking the plugins before it (with the default
        profile PodTopologySpread refuses every pod, after seven others in profile order)."""
        if self.unsigned_plugins:
            return None
        signers = self.sign_plugins
        refuser = self._last_refuser
        if refuser is not None and self._fragments(*signers[refuser], pod) is None:
            return None
        signature: dict[str, Any] = {SCHEDULER_NAME_SIGNER_NAME: pod.scheduler_name}
        for index, (name, fn) in enumerate(signers):
            fragments = self._fragments(name, fn, pod)
            if fragments is None:
                self._last_refuser = index
                return None
            for fragment in fragments:
                signature[fragment.key] = fragment.value
        return signature

    def _fragments(self, name: str, fn: Callable, pod: "Pod") -> list | tuple | None:
        """One plugin's fragments (empty when it returned none), None when it refused."""
        try:
            out = fn(pod)
        except Exception as exc:
            self._raised(name, "Sign", exc)
            return None
        if isinstance(out, Status):
            fragments, status = None, out
        elif isinstance(out, tuple) and len(out) == 2 and (out[1] is None or isinstance(out[1], Status)):
            fragments, status = out
        elif out is None:
            fragments, status = None, None
        else:
            self.faults.wrong_type(name, "Sign", out, "(list[SignFragment] | None, Status | None)")
            return None
        if status is not None and not status.is_success():
            return None
        return fragments or ()

    # ------------------------------------------------------------------ guards
    def _raised(self, name: str, point: str, exc: Exception) -> Status:
        """An exception inside a plugin, as an Error status naming it (logged once per cause)."""
        return Status(Code.Error, (self.faults.exception(name, point, exc),), plugin=name)

    def _status(self, name: str, point: str, value: Any) -> Status | None:
        """A hook's Status return, checked: anything else becomes an Error naming what came back."""
        if value is None or isinstance(value, Status):
            return value
        return Status(Code.Error, (self.faults.wrong_type(name, point, value, _STATUS),), plugin=name)

    def _pair(self, name: str, point: str, out: Any, result_type: type) -> tuple[Any, Status | None]:
        """``(result, status)`` hooks that may also return a bare Status or None."""
        if out is None:
            return None, None
        if isinstance(out, tuple) and len(out) == 2:
            result, status = out
            if (result is None or isinstance(result, result_type)) and (status is None or isinstance(status, Status)):
                return result, status
        elif isinstance(out, Status):
            return None, out
        return None, Status(Code.Error, (self.faults.wrong_type(name, point, out, _describe_tuple_want(point)),),
                            plugin=name)

    # ------------------------------------------------------------------ scheduling cycle
    def run_pre_filter_plugins(self, state: CycleState, pod: "Pod", nodes: list[NodeInfo]
                               ) -> tuple[PreFilterResult | None, Status | None, set[str]]:
        """Upstream RunPreFilterPlugins: (merged result, status, plugins). On a rejection the
        plugins are those that rejected; on success, those whose result narrowed the nodes."""
        result: PreFilterResult | None = None
        rejectors: set[str] = set()
        returned: Status | None = None
        narrowing: list[str] = []
        for name, fn in self.pre_filter_plugins:
            try:
                plugin_result, status = self._pair(name, "PreFilter", fn(state, pod, nodes), PreFilterResult)
            except Exception as exc:
                status = self._raised(name, "PreFilter", exc)
            if status is not None and status.is_skip():
                state.skip_filter_plugins.add(name)
                continue
            if status is not None and not status.is_success():
                status.plugin = name
                if status.code in (Code.Unschedulable, Code.UnschedulableAndUnresolvable):
                    rejectors.add(name)
                    if status.code is Code.UnschedulableAndUnresolvable:
                        return None, status, rejectors
                    returned = status
                    continue
                return None, Status(Code.Error, (f'running PreFilter plugin "{name}": {status.message()}',), plugin=name), rejectors
            if plugin_result is not None and not plugin_result.all_nodes():
                narrowing.append(name)
                result = plugin_result if result is None else result.merge(plugin_result)
                if result.node_names is not None and not result.node_names:
                    if len(narrowing) == 1:
                        msg = f"node(s) didn't satisfy plugin {narrowing[0]}"
                    else:
                        msg = f"node(s) didn't satisfy plugin(s) [{' '.join(narrowing)}] simultaneously"
                    rejectors.update(narrowing)
                    return result, Status(Code.UnschedulableAndUnresolvable, (msg,), plugin=narrowing[0]), rejectors
        skip = state.skip_filter_plugins
        state.filter_plan = tuple(p for p in self.filter_plugins if p[0] not in skip) if skip else self.filter_plugins
        if returned is not None:
            return result, returned, rejectors
        return result, None, set(narrowing)

    def _run_extension(self, plugins: tuple, state: CycleState, pod: "Pod", other: "Pod",
                       node_info: NodeInfo, what: str) -> Status | None:
        for name, fn in plugins:
            if name in state.skip_filter_plugins:
                continue
            try:
                status = self._status(name, what, fn(state, pod, other, node_info))
            except Exception as exc:
                status = self._raised(name, what, exc)
            if status is not None and not status.is_success():
                return Status(Code.Error, (f'running {what} on PreFilter plugin "{name}": {status.message()}',), plugin=name)
        return None

    def run_pre_filter_extension_add_pod(self, state: CycleState, pod: "Pod", pod_to_add: "Pod",
                                         node_info: NodeInfo) -> Status | None:
        return self._run_extension(self.add_pod_plugins, state, pod, pod_to_add, node_info, "AddPod")

    def run_pre_filter_extension_remove_pod(self, state: CycleState, pod: "Pod", pod_to_remove: "Pod",
                                            node_info: NodeInfo) -> Status | None:
        return self._run_extension(self.remove_pod_plugins, state, pod, pod_to_remove, node_info, "RemovePod")

    def _filter_plan(self, state: CycleState) -> tuple[tuple[str, Callable], ...]:
        plan = state.filter_plan
        if plan is None:  # PreFilter did not run (tests, tools): honour any skips recorded
            skip = state.skip_filter_plugins
            plan = tuple(p for p in self.filter_plugins if p[0] not in skip)
        return plan

    def _filter_returned(self, name: str, status: Any) -> Status | None:
        """A Filter plugin's non-None return, checked: None for Success, the rejection (naming
        the plugin), or an Error status for anything else."""
        if type(status) is not Status and not isinstance(status, Status):
            message = self.faults.wrong_type(name, "Filter", status, _STATUS)
            return Status(Code.Error, (f'running "{name}" filter plugin: {message}',), plugin=name)
        if status.code is Code.Success:
            return None
        if status.is_rejected():
            status.plugin = name
            return status
        return Status(Code.Error, (f'running "{name}" filter plugin: {status.message()}',), plugin=name)

    def _filter_raised(self, name: str, exc: Exception) -> Status:
        err = self._raised(name, "Filter", exc)
        return Status(Code.Error, (f'running "{name}" filter plugin: {err.message()}',), plugin=name)

    def run_filter_plugins(self, state: CycleState, pod: "Pod", node_info: NodeInfo) -> Status | None:
        """Upstream RunFilterPlugins: stop at the first non-success on this node. HOT PATH: a
        plugin returning None (most calls) costs the call alone."""
        name = ""
        try:
            for name, fn in self._filter_plan(state):
                status = fn(state, pod, node_info)
                if status is not None:
                    status = self._filter_returned(name, status)
                    if status is not None:
                        return status
        except Exception as exc:
            return self._filter_raised(name, exc)
        return None

    def filter_nodes(self, state: CycleState, pod: "Pod", nodes: list[NodeInfo], start: int, to_find: int,
                     nominated_nodes: Collection[str] = ()
                     ) -> tuple[list[NodeInfo], list[tuple[NodeInfo, Status]], Status | None]:
        """Filter ``nodes`` from index ``start`` round the list until ``to_find`` fit: (feasible,
        rejected with their statuses, in visiting order, the first error status or None). Each
        node gets exactly what :meth:`run_filter_plugins` gives it (or, for a node in
        ``nominated_nodes``, :meth:`run_filter_plugins_with_nominated_pods`); the plugin loop is
        inlined here because it runs for hundreds of nodes per pod (the scheduler's hot path).
        When some plugins declare a whole-list form (hookspecs.WholeListFilter) and the nodes are not a
        handful, they are filtered in chunks, plugin by plugin (:meth:`_filter_in_chunks`); a
        node with nominated pods the pod must leave room for gets its two passes on its own,
        one with none such is filtered with the others (upstream: no pod added, one pass).
        ``nodes`` are the snapshot's: their clones with nominated pods added are kept and reused."""
        kept = self._nominated_infos
        if len(kept) > 2 * len(nominated_nodes) + 64 or (kept and not nominated_nodes):
            # nominations moved on: keep only the nodes that still have some
            self._nominated_infos = {name: entry for name, entry in kept.items() if name in nominated_nodes}
        plan = self._filter_plan(state)
        names = [name for name, _ in plan]
        fns = [fn for _, fn in plan]
        feasible: list[NodeInfo] = []
        rejected: list[tuple[NodeInfo, Status]] = []
        nominated = self._nominated_context(state, pod, plan, nominated_nodes) if nominated_nodes else None
        if self._filter_forms and len(nodes) >= _MIN_CHUNKED_NODES:
            forms = [self._filter_forms.get(fn) for fn in fns]
            if any(forms):
                order = nodes[start:] + nodes[:start] if start else nodes
                failure = self._filter_in_chunks(state, pod, order, to_find, names, fns, forms, feasible, rejected,
                                                 nominated)
                return feasible, rejected, failure
        failure = self._filter_each(state, pod, chain(nodes[start:], nodes[:start]), to_find, names, fns,
                                    nominated, feasible, rejected)
        return feasible, rejected, failure

    def _nominated_context(self, state: CycleState, pod: "Pod", plan: tuple[tuple[str, Callable], ...],
                           nominated_nodes: Collection[str]) -> "_Nominated":
        """What the nominated-pods path needs, worked out once per :meth:`filter_nodes`."""
        extensions = self._add_pod_extensions(state)
        key = _nominated_pass_key(plan, state, pod) if not extensions and self.fast_paths else None
        nominator = self.handle.nominator
        kept_lists = getattr(nominator, "kept_lists", None)
        node_of = getattr(nominator, "nominated_node_name", None)
        lists = None
        if kept_lists is not None and node_of is not None and pod.uid and self.fast_paths:
            lists = kept_lists()
        own = node_of(pod) if node_of is not None and lists is not None else ""
        return _Nominated(nominated_nodes, extensions, key, lists, own, pod.effective_priority,
                          self._nominated_cycle_pods(state, pod))

    def _filter_each(self, state: CycleState, pod: "Pod", nodes: Iterable[NodeInfo], wanted: int,
                     names: list[str], fns: list[Callable], nominated: "_Nominated | None",
                     feasible: list[NodeInfo], rejected: list[tuple[NodeInfo, Status]]) -> Status | None:
        """The per-node loop: each node through the plugins in order, until ``wanted`` more fit
        (appended to ``feasible`` and ``rejected``); returns the first error status or None."""
        filter_returned = self._filter_returned
        fn: Any = None
        nominated_nodes = nominated.nodes if nominated is not None else ()
        for ni in nodes:
            status = _PLAIN
            if nominated is not None and ni.name in nominated_nodes:
                status = self._nominated_outcome(state, pod, ni, nominated)
                if status is not _PLAIN and status is not None and status.code is Code.Success:
                    status = None
            if status is _PLAIN:
                status = None
                try:
                    for fn in fns:
                        status = fn(state, pod, ni)
                        if status is not None:
                            # the plugin is found from its bound method only when it returned something
                            if type(status) is Status and status.code in _REJECTED_CODES:
                                status.plugin = names[fns.index(fn)]
                                break
                            status = filter_returned(names[fns.index(fn)], status)
                            if status is not None:
                                break
                except Exception as exc:
                    status = self._filter_raised(names[fns.index(fn)], exc)
            if status is None:
                feasible.append(ni)
                wanted -= 1
                if wanted <= 0:
                    break
            elif status.code in _REJECTED_CODES:
                rejected.append((ni, status))
            else:
                return status
        return None

    def _filter_in_chunks(self, state: CycleState, pod: "Pod", order: list[NodeInfo], to_find: int,
                          names: list[str], fns: list[Callable], forms: list[Callable | None],
                          feasible: list[NodeInfo], rejected: list[tuple[NodeInfo, Status]],
                          nominated: "_Nominated | None" = None) -> Status | None:
        """:meth:`_filter_each` over ``order``, a chunk at a time: each plugin (its whole-list
        form, else a call per node) takes the chunk's nodes that passed the plugins before it.
        A node with nominated pods to add gets its two passes on its own first
        (:meth:`_nominated_outcome`); one with none to add is filtered with the others.
        A chunk is as long as the number of feasible nodes still wanted, so every node of it is
        one the per-node loop visits too, and no other; a node's status is its first plugin's
        rejection, as there. A chunk where a plugin raised or returned anything but None, a
        Success or a plain rejection is filtered again node by node, for upstream's error and
        the guard's report; a whole-list form's results stand in for its per-node calls then.
        A form that raises or returns a list of the wrong length is an Error naming the plugin,
        as the per-node hook's exception or wrong return would be."""
        pos, total = 0, len(order)
        rejected_codes, success = _REJECTED_CODES, Code.Success
        to_find = max(to_find, 1)  # the per-node loop stops after its first feasible node at the least
        wanted = to_find
        while wanted > 0 and pos < total:
            chunk = order[pos:pos + wanted]
            pos += len(chunk)
            survivors = chunk
            failed: dict[NodeInfo, Status] = {}
            plain = True
            if nominated is not None:
                survivors, plain = self._nominated_in_chunk(state, pod, chunk, nominated, failed)
            given = fns
            for name, fn, form in zip(names, fns, forms):
                if not plain or not survivors:
                    break
                results = None
                if form is not None:
                    try:
                        results = form(state, pod, survivors)
                    except Exception as exc:
                        return self._filter_raised(name, exc)
                    wrong = None if results is None else self._not_one_per_node(name, "Filter", results, len(survivors))
                    if wrong is not None:
                        return Status(Code.Error, (f'running "{name}" filter plugin: {wrong.message()}',), plugin=name)
                if results is None:
                    try:
                        results = [fn(state, pod, ni) for ni in survivors]
                    except Exception:
                        plain = False
                        break
                if results.count(None) == len(results):  # every node passed: the usual case
                    continue
                passed = []
                for ni, status in zip(survivors, results):
                    if status is None:
                        passed.append(ni)
                    elif type(status) is Status and status.code in rejected_codes:
                        status.plugin = name
                        failed[ni] = status
                    elif type(status) is Status and status.code is success:
                        passed.append(ni)
                    else:
                        plain = False
                        break
                if not plain:
                    if form is not None:  # the node-by-node pass takes the form's results as they are
                        given = list(fns)
                        given[fns.index(fn)] = _answering(dict(zip(survivors, results)), fn)
                    break
                survivors = passed
                if not survivors:
                    break
            if not plain:
                failure = self._filter_each(state, pod, chunk, wanted, names, given, nominated, feasible, rejected)
                if failure is not None:
                    return failure
            elif failed:
                for ni in chunk:
                    status = failed.get(ni)
                    if status is None:
                        feasible.append(ni)
                    else:
                        rejected.append((ni, status))
            else:
                feasible.extend(chunk)
            wanted = to_find - len(feasible)
        return None

    def _nominated_in_chunk(self, state: CycleState, pod: "Pod", chunk: list[NodeInfo], nominated: "_Nominated",
                            failed: dict[NodeInfo, Status]) -> tuple[list[NodeInfo], bool]:
        """The chunk's nodes with nominated pods to add, through their two passes: (the nodes
        left for the plugins: those without and those that passed, whether every status was a
        plain one). Rejections go to ``failed``."""
        nodes = nominated.nodes
        rest: list[NodeInfo] = []
        lists, own, priority, key = nominated.lists, nominated.own, nominated.priority, nominated.key
        kept_infos, cycle_pods = self._nominated_infos, nominated.cycle_pods
        for ni in chunk:
            name = ni.name
            if name not in nodes:
                rest.append(ni)
                continue
            if lists is not None and name != own:
                # HOT PATH: _nominated_outcome's kept answer, inlined (hundreds of nodes per pod)
                kept = kept_infos.get(name)
                if kept is not None and kept.nominated is not None and kept.nominated is lists.get(name) \
                        and kept.priority == priority and kept.source is ni and kept.generation == ni.generation \
                        and kept.node is ni.node and kept.image_states is ni.image_states:
                    pods = cycle_pods[name] = kept.pods
                    if not pods:
                        rest.append(ni)
                        continue
                    known = kept.outcomes.get(key, _MISSING) if key is not None else _MISSING
                    if known is None:
                        continue
                    if known is not _MISSING:
                        failed[ni] = _copy_kept(known)
                        continue
            status = self._nominated_outcome(state, pod, ni, nominated)
            if status is None:
                continue  # passed both: not filtered again
            if status is _PLAIN:
                rest.append(ni)
            elif type(status) is Status and status.code in _REJECTED_CODES:
                failed[ni] = status
            elif type(status) is Status and status.code is Code.Success:
                continue
            else:
                return rest, False
        return rest, True

    def _nominated_outcome(self, state: CycleState, pod: "Pod", node_info: NodeInfo,
                           nominated: "_Nominated") -> Any:
        """A node with nominated pods: its two passes' status, or :data:`_PLAIN` when ``pod``
        must leave room for none of them. HOT PATH when hundreds of nodes have nominated pods:
        a kept entry still valid for this pod (same node, same kept nominator list, same
        priority, the pod not nominated here) answers without rebuilding the pods to add."""
        name = node_info.name
        lists = nominated.lists
        if lists is not None and name != nominated.own:
            kept = self._nominated_infos.get(name)
            if kept is not None and kept.nominated is not None and kept.nominated is lists.get(name) \
                    and kept.priority == nominated.priority and kept.source is node_info \
                    and kept.generation == node_info.generation and kept.node is node_info.node \
                    and kept.image_states is node_info.image_states:
                nominated.cycle_pods[name] = kept.pods
                if not kept.pods:
                    return _PLAIN
                if nominated.key is not None:
                    known = kept.outcomes.get(nominated.key, _MISSING)
                    if known is not _MISSING:
                        return None if known is None else _copy_kept(known)
        to_add = self.nominated_pods_to_add(state, pod, name)
        if not to_add:
            if lists is not None and name != nominated.own:
                self._keep_nominated(node_info, to_add, None, lists.get(name), nominated.priority, pod)
            return _PLAIN
        status = self._filter_with_nominated_pods(state, pod, node_info, nominated.extensions, True, nominated.key)
        if lists is not None and name != nominated.own and not nominated.extensions:
            kept = self._nominated_infos.get(name)
            if kept is not None and kept.pods is to_add:
                kept.nominated = None
                self._keep_nominated(node_info, to_add, kept, lists.get(name), nominated.priority, pod)
        return status

    def _keep_nominated(self, node_info: NodeInfo, to_add: list["Pod"], kept: _NodeWithPods | None,
                        source: list["Pod"] | None, priority: int, pod: "Pod") -> None:
        """Mark ``kept`` (or a new entry, for a node with nothing to add) as derived from the
        nominator's kept list ``source``, after checking ``to_add`` is what that list gives."""
        if source is None:
            return
        uid = pod.uid
        derived = [p for p in source if p.uid != uid and p.effective_priority >= priority]
        if len(derived) != len(to_add) or any(a is not b for a, b in zip(derived, to_add)):
            return
        if kept is None:
            kept = self._nominated_infos[node_info.name] = _NodeWithPods(
                node_info, node_info.generation, node_info.node, node_info.image_states, to_add, None)
        kept.nominated = source
        kept.priority = priority

    def run_filter_plugins_with_nominated_pods(self, state: CycleState, pod: "Pod",
                                               node_info: NodeInfo) -> Status | None:
        """Two passes when higher-or-equal priority pods are nominated to this node (upstream §4.3)."""
        return self._filter_with_nominated_pods(state, pod, node_info, self._add_pod_extensions(state), False)

    def _add_pod_extensions(self, state: CycleState) -> tuple[tuple[str, Callable], ...]:
        """The AddPod extensions of the PreFilter plugins that did not skip this cycle."""
        skip = state.skip_filter_plugins
        if not skip:
            return self.add_pod_plugins
        return tuple(entry for entry in self.add_pod_plugins if entry[0] not in skip)

    def _filter_with_nominated_pods(self, state: CycleState, pod: "Pod", node_info: NodeInfo,
                                    extensions: tuple[tuple[str, Callable], ...], reuse: bool,
                                    key: Any = None) -> Status | None:
        """The two passes. Upstream clones the state and the node for the first one; the state
        only needs cloning when an AddPod extension will change it, and without one the node
        with the nominated pods added depends on nothing but the node and those pods, so with
        ``reuse`` (the snapshot's own NodeInfo, which only the cache changes, bumping its
        generation) that clone is kept per node and reused while both are unchanged. With a
        ``key`` (see :func:`_nominated_pass_key`) the outcome is kept with it too, for the next
        pod with the same key."""
        to_add = self.nominated_pods_to_add(state, pod, node_info.name) if reuse \
            else self._nominated_pods_to_add(pod, node_info.name)
        if not to_add:
            return self.run_filter_plugins(state, pod, node_info)
        if extensions:
            state_with = state.clone()
            info_with = node_info.clone()
            for other in to_add:
                info_with.add_pod(other)
                status = self.run_pre_filter_extension_add_pod(state_with, pod, other, info_with)
                if status is not None:
                    return status
        else:
            state_with = state
            kept = self._node_with_pods(node_info, to_add) if reuse else None
            if kept is not None and kept.info is not None:
                info_with = kept.info
                if key is not None and key in kept.outcomes:
                    known = kept.outcomes[key]
                    return None if known is None else _copy_kept(known)
            else:
                info_with = node_info.clone()
                for other in to_add:
                    info_with.add_pod(other)
                if reuse:
                    kept = self._nominated_infos[node_info.name] = _NodeWithPods(
                        node_info, node_info.generation, node_info.node, node_info.image_states, to_add, info_with)
        status = self.run_filter_plugins(state_with, pod, info_with)
        if status is None or status.is_success():
            status = self.run_filter_plugins(state, pod, node_info)
        if key is not None and kept is not None and (status is None or status.is_rejected()):
            # (an Error is not kept: the next pod meets the fault itself)
            if len(kept.outcomes) >= _KEPT_OUTCOMES:
                kept.outcomes.clear()
            kept.outcomes[key] = None if status is None else Status(status.code, status.reasons, status.plugin,
                                                                      status.error)
        return status

    def nominated_pods_to_add(self, state: CycleState, pod: "Pod", node_name: str) -> list["Pod"]:
        """The pods nominated to ``node_name`` that ``pod`` must leave room for (upstream
        addGENominatedPods: priority at least ``pod``'s, ``pod`` itself excluded), in nomination
        order. Worked out once per node and cycle (``state``) while the nominations stay as they
        are, for Filter and then preemption's dry run. Do not change the list."""
        if self.handle.nominator is None:
            return []
        known = self._nominated_cycle_pods(state, pod)
        to_add = known.get(node_name)
        if to_add is None:
            to_add = known[node_name] = self._nominated_pods_to_add(pod, node_name)
        return to_add

    def _nominated_cycle_pods(self, state: CycleState, pod: "Pod") -> dict[str, list["Pod"]]:
        """node name -> pods to add, for this cycle while the nominator's version holds."""
        version = getattr(self.handle.nominator, "version", None)
        cycle = self._nominated_cycle
        if cycle[0] is not state or cycle[1] is not pod or cycle[2] != version or version is None:
            cycle = self._nominated_cycle = (state, pod, version, {})
        return cycle[3]

    def _nominated_pods_to_add(self, pod: "Pod", node_name: str) -> list["Pod"]:
        nominator = self.handle.nominator
        nominated = nominator.nominated_pods_for_node(node_name) if nominator is not None else ()
        if not nominated:
            return []
        priority = pod.effective_priority
        uid = pod.uid
        if len(nominated) == 1:  # the usual case, without a comprehension's frame
            other = nominated[0]
            return [other] if other.uid != uid and other.effective_priority >= priority else []
        return [p for p in nominated if p.uid != uid and p.effective_priority >= priority]

    def _node_with_pods(self, node_info: NodeInfo, pods: list["Pod"]) -> _NodeWithPods | None:
        """The kept clone of ``node_info`` with ``pods`` added, if neither changed since."""
        kept = self._nominated_infos.get(node_info.name)
        if kept is None or kept.source is not node_info or kept.generation != node_info.generation \
                or kept.node is not node_info.node or kept.image_states is not node_info.image_states:
            return None
        return kept if same_objects(kept.pods, pods) else None

    def run_post_filter_plugins(self, state: CycleState, pod: "Pod", node_to_status: NodeToStatus
                                ) -> tuple[PostFilterResult | None, Status]:
        """Upstream RunPostFilterPlugins: first Success or UAU wins; rejections' messages join."""
        reasons: list[str] = []
        rejector = ""
        result: PostFilterResult | None = None
        for name, fn in self.post_filter_plugins:
            try:
                plugin_result, status = self._pair(name, "PostFilter", fn(state, pod, node_to_status),
                                                   PostFilterResult)
            except Exception as exc:
                return None, self._raised(name, "PostFilter", exc)
            if status is None or status.is_success():
                return plugin_result, Status(Code.Success, plugin=name)
            if status.code is Code.UnschedulableAndUnresolvable:
                status.plugin = name
                return plugin_result, status
            if not status.is_rejected():
                return None, Status(Code.Error, (status.message(),), plugin=name)
            if plugin_result is not None and plugin_result.nominating_info is not None \
                    and plugin_result.nominating_info.mode.value != 0:
                result = plugin_result
            reasons.extend(status.reasons)
            rejector = rejector or name
        return result, Status(Code.Unschedulable, tuple(reasons), plugin=rejector)

    def run_pre_score_plugins(self, state: CycleState, pod: "Pod", nodes: list[NodeInfo]) -> Status | None:
        for name, fn in self.pre_score_plugins:
            try:
                status = self._status(name, "PreScore", fn(state, pod, nodes))
            except Exception as exc:
                status = self._raised(name, "PreScore", exc)
            if status is None or status.is_success():
                continue
            if status.is_skip():
                state.skip_score_plugins.add(name)
                continue
            return Status(Code.Error, (f'running PreScore plugin "{name}": {status.message()}',), plugin=name)
        return None

    def run_score_plugins(self, state: CycleState, pod: "Pod", nodes: list[NodeInfo]
                          ) -> tuple[list[NodePluginScores], Status | None]:
        """Score, normalise, range-check and weight: per node, each plugin's weighted score and
        the total (upstream RunScorePlugins). The scheduler's cycle uses
        :meth:`run_score_plugins_totals`, which builds no per-plugin lists."""
        record = CycleRecord()
        totals, status = self.run_score_plugins_totals(state, pod, nodes, record)
        if status is not None:
            return [], status
        return [NodePluginScores(ni.name, [(plugin, s.weighted[ni.name]) for plugin, s in record.plugin_scores.items()],
                                 total) for ni, total in zip(nodes, totals)], None

    def run_score_plugins_totals(self, state: CycleState, pod: "Pod", nodes: list[NodeInfo],
                                 recorder: "CycleRecorder | None" = None, *, names: list[str] | None = None
                                 ) -> tuple[list[int], Status | None]:
        """Each node's weighted total, in ``nodes`` order; the recorder (if any) gets raw,
        normalised and weighted scores per plugin. The per-node loop is a list comprehension
        over the bound method, or the plugin's whole-list form (``score_nodes``,
        ``normalize_score_values``, see :mod:`kschedfw.hookspecs`): the hot path.
        Scores are checked once per plugin per cycle (all ints? then only the range); only a
        failing check looks at each value. A plugin giving every node the same score adds a
        constant to the totals. ``names``: the nodes' names, if the caller has them already."""
        varying: list[list[int]] = []
        constant = 0
        skip = state.skip_score_plugins
        if names is None:
            names = [ni.name for ni in nodes]
        plan = self._score_plan
        if self.score_plugins is not self._score_plan_source:
            plan = tuple((name, fn, weight, normalize, None, None) for name, fn, weight, normalize in self.score_plugins)
        for name, fn, weight, normalize, score_nodes, normalize_values in plan:
            if skip and name in skip:
                continue
            try:
                raw = score_nodes(state, pod, nodes) if score_nodes is not None else None
                if raw is None:
                    raw = [fn(state, pod, ni) for ni in nodes]
                    status = None
                else:
                    status = self._not_one_per_node(name, "Score", raw, len(nodes))
            except Exception as exc:
                err = self._raised(name, "Score", exc)
                return [], Status(Code.Error, (f'running Score plugins: plugin "{name}" failed with: {err.message()}',), plugin=name)
            if status is None:
                values, status = self._score_values(name, "Score", raw)
            if status is not None:
                return [], Status(Code.Error, (f'running Score plugins: plugin "{name}" failed with: {status.message()}',), plugin=name)
            raw_values = values
            if normalize is not None:
                normalized = None
                if normalize_values is not None:
                    try:
                        normalized = normalize_values(state, pod, values)
                    except Exception as exc:
                        status = self._raised(name, "NormalizeScore", exc)
                        return [], Status(Code.Error, (f'running Normalize on Score plugins: plugin "{name}" failed with: {status.message()}',), plugin=name)
                if normalized is None:
                    normalized, status = self._normalize(name, normalize, state, pod, names, values)
                    if status is not None:
                        return [], status
                else:
                    status = self._not_one_per_node(name, "NormalizeScore", normalized, len(values))
                if status is None:
                    values, status = self._score_values(name, "NormalizeScore", normalized)
                if status is not None:
                    return [], Status(Code.Error, (f'running Normalize on Score plugins: plugin "{name}" failed with: {status.message()}',), plugin=name)
            low, high = (min(values), max(values)) if values else (0, 0)
            if recorder is not None:
                recorder.scores(name, names, list(raw_values), list(values), [v * weight for v in values])
            if low < MIN_NODE_SCORE or high > MAX_NODE_SCORE:
                bad = next(v for v in values if not MIN_NODE_SCORE <= v <= MAX_NODE_SCORE)
                return [], Status(Code.Error, (f'applying score defaultWeights on Score plugins: plugin "{name}" returns an invalid score {bad}, it should in the range of [{MIN_NODE_SCORE}, {MAX_NODE_SCORE}] after normalizing',), plugin=name)
            if low == high:
                constant += low * weight
            else:
                varying.append([v * weight for v in values] if weight != 1 else values)
        if not varying:
            totals = [constant] * len(nodes)
        elif len(varying) == 1:
            totals = [v + constant for v in varying[0]] if constant else list(varying[0])
        elif len(varying) == 2:  # the default profile's usual case: the two resource scores
            totals = list(map(add, varying[0], varying[1]))
            if constant:
                totals = [v + constant for v in totals]
        elif constant:
            totals = [sum(column) + constant for column in zip(*varying)]
        else:
            totals = [sum(column) for column in zip(*varying)]
        if recorder is not None:
            recorder.totals(names, list(totals))
        return totals, None

    def _normalize(self, name: str, normalize: Callable, state: CycleState, pod: "Pod", names: list[str],
                   values: list[int]) -> tuple[list, Status | None]:
        """NormalizeScore over a fresh NodeScore list: (the scores it left, error status)."""
        scores = self._node_scores(name, names, values)
        pooled = bool(scores) and self._score_pool.get(name) is not None
        if pooled:
            list_refs, item_refs = sys.getrefcount(scores), sys.getrefcount(scores[0])
        try:
            status = self._status(name, "NormalizeScore", normalize(state, pod, scores))
        except Exception as exc:
            status = self._raised(name, "NormalizeScore", exc)
        if pooled and (sys.getrefcount(scores) > list_refs or max(map(sys.getrefcount, scores)) > item_refs):
            self._keeps_node_scores(name)
        if status is not None and not status.is_success():
            return [], Status(Code.Error, (f'running Normalize on Score plugins: plugin "{name}" failed with: {status.message()}',), plugin=name)
        return [s.score for s in scores], None

    def _node_scores(self, plugin: str, names: list[str], values: list[int]) -> list[NodeScore]:
        """A fresh list for NormalizeScore whose NodeScore items are reused across cycles as long
        as the plugin keeps none of them (the hot path needs hundreds per pod: refilling them
        costs about 40% of building new ones)."""
        pool = self._score_pool.get(plugin)
        if pool is None:
            return [NodeScore(name, v) for name, v in zip(names, values)]
        while len(pool) < len(names):
            pool.append(NodeScore("", 0))
        scores = pool[:len(names)]
        for score, name, value in zip(scores, names, values):
            score.name = name
            score.score = value
        return scores

    def _keeps_node_scores(self, plugin: str) -> None:
        """The plugin kept the NormalizeScore list or one of its items (their reference counts
        grew during the call): its items are never reused again, so what it kept cannot change
        under it and what it changes later cannot reach a later cycle."""
        self._score_pool[plugin] = None
        log.debug("plugin %s keeps NodeScore objects after normalize_score: they are no longer reused", plugin)

    def _not_one_per_node(self, name: str, point: str, out: Any, count: int) -> Status | None:
        """None when a whole-list form returned a list of ``count`` values (each then checked
        as the per-node hook's), else the Error the guard reports."""
        if type(out) is list and len(out) == count or isinstance(out, (list, tuple)) and len(out) == count:
            return None
        message = self.faults.wrong_type(name, point, out, f"a list of {count} results, one per node")
        return Status(Code.Error, (message,), plugin=name)

    def _score_values(self, name: str, point: str, raw: list) -> tuple[list[int], Status | None]:
        """Plugin results as ints. Fast path: every value is exactly an int. Otherwise each value
        is checked: ``(score, status)`` tuples are unpacked; a failed status is returned; bools,
        floats, None and anything else are an Error naming the value (never truncated)."""
        if set(map(type, raw)) <= _INT_ONLY:
            return raw, None
        values = []
        for v in raw:
            if point == "Score" and type(v) is tuple and len(v) == 2:
                score, status = v
                if status is not None:
                    if not isinstance(status, Status):
                        return [], self._status(name, point, status)
                    if not status.is_success():
                        return [], status
                v = score
            if isinstance(v, numbers.Integral) and not isinstance(v, bool):  # int subclasses, numpy ints
                values.append(int(v))
                continue
            want = "int or (int, Status | None)" if point == "Score" else "int in NodeScore.score"
            return [], Status(Code.Error, (self.faults.wrong_type(name, point, v, want),), plugin=name)
        return values, None

    def run_reserve_plugins_reserve(self, state: CycleState, pod: "Pod", node_name: str) -> Status | None:
        return self._run_until_failure(self.reserve_plugins, "Reserve", state, pod, node_name)

    def run_reserve_plugins_unreserve(self, state: CycleState, pod: "Pod", node_name: str) -> None:
        for name, fn in self.unreserve_plugins:
            try:
                fn(state, pod, node_name)
            except Exception as exc:
                self._raised(name, "Unreserve", exc)

    def run_permit_plugins(self, state: CycleState, pod: "Pod", node_name: str, now: float
                           ) -> tuple[Status | None, dict[str, float]]:
        """Returns (status, {plugin: timeout}) — Wait when any plugin asked to wait."""
        waits: dict[str, float] = {}
        for name, fn in self.permit_plugins:
            timeout: Any = 0.0
            try:
                out = fn(state, pod, node_name)
                if isinstance(out, tuple) and len(out) == 2 and isinstance(out[1], (int, float)) \
                        and not isinstance(out[1], bool):
                    status, timeout = self._status(name, "Permit", out[0]), out[1]
                elif isinstance(out, tuple):
                    status = Status(Code.Error, (self.faults.wrong_type(name, "Permit", out, _describe_tuple_want("Permit")),), plugin=name)
                else:
                    status = self._status(name, "Permit", out)
            except Exception as exc:
                status = self._raised(name, "Permit", exc)
            if status is None or status.is_success():
                continue
            if status.is_rejected():
                status.plugin = name
                return status, {}
            if status.is_wait():
                waits[name] = min(float(timeout or 0.0), MAX_PERMIT_TIMEOUT_SECONDS)
                continue
            return Status(Code.Error, (f'running Permit plugin "{name}": {status.message()}',), plugin=name), {}
        if waits:
            return Status(Code.Wait, (f'one or more plugins asked to wait and no plugin rejected pod "{pod.name}"',)), waits
        return None, {}

    def new_waiting_pod(self, pod: "Pod", node_name: str, waits: dict[str, float], now: float,
                        on_resolved: Callable[[WaitingPod], None]) -> WaitingPod:
        wp = WaitingPod(pod, node_name, {p: now + t for p, t in waits.items()}, on_resolved)
        wp.timeouts = dict(waits)
        return wp

    # ------------------------------------------------------------------ binding cycle
    def run_pre_bind_pre_flights(self, state: CycleState, pod: "Pod", node_name: str) -> Status | None:
        """Success if any plugin has PreBind work, Skip if none; Skip marks a plugin's PreBind skipped."""
        any_success = False
        plugins_with_pre_bind = {name for name, _ in self.pre_bind_plugins}
        for name, fn in self.pre_bind_pre_flight_plugins:
            try:
                _, status = self._pair(name, "PreBindPreFlight", fn(state, pod, node_name), PreBindPreFlightResult)
            except Exception as exc:
                status = self._raised(name, "PreBindPreFlight", exc)
            if status is None or status.is_success():
                any_success = True
            elif status.is_skip():
                state.skip_pre_bind_plugins.add(name)
            else:
                return Status(Code.Error, (f'running PreBindPreFlight "{name}": {status.message()}',), plugin=name)
        # plugins without a pre-flight hook always have work to do
        if plugins_with_pre_bind - {name for name, _ in self.pre_bind_pre_flight_plugins}:
            any_success = True
        return None if any_success else Status.skip()

    def run_pre_bind_plugins(self, state: CycleState, pod: "Pod", node_name: str) -> Status | None:
        return self._run_until_failure(self.pre_bind_plugins, "PreBind", state, pod, node_name,
                                       skip=state.skip_pre_bind_plugins)

    def run_bind_plugins(self, state: CycleState, pod: "Pod", node_name: str) -> Status:
        for name, fn in self.bind_plugins:
            try:
                status = self._status(name, "Bind", fn(state, pod, node_name))
            except Exception as exc:
                status = self._raised(name, "Bind", exc)
            if status is not None and status.is_skip():
                continue
            if status is None or status.is_success():
                return Status(Code.Success, plugin=name)
            if status.is_rejected():
                status.plugin = name
                return status
            return Status(Code.Error, (f'running Bind plugin "{name}": {status.message()}',), plugin=name)
        return Status.skip()

    def run_post_bind_plugins(self, state: CycleState, pod: "Pod", node_name: str) -> None:
        for name, fn in self.post_bind_plugins:
            try:
                fn(state, pod, node_name)
            except Exception as exc:
                self._raised(name, "PostBind", exc)

    def _run_until_failure(self, plugins: tuple, point: str, state: CycleState, pod: "Pod", node_name: str,
                           skip: set[str] | frozenset[str] = frozenset()) -> Status | None:
        """Reserve and PreBind: stop at the first non-success; rejections keep the plugin, the rest
        become ``running <point> plugin "<name>": ...`` errors."""
        for name, fn in plugins:
            if name in skip:
                continue
            try:
                status = self._status(name, point, fn(state, pod, node_name))
            except Exception as exc:
                status = self._raised(name, point, exc)
            if status is not None and not status.is_success():
                if status.is_rejected():
                    status.plugin = name
                    return status
                return Status(Code.Error, (f'running {point} plugin "{name}": {status.message()}',), plugin=name)
        return None

    # ------------------------------------------------------------------ introspection
    def has_filter_plugins(self) -> bool:
        return bool(self.filter_plugins)

    def has_score_plugins(self) -> bool:
        return bool(self.score_plugins)

    def has_post_filter_plugins(self) -> bool:
        return bool(self.post_filter_plugins)

    def list_plugins(self) -> Mapping[str, list[str]]:
        return {point: [e.name for e in entries] for point, entries in self.profile.plugins.items()}


def _event_bound_hint(hook: Callable) -> Callable[[ClusterEvent], Callable]:
    """Adapt a plugin's ``queueing_hint(event, pod, old, new)`` to a per-event hint fn."""
    def for_event(event: ClusterEvent) -> Callable:
        def hint(pod: Any, old_obj: Any, new_obj: Any) -> Any:
            return hook(event, pod, old_obj, new_obj)
        return hint
    return for_event
