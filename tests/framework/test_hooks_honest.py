"""Hooks are honest: every declared hook is compiled into the runtime's plan; one the runtime
calls for a single plugin only (``hookspecs.RESERVED_HOOKS``: DefaultPreemption's
pod_group_post_filter) is bound for that plugin and no other, and another plugin implementing it
is warned about (at load for third-party plugins, by ``kschedfw plugins --check`` for every
plugin)."""

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
from kschedfw.framework.handle import Handle
from kschedfw.framework.registry import Registry, hooks_without_effect, without_effect_message
from kschedfw.testing import framework_for


def _every_hook_plugin(name: str = "EveryHook") -> tuple[type, list[str]]:
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
    body["name"] = name
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
    assert set(hookspecs.RESERVED_HOOKS) <= specs


def _reached(name: str) -> set[str]:
    """The hooks of a plugin named ``name`` implementing every hook that a profile of it (every
    gate on) binds into its compiled plan or calls while compiling it (events_to_register)."""
    cls, called = _every_hook_plugin(name)
    framework = framework_for([cls], handle=Handle.factory(feature_gates={
        "GenericWorkload": True, "GangScheduling": True, "WorkloadAwarePreemption": True}))
    return _reachable_methods(framework, framework.plugins[name]) | set(called)


def test_runtime_binds_every_hook_and_reserved_ones_for_their_plugin_only() -> None:
    """Any plugin gets every hook but the reserved ones bound; the plugin a reserved hook is for
    gets that one too. Adding a hook, or reserving one, must keep this true."""
    reached = _reached("EveryHook")
    assert sorted(set(HOOK_NAMES) - set(hookspecs.RESERVED_HOOKS) - reached) == [], \
        "declared hooks the runtime does not bind: call them or reserve them for their plugin"
    assert sorted(reached & set(hookspecs.RESERVED_HOOKS)) == [], "a reserved hook bound for another plugin"
    for hook, only in hookspecs.RESERVED_HOOKS.items():
        assert hook in _reached(only), f"{hook} is not bound for {only}"


@pytest.mark.parametrize(("hooks", "message"), [
    (["pod_group_post_filter"],
     "d[P]: implements pod_group_post_filter (called for DefaultPreemption only): it has no effect"),
    (["pod_group_post_filter"] * 2, "d[P]: implements pod_group_post_filter (called for DefaultPreemption only) "
     "and pod_group_post_filter (called for DefaultPreemption only): they have no effect"),
], ids=["one", "several"])
def test_without_effect_message(hooks: list[str], message: str) -> None:
    assert without_effect_message("d[P]", hooks) == message


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
        "kschedfw-signer[Signer]: implements pod_group_post_filter (called for DefaultPreemption only): it has no effect"]


def test_in_tree_plugins_load_quietly(third_party_module: str, caplog: pytest.LogCaptureFixture) -> None:
    """In-tree plugins implement no hook without effect (DefaultPreemption's reserved one is its own)."""
    from kschedfw.plugins.defaultpreemption import DefaultPreemption
    from kschedfw.plugins.nodename import NodeName
    assert hooks_without_effect(NodeName) == () and hooks_without_effect(DefaultPreemption) == ()
    registry = _registry([_EntryPoint("NodeName", "kschedfw.plugins.nodename:NodeName", "kschedfw"),
                          _EntryPoint("Signer", f"{third_party_module}:Signer", "kschedfw-signer")],
                         warn_without_effect=False)
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
        "local[Signer]: implements pod_group_post_filter (called for DefaultPreemption only): it has no effect"]


def test_plugins_command_warns_per_plugin(third_party_module: str) -> None:
    """Without --check only other distributions' plugins are named; --check names every one, once."""
    registry = _registry([_EntryPoint("NodeName", "kschedfw.plugins.nodename:NodeName", "kschedfw"),
                          _EntryPoint("Signer", f"{third_party_module}:Signer", "kschedfw-signer"),
                          _EntryPoint("Plain", f"{third_party_module}:Plain", "kschedfw-plain")],
                         warn_without_effect=False)
    rows = plugins_cli.describe_plugins(registry)
    assert {r["name"]: r["hooks_without_effect"] for r in rows} == {
        "NodeName": [], "Signer": ["pod_group_post_filter"], "Plain": []}
    warning = ("warning: kschedfw-signer[Signer]: implements pod_group_post_filter (called for DefaultPreemption "
               "only): it has no effect")
    assert plugins_cli.hook_warnings(rows, include_builtin=False) == [warning]
    assert plugins_cli.hook_warnings(rows, include_builtin=True) == [warning]


def test_plugins_check_names_no_in_tree_plugin(capsys: pytest.CaptureFixture[str]) -> None:
    """Every hook an in-tree plugin implements has its effect: DefaultPreemption's
    pod_group_post_filter is the one the reserved hook is for, so --check warns about none."""
    from kschedfw.cli.main import main
    main(["plugins", "--check"])
    err = capsys.readouterr().err.splitlines()
    assert [line for line in err if line.startswith("warning: kschedfw[")] == []