"""``check_plugin(MyPlugin)``: the contract every plugin keeps, checked in one line.

It checks what users would otherwise find out from a failing scheduler: the class registers
cleanly with the hookspecs, its args schema is a sound JSON Schema whose defaults validate and
build the plugin, and every hook it implements, called on sample inputs (a few varied nodes, pods
with and without requests and affinity; :mod:`kschedfw.testing.exercise`), returns what the
runtime accepts: the runtime's own guard checks each result, so a Score of ``1.5`` or ``101``, a
Filter returning ``"no"`` or a hook that raises is reported in the words of the Error a real
cycle would end with, with the extension point and the input.

A plugin that can reject pods but registers no events keeps the contract: upstream requeues its
pods on every cluster event. ``contract_hints`` says so, as advice that never fails a check. A
hook returning a shape accepted only until the next release (a bare Status from ``pre_filter``,
``(score, status)`` from ``score``) does not fail it either: ``check_plugin`` warns, once per hook,
and lists the warnings in its ContractError when something else fails.
"""

from __future__ import annotations

import re
import warnings
from importlib.metadata import entry_points
from typing import Any, Iterable, Mapping

from kschedfw.api import Node, Pod
from kschedfw.framework.guard import DeprecatedShapeWarning
from kschedfw.framework.registry import (ENTRY_POINT_GROUP, PluginLoadError, check_plugin_class,
                                         implemented_hooks)
from kschedfw.testing.exercise import exercise_problems

_NAME = re.compile(r"^[A-Z][A-Za-z0-9]*$")
#: Extension points whose rejections are retried through cluster events (upstream's list).
REJECTING_POINTS = ("pre_enqueue", "pre_filter", "filter", "reserve", "permit")


class ContractError(AssertionError):
    """Every broken rule of one plugin, one per line (``check_plugin``)."""

    def __init__(self, plugin: str, problems: list[str], deprecated: Iterable[str] = ()) -> None:
        self.plugin = plugin
        self.problems = list(problems)
        self.deprecated = list(deprecated)
        text = f"{plugin} breaks the plugin contract:\n- " + "\n- ".join(self.problems)
        if self.deprecated:
            text += "\nwarnings (not failures):\n- " + "\n- ".join(self.deprecated)
        super().__init__(text)


def contract_problems(cls: type, *, args: Mapping[str, Any] | None = None, nodes: Iterable[Node] = (),
                      pods: Iterable[Pod] = (), objects: Iterable[Any] = ()) -> list[str]:
    """Everything wrong with ``cls`` as a kschedfw plugin (empty when it keeps the contract);
    ``nodes``, ``pods`` and ``objects`` are inputs to call its hooks on besides the samples."""
    problems: list[str] = []
    name = getattr(cls, "name", None)
    try:
        check_plugin_class(cls, f"{cls.__module__}[{name}]")
    except PluginLoadError as exc:
        return [exc.message]
    name = str(name)
    if not _NAME.match(name):
        problems.append(f"name {name!r} should be CamelCase, as upstream plugin names are")
    problems += _entry_point_problems(cls, name)
    built_args, schema_problems = _defaulted_args(cls, args)
    problems += schema_problems
    if schema_problems:
        return problems
    problems += exercise_problems(cls, built_args, nodes=nodes, pods=pods, objects=objects)
    return problems


def contract_hints(cls: type) -> list[str]:
    """Advice that is not a contract breach (upstream accepts these plugins as they are)."""
    hooks = implemented_hooks(cls)
    if any(h in hooks for h in REJECTING_POINTS) and "events_to_register" not in hooks:
        return ["can reject pods but does not implement events_to_register: as upstream, its "
                "rejected pods are retried on every cluster event (correct, but more retries)"]
    return []


def check_plugin(cls: type, *, args: Mapping[str, Any] | None = None, nodes: Iterable[Node] = (),
                 pods: Iterable[Pod] = (), objects: Iterable[Any] = ()) -> None:
    """Raise ContractError listing every broken rule (use it as a one-line test)::

        def test_contract():
            check_plugin(MyPlugin, args={"weight": 2})   # args as a pluginConfig would give them
            check_plugin(MyPlugin, nodes=[make_node("gpu-1", extra_allocatable={"nvidia.com/gpu": "4"})],
                         pods=[make_pod("trainer", requests={"nvidia.com/gpu": "1"})])

    ``nodes``, ``pods`` (those with a ``node_name`` run there, the others are scheduled) and
    ``objects`` (what the lister holds) are added to the sample inputs, replacing a sample of
    the same kind and name: the inputs your plugin is about.

    A Score returning ``1.5`` fails it with ``Score of pod "no-requests" on nodes small, large,
    tainted, cordoned: running Score plugins: plugin "MyPlugin" failed with: plugin "MyPlugin"
    Score returned float 1.5; want int or (int, Status | None) (and 3 more inputs)``."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", DeprecatedShapeWarning)
        problems = contract_problems(cls, args=args, nodes=nodes, pods=pods, objects=objects)
    deprecated = list(dict.fromkeys(str(w.message) for w in caught if issubclass(w.category, DeprecatedShapeWarning)))
    for message in deprecated:
        warnings.warn(message, DeprecatedShapeWarning, stacklevel=2)
    for w in caught:
        if not issubclass(w.category, DeprecatedShapeWarning):
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    if problems:
        raise ContractError(str(getattr(cls, "name", cls)), problems, deprecated)


def _entry_point_problems(cls: type, name: str) -> list[str]:
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        if ep.value.replace(":", ".") == f"{cls.__module__}.{cls.__qualname__}" and ep.name != name:
            return [f"entry point {ep.name!r} names this class, whose name is {name!r}"]
    return []


def _defaulted_args(cls: type, args: Mapping[str, Any] | None) -> tuple[dict[str, Any], list[str]]:
    schema = getattr(cls, "args_schema", None)
    given = dict(args or {})
    if schema is None:
        return given, []
    import jsonschema

    from kschedfw.fwk.args import default_args
    problems: list[str] = []
    try:
        jsonschema.Draft202012Validator.check_schema(schema)
    except jsonschema.SchemaError as exc:
        return given, [f"args_schema is not a valid JSON Schema: {exc.message}"]
    validator = jsonschema.Draft202012Validator(schema)
    for label, candidate in (("{}", {}), ("the given args", given)):
        errors = list(validator.iter_errors(candidate))
        if errors:
            problems.append(f"args_schema rejects {label}: {errors[0].message}")
    defaulted = default_args(getattr(cls, "args_spec", None), schema, given)
    errors = list(validator.iter_errors(defaulted))
    if errors:
        problems.append(f"the schema's own defaults do not validate: {errors[0].message}")
    validate = getattr(cls, "validate_args", None)
    if validate is not None and not problems:
        found = list(validate(defaulted))
        if found:
            problems.append(f"validate_args rejects the defaulted args: {found[0]}")
    return defaulted, problems
