"""Upstream ``ValidateKubeSchedulerConfiguration``, on a defaulted configuration.

A port of ``pkg/scheduler/apis/config/validation/validation.go`` (plus component-base's client
connection and leader election rules). It sees the configuration after v1 defaulting, as upstream
does, and returns :class:`~kschedfw.api.field.FieldError` objects with upstream's paths, kinds and
texts, quirks included (``profiles[0].plugins.queueSort.Enabled``, ``profiles[i].pluginConfig.args``
without an index). Per-plugin args are validated elsewhere, through the plugin registry.
"""

from __future__ import annotations

from typing import Any, Iterable

from kschedfw.config.defaults import PluginSet, plugins_from_yaml
from kschedfw.api.validation import (GoValue, format_duration, is_extended_resource_name,
                                     is_qualified_name, parse_duration)
from kschedfw.config.plugin_sets import ORIGINAL_SETS
from kschedfw.config.schema import API_VERSION
from kschedfw.api.field import DUPLICATE, INVALID, REQUIRED, FieldError, FieldPath, format_path

#: Plugins removed from v1 (upstream ``invalidPluginsByVersion``).
REMOVED_PLUGINS = ("AzureDiskLimits", "CinderLimits", "EBSLimits", "GCEPDLimits")


def removed_plugin_text(api_version: str = API_VERSION) -> str:
    return (f'was invalid in version "{API_VERSION}" (KubeSchedulerConfiguration is version '
            f'"{api_version}")')


def _plugins(profile: dict[str, Any], i: int) -> dict[str, PluginSet]:
    plugins = profile.get("plugins")
    if isinstance(plugins, dict) and plugins and all(isinstance(v, PluginSet)
                                                     for v in plugins.values()):
        return plugins
    return plugins_from_yaml(plugins if isinstance(plugins, dict) else {},
                             ("profiles", i, "plugins")) or {}


def _queue_sort(plugins: dict[str, PluginSet]) -> PluginSet:
    return plugins.get("queueSort", PluginSet())


def validate_configuration(doc: dict[str, Any], skip_profiles: Iterable[int] = ()
                           ) -> list[FieldError]:
    """Every upstream validation error of the defaulted configuration ``doc``.

    ``doc`` is the output of :func:`~kschedfw.config.defaults.default_configuration` (profiles'
    ``plugins`` may also be plain dicts). Profiles in ``skip_profiles`` (already reported as
    malformed) are not checked.
    """
    skip = set(skip_profiles)
    errs: list[FieldError] = []
    cc = doc.get("clientConnection") or {}
    if isinstance(cc.get("burst"), int) and cc["burst"] < 0:
        errs.append(FieldError(("clientConnection", "burst"), INVALID, "must be non-negative",
                               cc["burst"]))
    errs += _leader_election(doc.get("leaderElection") or {})
    le = doc.get("leaderElection") or {}
    if le.get("leaderElect") and le.get("resourceLock") != "leases":
        errs.append(FieldError(("leaderElection", "resourceLock"), INVALID,
                               'resourceLock value must be "leases"', le.get("resourceLock", "")))
    parallelism = doc.get("parallelism", 0)
    if parallelism <= 0:
        errs.append(FieldError(("parallelism",), INVALID,
                               "should be an integer value greater than zero", parallelism))
    profiles = doc.get("profiles") or []
    if not profiles:
        errs.append(FieldError(("profiles",), REQUIRED))
    else:
        existing: dict[str, int] = {}
        for i, profile in enumerate(profiles):
            if i in skip:
                continue
            path = ("profiles", i)
            errs += _profile(profile, i)
            name = profile.get("schedulerName", "")
            if name in existing:
                errs.append(FieldError((*path, "schedulerName"), DUPLICATE, "",
                                       GoValue(format_path(("profiles", existing[name],
                                                            "schedulerName")))))
            existing[name] = i
        errs += _common_queue_sort(profiles, skip)
    errs += _percentage(("percentageOfNodesToScore",), doc.get("percentageOfNodesToScore"))
    initial = doc.get("podInitialBackoffSeconds", 0)
    maximum = doc.get("podMaxBackoffSeconds", 0)
    if initial <= 0:
        errs.append(FieldError(("podInitialBackoffSeconds",), INVALID, "must be greater than 0",
                               initial))
    if maximum < initial:
        errs.append(FieldError(("podMaxBackoffSeconds",), INVALID,
                               "must be greater than or equal to PodInitialBackoffSeconds", maximum))
    extenders = doc.get("extenders") or []
    errs += _extenders(extenders if isinstance(extenders, list) else [])
    return errs


def _percentage(path: FieldPath, value: Any) -> list[FieldError]:
    if value is not None and (value < 0 or value > 100):
        return [FieldError(path, INVALID, "not in valid range [0-100]", value)]
    return []


def _duration(value: Any) -> int | None:
    if value is None:
        return 0
    try:
        return parse_duration(value)
    except (ValueError, TypeError):
        return None


def _leader_election(le: dict[str, Any]) -> list[FieldError]:
    """component-base ValidateLeaderElectionConfiguration."""
    path = ("leaderElection",)
    if not le.get("leaderElect"):
        return []
    errs: list[FieldError] = []
    ns = {k: _duration(le.get(k)) for k in ("leaseDuration", "renewDeadline", "retryPeriod")}
    for key, value in ns.items():
        if value is not None and value <= 0:
            errs.append(FieldError((*path, key), INVALID, "must be greater than zero",
                                   GoValue(format_duration(value))))
    lease, renew = ns["leaseDuration"], ns["renewDeadline"]
    if lease is not None and renew is not None and lease < renew:
        errs.append(FieldError((*path, "leaseDuration"), INVALID,
                               "LeaseDuration must be greater than RenewDeadline",
                               GoValue(format_duration(renew))))
    for key in ("resourceLock", "resourceNamespace", "resourceName"):
        if not le.get(key):
            errs.append(FieldError((*path, key), INVALID, f"{key} is required", ""))
    return errs


def _profile(profile: dict[str, Any], i: int) -> list[FieldError]:
    path = ("profiles", i)
    errs: list[FieldError] = []
    if not profile.get("schedulerName"):
        errs.append(FieldError((*path, "schedulerName"), REQUIRED))
    errs += _percentage((*path, "percentageOfNodesToScore"), profile.get("percentageOfNodesToScore"))
    plugins = _plugins(profile, i)
    for stage in ORIGINAL_SETS:  # upstream checks the original twelve, not multiPoint
        for j, ref in enumerate(plugins.get(stage, PluginSet()).enabled):
            if ref.name in REMOVED_PLUGINS:
                where = ref.origin or (*path, "plugins", stage, "enabled", j)
                errs.append(FieldError(where, INVALID, removed_plugin_text(), ref.name))
    seen: set[str] = set()
    for j, cfg in enumerate(profile.get("pluginConfig") or ()):
        name = cfg.get("name") if isinstance(cfg, dict) else None
        if name is None:
            continue
        cpath = (*path, "pluginConfig", j)
        if name in seen:
            errs.append(FieldError(cpath, DUPLICATE, "", name))
        seen.add(name)
        if name in REMOVED_PLUGINS:
            errs.append(FieldError(cpath, INVALID, removed_plugin_text(), name))
    return errs


def _set_key(ps: PluginSet) -> tuple[tuple[tuple[str, int | None], ...], tuple[tuple[str, int | None], ...]]:
    return (tuple((r.name, r.weight) for r in ps.enabled),
            tuple((r.name, r.weight) for r in ps.disabled))


def _common_queue_sort(profiles: list[dict[str, Any]], skip: set[int]) -> list[FieldError]:
    """validateCommonQueueSort, on the merged (not expanded) queueSort sets."""
    errs: list[FieldError] = []
    canon = _queue_sort(_plugins(profiles[0], 0))
    if len(canon.enabled) > 1:
        errs.append(FieldError(("profiles", 0, "plugins", "queueSort", "Enabled"), INVALID,
                               "only one queue sort plugin can be enabled", len(canon.enabled)))
    name = canon.enabled[0].name if canon.enabled else ""
    args = None
    for cfg in profiles[0].get("pluginConfig") or ():
        if name and isinstance(cfg, dict) and cfg.get("name") == name:
            args = cfg.get("args")
    for i in range(1, len(profiles)):
        if i in skip:
            continue
        current = _queue_sort(_plugins(profiles[i], i))
        if _set_key(current) != _set_key(canon):
            errs.append(FieldError(("profiles", i, "plugins", "queueSort"), INVALID,
                                   "must be the same for all profiles"))
        for cfg in profiles[i].get("pluginConfig") or ():
            if isinstance(cfg, dict) and cfg.get("name") == name and \
                    (cfg.get("args") or None) != (args or None):
                errs.append(FieldError(("profiles", i, "pluginConfig", "args"), INVALID,
                                       "queueSort must be the same for all profiles"))
    return errs


def _extenders(extenders: list[dict[str, Any]]) -> list[FieldError]:
    errs: list[FieldError] = []
    binders = 0
    managed: set[str] = set()
    for i, ext in enumerate(extenders):
        if not isinstance(ext, dict):  # malformed, already reported
            continue
        path = ("extenders", i)
        weight = ext.get("weight", 0)
        if ext.get("prioritizeVerb") and weight <= 0:
            errs.append(FieldError((*path, "weight"), INVALID,
                                   "must have a positive weight applied to it", weight))
        if ext.get("bindVerb"):
            binders += 1
        for j, res in enumerate(ext.get("managedResources") or ()):
            if not isinstance(res, dict):
                continue
            rpath = (*path, "managedResources", j, "name")
            rname = res.get("name", "")
            msgs = is_qualified_name(rname)
            errs += [FieldError(rpath, INVALID, msg, rname) for msg in msgs]
            if not msgs and not is_extended_resource_name(rname):
                errs.append(FieldError(rpath, INVALID, "is an invalid extended resource name",
                                       rname))
            if rname in managed:
                errs.append(FieldError(rpath, INVALID, "duplicate extender managed resource name",
                                       rname))
            managed.add(rname)
    if binders > 1:
        errs.append(FieldError(("extenders",), INVALID, "only one extender can implement bind",
                               f"found {binders} extenders implementing bind"))
    return errs
