"""Plugin discovery: entry points, conflicts, import failures and contract checks."""

from __future__ import annotations

import sys
import types

import pytest

from kschedfw import Status, hookimpl
from kschedfw.framework.registry import (PluginLoadError, Registry, check_plugin_class,
                                         find_plugins, implemented_hooks)


class FakeDist:
    def __init__(self, name: str, version: str = "1.0") -> None:
        self.name, self.version = name, version


class FakeEntryPoint:
    def __init__(self, name: str, value: str, dist: str) -> None:
        self.name, self.value, self.dist = name, value, FakeDist(dist)


class GoodPlugin:
    name = "Good"

    def __init__(self, args, handle):
        pass

    @hookimpl
    def filter(self, state, pod, node_info):
        return Status.unschedulable("no")

    @hookimpl
    def score(self, state, pod, node_info):
        return 1


@pytest.fixture
def plugin_module():
    module = types.ModuleType("kschedfw_test_plugins")
    module.Good = GoodPlugin

    class Misspelled:
        name = "Misspelled"

        @hookimpl
        def filtr(self, state, pod, node_info):
            return None

    class WrongArgs:
        name = "WrongArgs"

        @hookimpl
        def filter(self, state, pod, node):  # "node" is not a filter argument
            return None

    class Ordered:
        name = "Ordered"

        @hookimpl(tryfirst=True)
        def filter(self, state, pod, node_info):
            return None

    module.Misspelled, module.WrongArgs, module.Ordered = Misspelled, WrongArgs, Ordered
    sys.modules[module.__name__] = module
    yield module
    del sys.modules[module.__name__]


def test_implemented_hooks_are_the_extension_points():
    assert implemented_hooks(GoodPlugin) == ("filter", "score")


def test_conflicting_names_name_both_distributions():
    refs, problems = find_plugins([
        FakeEntryPoint("Dup", "a:A", "dist-b"),
        FakeEntryPoint("Dup", "a:A", "dist-a"),
    ])
    assert refs["Dup"].distribution == "dist-a"
    assert len(problems) == 1
    assert "dist-a[Dup]" in problems[0].message and "dist-b[Dup]" in problems[0].message


@pytest.mark.parametrize("name, message", [
    pytest.param("Misspelled", "unknown hook 'filtr' (did you mean 'filter'?)", id="misspelled-hook"),
    pytest.param("WrongArgs", "node", id="wrong-argument-names"),
    pytest.param("Ordered", "tryfirst", id="tryfirst-refused"),
])
def test_broken_plugins_are_reported_with_distribution(plugin_module, name, message):
    refs, _ = find_plugins([FakeEntryPoint(name, f"kschedfw_test_plugins:{name}", "acme-plugins"),
                            FakeEntryPoint("Good", "kschedfw_test_plugins:Good", "acme-plugins")])
    registry = Registry(refs)
    with pytest.raises(PluginLoadError) as err:
        registry.load(name)
    assert err.value.display == f"acme-plugins[{name}]"
    assert message in err.value.message
    # one broken plugin does not take the others down
    assert registry.load("Good") is GoodPlugin
    assert registry.extension_points(name) is None
    assert registry.extension_points("Good") == frozenset({"filter", "score"})


def test_import_failure_is_reported_not_raised():
    refs, _ = find_plugins([FakeEntryPoint("Gone", "no_such_module_kschedfw:Gone", "gone-dist")])
    registry = Registry(refs)
    error = registry.load_error("Gone")
    assert error is not None
    assert error.startswith("gone-dist[Gone]: failed to load: ModuleNotFoundError")


def test_entry_point_name_must_match_class_name(plugin_module):
    refs, _ = find_plugins([FakeEntryPoint("Other", "kschedfw_test_plugins:Good", "acme")])
    with pytest.raises(PluginLoadError, match="does not match entry point name 'Other'"):
        Registry(refs).load("Other")


def test_check_rejects_non_class():
    with pytest.raises(PluginLoadError, match="must name a class"):
        check_plugin_class(lambda: None, "x[y]")


def test_in_tree_plugins_are_discovered_through_the_same_group():
    registry = Registry.discover()
    ref = registry.ref("NodeName")
    assert ref is not None and ref.builtin
    assert "filter" in registry.extension_points("NodeName")
