"""The per-profile runtime: plugins built once, hooks compiled into ordered plans, upstream rules.

pluggy is the registry and the validator; the plan holds bound methods in profile order, so
per-node work (Filter, Score) is a plain Python call. Every plugin call is guarded: an exception,
a return value of the wrong type or a bad score becomes an Error status naming the plugin, the
extension point and what came back, never a crash of the scheduling loop (see ``plugin_results``).

:class:`Framework` is one class whose methods live in modules of one job each, as upstream's
frameworkImpl is spread over files: this one builds the plugins and compiles the plans;
:mod:`~kschedfw.framework.points` runs the once-per-call extension points;
:mod:`~kschedfw.framework.filtering` Filter (with :mod:`~kschedfw.framework.nominated`, the
nominated-pods pass); :mod:`~kschedfw.framework.scoring` Score;
:mod:`~kschedfw.framework.instrumented` the timed plans and extension-point durations that
:meth:`Framework.instrument` compiles in.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Iterable, Mapping

import pluggy

from kschedfw.fwk import hookspecs
from kschedfw.fwk.extension_points import HOOKS, POINTS, point as point_row
from kschedfw.fwk.features import enabled as gate_enabled
from kschedfw.framework.batch import BatchMetrics, OpportunisticBatch
from kschedfw.framework.columnar import whole_list_filter, whole_list_score
from kschedfw.fwk.events import ActionType, ClusterEvent, ClusterEventWithHint, EventResource
from kschedfw.framework.filtering import NodeFiltering, declared_with
from kschedfw.framework.guard import PluginFaults
from kschedfw.framework.handle import Handle
from kschedfw.framework.hookcall import plan_callable
from kschedfw.framework.instrumented import (OBSERVED_POINTS, PLUGIN_LISTS, Instrumentation, plan_attribute,
                                             timed_entries)
from kschedfw.framework.nominated import NominatedPods
from kschedfw.framework.plugin_results import events_problem
from kschedfw.framework.points import SCHEDULER_NAME_SIGNER_NAME, ExtensionPoints
from kschedfw.framework.registry import Registry, implemented_hooks
from kschedfw.framework.scoring import NodeScoring

if TYPE_CHECKING:
    from kschedfw.config.expand import ResolvedProfile

__all__ = ["Framework", "FrameworkError", "SCHEDULER_NAME_SIGNER_NAME"]

#: Extension points whose plugins must all sign pods for a profile to batch (upstream
#: computeBatchablePlugins).
_SIGNED_POINTS = tuple(p.name for p in POINTS if p.signed)

#: Extension points whose plugins' events drive requeueing (upstream: PreEnqueue, PreFilter,
#: Filter, Reserve, Permit).
_EVENT_POINTS = tuple(p.name for p in POINTS if p.requeues)

#: hooks compiled into a plain plan, ``(plugin name, callable)`` per plugin of their point in
#: profile order: every hook a point configures but QueueSort's and Score's (compiled apart)
#: and the pod-group hooks (not called yet)
_PLAIN_PLANS = tuple(h for h in HOOKS if h.field is not None and not h.pod_group
                     and h.name not in ("less", "score", "normalize_score"))
_ALL_EVENTS = ClusterEvent(EventResource.Wildcard, ActionType.All)


class FrameworkError(Exception):
    """A profile that cannot be built (a plugin constructor failed, a plugin is missing...)."""


class Framework(ExtensionPoints, NodeFiltering, NodeScoring):
    """One scheduling profile: its plugin instances and the compiled plan per extension point.

    ``fast_paths`` (the default) lets the runtime keep per-node results between cycles (the
    nominated-pods pass's clones and outcomes, see :mod:`~kschedfw.framework.nominated`), use
    the plugins' declared whole-list forms (:mod:`kschedfw.fwk.hookspecs`), and lets the plugins keep
    their own memos (``Handle.fast_paths``); off, every cycle works everything out afresh node by
    node, to check that both give the same results.
    """

    def __init__(self, profile: "ResolvedProfile", registry: Registry, handle: Handle | None = None,
                 *, fast_paths: bool = True, batch_metrics: BatchMetrics | None = None,
                 handle_facets: Mapping[str, Any] | None = None) -> None:
        """``handle``: one built by hand (tests, tools), attached to this runtime; else a Handle
        is built here with ``handle_facets`` (:class:`Handle`'s arguments) and this runtime, so
        the plugins' constructors see every facet (see :func:`kschedfw.framework.profile.new_profile`)."""
        self.profile = profile
        self.profile_name = profile.scheduler_name
        self.fast_paths = fast_paths
        if handle is None:
            handle = Handle(**(handle_facets or {}), framework=self, profile_name=profile.scheduler_name,
                            fast_paths=fast_paths)
        else:
            handle.attach(self, profile.scheduler_name, fast_paths)
        self.handle = handle
        self.percentage_of_nodes_to_score = profile.percentage_of_nodes_to_score
        self.plugins: dict[str, Any] = {}
        #: plugin name -> the hooks its class implements, read once
        self._hooks: dict[str, frozenset[str]] = {}
        self.faults = PluginFaults()
        self.nominated = NominatedPods(self.handle, self.run_filter_plugins,
                                       self.run_pre_filter_extension_add_pod, keep=fast_paths)
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
            self._hooks[name] = frozenset(implemented_hooks(type(instance)))
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
            if hook in self._hooks[entry.name]:
                out.append((entry.name, plan_callable(self._pm, self.plugins[entry.name], hook)))
        return tuple(out)

    def _compile(self) -> None:
        for row in _PLAIN_PLANS:
            plan = self._bound(point_row(str(row.field)).name, row.name)
            # Unreserve runs in the reverse order of Reserve
            setattr(self, plan_attribute(row.name), tuple(reversed(plan)) if row.name == "unreserve" else plan)
        less = self._bound("less")
        self.less = less[0][1] if less else (lambda a, b: a.timestamp < b.timestamp)
        # the QueueSort plugin's optional sort_key(queued_pod_info) orders exactly like its less:
        # the queue then compares keys in C instead of calling less in Python
        sort_key = getattr(self.plugins[less[0][0]], "sort_key", None) if less else None
        self.queue_sort_key: Callable[[Any], Any] | None = sort_key if callable(sort_key) else None
        # the plugins' whole-list Filter forms, by the bound hook each stands for (a timed copy of
        # the plan for a sampled cycle finds none), and their Filter verdict keys
        self._filter_forms: dict[Callable, Callable] = {
            fn: form for name, fn in self.filter_plugins
            if (form := whole_list_filter(self.plugins[name])) is not None} if self.fast_paths else {}
        self._verdict_keys: dict[str, Callable] = {
            name: verdict_key for name, _ in self.filter_plugins
            if (verdict_key := declared_with(self.plugins[name], "filter_verdict_key", "filter")) is not None}
        score = []
        for entry in self.profile.plugins.get("score", ()):
            plugin = self.plugins[entry.name]
            hooks = self._hooks[entry.name]
            if "score" in hooks:
                normalize = plan_callable(self._pm, plugin, "normalize_score") if "normalize_score" in hooks else None
                score.append((entry.name, plan_callable(self._pm, plugin, "score"), entry.weight or 1, normalize))
        self.score_plugins: tuple[tuple[str, Callable, int, Callable | None], ...] = tuple(score)
        # the plugins' declared whole-list forms of Score and NormalizeScore (hookspecs); the
        # timed plan of a cycle recording plugin metrics has none (see instrument)
        self._score_plan = tuple((name, fn, weight, normalize,
                                  *(whole_list_score(self.plugins[name], normalize) if self.fast_paths else (None, None)))
                                 for name, fn, weight, normalize in score)
        self.sign_plugins, self.unsigned_plugins = self._compile_signers()
        self._last_refuser: int | None = None
        self._hints = self._compile_hints()

    def instrument(self, instrumentation: Instrumentation) -> None:
        """Compile the timed plans against ``instrumentation``: a copy of each plugin list whose
        calls are timed, for the cycles that record plugin metrics (whole-list forms are left
        out there, so every plugin's per-node calls are timed, as upstream's), and an observer
        per extension point for every run (upstream instrumented_plugins.go and the duration
        each Run*Plugins observes)."""
        timed = {attribute: timed_entries(getattr(self, attribute), point, instrumentation)
                 for attribute, point in PLUGIN_LISTS.items()}
        timed["_score_plan"] = tuple((*entry, None, None) for entry in timed["score_plugins"])
        self.instrumentation = instrumentation
        self.timed_plans = timed
        self.point_observers = {point: instrumentation.extension_point_observer(point, self.profile_name)
                                for point in OBSERVED_POINTS}
        if self.batch is not None:
            self.batch.instrument(instrumentation)

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
                if "sign_pod" in self._hooks[entry.name]:
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
            hooks = self._hooks[name]
            if "events_to_register" not in hooks:
                hints.append((_ALL_EVENTS, name, None))
                continue
            try:
                registered: Iterable[ClusterEventWithHint] = plugin.events_to_register() or ()
            except Exception as exc:
                raise FrameworkError(f'plugin "{name}" failed to register events: {exc}') from None
            wrong = events_problem(name, registered)
            if wrong is not None:
                raise FrameworkError(wrong)
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
