"""Hooks are honest: every declared hook is either compiled into the runtime's plan or listed in
``hookspecs.NOT_CALLED_YET``, and a plugin implementing one of the latter is warned about (at load
for third-party plugins, by ``kschedfw plugins --check`` for every plugin)."""

from __future__ import annotations

import functools
import logging
import sys
import types
from typing import Any, Iterator

import pytest

from kschedfw import ActionType, ClusterEvent, ClusterEventWithHint, EventResource, hookimpl
from kschedfw.fwk import hookspecs
from kschedfw.cli import plugins as plugins_cli
from kschedfw.fwk.extension_points import HOOK_NAMES
from kschedfw.framework.registry import (Registry, hooks_not_called_yet,
                                         not_called_yet_message)
from kschedfw.testing import framework_for


def _every_hook_plugin() -> tuple[type, list[str]]:
    """A plugin class implementing every declared hook; also returns the hooks it saw called."""
    called: list[str] = []

    def make(hook: str) -> Any:
        def impl(self: Any, *args: Any, **kwargs: Any) -> Any:
            called.append(hook)
            if hook == "events_to_register":  # no hint fn: the plugin's queueing_hint is used
                return [ClusterEventWithHint(ClusterEvent(EventResource.Node, ActionType.Add))]
            return None
        impl.__name__ = hook
        return hookimpl(impl)

    body: dict[str, Any] = {hook: make(hook) for hook in HOOK_NAMES}
    body["name"] = "EveryHook"
    body["__init__"] = lambda self, args, handle: None
    body["__module__"] = "third_party_every_hook"
    return type("EveryHook", (), body), called


def _reachable_methods(root: Any, owner: Any) -> set[str]:
    """Names of ``owner``'s bound methods reachable from ``root``: through attributes, containers,
    partials and closures (the runtime wraps some hooks, e.g. queueing_hint). pluggy's own
    registry is not followed: it holds every hookimpl, called or not."""
    found: set[str] = set()
    seen: set[int] = set()

    def walk(obj: Any) -> None:
        if id(obj) in seen or obj is owner or isinstance(obj, (str, bytes, int, float, type(None), type,
                                                                 types.ModuleType)):
            return
        seen.add(id(obj))
        if type(obj).__module__.partition(".")[0] == "pluggy":
            return
        if isinstance(obj, types.MethodType):
            if obj.__self__ is owner:
                found.add(obj.__func__.__name__)
            else:
                walk(obj.__self__)
        elif isinstance(obj, functools.partial):
            walk(obj.func), walk(obj.args), walk(obj.keywords)
        elif isinstance(obj, types.FunctionType):
            for cell in obj.__closure__ or ():
                walk(cell.cell_contents)
        elif isinstance(obj, dict):
            for value in obj.values():
                walk(value)
        elif isinstance(obj, (list, tuple, set, frozenset)):
            for value in obj:
                walk(value)
        else:  # any other object the runtime keeps (a plan object, the handle...)
            for value in getattr(obj, "__dict__", {}).values():
                walk(value)
            for klass in type(obj).__mro__:
                for slot in getattr(klass, "__slots__", ()):
                    walk(getattr(obj, slot, None))

    walk(root)
    return found


def test_every_hookspec_is_listed_as_an_extension_point() -> None:
    specs = {name for name in dir(hookspecs) if hasattr(getattr(hookspecs, name), "kschedfw_spec")}
    assert specs == set(HOOK_NAMES)
    assert hookspecs.NOT_CALLED_YET <= specs


def test_runtime_binds_every_hook_except_those_not_called_yet() -> None:
    """Build a profile with a plugin implementing every hook: each hook outside NOT_CALLED_YET is
    bound into the compiled plan (or, like events_to_register, called while compiling it), and no
    hook in NOT_CALLED_YET is. Adding a hook, or starting to call one, must update the set."""
    cls, called = _every_hook_plugin()
    framework = framework_for([cls])
    plugin = framework.plugins["EveryHook"]
    reached = _reachable_methods(framework, plugin) | set(called)
    assert sorted(set(HOOK_NAMES) - hookspecs.NOT_CALLED_YET - reached) == [], \
        "declared hooks the runtime does not bind: call them or add them to NOT_CALLED_YET"
    assert sorted(reached & hookspecs.NOT_CALLED_YET) == [], \
        "hooks in NOT_CALLED_YET that the runtime now binds: remove them from the set"


@pytest.mark.parametrize(("hooks", "message"), [
    (["pod_group_post_filter"], "d[P]: implements pod_group_post_filter, which this version of kschedfw does not "
     "call yet: it has no effect"),
    (["a", "b", "c"],
     "d[P]: implements a, b and c, which this version of kschedfw does not call yet: they have no effect"),
], ids=["one", "several"])
def test_not_called_yet_message(hooks: list[str], message: str) -> None:
    assert not_called_yet_message("d[P]", hooks) == message


class Signer:
    name = "Signer"

    def __init__(self, args: Any, handle: Any) -> None:
        pass

    @hookimpl
    def pod_group_post_filter(self, pod_group: Any, pods: Any, pod_group_scheduling_func: Any) -> Any:
        return None

    @hookimpl
    def filter(self, state: Any, pod: Any, node_info: Any) -> None:
        return None


class Plain:
    name = "Plain"

    def __init__(self, args: Any, handle: Any) -> None:
        pass

    @hookimpl
    def filter(self, state: Any, pod: Any, node_info: Any) -> None:
        return None


class _Dist:
    def __init__(self, name: str) -> None:
        self.name, self.version = name, "1.0"


class _EntryPoint:
    def __init__(self, name: str, value: str, dist: str) -> None:
        self.name, self.value, self.dist = name, value, _Dist(dist)


@pytest.fixture
def third_party_module() -> Iterator[str]:
    module = types.ModuleType("kschedfw_honest_hooks_plugins")
    module.Signer, module.Plain = Signer, Plain  # type: ignore[attr-defined]
    sys.modules[module.__name__] = module
    yield module.__name__
    del sys.modules[module.__name__]


def _registry(entry_points: list[_EntryPoint], **kwargs: Any) -> Registry:
    from kschedfw.framework.registry import find_plugins
    refs, problems = find_plugins(entry_points)
    return Registry(refs, problems, **kwargs)


def test_loading_a_third_party_plugin_warns_once(third_party_module: str, caplog: pytest.LogCaptureFixture) -> None:
    registry = _registry([_EntryPoint("Signer", f"{third_party_module}:Signer", "kschedfw-signer"),
                          _EntryPoint("Plain", f"{third_party_module}:Plain", "kschedfw-plain")])
    with caplog.at_level(logging.WARNING, logger="kschedfw.framework.registry"):
        assert registry.load("Signer") is Signer
        registry.load("Signer")
        registry.load("Plain")
    assert [r.getMessage() for r in caplog.records] == [
        "kschedfw-signer[Signer]: implements pod_group_post_filter, which this version of kschedfw does not call "
        "yet: it has no effect"]


def test_in_tree_plugins_load_quietly(third_party_module: str, caplog: pytest.LogCaptureFixture) -> None:
    """In-tree plugins implement no hook this version leaves uncalled (sign_pod is called)."""
    from kschedfw.plugins.nodename import NodeName
    assert hooks_not_called_yet(NodeName) == ()
    registry = _registry([_EntryPoint("NodeName", "kschedfw.plugins.nodename:NodeName", "kschedfw"),
                          _EntryPoint("Signer", f"{third_party_module}:Signer", "kschedfw-signer")],
                         warn_not_called_yet=False)
    with caplog.at_level(logging.WARNING, logger="kschedfw.framework.registry"):
        registry.load("NodeName")
        registry.load("Signer")  # warnings switched off
        Registry.from_classes([NodeName])
    assert caplog.records == []


def test_explicit_classes_warn_unless_in_tree(caplog: pytest.LogCaptureFixture) -> None:
    """The testing kit registers classes directly: an author's plugin is warned about there too."""
    with caplog.at_level(logging.WARNING, logger="kschedfw.framework.registry"):
        Registry.from_classes([Signer, Plain])
    assert [r.getMessage() for r in caplog.records] == [
        "local[Signer]: implements pod_group_post_filter, which this version of kschedfw does not call yet: it has "
        "no effect"]


def test_plugins_command_warns_per_plugin(third_party_module: str) -> None:
    """Without --check only other distributions' plugins are named; --check names every one, once."""
    registry = _registry([_EntryPoint("NodeName", "kschedfw.plugins.nodename:NodeName", "kschedfw"),
                          _EntryPoint("Signer", f"{third_party_module}:Signer", "kschedfw-signer"),
                          _EntryPoint("Plain", f"{third_party_module}:Plain", "kschedfw-plain")],
                         warn_not_called_yet=False)
    rows = plugins_cli.describe_plugins(registry)
    assert {r["name"]: r["hooks_not_called_yet"] for r in rows} == {
        "NodeName": [], "Signer": ["pod_group_post_filter"], "Plain": []}
    tail = ", which this version of kschedfw does not call yet: it has no effect"
    assert plugins_cli.hook_warnings(rows, include_builtin=False) == [
        "warning: kschedfw-signer[Signer]: implements pod_group_post_filter" + tail]
    assert plugins_cli.hook_warnings(rows, include_builtin=True) == [
        "warning: kschedfw-signer[Signer]: implements pod_group_post_filter" + tail]


def test_plugins_check_names_only_default_preemption_for_the_uncalled_pod_group_post_filter(
        capsys: pytest.CaptureFixture[str]) -> None:
    """sign_pod and the placement hooks are called now: of the in-tree plugins, --check names only
    DefaultPreemption, for the one hook not called yet (workload-aware preemption's)."""
    from kschedfw.cli.main import main
    main(["plugins", "--check"])
    err = capsys.readouterr().err.splitlines()
    named = {line.split("[", 1)[1].split("]", 1)[0]: line for line in err if line.startswith("warning: kschedfw[")}
    assert set(named) == {"DefaultPreemption"}
    assert "implements pod_group_post_filter, which" in named["DefaultPreemption"]
