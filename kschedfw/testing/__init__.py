"""Helpers for testing plugins without entry points (opt-in: ``pytest_plugins = ["kschedfw.testing"]``).

``profile_for`` enables plugin classes at every extension point they implement, in the order
given, as a multiPoint list would; ``framework_for`` builds the runtime for them.
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping

from kschedfw.config.expand import PluginEntry, ResolvedProfile
from kschedfw.framework.handle import Handle
from kschedfw.framework.registry import Registry, implemented_hooks
from kschedfw.framework.runtime import Framework

#: Hooks that are configured as PluginSets (and so carry an order in a profile).
CONFIGURABLE_POINTS = ("pre_enqueue", "less", "pre_filter", "filter", "post_filter", "pre_score", "score",
                       "reserve", "permit", "pre_bind", "bind", "post_bind")


def profile_for(classes: Iterable[type], *, args: Mapping[str, Mapping] | None = None,
                weights: Mapping[str, int] | None = None, scheduler_name: str = "default-scheduler",
                percentage_of_nodes_to_score: int | None = None) -> ResolvedProfile:
    classes = list(classes)
    plugins: dict[str, list[PluginEntry]] = {point: [] for point in CONFIGURABLE_POINTS}
    for cls in classes:
        hooks = implemented_hooks(cls)
        for point in CONFIGURABLE_POINTS:
            if point in hooks:
                plugins[point].append(PluginEntry(cls.name, (weights or {}).get(cls.name, 1)))
    return ResolvedProfile(scheduler_name=scheduler_name,
                           percentage_of_nodes_to_score=percentage_of_nodes_to_score,
                           plugins={k: tuple(v) for k, v in plugins.items()},
                           plugin_args={cls.name: dict((args or {}).get(cls.name, {})) for cls in classes})


def framework_for(classes: Iterable[type], *, handle: Handle | None = None, **kwargs: Any) -> Framework:
    classes = list(classes)
    return Framework(profile_for(classes, **kwargs), Registry.from_classes(classes), handle)
