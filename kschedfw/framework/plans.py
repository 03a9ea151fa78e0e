"""A profile's compiled plans: one immutable object holding, per extension point, its plugins'
``(plugin name, callable)`` entries in profile order, and what Filter and Score compile beside
them (upstream frameworkImpl's typed per-point plugin lists).

:func:`compile_plans` fills a :class:`Plans` from the extension-point table
(:mod:`kschedfw.fwk.extension_points`): a list per hook a point configures, named as the hook.
:meth:`Plans.timed` is the same object with each timed list's calls timed, for the cycles that
record plugin metrics; the runtime picks one of the two per cycle, nothing else changes.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Callable, Iterable, Mapping

import pluggy

from kschedfw.framework.columnar import declared_with, whole_list_filter, whole_list_score
from kschedfw.framework.hookcall import plan_callable
from kschedfw.framework.instrumented import Instrumentation, timed_call, timed_entries
from kschedfw.framework.plugin_results import events_problem
from kschedfw.fwk.events import ActionType, ClusterEvent, ClusterEventWithHint, EventResource
from kschedfw.fwk.extension_points import HOOKS, POINTS, Hook, hook as hook_row, point as point_row

if TYPE_CHECKING:
    from kschedfw.config.expand import ResolvedProfile

__all__ = ["FrameworkError", "Hint", "LIST_HOOKS", "Plan", "Plans", "PlacementScoreEntry", "PlacementScorePlan",
           "ScoreEntry", "ScorePlan", "compile_plans"]

#: ``(plugin name, callable)`` per plugin of one point, in profile order
Plan = tuple[tuple[str, Callable[..., Any]], ...]
#: one Score plugin: (name, score, weight, normalize_score or None, score_nodes or None,
#: normalize_score_values or None); the whole-list forms are None without fast paths and in
#: the timed plans
ScoreEntry = tuple[str, Callable[..., Any], int, "Callable[..., Any] | None", "Callable[..., Any] | None",
                   "Callable[..., Any] | None"]
ScorePlan = tuple[ScoreEntry, ...]
#: one PlacementScore plugin: (name, score_placement, weight, normalize_placement_score or None)
PlacementScoreEntry = tuple[str, Callable[..., Any], int, "Callable[..., Any] | None"]
PlacementScorePlan = tuple[PlacementScoreEntry, ...]
#: (registered event, plugin, queueing hint or None)
Hint = tuple[ClusterEvent, str, "Callable[..., Any] | None"]

#: the hooks compiled into a plain list, one :class:`Plans` field each, named as the hook: every
#: hook a point configures but QueueSort's and Score's and the pod-group hooks (compiled apart:
#: the placement plans and PodGroupPostFilter's)
LIST_HOOKS: tuple[Hook, ...] = tuple(h for h in HOOKS if h.field is not None and not h.pod_group
                                     and h.name not in ("less", "score", "normalize_score"))

#: Extension points whose plugins must all sign pods for a profile to batch (upstream
#: computeBatchablePlugins).
SIGNED_POINTS = tuple(p.name for p in POINTS if p.signed)

#: Extension points whose plugins' events drive requeueing (upstream: PreEnqueue, PreFilter,
#: Filter, Reserve, Permit).
EVENT_POINTS = tuple(p.name for p in POINTS if p.requeues)

_ALL_EVENTS = ClusterEvent(EventResource.Wildcard, ActionType.All)


class FrameworkError(Exception):
    """A profile that cannot be built (a plugin constructor failed, a plugin is missing...)."""


def _arrival_order(a: Any, b: Any) -> bool:
    """QueueSort without a plugin: first come, first served."""
    return bool(a.timestamp < b.timestamp)


def _no_entries() -> Mapping[Any, Any]:
    return MappingProxyType({})


@dataclass(frozen=True, slots=True, kw_only=True)
class Plans:
    """Everything a profile's runtime calls, compiled once (:func:`compile_plans`).

    One field per hook of :data:`LIST_HOOKS` (Unreserve's in reverse Reserve order), then Score's
    plan, the placement plans (PlacementGenerate's one plugin at most, PlacementScore's entries
    with their weights and NormalizePlacementScore), PodGroupPostFilter's (DefaultPreemption's
    alone, as upstream: see :func:`compile_plans`), the Filter plugins' whole-list forms (by the bound hook each stands for) and verdict
    keys, the signers and the plugins that cannot sign, QueueSort's ``less`` and ``sort_key``
    (which orders exactly like ``less``: the queue then compares keys in C), and the queueing
    hints. A timed copy (:meth:`timed`) has no whole-list forms, so every per-node call is timed.
    """

    pre_enqueue: Plan = ()
    pre_filter: Plan = ()
    pre_filter_add_pod: Plan = ()
    pre_filter_remove_pod: Plan = ()
    filter: Plan = ()
    post_filter: Plan = ()
    pre_score: Plan = ()
    reserve: Plan = ()
    unreserve: Plan = ()
    permit: Plan = ()
    pre_bind_pre_flight: Plan = ()
    pre_bind: Plan = ()
    bind: Plan = ()
    post_bind: Plan = ()
    score: ScorePlan = ()
    placement_generate: Plan = ()
    placement_score: PlacementScorePlan = ()
    #: DefaultPreemption's pod_group_post_filter with WorkloadAwarePreemption on, else empty
    pod_group_post_filter: Plan = ()
    filter_forms: Mapping[Callable[..., Any], Callable[..., Any]] = field(default_factory=_no_entries)
    verdict_keys: Mapping[str, Callable[..., Any]] = field(default_factory=_no_entries)
    signers: Plan = ()
    unsigned: tuple[str, ...] = ()
    less: Callable[[Any, Any], bool] = _arrival_order
    queue_sort_key: Callable[[Any], Any] | None = None
    hints: tuple[Hint, ...] = ()

    def lists(self) -> dict[str, Plan]:
        """The per-hook lists, by hook name (:data:`LIST_HOOKS` order)."""
        return {f.name: getattr(self, f.name) for f in _LIST_FIELDS}

    def timed(self, instrumentation: Instrumentation) -> "Plans":
        """These plans with every timed hook's calls timed into its plugin's observer (upstream
        instrumented_plugins.go), Score's included, and no whole-list forms."""
        lists = self.lists()
        timed: dict[str, Any] = {row.name: timed_entries(lists[row.name], str(row.label), instrumentation)
                 for row in LIST_HOOKS if row.timed}
        score = timed_entries(tuple(entry[:4] for entry in self.score), "Score", instrumentation)
        placement_score = tuple(
            (name, fn, weight, None if normalize is None else
             timed_call(normalize, name, _NORMALIZE_PLACEMENT_LABEL, instrumentation))
            for name, fn, weight, normalize in timed_entries(self.placement_score, _PLACEMENT_SCORE_LABEL,
                                                             instrumentation))
        return dataclasses.replace(self, **timed, score=tuple((*entry, None, None) for entry in score),
                                   placement_generate=timed_entries(self.placement_generate,
                                                                    _PLACEMENT_GENERATE_LABEL, instrumentation),
                                   placement_score=placement_score,
                                   filter_forms=MappingProxyType({}))


_LIST_FIELDS = dataclasses.fields(Plans)[:len(LIST_HOOKS)]
_PLACEMENT_GENERATE_LABEL = str(hook_row("generate_placements").label)
_PLACEMENT_SCORE_LABEL = str(hook_row("score_placement").label)
_NORMALIZE_PLACEMENT_LABEL = str(hook_row("normalize_placement_score").label)
#: the one plugin whose pod_group_post_filter a profile calls (upstream names.DefaultPreemption)
_POD_GROUP_POST_FILTER_PLUGIN = hook_row("pod_group_post_filter").only
assert tuple(f.name for f in _LIST_FIELDS) == tuple(row.name for row in LIST_HOOKS), \
    "Plans' first fields are the table's list hooks, in its order"


class _Compiler:
    """One profile's plugins, read once, as :func:`compile_plans` binds them."""

    def __init__(self, profile: "ResolvedProfile", plugins: Mapping[str, Any], hooks: Mapping[str, frozenset[str]],
                 pm: pluggy.PluginManager) -> None:
        self.profile = profile
        self.plugins = plugins
        self.hooks = hooks
        self.pm = pm

    def bound(self, point: str, hook: str) -> Plan:
        """``hook`` of each plugin at ``point`` implementing it, in profile order."""
        return tuple((entry.name, plan_callable(self.pm, self.plugins[entry.name], hook))
                     for entry in self.profile.plugins.get(point, ()) if hook in self.hooks[entry.name])

    def names(self, points: Iterable[str]) -> list[str]:
        """Every distinct plugin at ``points``, in that order."""
        names: list[str] = []
        for point in points:
            for entry in self.profile.plugins.get(point, ()):
                if entry.name not in names:
                    names.append(entry.name)
        return names

    def score(self, fast_paths: bool) -> ScorePlan:
        out: list[ScoreEntry] = []
        for entry in self.profile.plugins.get("score", ()):
            plugin, hooks = self.plugins[entry.name], self.hooks[entry.name]
            if "score" not in hooks:
                continue
            normalize = plan_callable(self.pm, plugin, "normalize_score") if "normalize_score" in hooks else None
            forms = whole_list_score(plugin, normalize) if fast_paths else (None, None)
            out.append((entry.name, plan_callable(self.pm, plugin, "score"), entry.weight or 1, normalize, *forms))
        return tuple(out)

    def placement_score(self) -> PlacementScorePlan:
        """Each PlacementScore plugin with its weight (0 or unset: 1, as Score's) and its
        NormalizePlacementScore, if it has one (upstream PlacementScoreExtensions)."""
        out: list[PlacementScoreEntry] = []
        for entry in self.profile.plugins.get("score_placement", ()):
            plugin, hooks = self.plugins[entry.name], self.hooks[entry.name]
            if "score_placement" not in hooks:
                continue
            normalize = (plan_callable(self.pm, plugin, "normalize_placement_score")
                         if "normalize_placement_score" in hooks else None)
            out.append((entry.name, plan_callable(self.pm, plugin, "score_placement"), entry.weight or 1, normalize))
        return tuple(out)

    def signers(self) -> tuple[Plan, tuple[str, ...]]:
        """(signers, plugins that cannot sign): every distinct PreFilter, Filter, PreScore and
        Score plugin, in that order. One plugin that cannot sign turns signing off for the
        profile (upstream computeBatchablePlugins)."""
        signers: list[tuple[str, Callable[..., Any]]] = []
        unsigned: list[str] = []
        for name in self.names(SIGNED_POINTS):
            if "sign_pod" in self.hooks[name]:
                signers.append((name, plan_callable(self.pm, self.plugins[name], "sign_pod")))
            else:
                unsigned.append(name)
        return tuple(signers), tuple(unsigned)

    def hints(self) -> tuple[Hint, ...]:
        """(event, plugin, hint) for every plugin that can reject; upstream's wildcard fallback."""
        hints: list[Hint] = []
        for name in self.names(EVENT_POINTS):
            plugin, hooks = self.plugins[name], self.hooks[name]
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
                default_hint = _event_bound_hint(plan_callable(self.pm, plugin, "queueing_hint"))
            for item in registered:
                fn = item.queueing_hint_fn
                if fn is None and default_hint is not None:
                    fn = default_hint(item.event)
                hints.append((item.event, name, fn))
        return tuple(hints)


def compile_plans(profile: "ResolvedProfile", plugins: Mapping[str, Any], hooks: Mapping[str, frozenset[str]],
                  pm: pluggy.PluginManager, *, fast_paths: bool, workload_aware_preemption: bool = False) -> Plans:
    """The plans of ``profile`` over its built ``plugins`` (registered with ``pm``; ``hooks``: the
    hooks each one's class implements). Without ``fast_paths`` no whole-list form is compiled.
    With ``workload_aware_preemption`` the profile's plugin named DefaultPreemption, wherever it is
    enabled, is the one PodGroupPostFilter plugin if it implements the hook (upstream NewFramework);
    no other plugin's ``pod_group_post_filter`` is called."""
    compiler = _Compiler(profile, plugins, hooks, pm)
    lists: dict[str, Any] = {row.name: compiler.bound(point_row(str(row.field)).name, row.name) for row in LIST_HOOKS}
    lists["unreserve"] = tuple(reversed(lists["unreserve"]))  # Unreserve runs in the reverse order of Reserve
    filters: Plan = lists["filter"]
    filter_forms = {fn: form for name, fn in filters
                    if (form := whole_list_filter(plugins[name])) is not None} if fast_paths else {}
    verdict_keys = {name: key for name, _ in filters
                    if (key := declared_with(plugins[name], "filter_verdict_key", "filter")) is not None}
    less = compiler.bound("less", "less")
    sort_key = getattr(plugins[less[0][0]], "sort_key", None) if less else None
    signers, unsigned = compiler.signers()
    queue_sort: dict[str, Any] = {"less": less[0][1]} if less else {}
    placement_generate = compiler.bound("generate_placements", "generate_placements")
    if len(placement_generate) > 1:
        raise FrameworkError("at most one placement generate plugin is allowed for profile with scheduler name "
                             f'"{profile.scheduler_name}"')
    only = _POD_GROUP_POST_FILTER_PLUGIN
    preemption = plugins.get(only) if workload_aware_preemption else None
    pod_group_post_filter: Plan = ((only, plan_callable(pm, preemption, "pod_group_post_filter")),) \
        if preemption is not None and "pod_group_post_filter" in hooks[only] else ()
    return Plans(**lists, score=compiler.score(fast_paths), placement_generate=placement_generate,
                 placement_score=compiler.placement_score(), pod_group_post_filter=pod_group_post_filter,
                 filter_forms=MappingProxyType(filter_forms),
                 verdict_keys=MappingProxyType(verdict_keys), signers=signers, unsigned=unsigned,
                 queue_sort_key=sort_key if callable(sort_key) else None, hints=compiler.hints(), **queue_sort)


def _event_bound_hint(hook: Callable[..., Any]) -> Callable[[ClusterEvent], Callable[..., Any]]:
    """Adapt a plugin's ``queueing_hint(event, pod, old, new)`` to a per-event hint fn."""
    def for_event(event: ClusterEvent) -> Callable[..., Any]:
        def hint(pod: Any, old_obj: Any, new_obj: Any) -> Any:
            return hook(event, pod, old_obj, new_obj)
        return hint
    return for_event
