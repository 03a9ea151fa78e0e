"""Profiles, runtimes and simulations built from plugin classes directly (no entry points).

``profile_for`` enables plugin classes at every extension point they implement, in the order
given, as a multiPoint list would; ``framework_for`` builds the runtime for them. Plugin args go
through the same path as a configuration file's ``pluginConfig`` (schema check, defaulting,
``validate_args``), so a plugin sees in a test exactly the args the CLI would hand it.
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING, Any, Iterable, Mapping

from kschedfw.config import jsonsubset
from kschedfw.config.expand import PluginEntry, ResolvedProfile
from kschedfw.fwk.args import default_args
from kschedfw.api.field import FieldError
from kschedfw.framework.guard import PluginFaults
from kschedfw.framework.handle import Handle, HandleFactory
from kschedfw.framework.registry import Registry, extension_points_of
from kschedfw.framework.runtime import Framework, FrameworkError

if TYPE_CHECKING:
    from kschedfw.config.expand import SchedulerConfig
    from kschedfw.simulation import Simulation, SimulationResult

#: Hooks that are configured as PluginSets (and so carry an order in a profile).
CONFIGURABLE_POINTS = ("pre_enqueue", "less", "pre_filter", "filter", "post_filter", "pre_score", "score",
                       "reserve", "permit", "pre_bind", "bind", "post_bind", "generate_placements",
                       "score_placement")


class PluginArgsError(FrameworkError, ValueError):
    """Args that ``kschedfw validate`` would reject for this plugin; names the plugin and fields."""

    def __init__(self, plugin: str, errors: Iterable[FieldError]) -> None:
        self.plugin = plugin
        self.errors = tuple(errors)
        lines = [str(err.prefixed("args")) for err in self.errors]
        super().__init__(f'invalid args for plugin "{plugin}": ' + "; ".join(lines))


def plugin_args(registry: Registry, name: str, given: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The args plugin ``name`` is built with when a config gives it ``given``: checked against its
    ``args_schema``, defaulted (upstream defaulting for in-tree args), then ``validate_args``.

    As in the CLI, a plugin without an args schema gets ``{}`` (given args are ignored, with the
    CLI's warning), and a plugin the config gives no args (``given`` None) gets its defaults
    unchecked. Raises PluginArgsError listing every bad field.
    """
    schema = registry.args_schema(name)
    if schema is None:
        if given:
            warnings.warn(f'plugin "{name}" takes no args; they are ignored', stacklevel=3)
        return {}
    if given is None:
        return default_args(registry.args_spec(name), schema, {})
    args = dict(given or {})
    args.pop("apiVersion", None)
    kind = args.pop("kind", None)
    if kind is not None and kind != f"{name}Args":
        raise PluginArgsError(name, [FieldError(("kind",), "Invalid value", f"want {name}Args", kind)])
    issues = jsonsubset.check(schema, args)
    if issues:
        raise PluginArgsError(name, [issue.error for issue in issues])
    defaulted = default_args(registry.args_spec(name), schema, args)
    errors = registry.validate_args(name, defaulted)
    if errors:
        raise PluginArgsError(name, errors)
    return defaulted


def profile_for(classes: Iterable[type], *, args: Mapping[str, Mapping[str, Any]] | None = None,
                weights: Mapping[str, int] | None = None, scheduler_name: str = "default-scheduler",
                percentage_of_nodes_to_score: int | None = None,
                registry: Registry | None = None) -> ResolvedProfile:
    """A profile enabling ``classes`` at every point they implement, with checked, defaulted args."""
    classes = list(classes)
    registry = registry if registry is not None else Registry.from_classes(classes)
    plugins: dict[str, list[PluginEntry]] = {point: [] for point in CONFIGURABLE_POINTS}
    for cls in classes:
        hooks = extension_points_of(cls)
        for point in CONFIGURABLE_POINTS:
            if point in hooks:
                plugins[point].append(PluginEntry(_name(cls), (weights or {}).get(_name(cls), 1)))
    unknown = sorted(set(args or {}) - {_name(cls) for cls in classes})
    if unknown:
        raise FrameworkError(f"args given for plugin(s) not in the profile: {', '.join(unknown)}")
    return ResolvedProfile(scheduler_name=scheduler_name,
                           percentage_of_nodes_to_score=percentage_of_nodes_to_score,
                           plugins={k: tuple(v) for k, v in plugins.items()},
                           plugin_args={_name(cls): plugin_args(registry, _name(cls), (args or {}).get(_name(cls)))
                                        for cls in classes})


def _name(cls: type) -> str:
    """The plugin name a class registers under (its ``name`` attribute)."""
    return str(getattr(cls, "name"))


def framework_for(classes: Iterable[type], *, handle: HandleFactory = Handle, fast_paths: bool = True,
                  faults: PluginFaults | None = None, **kwargs: Any) -> Framework:
    """The runtime of ``profile_for(classes, ...)``: plugin instances built as the scheduler builds
    them (``fast_paths=False``: the plain path, see ``Framework``), on a Handle from ``handle``
    (``Handle.factory(snapshot=...)``; the runtime's Handle is ``.handle``)."""
    classes = list(classes)
    registry = Registry.from_classes(classes)
    return Framework(profile_for(classes, registry=registry, **kwargs), registry, handle=handle,
                     fast_paths=fast_paths, faults=faults)


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
                  seed: int = 0, until: float | None = None, fast_paths: bool = True,
                  **kwargs: Any) -> "SimulationResult":
    """Run a simulation of ``objects`` with a profile of exactly ``classes``. A pod that sets a
    priority (``make_pod(priority=N)``) names a PriorityClass of that value instead, which is
    created first, as the API server admits only the priority a class gives
    (:func:`~kschedfw.testing.priorities.with_priority_classes`)."""
    return simulation_with(classes, objects, steps, seed=seed, fast_paths=fast_paths, **kwargs).run(until=until)


def simulation_with(classes: Iterable[type], objects: Iterable[Any], steps: Iterable[Any] = (), *,
                    seed: int = 0, fast_paths: bool = True, feature_gates: Mapping[str, bool] | None = None,
                    **kwargs: Any) -> "Simulation":
    """:func:`simulate_with`'s simulation, not run yet (to watch it: the hint audit);
    ``feature_gates`` set gates for the cluster, the scheduler and the plugins."""
    import attrs

    from kschedfw.simulation import Simulation
    from kschedfw.testing.priorities import named, with_priority_classes
    classes = list(classes)
    registry = Registry.from_classes(classes)
    steps = [attrs.evolve(s, objects=tuple(named(o) for o in s.objects)) if s.objects else s for s in steps]
    objects = with_priority_classes(objects, [o for s in steps for o in s.objects])
    return Simulation(config_for(classes, registry=registry, **kwargs), registry, objects, steps, seed=seed,
                      fast_paths=fast_paths, feature_gates=feature_gates)
