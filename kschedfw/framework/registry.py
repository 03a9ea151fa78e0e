"""The plugin registry: the installed plugins, by name, found through entry points.

In-tree plugins are found as third-party ones are, through the ``kschedfw.plugins`` entry points
(kschedfw's own distribution declares them). Steps follow flake8's finder: *find* reads
distribution metadata without importing anything, *load* imports one plugin class on demand,
*check* registers it with a pluggy manager to validate its hooks. What a plugin implements is read
from its class (:func:`extension_points_of`), so only the plugins a configuration names are
imported. Errors name ``distribution[entry-point]`` and never stop other plugins.

:class:`PluginRegistry` is what configuration validation asks of the registry (tests hand it a
fake); :class:`Registry` implements it, and also loads the classes a profile's runtime builds.
"""

from __future__ import annotations

import difflib
import functools
import importlib
import importlib.metadata
import inspect
import types
import logging
from typing import Any, Iterable, Protocol, runtime_checkable

import attrs
import pluggy

from kschedfw.fwk import hookspecs
from kschedfw.fwk.args import ArgsSpec
from kschedfw.fwk.extension_points import HOOK_NAMES, OPTIONAL_METHODS, hook as hook_row
from kschedfw.api.field import FieldError

log = logging.getLogger(__name__)

ENTRY_POINT_GROUP = "kschedfw.plugins"
BUILTIN_DISTRIBUTION = "kschedfw"

_FORBIDDEN_IMPL_OPTIONS = ("tryfirst", "trylast", "wrapper", "hookwrapper", "specname")

#: reads the ``@hookimpl`` options of a class's members (no hookspecs needed for that)
_MARKERS = pluggy.PluginManager("kschedfw")

#: every name a plugin member may have that the runtime gives a meaning to
_KNOWN_MEMBERS: tuple[str, ...] = (*HOOK_NAMES, *OPTIONAL_METHODS)

#: how alike (difflib's ratio) a member's name must be to a known one to be its candidate typo
_TYPO_CUTOFF = 0.8

class PluginLoadError(Exception):
    """A plugin that could not be imported or does not fit the contract."""

    def __init__(self, display: str, message: str) -> None:
        self.display, self.message = display, message
        super().__init__(f"{display}: {message}")


@attrs.frozen
class PluginRef:
    """A plugin found in metadata: nothing imported yet."""

    name: str
    distribution: str
    version: str
    value: str  # "module:Class"

    @property
    def display(self) -> str:
        return f"{self.distribution}[{self.name}]"

    @property
    def builtin(self) -> bool:
        return self.distribution == BUILTIN_DISTRIBUTION


def find_plugins(entry_points: Iterable[Any] | None = None) -> tuple[dict[str, PluginRef], list[PluginLoadError]]:
    """Read the ``kschedfw.plugins`` entry points; report names offered by two distributions."""
    if entry_points is None:
        entry_points = importlib.metadata.entry_points(group=ENTRY_POINT_GROUP)
    found: dict[str, list[PluginRef]] = {}
    seen: set[tuple[str, str]] = set()
    for ep in entry_points:
        dist = getattr(ep, "dist", None)
        dist_name = dist.name if dist is not None else "unknown"
        version = dist.version if dist is not None else ""
        if (dist_name, ep.name) in seen:  # the same distribution seen twice on sys.path
            continue
        seen.add((dist_name, ep.name))
        found.setdefault(ep.name, []).append(PluginRef(ep.name, dist_name, version, ep.value))
    refs: dict[str, PluginRef] = {}
    problems: list[PluginLoadError] = []
    for name in sorted(found):
        candidates = sorted(found[name], key=lambda r: (not r.builtin, r.distribution))
        refs[name] = candidates[0]
        if len(candidates) > 1:
            others = ", ".join(c.display for c in candidates)
            problems.append(PluginLoadError(
                candidates[1].display,
                f"plugin name {name!r} is provided by more than one distribution ({others}); "
                f"using {candidates[0].display}; uninstall one of them"))
    return refs, problems


def _impl_opts(cls: Any, attr_name: str) -> Any:
    """The ``@hookimpl`` options of ``cls.<attr_name>``, or None for a member not marked."""
    return _MARKERS.parse_hookimpl_opts(cls, attr_name)


def implemented_hooks(cls: type) -> tuple[str, ...]:
    """Extension points a plugin class implements: its methods marked with ``@hookimpl``."""
    return tuple(hook for hook in HOOK_NAMES if _impl_opts(cls, hook) is not None)


def hooks_without_effect(cls: type) -> tuple[str, ...]:
    """Hooks ``cls`` implements that the runtime calls for another plugin only
    (``hookspecs.RESERVED_HOOKS``): they have no effect."""
    name = getattr(cls, "name", None)
    return tuple(hook for hook in implemented_hooks(cls)
                 if hookspecs.RESERVED_HOOKS.get(hook, name) != name)


def without_effect_message(display: str, hooks: Iterable[str]) -> str:
    """The warning for a plugin implementing hooks the runtime calls for another plugin only."""
    parts = [f"{hook} (called for {hookspecs.RESERVED_HOOKS[hook]} only)" for hook in hooks]
    names = ", ".join(parts[:-1]) + " and " + parts[-1] if len(parts) > 1 else parts[0]
    return f"{display}: implements {names}: {'they have' if len(parts) > 1 else 'it has'} no effect"


def extension_points_of(cls: type) -> frozenset[str]:
    """The config-level points a class extends: a plugin with only ``unreserve`` is a Reserve plugin."""
    hooks = set(implemented_hooks(cls))
    return frozenset(hooks | {point for hook in hooks if (point := hook_row(hook).enables) is not None})


def check_plugin_class(cls: Any, display: str, expected_name: str | None = None) -> None:
    """Raise PluginLoadError when ``cls`` does not fit the plugin contract."""
    if not inspect.isclass(cls):
        raise PluginLoadError(display, f"entry point must name a class, got {type(cls).__name__}")
    name = getattr(cls, "name", None)
    if not isinstance(name, str) or not name:
        raise PluginLoadError(display, "plugin class has no 'name' attribute")
    if expected_name is not None and name != expected_name:
        raise PluginLoadError(display, f"plugin class name {name!r} does not match entry point name {expected_name!r}")
    for attr_name in dir(cls):
        if attr_name.startswith("__"):
            continue  # Python's own members: neither hooks nor typos of one
        opts = _impl_opts(cls, attr_name)
        if opts is None:
            typo = _typo_of(attr_name)
            if typo is not None:
                what = "hook" if typo in HOOK_NAMES else "optional member"
                raise PluginLoadError(display, f"{attr_name!r} is neither a hook nor an optional member "
                                               f"(did you mean the {what} {typo!r}?); rename it, or make "
                                               f"it private with a leading underscore")
            continue
        if attr_name not in HOOK_NAMES:
            close = difflib.get_close_matches(attr_name, HOOK_NAMES, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise PluginLoadError(display, f"unknown hook {attr_name!r}{hint}")
        bad = [o for o in _FORBIDDEN_IMPL_OPTIONS if opts.get(o)]
        if bad:
            raise PluginLoadError(display, f"hook {attr_name!r} uses {', '.join(bad)}: order belongs to the profile")
    pm = pluggy.PluginManager("kschedfw")
    pm.add_hookspecs(hookspecs)
    try:
        pm.register(_as_instance_sees_it(cls), name=name)
        pm.check_pending()
    except pluggy.PluginValidationError as exc:
        raise PluginLoadError(display, str(exc)) from None


def _squashed(name: str) -> str:
    return name.replace("_", "").lower()


def _typo_of(attr_name: str) -> str | None:
    """The known member name that public ``attr_name`` looks like a typo of, or None: a name
    that is one is no typo, a private one is the plugin's own.

    Another spelling of the same words (``scoreNodes``, ``sortkey``) is one; otherwise the
    closest known name within one edit of a name of 8 letters or more, two of 14 or more
    (``score_node``, ``sort_keys``, ``arg_schema``). Short names are words a plugin's own
    helpers use too (``scores``, ``filtered``, ``reserved``, ``names``): those pass."""
    if attr_name.startswith("_") or attr_name in _KNOWN_MEMBERS:
        return None
    squashed = _squashed(attr_name)
    same = [known for known in _KNOWN_MEMBERS if _squashed(known) == squashed]
    if same:
        return same[0]
    # a typo is at most two edits away, so its length is too: difflib only ranks those (it
    # costs, and every public attribute of every plugin class is asked at load)
    near = [known for known in _KNOWN_MEMBERS if abs(len(known) - len(attr_name)) <= 2]
    for known in difflib.get_close_matches(attr_name, near, n=3, cutoff=_TYPO_CUTOFF) if near else ():
        allowed = 2 if len(known) >= 14 else 1 if len(known) >= 8 else 0
        if allowed and _edits(attr_name, known) <= allowed:
            return known
    return None


def _edits(a: str, b: str) -> int:
    """Levenshtein distance: letters inserted, deleted or replaced to turn ``a`` into ``b``."""
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        current = [i]
        for j, cb in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb)))
        previous = current
    return previous[-1]


def _as_instance_sees_it(cls: type) -> types.SimpleNamespace:
    """The class's hooks bound as on an instance, for pluggy to check without building one.

    pluggy drops ``self`` from a plain function only when its ``__qualname__`` looks like a
    method's; hooks of a class made with ``type()`` or from shared functions would fail that
    guess, though the runtime calls them bound like any other."""
    view = types.SimpleNamespace()
    for attr_name in dir(cls):
        if attr_name.startswith("__"):
            continue
        fn = getattr(cls, attr_name, None)
        if fn is None or _impl_opts(cls, attr_name) is None:
            continue
        if isinstance(inspect.getattr_static(cls, attr_name), staticmethod) or inspect.ismethod(fn):
            setattr(view, attr_name, fn)
        else:
            setattr(view, attr_name, types.MethodType(fn, view))
    return view


@runtime_checkable
class PluginRegistry(Protocol):
    """The installed plugins, as configuration validation sees them."""

    def names(self) -> list[str]:
        """Every installed plugin name, sorted."""

    def extension_points(self, name: str) -> frozenset[str] | None:
        """Hook names the plugin implements (``filter``, ``score``, ...); ``None`` if unknown or
        it cannot be loaded."""

    def args_schema(self, name: str) -> dict[str, Any] | None:
        """JSON Schema of the plugin's args, with ``default``s; ``None`` if it takes no args."""

    def validate_args(self, name: str, args: dict[str, Any]) -> list[FieldError]:
        """The plugin's own semantic rules on defaulted args; paths are relative to ``args``."""

    def args_spec(self, name: str) -> ArgsSpec | None:
        """The plugin's :class:`~kschedfw.fwk.args.ArgsSpec` (its own defaulting and gated rules),
        when it declares one as ``args_spec``."""

    def describe(self, name: str) -> str:
        """``distribution[name]``, for messages."""


class Registry:
    """Installed plugins, loaded lazily (a :class:`PluginRegistry`).

    Loading a plugin that is not part of kschedfw and implements a hook in
    only another plugin's hook (``hookspecs.RESERVED_HOOKS``) logs a warning (once per plugin), unless
    ``warn_without_effect``
    is off (``kschedfw plugins --check`` reports those itself, for every plugin).
    """

    def __init__(self, refs: dict[str, PluginRef], problems: Iterable[PluginLoadError] = (),
                 classes: dict[str, type] | None = None, *, warn_without_effect: bool = True) -> None:
        self._refs = dict(refs)
        self.problems: list[PluginLoadError] = list(problems)
        self._classes: dict[str, type] = dict(classes or {})
        self._failures: dict[str, PluginLoadError] = {}
        self._points: dict[str, frozenset[str]] = {}
        self._warn_without_effect = warn_without_effect

    @classmethod
    def discover(cls, extra_classes: Iterable[type] = (), *, warn_without_effect: bool = True) -> "Registry":
        refs, problems = find_plugins()
        registry = cls(refs, problems, warn_without_effect=warn_without_effect)
        for plugin_cls in extra_classes:
            registry.add_class(plugin_cls)
        return registry

    @classmethod
    def from_classes(cls, classes: Iterable[type]) -> "Registry":
        """A registry of explicit classes, no entry points (tests and the testing kit)."""
        registry = cls({})
        for plugin_cls in classes:
            registry.add_class(plugin_cls)
        return registry

    def add_class(self, plugin_cls: type, distribution: str = "local") -> None:
        display = f"{distribution}[{getattr(plugin_cls, 'name', '?')}]"
        check_plugin_class(plugin_cls, display)
        name = plugin_cls.name  # type: ignore[attr-defined]
        self._refs[name] = PluginRef(name, distribution, "", f"{plugin_cls.__module__}:{plugin_cls.__qualname__}")
        self._classes[name] = plugin_cls
        self._warn_hooks_without_effect(plugin_cls, display,
                                        in_tree=plugin_cls.__module__.partition(".")[0] == BUILTIN_DISTRIBUTION)

    def refs(self) -> list[PluginRef]:
        return [self._refs[n] for n in sorted(self._refs)]

    def ref(self, name: str) -> PluginRef | None:
        return self._refs.get(name)

    def load(self, name: str) -> type:
        """Import and check one plugin class; raises PluginLoadError (cached)."""
        if name in self._classes:
            return self._classes[name]
        if name in self._failures:
            raise self._failures[name]
        ref = self._refs.get(name)
        if ref is None:
            raise KeyError(name)
        try:
            module_name, _, attr = ref.value.partition(":")
            obj: Any = importlib.import_module(module_name)
            for part in attr.split("."):
                obj = getattr(obj, part)
            check_plugin_class(obj, ref.display, expected_name=name)
        except PluginLoadError as exc:
            self._failures[name] = exc
            raise
        except Exception as exc:  # an entry point that fails to import must not take others down
            err = PluginLoadError(ref.display, f"failed to load: {type(exc).__name__}: {exc}")
            self._failures[name] = err
            raise err from None
        plugin_cls: type = obj  # check_plugin_class made sure it is a class
        self._classes[name] = plugin_cls
        self._warn_hooks_without_effect(plugin_cls, ref.display, in_tree=ref.builtin)
        return plugin_cls

    def _warn_hooks_without_effect(self, cls: type, display: str, *, in_tree: bool) -> None:
        """In-tree plugins are kschedfw's own: no warning for them."""
        if in_tree or not self._warn_without_effect:
            return
        hooks = hooks_without_effect(cls)
        if hooks:
            log.warning("%s", without_effect_message(display, hooks))

    def try_load(self, name: str) -> type | None:
        try:
            return self.load(name)
        except (PluginLoadError, KeyError):
            return None

    def load_error(self, name: str) -> str | None:
        """Why an installed plugin cannot be used, or None."""
        if name not in self._refs:
            return None
        try:
            self.load(name)
        except PluginLoadError as exc:
            return str(exc)
        return None

    # ---- PluginRegistry: what configuration validation asks, read from the plugin classes
    def names(self) -> list[str]:
        return sorted(self._refs)

    def extension_points(self, name: str) -> frozenset[str] | None:
        points = self._points.get(name)
        if points is None:
            cls = self.try_load(name)
            if cls is None:
                return None
            points = self._points[name] = extension_points_of(cls)
        return points

    def args_schema(self, name: str) -> dict[str, Any] | None:
        cls = self.try_load(name)
        return getattr(cls, "args_schema", None) if cls is not None else None

    def args_spec(self, name: str) -> ArgsSpec | None:
        cls = self.try_load(name)
        spec = getattr(cls, "args_spec", None) if cls is not None else None
        return spec if isinstance(spec, ArgsSpec) else None

    def validate_args(self, name: str, args: dict[str, Any]) -> list[FieldError]:
        cls = self.try_load(name)
        validator = getattr(cls, "validate_args", None) if cls is not None else None
        return list(validator(args)) if validator is not None else []

    def describe(self, name: str) -> str:
        ref = self._refs.get(name)
        return ref.display if ref is not None else name


@functools.lru_cache(maxsize=1)
def default_registry() -> Registry:
    """The registry of everything installed (discovered once per process)."""
    return Registry.discover()
