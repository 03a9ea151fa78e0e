"""The per-profile runtime: plugins built once, hooks compiled into ordered plans, upstream rules.

pluggy is the registry and the validator; the plan holds bound methods in profile order, so
per-node work (Filter, Score) is a plain Python call. Every plugin call is guarded: an exception
becomes an Error status naming the plugin, never a crash of the scheduling loop.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, Callable, Iterable, Mapping

import pluggy

from kschedfw import hookspecs
from kschedfw.framework.cycle_state import CycleState
from kschedfw.framework.events import ActionType, ClusterEvent, ClusterEventWithHint, EventResource
from kschedfw.framework.handle import Handle
from kschedfw.framework.registry import Registry, implemented_hooks
from kschedfw.framework.status import Code, Status
from kschedfw.framework.types import (MAX_NODE_SCORE, MAX_PERMIT_TIMEOUT_SECONDS, MIN_NODE_SCORE,
                                      NodeInfo, NodePluginScores, NodeScore, NodeToStatus,
                                      PostFilterResult, PreFilterResult)
from kschedfw.framework.waiting_pods import WaitingPod

if TYPE_CHECKING:
    from kschedfw.api import Pod
    from kschedfw.config.expand import ResolvedProfile

log = logging.getLogger(__name__)

#: Extension points whose plugins' events drive requeueing (upstream: PreEnqueue, PreFilter,
#: Filter, Reserve, Permit).
_EVENT_POINTS = ("pre_enqueue", "pre_filter", "filter", "reserve", "permit")
_ALL_EVENTS = ClusterEvent(EventResource.Wildcard, ActionType.All)


class FrameworkError(Exception):
    """A profile that cannot be built (a plugin constructor failed, a plugin is missing...)."""


def _plugin_error(plugin: str, exc: BaseException) -> Status:
    status = Status(Code.Error, (f"{type(exc).__name__}: {exc}",), plugin=plugin)
    log.warning("plugin %s raised %s: %s", plugin, type(exc).__name__, exc)
    log.debug("plugin %s traceback", plugin, exc_info=exc)
    return status


def _as_status(result: Any) -> Status | None:
    if result is None or isinstance(result, Status):
        return result
    raise TypeError(f"expected a Status or None, got {type(result).__name__}")


class Framework:
    """One scheduling profile: its plugin instances and the compiled plan per extension point."""

    def __init__(self, profile: "ResolvedProfile", registry: Registry, handle: Handle | None = None) -> None:
        self.profile = profile
        self.profile_name = profile.scheduler_name
        self.handle = handle if handle is not None else Handle(profile_name=profile.scheduler_name)
        self.handle.framework = self
        self.handle.profile_name = profile.scheduler_name
        self.percentage_of_nodes_to_score = profile.percentage_of_nodes_to_score
        self.plugins: dict[str, Any] = {}
        self.last_plugin_scores: list[tuple[str, list[int]]] = []
        self._score_pool: dict[str, list[NodeScore]] = {}
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

    # ------------------------------------------------------------------ plan
    def _bound(self, point: str, hook: str | None = None) -> tuple[tuple[str, Callable], ...]:
        hook = hook or point
        out = []
        for entry in self.profile.plugins.get(point, ()):
            plugin = self.plugins[entry.name]
            if hook in implemented_hooks(type(plugin)):
                out.append((entry.name, getattr(plugin, hook)))
        return tuple(out)

    def _compile(self) -> None:
        self.pre_enqueue_plugins = self._bound("pre_enqueue")
        less = self._bound("less")
        self.queue_sort_plugin = less[0][0] if less else ""
        self.less = less[0][1] if less else (lambda a, b: a.timestamp < b.timestamp)
        self.pre_filter_plugins = self._bound("pre_filter")
        self.add_pod_plugins = self._bound("pre_filter", "pre_filter_add_pod")
        self.remove_pod_plugins = self._bound("pre_filter", "pre_filter_remove_pod")
        self.filter_plugins = self._bound("filter")
        self.post_filter_plugins = self._bound("post_filter")
        self.pre_score_plugins = self._bound("pre_score")
        score = []
        for entry in self.profile.plugins.get("score", ()):
            plugin = self.plugins[entry.name]
            hooks = implemented_hooks(type(plugin))
            if "score" in hooks:
                normalize = plugin.normalize_score if "normalize_score" in hooks else None
                score.append((entry.name, plugin.score, entry.weight or 1, normalize))
        self.score_plugins: tuple[tuple[str, Callable, int, Callable | None], ...] = tuple(score)
        self.reserve_plugins = self._bound("reserve")
        self.unreserve_plugins = tuple(reversed(self._bound("reserve", "unreserve")))
        self.permit_plugins = self._bound("permit")
        self.pre_bind_plugins = self._bound("pre_bind")
        self.pre_bind_pre_flight_plugins = self._bound("pre_bind", "pre_bind_pre_flight")
        self.bind_plugins = self._bound("bind")
        self.post_bind_plugins = self._bound("post_bind")
        self._hints = self._compile_hints()

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
                default_hint = _event_bound_hint(plugin.queueing_hint)
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
                status = _as_status(fn(pod))
            except Exception as exc:
                return _plugin_error(name, exc)
            if status is not None and not status.is_success():
                status.plugin = name
                return status
        return None

    # ------------------------------------------------------------------ scheduling cycle
    def run_pre_filter_plugins(self, state: CycleState, pod: "Pod", nodes: list[NodeInfo]
                               ) -> tuple[PreFilterResult | None, Status | None, set[str]]:
        """Upstream RunPreFilterPlugins: returns (merged result, status, rejecting plugins)."""
        result: PreFilterResult | None = None
        rejectors: set[str] = set()
        returned: Status | None = None
        narrowing: list[str] = []
        for name, fn in self.pre_filter_plugins:
            try:
                out = fn(state, pod, nodes)
                if isinstance(out, tuple):
                    plugin_result, status = out
                else:
                    plugin_result, status = None, out
                status = _as_status(status)
            except Exception as exc:
                err = _plugin_error(name, exc)
                return None, Status(Code.Error, (f'running PreFilter plugin "{name}": {err.message()}',), plugin=name), rejectors
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
        self.last_pre_filter_narrowing = tuple(narrowing)
        skip = state.skip_filter_plugins
        state.filter_plan = tuple(p for p in self.filter_plugins if p[0] not in skip) if skip else self.filter_plugins
        return result, returned, rejectors

    def _run_extension(self, plugins: tuple, state: CycleState, pod: "Pod", other: "Pod",
                       node_info: NodeInfo, what: str) -> Status | None:
        for name, fn in plugins:
            if name in state.skip_filter_plugins:
                continue
            try:
                status = _as_status(fn(state, pod, other, node_info))
            except Exception as exc:
                status = _plugin_error(name, exc)
            if status is not None and not status.is_success():
                return Status(Code.Error, (f'running {what} on PreFilter plugin "{name}": {status.message()}',), plugin=name)
        return None

    def run_pre_filter_extension_add_pod(self, state: CycleState, pod: "Pod", pod_to_add: "Pod",
                                         node_info: NodeInfo) -> Status | None:
        return self._run_extension(self.add_pod_plugins, state, pod, pod_to_add, node_info, "AddPod")

    def run_pre_filter_extension_remove_pod(self, state: CycleState, pod: "Pod", pod_to_remove: "Pod",
                                            node_info: NodeInfo) -> Status | None:
        return self._run_extension(self.remove_pod_plugins, state, pod, pod_to_remove, node_info, "RemovePod")

    def run_filter_plugins(self, state: CycleState, pod: "Pod", node_info: NodeInfo) -> Status | None:
        """Upstream RunFilterPlugins: stop at the first non-success on this node."""
        plan = state.filter_plan
        if plan is None:  # PreFilter did not run (tests, tools): honour any skips recorded
            skip = state.skip_filter_plugins
            plan = tuple(p for p in self.filter_plugins if p[0] not in skip)
        for name, fn in plan:
            try:
                status = fn(state, pod, node_info)
            except Exception as exc:
                err = _plugin_error(name, exc)
                return Status(Code.Error, (f'running "{name}" filter plugin: {err.message()}',), plugin=name)
            if status is not None and status.code is not Code.Success:
                if status.is_rejected():
                    status.plugin = name
                    return status
                return Status(Code.Error, (f'running "{name}" filter plugin: {status.message()}',), plugin=name)
        return None

    def run_filter_plugins_with_nominated_pods(self, state: CycleState, pod: "Pod",
                                               node_info: NodeInfo) -> Status | None:
        """Two passes when higher-or-equal priority pods are nominated to this node (upstream §4.3)."""
        nominator = self.handle.nominator
        nominated = nominator.nominated_pods_for_node(node_info.name) if nominator is not None else ()
        if not nominated:
            return self.run_filter_plugins(state, pod, node_info)
        priority = pod.effective_priority
        to_add = [p for p in nominated if p.uid != pod.uid and p.effective_priority >= priority]
        if not to_add:
            return self.run_filter_plugins(state, pod, node_info)
        state_with = state.clone()
        info_with = node_info.clone()
        for other in to_add:
            info_with.add_pod(other)
            status = self.run_pre_filter_extension_add_pod(state_with, pod, other, info_with)
            if status is not None:
                return status
        status = self.run_filter_plugins(state_with, pod, info_with)
        if status is not None and not status.is_success():
            return status
        return self.run_filter_plugins(state, pod, node_info)

    def run_post_filter_plugins(self, state: CycleState, pod: "Pod", node_to_status: NodeToStatus
                                ) -> tuple[PostFilterResult | None, Status]:
        """Upstream RunPostFilterPlugins: first Success or UAU wins; rejections' messages join."""
        reasons: list[str] = []
        rejector = ""
        result: PostFilterResult | None = None
        for name, fn in self.post_filter_plugins:
            try:
                out = fn(state, pod, node_to_status)
                plugin_result, status = out if isinstance(out, tuple) else (None, out)
                status = _as_status(status)
            except Exception as exc:
                return None, Status(Code.Error, (_plugin_error(name, exc).message(),), plugin=name)
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
                status = _as_status(fn(state, pod, nodes))
            except Exception as exc:
                status = _plugin_error(name, exc)
            if status is None or status.is_success():
                continue
            if status.is_skip():
                state.skip_score_plugins.add(name)
                continue
            return Status(Code.Error, (f'running PreScore plugin "{name}": {status.message()}',), plugin=name)
        return None

    def run_score_plugins(self, state: CycleState, pod: "Pod", nodes: list[NodeInfo]
                          ) -> tuple[list[NodePluginScores], Status | None]:
        """Score, normalise, range-check and weight; per-node totals (upstream RunScorePlugins)."""
        totals, status = self.run_score_plugins_totals(state, pod, nodes)
        if status is not None:
            return [], status
        return [NodePluginScores(ni.name, total_score=t) for ni, t in zip(nodes, totals)], None

    def run_score_plugins_totals(self, state: CycleState, pod: "Pod", nodes: list[NodeInfo]
                                 ) -> tuple[list[int], Status | None]:
        """Each node's weighted total, in ``nodes`` order; ``last_plugin_scores`` keeps the
        weighted scores per plugin. The per-node loop is a list comprehension over the bound
        method: the hot path."""
        per_plugin: list[tuple[str, list[int]]] = []
        skip = state.skip_score_plugins
        for name, fn, weight, normalize in self.score_plugins:
            if skip and name in skip:
                continue
            try:
                raw = [fn(state, pod, ni) for ni in nodes]
            except Exception as exc:
                err = _plugin_error(name, exc)
                return [], Status(Code.Error, (f'running Score plugins: plugin "{name}" failed with: {err.message()}',), plugin=name)
            values, status = _score_values(raw)
            if status is not None:
                return [], Status(Code.Error, (f'running Score plugins: plugin "{name}" failed with: {status.message()}',), plugin=name)
            if normalize is not None:
                scores = self._node_scores(name, nodes, values)
                try:
                    status = _as_status(normalize(state, pod, scores))
                except Exception as exc:
                    status = _plugin_error(name, exc)
                if status is not None and not status.is_success():
                    return [], Status(Code.Error, (f'running Normalize on Score plugins: plugin "{name}" failed with: {status.message()}',), plugin=name)
                values = [s.score for s in scores]
            if values and (min(values) < MIN_NODE_SCORE or max(values) > MAX_NODE_SCORE):
                bad = next(v for v in values if not MIN_NODE_SCORE <= v <= MAX_NODE_SCORE)
                return [], Status(Code.Error, (f'applying score defaultWeights on Score plugins: plugin "{name}" returns an invalid score {bad}, it should in the range of [{MIN_NODE_SCORE}, {MAX_NODE_SCORE}] after normalizing',), plugin=name)
            if weight != 1:
                values = [v * weight for v in values]
            per_plugin.append((name, values))
        self.last_plugin_scores = per_plugin
        if not per_plugin:
            return [0] * len(nodes), None
        return [sum(column) for column in zip(*(values for _, values in per_plugin))], None

    def _node_scores(self, plugin: str, nodes: list[NodeInfo], values: list[int]) -> list[NodeScore]:
        """NodeScore objects for a NormalizeScore call, reused across cycles (the hot path makes
        hundreds per pod); NormalizeScore must not keep them after it returns."""
        pool = self._score_pool.setdefault(plugin, [])
        while len(pool) < len(nodes):
            pool.append(NodeScore("", 0))
        scores = pool[:len(nodes)]
        for score, ni, value in zip(scores, nodes, values):
            score.name = ni.name
            score.score = value
        return scores

    def run_reserve_plugins_reserve(self, state: CycleState, pod: "Pod", node_name: str) -> Status | None:
        return _run_until_failure(self.reserve_plugins, "Reserve", state, pod, node_name)

    def run_reserve_plugins_unreserve(self, state: CycleState, pod: "Pod", node_name: str) -> None:
        for name, fn in self.unreserve_plugins:
            try:
                fn(state, pod, node_name)
            except Exception as exc:
                _plugin_error(name, exc)

    def run_permit_plugins(self, state: CycleState, pod: "Pod", node_name: str, now: float
                           ) -> tuple[Status | None, dict[str, float]]:
        """Returns (status, {plugin: timeout}) — Wait when any plugin asked to wait."""
        waits: dict[str, float] = {}
        for name, fn in self.permit_plugins:
            try:
                out = fn(state, pod, node_name)
                status, timeout = out if isinstance(out, tuple) else (out, 0.0)
                status = _as_status(status)
            except Exception as exc:
                status, timeout = _plugin_error(name, exc), 0.0
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
                out = fn(state, pod, node_name)
                status = out[1] if isinstance(out, tuple) else out
                status = _as_status(status)
            except Exception as exc:
                status = _plugin_error(name, exc)
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
        return _run_until_failure(self.pre_bind_plugins, "PreBind", state, pod, node_name,
                                  skip=state.skip_pre_bind_plugins)

    def run_bind_plugins(self, state: CycleState, pod: "Pod", node_name: str) -> Status:
        for name, fn in self.bind_plugins:
            try:
                status = _as_status(fn(state, pod, node_name))
            except Exception as exc:
                status = _plugin_error(name, exc)
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
                _plugin_error(name, exc)

    # ------------------------------------------------------------------ introspection
    def has_filter_plugins(self) -> bool:
        return bool(self.filter_plugins)

    def has_score_plugins(self) -> bool:
        return bool(self.score_plugins)

    def has_post_filter_plugins(self) -> bool:
        return bool(self.post_filter_plugins)

    def list_plugins(self) -> Mapping[str, list[str]]:
        return {point: [e.name for e in entries] for point, entries in self.profile.plugins.items()}


def _run_until_failure(plugins: tuple, point: str, state: CycleState, pod: "Pod", node_name: str,
                       skip: set[str] | frozenset[str] = frozenset()) -> Status | None:
    """Reserve and PreBind: stop at the first non-success; rejections keep the plugin, the rest
    become ``running <point> plugin "<name>": ...`` errors."""
    for name, fn in plugins:
        if name in skip:
            continue
        try:
            status = _as_status(fn(state, pod, node_name))
        except Exception as exc:
            status = _plugin_error(name, exc)
        if status is not None and not status.is_success():
            if status.is_rejected():
                status.plugin = name
                return status
            return Status(Code.Error, (f'running {point} plugin "{name}": {status.message()}',), plugin=name)
    return None


_INT_ONLY = {int}


def _score_values(raw: list) -> tuple[list[int], Status | None]:
    """Plugin results as ints; a ``(score, status)`` result with a failed status is returned."""
    if set(map(type, raw)) <= _INT_ONLY:
        return raw, None
    values = []
    for v in raw:
        if isinstance(v, tuple):
            v, status = v
            if status is not None and not status.is_success():
                return [], status
        values.append(int(v))
    return values, None


def _event_bound_hint(hook: Callable) -> Callable[[ClusterEvent], Callable]:
    """Adapt a plugin's ``queueing_hint(event, pod, old, new)`` to a per-event hint fn."""
    def for_event(event: ClusterEvent) -> Callable:
        def hint(pod: Any, old_obj: Any, new_obj: Any) -> Any:
            return hook(event=event, pod=pod, old_obj=old_obj, new_obj=new_obj)
        return hint
    return for_event
