"""Load, default, validate and resolve a KubeSchedulerConfiguration file, collecting every problem.

Pipeline (each step reports all it finds, then the next runs on what is still sound):

1. YAML with positions (:mod:`~kschedfw.config.yamlpos`): syntax errors, duplicate keys; the
   first document is the configuration, later ones are ignored as kube-scheduler ignores them
   (their findings are warnings naming the document);
2. ``apiVersion``/``kind``: older versions are refused with the release that removed them;
3. shape (:data:`~kschedfw.config.schema.CONFIG_SCHEMA`): types and unknown fields;
4. pluginConfig: each plugin installed, args of the right kind, valid against the plugin's own
   schema and its ``validate_args`` (NodeResourcesFit included, unlike upstream's config-level
   validation, so the error shows up before the scheduler starts);
5. upstream defaulting (:mod:`~kschedfw.config.defaults`) and upstream semantic validation
   (``ValidateKubeSchedulerConfiguration``), texts and kinds as upstream;
6. extenders' ignored resources need NodeResourcesFit args in every profile (``scheduler.New``);
7. framework build per profile (:mod:`~kschedfw.config.expand`): unknown plugins (with the closest
   installed names), extension points, queue sort and bind counts, weights.

Every diagnostic points at the most precise node: the value for bad values, the key for unknown
fields, the parent mapping for missing ones, the name scalar for plugin problems.
"""

from __future__ import annotations

import difflib
from typing import TYPE_CHECKING, Any, Mapping

import attrs

from kschedfw.config import jsonsubset
from kschedfw.config.plugin_sets import PLUGIN_SET_FIELDS
from kschedfw.config.defaults import (WILDCARD, PluginSet, default_configuration,
                                      document_to_dict)
from kschedfw.config.diagnostics import (ERROR, WARNING, Diagnostic, did_you_mean,
                                         sort_unique)
from kschedfw.config.expand import (PLUGIN_LOAD_ERROR, PluginEntry, ResolvedProfile,
                                    SchedulerConfig, load_error_text, resolve_plugins,
                                    unknown_plugin_text)
from kschedfw.config.schema import API_VERSION, CONFIG_SCHEMA, GROUP, KIND, V1_ARGS_PLUGINS
from kschedfw.config.upstream_validation import REMOVED_PLUGINS, validate_configuration
from kschedfw.config.yamlpos import Positions, load_yaml
from kschedfw.api.field import INVALID, MISSING, REQUIRED, UNSUPPORTED, FieldError, FieldPath
from kschedfw.fwk.args import ArgsSpec, default_args

if TYPE_CHECKING:
    from kschedfw.framework.registry import PluginRegistry

__all__ = ["load_config", "load_config_text", "default_config", "REMOVED_API_VERSIONS",
           "REMOVED_PLUGINS", "FILE_ERROR"]

#: Releases that removed older versions of the config API.
REMOVED_API_VERSIONS = {
    f"{GROUP}/v1alpha1": "v1.19",
    f"{GROUP}/v1alpha2": "v1.19",
    f"{GROUP}/v1beta1": "v1.23",
    f"{GROUP}/v1beta2": "v1.28",
    f"{GROUP}/v1beta3": "v1.29",
}
FILE_ERROR = "File error"
IGNORED_DOCUMENT = "Ignored document"

_BROKEN = object()


class _Run:
    """One validation of one document."""

    def __init__(self, filename: str, registry: "PluginRegistry",
                 feature_gates: Mapping[str, bool] | None = None) -> None:
        self.filename = filename
        self.registry = registry
        self.feature_gates = feature_gates
        self.installed = list(registry.names())
        self.installed_set = frozenset(self.installed)
        self.positions = Positions()
        self.diagnostics: list[Diagnostic] = []
        self.bad_profiles: set[int] = set()
        self._queue_sort_flagged: set[str | int] = set()

    # ------------------------------------------------------------------ reporting

    def add(self, err: FieldError, anchor: str = "value", *, severity: str = ERROR,
            hint: str = "", plugin: str = "") -> None:
        line, col = self.positions.locate(err.path, anchor)
        if not hint and err.kind == INVALID and err.detail.startswith("expected string"):
            raw = self.positions.plain.get(tuple(err.path))
            got = err.detail.rsplit(" ", 1)[-1]
            # YAML 1.1 surprises only: on/yes/no/null, 010 (octal), 1_000, 0x1F, 1e3 ...
            if raw is not None and (got in ("boolean", "null") or raw != str(err.value)):
                hint = f'YAML reads {raw} as {got}; quote it: "{raw}"'
        self.diagnostics.append(Diagnostic.from_field_error(
            err, file=self.filename, line=line, column=col, severity=severity, hint=hint,
            plugin=plugin))

    def add_issue(self, issue: jsonsubset.Issue, plugin: str = "") -> None:
        hint = ""
        if issue.allowed:
            key = str(issue.error.path[-1])
            lowered = {a.lower(): a for a in issue.allowed}
            match = difflib.get_close_matches(key.lower(), list(lowered), n=1, cutoff=0.75)
            if match:
                hint = did_you_mean(lowered[match[0]])
        self.add(issue.error, issue.anchor, hint=hint, plugin=plugin)

    @property
    def failed(self) -> bool:
        return any(d.is_error for d in self.diagnostics)

    # ------------------------------------------------------------------ steps

    def run(self, text: str) -> SchedulerConfig | None:
        """Validate the first YAML document; later ones only earn warnings.

        kube-scheduler v1.36 (``loadConfig`` in ``cmd/kube-scheduler/app/options/configfile.go``)
        decodes the file as one object, and its YAML decoding reads only the first document:
        the binary runs with the first configuration and ignores the rest, even a syntax error
        or an invalid field after the first ``---``. Sample files often hold alternatives as
        several documents, so each later one is still checked, but its findings are warnings
        tagged with the document index, after one warning that says it is ignored.
        """
        docs, problems = load_yaml(text, self.filename)
        later = [p for p in problems if p.document]
        self.diagnostics.extend(p for p in problems if not p.document)
        if not docs and self.diagnostics:
            return None
        for index, doc in enumerate(docs[1:], start=2):
            other = _Run(self.filename, self.registry, self.feature_gates)
            other.run_document(doc)
            later.extend(attrs.evolve(d, document=index) for d in other.diagnostics)
        if len(docs) > 1 or later:
            line, column = docs[1].start if len(docs) > 1 else (later[0].line, later[0].column)
            self.diagnostics.append(Diagnostic(
                file=self.filename, line=line, column=column, path="", kind=IGNORED_DOCUMENT,
                message=f"{IGNORED_DOCUMENT}: kube-scheduler reads only the first document of a "
                        "configuration file", severity=WARNING, document=2))
        self.diagnostics.extend(attrs.evolve(d, severity=WARNING) for d in later)
        return self.run_document(docs[0] if docs else None)

    def run_document(self, document: Any) -> SchedulerConfig | None:
        data: Any = None
        if document is not None:
            self.positions = document.positions
            data = document.data
        if data is None:
            data = {}
        if not isinstance(data, dict):
            self.add(FieldError((), INVALID, f"expected a {KIND} mapping, got "
                                f"{jsonsubset.json_type(data)}"))
            return None
        data = _strip_nulls(data)
        if not self._type_meta(data):
            return None
        issues = jsonsubset.check(CONFIG_SCHEMA, data)
        for issue in issues:
            self.add_issue(issue)
        bad_paths = [_target(i) for i in issues]
        _sanitize(data, bad_paths)
        # a dropped plugin entry or PluginSet could turn into misleading count errors, a
        # dropped weight cannot: only the former stops the framework build of that profile
        bad_plugins = {p[1] for p in bad_paths if 2 < len(p) <= 6 and p[0] == "profiles"
                       and isinstance(p[1], int) and p[2] == "plugins"}
        bad_profiles = {p[1] for p in bad_paths if len(p) == 2 and p[0] == "profiles" and isinstance(p[1], int)}
        self.bad_profiles = bad_profiles
        args = self._plugin_configs(data)
        doc = default_configuration(data, self._default_args_for, args, self.feature_gates)
        for err in validate_configuration(doc, bad_profiles):
            self.add(err)
            if err.path[:1] == ("profiles",) and len(err.path) > 3 and err.path[2] in (
                    "plugins", "pluginConfig") and err.detail.endswith("same for all profiles"):
                self._queue_sort_flagged.add(err.path[1])
        self._extender_ignored_resources(doc, bad_profiles)
        resolved = self._build_frameworks(doc, bad_plugins | bad_profiles)
        if self.failed or resolved is None:
            return None
        return self._config(doc, resolved)

    def _type_meta(self, data: dict[str, Any]) -> bool:
        ok = True
        version = data.get("apiVersion")
        if "apiVersion" not in data:
            self.add(FieldError(("apiVersion",), REQUIRED, f'must be "{API_VERSION}"'), "parent")
            ok = False
        elif version != API_VERSION:
            if isinstance(version, str) and version in REMOVED_API_VERSIONS:
                detail = (f"{version} was removed upstream in Kubernetes "
                          f"{REMOVED_API_VERSIONS[version]}; change apiVersion to {API_VERSION} "
                          "(see https://kubernetes.io/docs/reference/scheduling/config/)")
                self.add(FieldError(("apiVersion",), INVALID, detail, version))
            else:
                self.add(FieldError(("apiVersion",), UNSUPPORTED,
                                    f'supported values: "{API_VERSION}"',
                                    version if not isinstance(version, (dict, list)) else MISSING))
            ok = False
        kind = data.get("kind")
        if "kind" not in data:
            self.add(FieldError(("kind",), REQUIRED, f'must be "{KIND}"'), "parent")
            ok = False
        elif kind != KIND:
            self.add(FieldError(("kind",), UNSUPPORTED, f'supported values: "{KIND}"',
                                kind if not isinstance(kind, (dict, list)) else MISSING))
            ok = False
        return ok

    # ------------------------------------------------------------------ plugin args

    def _describe(self, name: str) -> str:
        try:
            return self.registry.describe(name)
        except Exception:  # noqa: BLE001 - a registry that cannot describe still validates
            return name

    def _args_spec(self, name: str) -> ArgsSpec | None:
        """The plugin's own :class:`~kschedfw.fwk.args.ArgsSpec`, when it declares one."""
        return self.registry.args_spec(name) if name in self.installed_set else None

    def _default_args_for(self, name: str, raw: dict[str, Any] | None) -> dict[str, Any] | None:
        """Args for default pluginConfig entries (``raw`` is None) and unvalidated entries."""
        schema = self.registry.args_schema(name) if name in self.installed_set else None
        if schema is None:
            return None if raw is None else dict(raw)
        if raw is not None:
            return dict(raw)
        return default_args(self._args_spec(name), schema, {}, self.feature_gates)

    def _plugin_configs(self, data: dict[str, Any]) -> dict[int, list[dict[str, Any] | None]]:
        """Check every pluginConfig entry; returns defaulted args per profile and index."""
        out: dict[int, list[dict[str, Any] | None]] = {}
        for i, profile in enumerate(data.get("profiles") or ()):
            if not isinstance(profile, dict):
                continue
            per: list[dict[str, Any] | None] = []
            for j, entry in enumerate(profile.get("pluginConfig") or ()):
                per.append(None)
                if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
                    continue
                base = ("profiles", i, "pluginConfig", j)
                name = entry["name"]
                if name in REMOVED_PLUGINS:  # reported by upstream validation
                    continue
                per[-1] = self._plugin_args(name, entry.get("args"), base)
            out[i] = per
        return out

    def _plugin_args(self, name: str, raw: Any, base: FieldPath) -> dict[str, Any] | None:
        if name not in self.installed_set:
            tail, hint = unknown_plugin_text(name, self.installed)
            self.add(FieldError((*base, "name"), UNSUPPORTED,
                                f'plugin "{name}" is not installed{tail}', name), hint=hint)
            return None
        plugin = self._describe(name)
        if self.registry.extension_points(name) is None:
            self.add(FieldError((*base, "name"), PLUGIN_LOAD_ERROR,
                                load_error_text(self.registry, name)), plugin=plugin)
            return None
        apath = (*base, "args")
        args = dict(raw) if isinstance(raw, dict) else {}
        version, kind = args.pop("apiVersion", None), args.pop("kind", None)
        ok = True
        if kind is not None and kind != f"{name}Args":
            group = version.split("/")[0] if isinstance(version, str) and "/" in version \
                else GROUP
            # upstream validation's wording and path; the decoder's explanation as the hint
            self.add(FieldError(apath, INVALID, "has to match plugin args",
                                kind if isinstance(kind, str) else MISSING),
                     hint=f"args for plugin {name} were not of type {name}Args.{GROUP}, got "
                          f"{kind}.{group}", plugin=plugin)
            ok = False
        if version is not None and name in V1_ARGS_PLUGINS and version != API_VERSION:
            self.add(FieldError((*apath, "apiVersion"), UNSUPPORTED,
                                f'supported values: "{API_VERSION}"',
                                version if isinstance(version, str) else MISSING), plugin=plugin)
            ok = False
        schema = self.registry.args_schema(name)
        if schema is None:
            if args:
                self.add(FieldError(apath, INVALID, f'plugin "{name}" takes no args; they are '
                                    "ignored"), severity=WARNING, plugin=plugin)
            return None
        issues = jsonsubset.check(schema, args, apath)
        for issue in issues:
            self.add_issue(issue, plugin=plugin)
        if issues or not ok:
            return None
        spec = self._args_spec(name)
        defaulted = default_args(spec, schema, args, self.feature_gates)
        try:
            errors = (spec.check(defaulted, self.feature_gates) if spec is not None and spec.schema == schema
                      else self.registry.validate_args(name, defaulted))
        except Exception as exc:  # noqa: BLE001 - a plugin bug is reported, not raised
            self.add(FieldError(apath, INVALID, f"validate_args of plugin {name} failed: "
                                f"{type(exc).__name__}: {exc}"), plugin=plugin)
            return None
        for err in errors:
            self.add(err.prefixed(*apath), plugin=plugin)
        return None if errors else defaulted

    def _extender_ignored_resources(self, doc: dict[str, Any], skip: set[int]) -> None:
        """kube-scheduler's start-up refusal while building extenders (``scheduler.New``).

        Resources an extender manages with ``ignoredByScheduler`` are written into every
        profile's NodeResourcesFit args; a profile without them (NodeResourcesFit disabled,
        so defaulting added no args) stops the scheduler before it starts.
        """
        ignored = [(i, j) for i, ext in enumerate(doc.get("extenders") or ())
                   if isinstance(ext, dict)
                   for j, res in enumerate(ext.get("managedResources") or ())
                   if isinstance(res, dict) and res.get("ignoredByScheduler")]
        if not ignored:
            return
        i, j = ignored[0]
        for k, profile in enumerate(doc["profiles"]):
            if k in skip or any(c.get("name") == "NodeResourcesFit"
                                for c in profile.get("pluginConfig") or ()):
                continue
            self.add(FieldError(("profiles", k, "pluginConfig"), INVALID,
                                "can't find NodeResourcesFitArgs in plugin config"),
                     hint=f"kube-scheduler refuses to start (couldn't build extenders): "
                          f"extenders[{i}].managedResources[{j}] is ignoredByScheduler, which "
                          "goes into every profile's NodeResourcesFit args; enable "
                          "NodeResourcesFit in this profile")

    # ------------------------------------------------------------------ framework build

    def _build_frameworks(self, doc: dict[str, Any], skip: set[int]
                          ) -> list[dict[str, tuple[PluginEntry, ...]] | None] | None:
        resolved: list[dict[str, tuple[PluginEntry, ...]] | None] = []
        first: tuple[int, str, Any] | None = None
        for i, profile in enumerate(doc["profiles"]):
            if i in skip:
                resolved.append(None)
                continue
            self._disabled_names(profile["plugins"])
            plugins, issues = resolve_plugins(profile["plugins"], self.registry,
                                              scheduler_name=profile.get("schedulerName", ""),
                                              profile_path=("profiles", i))
            for issue in issues:
                self.add(issue.error, issue.anchor, severity=issue.severity, hint=issue.hint,
                         plugin=issue.plugin)
            if any(x.severity == ERROR for x in issues):
                resolved.append(None)
                continue
            resolved.append(plugins)
            queue_sort = plugins["less"][0].name
            args = next((c.get("args") for c in profile["pluginConfig"]
                         if c["name"] == queue_sort), None)
            if first is None:
                first = (i, queue_sort, args)
            elif i not in self._queue_sort_flagged:
                name = profile.get("schedulerName", "")
                if queue_sort != first[1]:
                    self.add(FieldError(("profiles", i, "plugins", "queueSort"), INVALID,
                                        f'different queue sort plugins for profile "{name}": '
                                        f'"{queue_sort}", first: "{first[1]}"', queue_sort))
                elif (args or None) != (first[2] or None):
                    self.add(FieldError(("profiles", i, "pluginConfig"), INVALID,
                                        f'different queue sort plugin args for profile "{name}"'))
        if skip:
            return None
        return resolved

    def _disabled_names(self, plugins: dict[str, PluginSet]) -> None:
        """Warn about disabling a plugin nobody installed (upstream ignores it silently)."""
        for field in PLUGIN_SET_FIELDS:
            for ref in plugins[field].disabled:
                if ref.name == WILDCARD or ref.name in self.installed_set or ref.origin is None:
                    continue
                _, hint = unknown_plugin_text(ref.name, self.installed)
                self.add(FieldError((*ref.origin, "name"), INVALID,
                                    f'plugin "{ref.name}" is not installed; disabling it has no '
                                    "effect", ref.name), severity=WARNING, hint=hint)

    # ------------------------------------------------------------------ result

    def _config(self, doc: dict[str, Any], resolved: list[dict[str, tuple[PluginEntry, ...]] | None]
                ) -> SchedulerConfig:
        profiles = []
        for profile, plugins in zip(doc["profiles"], resolved):
            assert plugins is not None, "a profile left out of the build failed validation"
            configured = {c["name"]: c.get("args") for c in profile["pluginConfig"]}
            used = sorted({e.name for entries in plugins.values() for e in entries})
            plugin_args: dict[str, Any] = {}
            for name in used:
                schema = self.registry.args_schema(name)
                if schema is None:  # takes no args (any given were reported as ignored)
                    plugin_args[name] = {}
                    continue
                args = configured.get(name)
                plugin_args[name] = (args if args is not None
                                     else default_args(self._args_spec(name), schema, {},
                                                       self.feature_gates))
            profiles.append(ResolvedProfile(
                scheduler_name=profile["schedulerName"],
                percentage_of_nodes_to_score=profile.get("percentageOfNodesToScore"),
                plugins=plugins, plugin_args=plugin_args))
        document = document_to_dict(doc)
        for profile in document["profiles"]:
            profile["pluginConfig"] = [_with_type_meta(c) for c in profile["pluginConfig"]]
        return SchedulerConfig(
            profiles=tuple(profiles),
            percentage_of_nodes_to_score=doc["percentageOfNodesToScore"],
            pod_initial_backoff_seconds=doc["podInitialBackoffSeconds"],
            pod_max_backoff_seconds=doc["podMaxBackoffSeconds"],
            parallelism=doc["parallelism"], document=document)


def _with_type_meta(entry: dict[str, Any]) -> dict[str, Any]:
    name, args = entry["name"], entry.get("args")
    if name in V1_ARGS_PLUGINS and isinstance(args, dict):
        return {"name": name, "args": {"apiVersion": API_VERSION, "kind": f"{name}Args", **args}}
    return dict(entry)


def _strip_nulls(value: Any) -> Any:
    """Go decoding: a null field is the same as an absent one."""
    if isinstance(value, dict):
        return {k: _strip_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_strip_nulls(v) for v in value]
    return value


def _target(issue: jsonsubset.Issue) -> FieldPath:
    path = tuple(issue.error.path)
    return path[:-1] if issue.anchor == "parent" else path


def _sanitize(data: dict[str, Any], paths: list[FieldPath]) -> None:
    """Remove what failed the schema so later steps only see well-formed data.

    Bad mapping values are deleted (so defaults apply); bad list items are replaced by a marker
    that every later step skips, which keeps the other items' indices (and positions) intact.
    """
    for path in sorted(set(paths), key=len, reverse=True):
        if not path:
            continue
        parent: Any = data
        for part in path[:-1]:
            try:
                parent = parent[part]
            except (KeyError, IndexError, TypeError):
                parent = None
                break
        last = path[-1]
        if isinstance(parent, dict) and last in parent:
            del parent[last]
        elif isinstance(parent, list) and isinstance(last, int) and last < len(parent):
            parent[last] = _BROKEN


def load_config_text(text: str, filename: str, registry: "PluginRegistry",
                     feature_gates: Mapping[str, bool] | None = None
                     ) -> tuple[SchedulerConfig | None, list[Diagnostic]]:
    """Validate ``text`` (shown as ``filename`` in diagnostics); the config is None on any error.

    ``feature_gates`` (a :class:`~kschedfw.fwk.features.FeatureGates`; v1.36 defaults when None)
    decide the plugin-args rules and defaults that depend on a gate. Only the first YAML
    document is the configuration, as for kube-scheduler (see ``_Run.run``).
    """
    run = _Run(filename, registry, feature_gates)
    config = run.run(text)
    diagnostics = sort_unique(run.diagnostics)
    if any(d.is_error for d in diagnostics):
        config = None
    return config, diagnostics


def load_config(path: str, registry: "PluginRegistry",
                feature_gates: Mapping[str, bool] | None = None
                ) -> tuple[SchedulerConfig | None, list[Diagnostic]]:
    """Read and validate the file at ``path``. An unreadable file is a ``File error`` diagnostic."""
    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        return None, [Diagnostic(file=path, line=1, column=1, path="", kind=FILE_ERROR,
                                 message=f"{FILE_ERROR}: cannot read file: {reason}")]
    return load_config_text(text, path, registry, feature_gates)


def default_config(registry: "PluginRegistry",
                   feature_gates: Mapping[str, bool] | None = None) -> SchedulerConfig:
    """The configuration kube-scheduler runs with when given none (one default profile)."""
    text = f"apiVersion: {API_VERSION}\nkind: {KIND}\n"
    config, diagnostics = load_config_text(text, "<defaults>", registry, feature_gates)
    if config is None:
        raise ValueError("the installed plugins cannot run the default profile:\n"
                         + "\n".join(d.render() for d in diagnostics if d.is_error))
    return config
