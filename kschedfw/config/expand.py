"""Framework-build resolution of one profile (upstream ``NewFramework``), minus instantiation.

From a defaulted profile's PluginSets this computes, per extension point (hook), the ordered
plugins and their weights, and every error upstream would raise while building the framework —
except that all of them are collected instead of stopping at the first:

* explicit lists: ``<Iface> "<name>" does not exist``, ``plugin "<name>" does not extend <Iface>
  plugin``, ``plugin "<name>" already registered as "<Iface>"``;
* multiPoint expansion (skipped for a point whose ``disabled`` holds ``*``): a plugin also listed
  explicitly at the point is an override (the explicit entry wins); listed twice in multiPoint is
  ``already registered``; final order = overrides in explicit order, then multiPoint plugins, then
  the remaining explicit ones;
* exactly one QueueSort, at least one Bind, at most one PlacementGenerate;
* Score/PlacementScore weights: the specific set's entry wins over multiPoint's, 0/unset means 1,
  and the running total ``sum(weight * 100)`` must not overflow int64, checked with Go's int64
  arithmetic: once a negative weight makes the total negative, the next plugin is refused.
"""

from __future__ import annotations

import difflib
from typing import TYPE_CHECKING, Any, Mapping

import attrs

from kschedfw.config.plugin_sets import (BUILD_ORDER, HOOK_OF_SET, IFACE_OF_SET, MULTI_POINT,
                                     PLUGIN_SETS, WEIGHTED_SETS)
from kschedfw.config.defaults import Plugins, PluginSet, Ref
from kschedfw.config.diagnostics import did_you_mean
from kschedfw.api.field import DUPLICATE, INVALID, REQUIRED, UNSUPPORTED, FieldError, FieldPath

if TYPE_CHECKING:
    from kschedfw.framework.registry import PluginRegistry

MAX_NODE_SCORE = 100
#: Kind of the diagnostic for an installed plugin that cannot be imported (the CLI exits 2).
PLUGIN_LOAD_ERROR = "Plugin load error"
MAX_TOTAL_SCORE = (1 << 63) - 1


@attrs.frozen
class PluginEntry:
    name: str
    weight: int = 1


@attrs.frozen
class ResolvedProfile:
    scheduler_name: str
    percentage_of_nodes_to_score: int | None
    #: hook name -> ordered entries, for every hook that is a PluginSet (possibly empty)
    plugins: Mapping[str, tuple[PluginEntry, ...]]
    #: plugin name -> fully defaulted args, for every plugin the profile uses
    plugin_args: Mapping[str, Mapping[str, Any]]

    def names(self, hook: str) -> list[str]:
        return [e.name for e in self.plugins.get(hook, ())]


@attrs.frozen
class SchedulerConfig:
    profiles: tuple[ResolvedProfile, ...]
    percentage_of_nodes_to_score: int
    pod_initial_backoff_seconds: int
    pod_max_backoff_seconds: int
    parallelism: int
    #: the fully defaulted configuration (what ``--show-defaults`` prints)
    document: dict[str, Any]

    def profile(self, scheduler_name: str) -> ResolvedProfile | None:
        for p in self.profiles:
            if p.scheduler_name == scheduler_name:
                return p
        return None


@attrs.frozen
class BuildIssue:
    """A framework-build problem: ``anchor`` names the YAML node to point at."""

    error: FieldError
    anchor: str = "value"
    severity: str = "error"
    hint: str = ""
    plugin: str = ""


def closest(name: str, candidates: list[str]) -> list[str]:
    """``candidates`` ordered by similarity to ``name``, closest first."""
    lowered = name.lower()
    return sorted(candidates, key=lambda c: (-difflib.SequenceMatcher(None, lowered, c.lower())
                                             .ratio(), c))


def unknown_plugin_text(name: str, installed: list[str],
                        suggestable: list[str] | None = None) -> tuple[str, str]:
    """(message tail, hint) for a plugin name nobody installed.

    The tail lists every installed plugin; the "did you mean" hint only picks from
    ``suggestable`` (default: all installed), e.g. the plugins that extend the point where
    the name was written, so a Score typo is never answered with a Filter-only plugin.
    """
    ranked = closest(name, installed)
    shown = ", ".join(ranked[:8]) + (f", and {len(ranked) - 8} more" if len(ranked) > 8 else "")
    tail = (f"; installed plugins, closest first: {shown} (`kschedfw plugins` lists them)"
            if ranked else "; no plugins are installed (`kschedfw plugins` lists them)")
    hint = ""
    candidates = ranked if suggestable is None else closest(name, suggestable)
    if candidates and difflib.SequenceMatcher(None, name.lower(),
                                              candidates[0].lower()).ratio() >= 0.8:
        hint = did_you_mean(candidates[0])
    return tail, hint


def load_error_text(registry: "PluginRegistry", name: str) -> str:
    reason = None
    getter = getattr(registry, "load_error", None)
    if callable(getter):
        try:
            reason = getter(name)
        except Exception:  # noqa: BLE001 - the reason is a nicety
            reason = None
    return f'plugin "{name}" is installed but cannot be loaded' + (f": {reason}" if reason else "")


@attrs.define
class _Build:
    registry: "PluginRegistry"
    profile_path: FieldPath
    installed: list[str]
    issues: list[BuildIssue] = attrs.Factory(list)
    _reported: set[tuple[Any, ...]] = attrs.Factory(set)
    #: default plugins that are not installed (one warning per profile)
    missing_defaults: list[str] = attrs.Factory(list)
    #: PluginSets in which a name nobody installed was listed
    unknown_in: set[str] = attrs.Factory(set)
    _hooks: dict[str, frozenset[str] | None] = attrs.Factory(dict)
    _installed_set: frozenset[str] | None = None

    def where(self, ref: Ref, field: str) -> FieldPath:
        if ref.origin is not None:
            return (*ref.origin, "name")
        return (*self.profile_path, "plugins", field, "enabled")

    def report(self, err: FieldError, **kw: Any) -> None:
        key = (err.path, err.kind, err.detail)
        if key not in self._reported:
            self._reported.add(key)
            self.issues.append(BuildIssue(err, **kw))

    def exists(self, ref: Ref, field: str, iface: str) -> bool:
        if ref.name in self.installed_set:
            if self._extension_points(ref.name) is not None:
                return True
            self.report(FieldError(self.where(ref, field), PLUGIN_LOAD_ERROR,
                                   load_error_text(self.registry, ref.name)),
                        plugin=self.registry.describe(ref.name))
            return False
        if ref.origin is None:
            if ref.name not in self.missing_defaults:
                self.missing_defaults.append(ref.name)
            return False
        self.unknown_in.add(field)
        tail, hint = unknown_plugin_text(ref.name, self.installed, self.extending(field))
        self.report(FieldError(self.where(ref, field), UNSUPPORTED,
                               f'{iface} "{ref.name}" does not exist{tail}', ref.name), hint=hint)
        return False

    @property
    def installed_set(self) -> frozenset[str]:
        if self._installed_set is None:
            self._installed_set = frozenset(self.installed)
        return self._installed_set

    def _extension_points(self, name: str) -> frozenset[str] | None:
        """The registry's answer, asked once per name (None: the plugin cannot be loaded)."""
        if name not in self._hooks:
            self._hooks[name] = self.registry.extension_points(name)
        return self._hooks[name]

    def hooks(self, name: str) -> frozenset[str]:
        return self._extension_points(name) or frozenset()

    def extending(self, field: str) -> list[str]:
        """Installed plugins that can be enabled under ``plugins.<field>`` (multiPoint: any
        plugin that extends at least one point)."""
        if field == MULTI_POINT:
            points = frozenset(HOOK_OF_SET.values())
            return [n for n in self.installed if self.hooks(n) & points]
        return [n for n in self.installed if HOOK_OF_SET[field] in self.hooks(n)]


def _int64(value: int) -> int:
    """``value`` wrapped to a signed 64-bit integer, as Go's int64 arithmetic wraps."""
    return (value + (1 << 63)) % (1 << 64) - (1 << 63)


def _weight_path(b: _Build, field: str, ref: Ref) -> FieldPath:
    return (*b.where(ref, field)[:-1], "weight") if ref.origin else b.where(ref, field)


def _report_negative_total(b: _Build, field: str, ref: Ref, weight: int) -> None:
    """kube-scheduler's refusal of a running weight total that went negative.

    Upstream's overflow guard compares the next plugin's ``weight * 100`` with ``MaxInt64 -
    total``; with a negative total that subtraction wraps around, so the next Score plugin
    always "could overflow" and the scheduler does not start (``initializing profiles``).
    The error points at the weight that made the total negative, the one to change.
    """
    b.report(FieldError(_weight_path(b, field, ref), INVALID,
                        "total score of Score plugins could overflow", weight),
             hint=f"kube-scheduler refuses to start: the weight of {ref.name} makes the running "
                  "total of weights negative, and its overflow check then fails for the next "
                  "plugin; use a positive weight, or disable the plugin")


def resolve_plugins(plugins: Plugins, registry: "PluginRegistry", *, scheduler_name: str,
                    profile_path: FieldPath) -> tuple[dict[str, tuple[PluginEntry, ...]],
                                                  list[BuildIssue]]:
    """Ordered, weighted plugins per hook for one defaulted profile, and the build problems."""
    b = _Build(registry, profile_path, list(registry.names()))
    installed = b.installed_set
    explicit: dict[str, list[Ref]] = {}
    for field in BUILD_ORDER:
        iface = IFACE_OF_SET[field]
        hook = HOOK_OF_SET[field]
        seen: set[str] = set()
        kept: list[Ref] = []
        for ref in plugins.get(field, PluginSet()).enabled:
            if not b.exists(ref, field, iface):
                continue
            if hook not in b.hooks(ref.name):
                points = [f for f, h, _ in PLUGIN_SETS if h in b.hooks(ref.name)]
                b.report(FieldError(b.where(ref, field), INVALID,
                                    f'plugin "{ref.name}" does not extend {iface} plugin', ref.name),
                         hint="it can be enabled at: " + (", ".join(points) or "no extension point"),
                         plugin=registry.describe(ref.name))
                continue
            if ref.name in seen:
                b.report(FieldError(b.where(ref, field), DUPLICATE,
                                    f'plugin "{ref.name}" already registered as "{iface}"', ref.name))
                continue
            seen.add(ref.name)
            kept.append(ref)
        explicit[field] = kept

    multi = plugins.get(MULTI_POINT, PluginSet()).enabled
    first_iface = IFACE_OF_SET[BUILD_ORDER[0]]
    known_multi = [r for r in multi if b.exists(r, MULTI_POINT, first_iface)]
    final: dict[str, list[Ref]] = {}
    for field in BUILD_ORDER:
        hook, iface = HOOK_OF_SET[field], IFACE_OF_SET[field]
        pset = plugins.get(field, PluginSet())
        disabled = {r.name for r in pset.disabled}
        if "*" in disabled:
            final[field] = explicit[field]
            continue
        enabled_names = [r.name for r in explicit[field]]
        overrides: set[str] = set()
        from_multi: list[Ref] = []
        multi_names: set[str] = set()
        for ref in known_multi:
            if hook not in b.hooks(ref.name) or ref.name in disabled:
                continue
            if ref.name in enabled_names:
                overrides.add(ref.name)
                continue
            if ref.name in multi_names:
                if ("multi-dup", ref.origin) not in b._reported:
                    b._reported.add(("multi-dup", ref.origin))
                    b.report(FieldError(b.where(ref, MULTI_POINT), DUPLICATE,
                                        f'plugin "{ref.name}" already registered as "{iface}"',
                                        ref.name))
                continue
            multi_names.add(ref.name)
            from_multi.append(ref)
        ordered = [r for r in explicit[field] if r.name in overrides]
        ordered += from_multi
        ordered += [r for r in explicit[field] if r.name not in overrides]
        final[field] = ordered

    profile_plugins = (*profile_path, "plugins")
    if b.missing_defaults:
        b.report(FieldError((*profile_plugins, MULTI_POINT), INVALID,
                            "default plugins not installed, the profile runs without them: "
                            + ", ".join(b.missing_defaults)), severity="warning")
    # An unknown name that might have been the missing queue sort or binder is the real error;
    # do not also report the count (upstream stops at the first error).
    unsure = b.unknown_in & {MULTI_POINT}
    queue_sort = final["queueSort"]
    if len(queue_sort) != 1 and not (queue_sort == [] and (unsure or "queueSort" in b.unknown_in)):
        detail = (f'only one queue sort plugin required for profile with scheduler name '
                  f'"{scheduler_name}", but got {len(queue_sort)}')
        b.report(FieldError((*profile_plugins, "queueSort"), REQUIRED, detail) if not queue_sort
                 else FieldError((*profile_plugins, "queueSort"), INVALID, detail, len(queue_sort)))
    if not final["bind"] and not (unsure or "bind" in b.unknown_in):
        b.report(FieldError((*profile_plugins, "bind"), REQUIRED,
                            "at least one bind plugin is needed for profile with scheduler name "
                            f'"{scheduler_name}"'))
    if len(final["placementGenerate"]) > 1:
        b.report(FieldError((*profile_plugins, "placementGenerate"), INVALID,
                            "at most one placement generate plugin is allowed",
                            len(final["placementGenerate"])))

    weights: dict[str, dict[str, int]] = {}
    for field in WEIGHTED_SETS:
        hook = HOOK_OF_SET[field]
        table: dict[str, int] = {}
        total = 0
        counted: list[Ref] = []
        negative: tuple[Ref, int] | None = None  # the plugin whose weight made the total negative
        for ref in (*plugins.get(field, PluginSet()).enabled, *multi):
            if ref.name not in installed or hook not in b.hooks(ref.name) or ref.name in table:
                continue
            weight = ref.weight or 1
            table[ref.name] = weight
            if weight * MAX_NODE_SCORE > _int64(MAX_TOTAL_SCORE - total):
                if negative is not None:
                    _report_negative_total(b, field, *negative)
                    counted.remove(negative[0])
                else:
                    b.report(FieldError((*profile_plugins, field), INVALID,
                                        "total score of Score plugins could overflow"))
                break
            counted.append(ref)
            total += weight * MAX_NODE_SCORE
            if total < 0 and negative is None:
                negative = (ref, weight)
        for ref in counted:  # a negative weight upstream accepts still inverts the plugin's scores
            if table[ref.name] < 0:
                b.report(FieldError(_weight_path(b, field, ref), INVALID,
                                    "a negative weight turns the plugin's preference around",
                                    table[ref.name]), severity="warning")
        weights[field] = table

    resolved: dict[str, tuple[PluginEntry, ...]] = {}
    for field, hook, _ in PLUGIN_SETS:
        table = weights.get(field, {})
        resolved[hook] = tuple(PluginEntry(r.name, table.get(r.name, 1)) for r in final[field])
    return resolved, b.issues
