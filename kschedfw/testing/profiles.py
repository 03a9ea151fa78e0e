"""Profiles, runtimes and simulations built from plugin classes directly (no entry points).

``profile_for`` enables plugin classes at every extension point they implement, in the order
given, as a multiPoint list would; ``framework_for`` builds the runtime for them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterable, Mapping

from kschedfw.config.expand import PluginEntry, ResolvedProfile
from kschedfw.framework.handle import Handle
from kschedfw.framework.registry import Registry, extension_points_of
from kschedfw.framework.runtime import Framework

if TYPE_CHECKING:
    from kschedfw.config.expand import SchedulerConfig
    from kschedfw.simulation import SimulationResult

#: Hooks that are configured as PluginSets (and so carry an order in a profile).
CONFIGURABLE_POINTS = ("pre_enqueue", "less", "pre_filter", "filter", "post_filter", "pre_score", "score",
                       "reserve", "permit", "pre_bind", "bind", "post_bind")


def profile_for(classes: Iterable[type], *, args: Mapping[str, Mapping] | None = None,
                weights: Mapping[str, int] | None = None, scheduler_name: str = "default-scheduler",
                percentage_of_nodes_to_score: int | None = None) -> ResolvedProfile:
    classes = list(classes)
    plugins: dict[str, list[PluginEntry]] = {point: [] for point in CONFIGURABLE_POINTS}
    for cls in classes:
        hooks = extension_points_of(cls)
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


def config_for(classes: Iterable[type], *, pod_initial_backoff_seconds: int = 1,
               pod_max_backoff_seconds: int = 10, percentage_of_nodes_to_score: int = 0,
               **kwargs: Any) -> "SchedulerConfig":
    """A one-profile SchedulerConfig running exactly ``classes`` (in this order)."""
    from kschedfw.config.expand import SchedulerConfig
    return SchedulerConfig(profiles=(profile_for(classes, **kwargs),),
                           percentage_of_nodes_to_score=percentage_of_nodes_to_score,
                           pod_initial_backoff_seconds=pod_initial_backoff_seconds,
                           pod_max_backoff_seconds=pod_max_backoff_seconds, parallelism=16, document={})


def simulate_with(classes: Iterable[type], objects: Iterable[Any], steps: Iterable[Any] = (), *,
                  seed: int = 0, until: float | None = None, **kwargs: Any) -> "SimulationResult":
    """Run a simulation of ``objects`` with a profile of exactly ``classes``."""
    from kschedfw.simulation import Simulation
    classes = list(classes)
    sim = Simulation(config_for(classes, **kwargs), Registry.from_classes(classes), objects, steps, seed=seed)
    return sim.run(until=until)
