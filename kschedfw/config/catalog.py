"""What the config layer needs to know about installed plugins, and the extension-point vocabulary.

The catalog itself is built by :mod:`kschedfw.framework.registry` from the ``kschedfw.plugins``
entry points; the config code only depends on the :class:`PluginCatalog` protocol below, so tests
can hand it a fake.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    from kschedfw.errors import FieldError


@runtime_checkable
class PluginCatalog(Protocol):
    """The installed plugins, as configuration sees them."""

    def names(self) -> list[str]:
        """Every installed plugin name, sorted."""

    def extension_points(self, name: str) -> frozenset[str] | None:
        """Hook names the plugin implements (``filter``, ``score``, ...); ``None`` if unknown."""

    def args_schema(self, name: str) -> dict | None:
        """JSON Schema of the plugin's args, with ``default``s; ``None`` if it takes no args."""

    def validate_args(self, name: str, args: dict) -> list[FieldError]:
        """The plugin's own semantic rules on defaulted args; paths are relative to ``args``."""

    def describe(self, name: str) -> str:
        """``distribution[name]``, for messages."""


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
