"""Upstream v1 defaulting of KubeSchedulerConfiguration (``pkg/scheduler/apis/config/v1``).

* top level: parallelism, percentageOfNodesToScore, backoffs, profiling, leaderElection and
  clientConnection (``SetDefaults_KubeSchedulerConfiguration`` and component-base's recommended
  leader-election defaults);
* profiles: one ``default-scheduler`` profile when none is given (or when the only profile has no
  name); the default plugins live in ``multiPoint`` (:data:`DEFAULT_MULTI_POINT`) and the user's
  PluginSets are merged into them per extension point (:func:`merge_plugin_set`);
* pluginConfig: every entry's args are defaulted, and a defaulted entry is appended, in name
  order, for each enabled plugin that takes args and has none.

Plugin references keep where they came from in the YAML (:attr:`Ref.origin`) so later errors can
point at the right line.
"""

from __future__ import annotations

import copy
from typing import Any, Callable, Iterable, Mapping

import attrs

from kschedfw.config.plugin_sets import MULTI_POINT, PLUGIN_SET_FIELDS
from kschedfw.fwk.features import enabled
from kschedfw.api.field import FieldPath
from kschedfw.api.validation import format_duration, parse_duration

DEFAULT_SCHEDULER_NAME = "default-scheduler"
WILDCARD = "*"


@attrs.frozen
class Ref:
    """A plugin reference in a PluginSet: ``origin`` is its YAML path, ``None`` for defaults."""

    name: str
    weight: int | None = None
    origin: FieldPath | None = attrs.field(default=None, eq=False)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name}
        if self.weight is not None:
            out["weight"] = self.weight
        return out


@attrs.frozen
class PluginSet:
    enabled: tuple[Ref, ...] = ()
    disabled: tuple[Ref, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.enabled:
            out["enabled"] = [r.to_dict() for r in self.enabled]
        if self.disabled:
            out["disabled"] = [r.to_dict() for r in self.disabled]
        return out


Plugins = dict[str, PluginSet]

#: v1.36 ``getDefaultPlugins``: everything in multiPoint, in this order (DynamicResources is
#: inserted before DefaultPreemption because DynamicResourceAllocation is GA).
DEFAULT_MULTI_POINT: tuple[Ref, ...] = (
    Ref("SchedulingGates"),
    Ref("PrioritySort"),
    Ref("NodeUnschedulable"),
    Ref("NodeName"),
    Ref("TaintToleration", 3),
    Ref("NodeAffinity", 2),
    Ref("NodePorts"),
    Ref("NodeResourcesFit", 1),
    Ref("VolumeRestrictions"),
    Ref("NodeVolumeLimits"),
    Ref("VolumeBinding"),
    Ref("VolumeZone"),
    Ref("PodTopologySpread", 2),
    Ref("InterPodAffinity", 2),
    Ref("DynamicResources", 2),
    Ref("DefaultPreemption"),
    Ref("NodeResourcesBalancedAllocation", 1),
    Ref("ImageLocality", 1),
    Ref("DefaultBinder"),
)


def default_plugins(feature_gates: Mapping[str, bool] | None = None) -> Plugins:
    """v1.36 ``getDefaultPlugins`` with ``applyFeatureGates``: the gates GangScheduling and
    TopologyAwareWorkloadScheduling append their plugins to multiPoint."""
    multi = DEFAULT_MULTI_POINT
    if enabled(feature_gates, "GangScheduling"):
        multi = (*multi, Ref("GangScheduling"))
    if enabled(feature_gates, "TopologyAwareWorkloadScheduling"):
        multi = (*multi, Ref("TopologyPlacementGenerator"), Ref("PodGroupPodsCount", 1))
    plugins = {f: PluginSet() for f in PLUGIN_SET_FIELDS}
    plugins[MULTI_POINT] = PluginSet(enabled=multi)
    return plugins


def merge_plugin_set(default: PluginSet, custom: PluginSet) -> PluginSet:
    """Upstream ``mergePluginSet``.

    Disabled = custom's disabled then default's disabled (names only). Unless ``*`` is disabled,
    the default enabled plugins are kept in order, minus the disabled ones, each replaced in place
    by a custom entry of the same name (the last one, if repeated). Custom entries that replaced
    nothing are appended in their order; duplicates survive here and fail at framework build.
    """
    disabled = tuple(Ref(r.name, None, r.origin) for r in (*custom.disabled, *default.disabled))
    disabled_names = {r.name for r in disabled}
    by_name: dict[str, tuple[int, Ref]] = {}
    for index, ref in enumerate(custom.enabled):
        by_name[ref.name] = (index, ref)
    replaced: set[int] = set()
    enabled: list[Ref] = []
    if WILDCARD not in disabled_names:
        for ref in default.enabled:
            if ref.name in disabled_names:
                continue
            if ref.name in by_name:
                index, ref = by_name[ref.name]
                replaced.add(index)
            enabled.append(ref)
    enabled.extend(ref for index, ref in enumerate(custom.enabled) if index not in replaced)
    return PluginSet(enabled=tuple(enabled), disabled=disabled)


def merge_plugins(default: Plugins, custom: Plugins | None) -> Plugins:
    """Upstream ``mergePlugins``: a profile without ``plugins`` gets the defaults as they are."""
    if custom is None:
        return dict(default)
    return {f: merge_plugin_set(default.get(f, PluginSet()), custom.get(f, PluginSet()))
            for f in PLUGIN_SET_FIELDS}


def plugins_from_yaml(plugins: Any, base: FieldPath) -> Plugins | None:
    """Read a ``plugins`` mapping into Refs; entries that are not well-formed are skipped."""
    if not isinstance(plugins, dict):
        return None
    out: Plugins = {}
    for field in PLUGIN_SET_FIELDS:
        raw = plugins.get(field)
        raw = raw if isinstance(raw, dict) else {}
        lists = []
        for lst in ("enabled", "disabled"):
            refs = []
            for j, item in enumerate(raw.get(lst) or ()):
                if isinstance(item, dict) and isinstance(item.get("name"), str):
                    weight = item.get("weight")
                    weight = weight if isinstance(weight, int) and not isinstance(weight, bool) \
                        else None
                    refs.append(Ref(item["name"], weight, (*base, field, lst, j)))
            lists.append(tuple(refs))
        out[field] = PluginSet(*lists)
    return out


def enabled_names(plugins: Plugins) -> list[str]:
    """Upstream ``pluginsNames``: every enabled name in any set, sorted, unique."""
    return sorted({r.name for ps in plugins.values() for r in ps.enabled})


def plugins_to_dict(plugins: Plugins) -> dict[str, Any]:
    return {f: ps.to_dict() for f, ps in plugins.items() if ps.enabled or ps.disabled}


# ---------------------------------------------------------------------------------- top level

def _duration_or(value: Any, default: str) -> str:
    """component-base: a zero (or missing) duration gets the recommended default."""
    if not isinstance(value, str):
        return default
    try:
        ns = parse_duration(value)
    except ValueError:
        return value
    return default if ns == 0 else format_duration(ns)


def default_leader_election(le: dict[str, Any]) -> dict[str, Any]:
    out = dict(le)
    if not out.get("resourceLock"):
        out["resourceLock"] = "leases"
    if not out.get("resourceNamespace"):
        out["resourceNamespace"] = "kube-system"
    if not out.get("resourceName"):
        out["resourceName"] = "kube-scheduler"
    out["leaseDuration"] = _duration_or(out.get("leaseDuration"), "15s")
    out["renewDeadline"] = _duration_or(out.get("renewDeadline"), "10s")
    out["retryPeriod"] = _duration_or(out.get("retryPeriod"), "2s")
    if out.get("leaderElect") is None:
        out["leaderElect"] = True
    return {k: out[k] for k in ("leaderElect", "leaseDuration", "renewDeadline", "retryPeriod",
                                "resourceLock", "resourceName", "resourceNamespace")}


def default_client_connection(cc: dict[str, Any]) -> dict[str, Any]:
    out = dict(cc)
    if not out.get("contentType"):
        out["contentType"] = "application/vnd.kubernetes.protobuf"
    if not out.get("qps"):
        out["qps"] = 50
    if not out.get("burst"):
        out["burst"] = 100
    order = ("kubeconfig", "acceptContentTypes", "contentType", "qps", "burst")
    return {k: out[k] for k in order if k in out}


ArgsDefaulter = Callable[[str, dict[str, Any] | None], dict[str, Any] | None]
"""``(plugin name, args or None) -> defaulted args``, or ``None`` when the plugin takes no args."""


def default_profile(profile: dict[str, Any], base: FieldPath, args_defaulter: ArgsDefaulter,
                    plugin_config_args: Iterable[Any] | None = None,
                    feature_gates: Mapping[str, bool] | None = None) -> dict[str, Any]:
    """Defaulted profile as a dict with ``plugins`` as :class:`PluginSet` objects.

    ``plugin_config_args`` optionally gives, per pluginConfig index, args already defaulted by the
    caller (``None`` entries are defaulted here).
    """
    plugins = merge_plugins(default_plugins(feature_gates), plugins_from_yaml(profile.get("plugins"),
                                                                 (*base, "plugins")))
    configs: list[dict[str, Any]] = []
    existing: set[str] = set()
    given = list(plugin_config_args) if plugin_config_args is not None else []
    for j, entry in enumerate(profile.get("pluginConfig") or ()):
        if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
            configs.append({"name": None})  # keeps indices aligned with the YAML
            continue
        name = entry["name"]
        existing.add(name)
        args = given[j] if j < len(given) and given[j] is not None else None
        if args is None:
            raw = entry.get("args")
            args = args_defaulter(name, raw if isinstance(raw, dict) else None)
        item: dict[str, Any] = {"name": name}
        if args is not None:
            item["args"] = args
        elif isinstance(entry.get("args"), dict):
            item["args"] = copy.deepcopy(entry["args"])
        configs.append(item)
    for name in enabled_names(plugins):
        if name in existing:
            continue
        args = args_defaulter(name, None)
        if args is not None:
            configs.append({"name": name, "args": args})
    out: dict[str, Any] = {}
    if "schedulerName" in profile:
        out["schedulerName"] = profile["schedulerName"]
    if profile.get("percentageOfNodesToScore") is not None:
        out["percentageOfNodesToScore"] = profile["percentageOfNodesToScore"]
    out["plugins"] = plugins
    out["pluginConfig"] = configs
    return out


def default_configuration(data: dict[str, Any], args_defaulter: ArgsDefaulter,
                          plugin_config_args: dict[int, list[dict[str, Any] | None]] | None = None,
                          feature_gates: Mapping[str, bool] | None = None) -> dict[str, Any]:
    """The fully defaulted configuration (profiles' ``plugins`` still as PluginSet objects)."""
    doc: dict[str, Any] = {"apiVersion": data.get("apiVersion"), "kind": data.get("kind")}
    doc["parallelism"] = data["parallelism"] if data.get("parallelism") is not None else 16
    doc["leaderElection"] = default_leader_election(data.get("leaderElection") or {})
    doc["clientConnection"] = default_client_connection(data.get("clientConnection") or {})
    profiling = data.get("enableProfiling")
    doc["enableProfiling"] = True if profiling is None else profiling
    contention = data.get("enableContentionProfiling")
    if contention is None and doc["enableProfiling"]:
        contention = True
    doc["enableContentionProfiling"] = bool(contention)
    pct = data.get("percentageOfNodesToScore")
    doc["percentageOfNodesToScore"] = 0 if pct is None else pct
    initial = data.get("podInitialBackoffSeconds")
    doc["podInitialBackoffSeconds"] = 1 if initial is None else initial
    maximum = data.get("podMaxBackoffSeconds")
    doc["podMaxBackoffSeconds"] = 10 if maximum is None else maximum
    profiles = [p if isinstance(p, dict) else {} for p in data.get("profiles") or ()]
    if not profiles:
        profiles = [{}]
    if len(profiles) == 1 and profiles[0].get("schedulerName") is None:
        profiles[0] = {**profiles[0], "schedulerName": DEFAULT_SCHEDULER_NAME}
    given = plugin_config_args or {}
    doc["profiles"] = [default_profile(p, ("profiles", i), args_defaulter, given.get(i), feature_gates)
                       for i, p in enumerate(profiles)]
    doc["extenders"] = copy.deepcopy(data.get("extenders") or [])
    doc["delayCacheUntilActive"] = bool(data.get("delayCacheUntilActive", False))
    return doc


def document_to_dict(doc: dict[str, Any]) -> dict[str, Any]:
    """The defaulted configuration as plain data (what ``--show-defaults`` prints)."""
    out = dict(doc)
    out["profiles"] = [{**p, "plugins": plugins_to_dict(p["plugins"]),
                        "pluginConfig": [c for c in p["pluginConfig"] if c["name"] is not None]}
                       for p in doc["profiles"]]
    if not out.get("extenders"):
        out.pop("extenders", None)
    return out
