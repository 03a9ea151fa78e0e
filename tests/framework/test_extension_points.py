"""The extension-point table is the one place the vocabulary is written, and a plugin member
named like a hook or an optional method but not exactly is refused at load.

Upstream's KubeSchedulerConfiguration ``plugins:`` fields, the ``extension_point`` metric labels
and the framework's plugin lists all name the same extension points; here every one of them is
read from :mod:`kschedfw.fwk.extension_points`.
"""

from __future__ import annotations

import importlib
import inspect
import tomllib
from pathlib import Path
from typing import Any

import pluggy
import pytest

from kschedfw import hookimpl
from kschedfw.config.plugin_sets import BUILD_ORDER, PLUGIN_SET_FIELDS, PLUGIN_SETS
from kschedfw.config.schema import CONFIG_SCHEMA
from kschedfw.fwk import hookspecs
from kschedfw.fwk.extension_points import HOOK_NAMES, HOOKS, OPTIONAL_METHODS, POINTS
from kschedfw.framework import instrumented, plans as plans_module
from kschedfw.framework.registry import PluginLoadError, check_plugin_class, extension_points_of

ROOT = Path(__file__).resolve().parents[2]


def _spec_functions() -> dict[str, Any]:
    pm = pluggy.PluginManager("kschedfw")
    return {name: fn for name, fn in vars(hookspecs).items()
            if inspect.isfunction(fn) and pm.parse_hookspec_opts(hookspecs, name) is not None}


def test_hookspecs_are_the_tables_hooks_in_its_order() -> None:
    specs = _spec_functions()
    assert list(specs) == list(HOOK_NAMES) == hookspecs.__all__


def test_each_rows_result_is_its_hookspecs_return_annotation() -> None:
    specs = _spec_functions()
    assert {row.name: row.result for row in HOOKS} == \
        {name: str(fn.__annotations__["return"]).strip("'\"") for name, fn in specs.items()}


def test_config_plugin_sets_and_schema_are_the_tables_points() -> None:
    """v1 ``Plugins`` has one PluginSet per extension point plus multiPoint, declared after the
    original twelve; upstream fills a framework in getExtensionPoints order."""
    fields = [row.field for row in POINTS]
    assert [f for f, _, _ in PLUGIN_SETS] == fields
    assert [h for _, h, _ in PLUGIN_SETS] == [row.name for row in POINTS]
    assert [i for _, _, i in PLUGIN_SETS] == [row.interface for row in POINTS]
    assert sorted(BUILD_ORDER) == sorted(fields)
    assert sorted(row.build for row in POINTS) == list(range(1, len(POINTS) + 1))
    assert [f for f in PLUGIN_SET_FIELDS if f != "multiPoint"] == fields
    profile = CONFIG_SCHEMA["properties"]["profiles"]["items"]["properties"]
    assert list(profile["plugins"]["properties"]) == list(PLUGIN_SET_FIELDS)
    assert {f: profile["plugins"]["properties"][f]["description"] for f in fields} == \
        {row.field: row.doc for row in POINTS}


def test_instrumentation_labels_are_the_tables() -> None:
    """Upstream labels plugin_execution_duration_seconds and
    framework_extension_point_duration_seconds by extension point."""
    assert sorted(instrumented.OBSERVED_POINTS) == sorted(str(row.label) for row in HOOKS if row.observed)
    with pytest.raises(ValueError, match="not an observed extension point"):
        instrumented.extension_point("QueueSort", None)


def test_signing_and_event_points_are_the_tables() -> None:
    """Upstream computeBatchablePlugins: PreFilter, Filter, PreScore, Score; EnqueueExtensions are
    honoured at PreEnqueue, PreFilter, Filter, Reserve and Permit."""
    assert plans_module.SIGNED_POINTS == ("pre_filter", "filter", "pre_score", "score")
    assert plans_module.EVENT_POINTS == ("pre_enqueue", "pre_filter", "filter", "reserve", "permit")


def test_a_profile_compiles_a_plan_for_every_plain_hook() -> None:
    """Every hook a point configures (but QueueSort's and Score's, compiled apart, and the
    pod-group hooks, not called yet) has its list in the compiled Plans, named as the hook and
    holding the plugin that implements it; the timed copy times every timed hook's calls and
    leaves the others' entries as they are."""
    from kschedfw.testing import framework_for
    pm = pluggy.PluginManager("kschedfw")
    pm.add_hookspecs(hookspecs)
    plain = [row.name for row in plans_module.LIST_HOOKS]
    body: dict[str, Any] = {"name": "Everywhere", "__init__": lambda self, args, handle: None}
    for hook in plain:
        args = ", ".join(["self", *getattr(pm.hook, hook).spec.argnames])
        namespace: dict[str, Any] = {}
        exec(f"def {hook}({args}):\n    return None", namespace)
        body[hook] = hookimpl(namespace[hook])
    fw = framework_for([type("Everywhere", (), body)])
    lists = fw.plans.lists()
    assert list(lists) == plain
    assert {hook: [entry[0] for entry in plan] for hook, plan in lists.items()} == {hook: ["Everywhere"] for hook in plain}

    class Clock:
        def now(self) -> float:
            return 0.0

        def plugin_observer(self, plugin: str, point: str) -> Any:
            return lambda code, seconds: None

    timed = fw.plans.timed(Clock())  # type: ignore[arg-type]
    for row in plans_module.LIST_HOOKS:
        ((name, plain_fn),), ((timed_name, timed_fn),) = lists[row.name], timed.lists()[row.name]
        assert timed_name == name and (timed_fn is not plain_fn) is row.timed, row.name


def test_no_hookspec_states_a_firstresult_nothing_applies() -> None:
    """The runtime calls plans, never ``pm.hook``: a firstresult marker would state a rule that
    is not applied (and Bind's rule is 'until one does not Skip', not 'first result')."""
    pm = pluggy.PluginManager("kschedfw")
    pm.add_hookspecs(hookspecs)
    assert [name for name in HOOK_NAMES if getattr(pm.hook, name).spec.opts.get("firstresult")] == []


def test_unreserve_alone_makes_a_reserve_plugin() -> None:
    class OnlyUnreserve:
        name = "OnlyUnreserve"

        @hookimpl
        def unreserve(self, state, pod, node_name):
            pass

    assert extension_points_of(OnlyUnreserve) == {"unreserve", "reserve"}


# --------------------------------------------------------------------------- typos


def _plugin(member: str, value: Any) -> type:
    def filter(self, state, pod, node_info):  # noqa: A001 - the hook's name
        return None

    return type("Typo", (), {"name": "Typo", "__init__": lambda self, args, handle: None,
                             "filter": hookimpl(filter), member: value})


def _method(self, *args):
    return None


@pytest.mark.parametrize(("member", "value", "meant"), [
    pytest.param("score_node", _method, "score_nodes", id="whole-list-score"),
    pytest.param("filter_node", _method, "filter_nodes", id="whole-list-filter"),
    pytest.param("normalize_scores_values", _method, "normalize_score_values", id="normalize-values"),
    pytest.param("sort_keys", _method, "sort_key", id="sort-key"),
    pytest.param("filter_verdict_keys", _method, "filter_verdict_key", id="verdict-key"),
    pytest.param("explain_rejections", _method, "explain_rejection", id="explain"),
    pytest.param("arg_schema", {"type": "object"}, "args_schema", id="args-schema-attribute"),
    pytest.param("validate_arg", staticmethod(lambda args: []), "validate_args", id="validate-args"),
    pytest.param("scoreNodes", _method, "score_nodes", id="camel-case"),
    pytest.param("pre_scor", _method, "pre_score", id="unmarked-hook"),
])
def test_a_misspelt_optional_member_is_refused_with_did_you_mean(member: str, value: Any, meant: str) -> None:
    """A typo would silently lose a fast path or an args check; as for a misspelt hook, the
    plugin is refused and the message names what was meant."""
    with pytest.raises(PluginLoadError, match=f"did you mean the (hook|optional member) '{meant}'"):
        check_plugin_class(_plugin(member, value), "local[Typo]")


@pytest.mark.parametrize("member", ["validate", "node_score", "raw_score", "scores_for", "_score_node",
                                    "helper", "score_nodes", "sort_key", "scores", "filtered",
                                    "reserved", "names", "filtered_nodes", "normalize"])
def test_a_plugins_own_helpers_and_the_optional_members_pass(member: str) -> None:
    check_plugin_class(_plugin(member, _method), "local[Typo]")


def test_optional_members_are_not_hooks() -> None:
    assert not set(OPTIONAL_METHODS) & set(HOOK_NAMES)


def _declared_plugins() -> list[Any]:
    """Every ``kschedfw.plugins`` entry point kschedfw and the contrib packages declare."""
    out = []
    for pyproject in [ROOT / "pyproject.toml", *sorted(ROOT.glob("contrib-plugins/*/pyproject.toml"))]:
        entry_points = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"] \
            .get("entry-points", {}).get("kschedfw.plugins", {})
        src = pyproject.parent / "src"
        out += [pytest.param(src if src.is_dir() else None, name, value, id=f"{pyproject.parent.name}:{name}")
                for name, value in entry_points.items()]
    return out


@pytest.mark.parametrize(("src", "name", "value"), _declared_plugins())
def test_no_in_tree_or_contrib_plugin_is_refused(src: Path | None, name: str, value: str,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    if src is not None:
        monkeypatch.syspath_prepend(str(src))
    module, _, attr = value.partition(":")
    obj: Any = importlib.import_module(module)
    for part in attr.split("."):
        obj = getattr(obj, part)
    check_plugin_class(obj, f"[{name}]", expected_name=name)
