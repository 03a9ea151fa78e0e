"""The extension-point vocabulary of the v1 ``Plugins`` config: PluginSet fields, the hook each
one configures, upstream's interface names, and the order a framework is built in.

What an installed plugin implements is the plugin registry's answer
(:class:`kschedfw.framework.registry.PluginRegistry`); this module only names the points.
"""

from __future__ import annotations

#: The v1 ``Plugins`` fields in upstream's declaration order: (config field, hook name,
#: upstream interface name). ``multiPoint`` is not an extension point and is listed apart.
PLUGIN_SETS: tuple[tuple[str, str, str], ...] = (
    ("preEnqueue", "pre_enqueue", "PreEnqueuePlugin"),
    ("queueSort", "less", "QueueSortPlugin"),
    ("preFilter", "pre_filter", "PreFilterPlugin"),
    ("filter", "filter", "FilterPlugin"),
    ("postFilter", "post_filter", "PostFilterPlugin"),
    ("preScore", "pre_score", "PreScorePlugin"),
    ("score", "score", "ScorePlugin"),
    ("reserve", "reserve", "ReservePlugin"),
    ("permit", "permit", "PermitPlugin"),
    ("preBind", "pre_bind", "PreBindPlugin"),
    ("bind", "bind", "BindPlugin"),
    ("postBind", "post_bind", "PostBindPlugin"),
    ("placementGenerate", "generate_placements", "PlacementGeneratePlugin"),
    ("placementScore", "score_placement", "PlacementScorePlugin"),
    ("podGroupPostFilter", "pod_group_post_filter", "PodGroupPostFilterPlugin"),
)

MULTI_POINT = "multiPoint"

#: Every PluginSet field of v1 ``Plugins``, multiPoint included (16).
PLUGIN_SET_FIELDS: tuple[str, ...] = (*(f for f, _, _ in PLUGIN_SETS[:12]), MULTI_POINT,
                                      *(f for f, _, _ in PLUGIN_SETS[12:]))

HOOK_OF_SET: dict[str, str] = {f: h for f, h, _ in PLUGIN_SETS}
IFACE_OF_SET: dict[str, str] = {f: i for f, _, i in PLUGIN_SETS}
SET_OF_HOOK: dict[str, str] = {h: f for f, h, _ in PLUGIN_SETS}

#: Upstream ``getExtensionPoints`` order: the order in which a framework is filled, which is
#: also the order in which the first error of each kind is met.
BUILD_ORDER: tuple[str, ...] = (
    "preFilter", "filter", "postFilter", "reserve", "preScore", "score", "preBind", "bind",
    "postBind", "permit", "preEnqueue", "queueSort", "placementGenerate", "placementScore",
    "podGroupPostFilter",
)

#: PluginSets whose ``weight`` means something.
WEIGHTED_SETS = frozenset({"score", "placementScore"})
