"""The extension-point table: every hook of the contract in one row, and the optional methods.

Everything else that names an extension point reads it from here: the hookspecs' ``__all__``,
the ``plugins:`` fields of KubeSchedulerConfiguration and their schema, the order a profile is
built in, the metric labels the runtime observes, which plugin lists it compiles, which points
must sign pods for batching and which points' plugins register events. A new extension point
is one new row (and its hookspec).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["HOOKS", "HOOK_NAMES", "Hook", "OPTIONAL_METHODS", "POINTS", "WHOLE_LIST_FORMS", "hook", "point"]


@dataclass(frozen=True)
class Hook:
    """One hook of the contract (one row of :data:`HOOKS`).

    ``interface`` is upstream's Go interface declaring it (``PreFilterPlugin``), ``result`` what
    it returns (its hookspec's return annotation). ``field`` is the ``plugins:`` PluginSet a profile configures the hook's plugins under (None:
    the hook serves a plugin at whatever point it sits, such as ``events_to_register``); the
    hook is that point's own when ``own`` is set. ``build`` is the point's place in upstream's
    ``getExtensionPoints`` (the order a framework is filled and its first error is met).
    ``label`` is upstream's ``extension_point`` metric label; ``timed`` the plugin calls are
    timed in sampled cycles (plugin_execution_duration_seconds) and ``observed`` each run is
    (framework_extension_point_duration_seconds).
    """

    name: str
    interface: str
    result: str
    field: str | None = None
    own: bool = False
    build: int = 0
    label: str | None = None
    timed: bool = False
    observed: bool = False
    #: every plugin at this point must sign pods for its profile to batch (computeBatchablePlugins)
    signed: bool = False
    #: this point's plugins can reject a pod, so their registered events requeue it
    requeues: bool = False
    #: the PluginSet's ``weight`` counts
    weighted: bool = False
    #: a pod-group (workload) hook: not in upstream's original twelve sets, compiled apart from them
    pod_group: bool = False
    #: the one plugin, by name, whose implementation the runtime calls ("": every plugin's);
    #: any other plugin implementing the hook is warned at load that it has no effect
    only: str = ""
    #: what the point is for (the config schema's description)
    doc: str = ""
    #: implementing this hook alone makes a plugin of ``field`` though it is not the point's own
    #: (Unreserve: a Reserve plugin)
    alone_extends: bool = False

    @property
    def enables(self) -> str | None:
        """The own hook of the point a class implementing this hook can be enabled at."""
        if self.own:
            return self.name
        return point(self.field).name if self.alone_extends and self.field is not None else None


#: Every hook, in the order a pod meets them (the hookspecs' order). Points in upstream's
#: declaration order of the v1 ``Plugins`` struct, read top to bottom.
HOOKS: tuple[Hook, ...] = (
    # queue
    Hook("pre_enqueue", "PreEnqueuePlugin", "Status | None", "preEnqueue", True, 11, "PreEnqueue",
         observed=True, requeues=True, doc="PreEnqueue: gate pods before they enter the active queue."),
    Hook("less", "QueueSortPlugin", "bool", "queueSort", True, 12,
         doc="QueueSort: order the scheduling queue (exactly one, same in all profiles)."),
    Hook("events_to_register", "EnqueueExtensions", "list[ClusterEventWithHint]"),
    Hook("queueing_hint", "QueueingHintFn", "QueueingHint"),
    # scheduling cycle
    Hook("sign_pod", "SignPlugin", "tuple[list[SignFragment] | None, Status | None]"),
    Hook("pre_filter", "PreFilterPlugin", "tuple[PreFilterResult | None, Status | None]", "preFilter", True, 1,
         "PreFilter", timed=True, observed=True, signed=True, requeues=True,
         doc="PreFilter: pre-process or reject a pod before filtering."),
    Hook("pre_filter_add_pod", "PreFilterExtensions", "Status | None", "preFilter",
         label="PreFilterExtensionAddPod", timed=True),
    Hook("pre_filter_remove_pod", "PreFilterExtensions", "Status | None", "preFilter",
         label="PreFilterExtensionRemovePod", timed=True),
    Hook("filter", "FilterPlugin", "Status | None", "filter", True, 2, "Filter", timed=True, observed=True,
         signed=True, requeues=True, doc="Filter: reject nodes that cannot run the pod."),
    Hook("post_filter", "PostFilterPlugin", "tuple[PostFilterResult | None, Status | None]", "postFilter", True, 3,
         "PostFilter", timed=True, observed=True, doc="PostFilter: run when no node fits (preemption)."),
    Hook("pre_score", "PreScorePlugin", "Status | None", "preScore", True, 5, "PreScore", timed=True,
         observed=True, signed=True, doc="PreScore: prepare scoring."),
    Hook("score", "ScorePlugin", "int | Status", "score", True, 6, "Score", timed=True,
         observed=True, signed=True, weighted=True, doc="Score: rank feasible nodes (weights apply)."),
    Hook("normalize_score", "ScoreExtensions", "Status | None", "score"),
    Hook("reserve", "ReservePlugin", "Status | None", "reserve", True, 4, "Reserve", timed=True, observed=True,
         requeues=True, doc="Reserve: reserve resources on the chosen node."),
    Hook("unreserve", "ReservePlugin", "None", "reserve", label="Unreserve", timed=True, observed=True,
         alone_extends=True),
    Hook("permit", "PermitPlugin", "tuple[Status | None, float]", "permit", True, 10, "Permit",
         timed=True, observed=True, requeues=True, doc="Permit: approve, deny or delay binding."),
    # binding cycle
    Hook("pre_bind_pre_flight", "PreBindPlugin",
         "tuple[PreBindPreFlightResult | None, Status | None]", "preBind",
         label="PreBindPreFlight", observed=True),
    Hook("pre_bind", "PreBindPlugin", "Status | None", "preBind", True, 7, "PreBind", timed=True, observed=True,
         doc="PreBind: work before binding."),
    Hook("bind", "BindPlugin", "Status | None", "bind", True, 8, "Bind", timed=True, observed=True,
         doc="Bind: bind the pod to the node (at least one)."),
    Hook("post_bind", "PostBindPlugin", "None", "postBind", True, 9, "PostBind", timed=True, observed=True,
         doc="PostBind: informational, after binding."),
    # pod groups
    Hook("generate_placements", "PlacementGeneratePlugin",
         "tuple[GeneratePlacementsResult | None, Status | None]", "placementGenerate", True, 13,
         "PlacementGenerate", timed=True, observed=True, pod_group=True,
         doc="PlacementGenerate: propose placements for a pod group."),
    Hook("score_placement", "PlacementScorePlugin", "int | Status", "placementScore", True, 14, "PlacementScore",
         timed=True, observed=True, weighted=True, pod_group=True,
         doc="PlacementScore: rank placements for a pod group (weights apply)."),
    Hook("normalize_placement_score", "PlacementScoreExtensions", "Status | None", "placementScore",
         label="PlacementScoreExtensionNormalize", timed=True, pod_group=True),
    # not a ``plugins:`` field upstream: the profile's DefaultPreemption, wherever it is enabled,
    # is the one PodGroupPostFilter plugin (frameworkImpl's podGroupPostFilterPlugins)
    Hook("pod_group_post_filter", "PodGroupPostFilterPlugin", "Status | None", pod_group=True,
         only="DefaultPreemption"),
)

#: Every hook's name, in :data:`HOOKS` order.
HOOK_NAMES: tuple[str, ...] = tuple(h.name for h in HOOKS)

#: The extension points proper: one row per ``plugins:`` field (multiPoint aside), its own hook.
POINTS: tuple[Hook, ...] = tuple(h for h in HOOKS if h.own)

_BY_NAME = {h.name: h for h in HOOKS}
_BY_FIELD = {h.field: h for h in POINTS}


def hook(name: str) -> Hook:
    """The row of hook ``name``."""
    return _BY_NAME[name]


def point(field: str) -> Hook:
    """The row of the extension point configured under ``plugins.<field>``."""
    return _BY_FIELD[field]


#: whole-list form -> the per-node hook it stands for (see :mod:`kschedfw.fwk.hookspecs`)
WHOLE_LIST_FORMS: dict[str, str] = {
    "filter_nodes": "filter", "score_nodes": "score", "normalize_score_values": "normalize_score",
}

#: The plain (not ``@hookimpl``) members of a plugin class the runtime looks up by name, and the
#: hook each goes with (None: any). A plugin member whose name is close to one of these, or to a
#: hook, but is neither is refused at load with "did you mean": a typo would otherwise silently
#: lose a fast path or an args check.
OPTIONAL_METHODS: dict[str, str | None] = {
    "name": None,
    "args_schema": None,
    "validate_args": None,
    "args_spec": None,
    "sort_key": "less",
    "filter_verdict_key": "filter",
    **WHOLE_LIST_FORMS,
    "explain_rejection": None,
}
