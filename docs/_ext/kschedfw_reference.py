"""The reference pages generated from the code: the hooks (from the extension-point table and the
hookspecs' docstrings), the configuration (from its JSON Schema) and the in-tree plugins' args
(from each plugin's ArgsSpec). Plain functions returning reStructuredText, so a test can check
what a page holds without building the site; :func:`setup` writes them where the pages include
them when Sphinx starts."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterator

GENERATED = Path(__file__).resolve().parents[1] / "_generated"
HOOKSPECS = "kschedfw.fwk.hookspecs"

_INT32 = (-(2 ** 31), 2 ** 31 - 1)
_INT64 = (-(2 ** 63), 2 ** 63 - 1)


def text(value: str) -> str:
    """``value`` as plain reST text: markup characters escaped, lines joined."""
    for char in ("\\", "*", "`", "|", "_"):
        value = value.replace(char, "\\" + char)
    return " ".join(value.split())


def literal(value: Any) -> str:
    shown = value if isinstance(value, str) else json.dumps(value)
    return f"``{shown}``" if shown else ""


def heading(title: str, underline: str) -> list[str]:
    return [title, underline * len(title), ""]


def list_table(header: tuple[str, ...], rows: list[tuple[str, ...]], widths: str) -> list[str]:
    out = [".. list-table::", "   :header-rows: 1", f"   :widths: {widths}", ""]
    for row in (header, *rows):
        out.append("   * - " + (row[0] or " "))
        out.extend(f"     - {cell or ' '}" for cell in row[1:])
    return out + [""]


# --------------------------------------------------------------------------- hooks

def hook_reference() -> str:
    """Every hook of the extension-point table, in the order a pod meets them: a summary table,
    then one section per hook with its row and its hookspec's docstring; then the optional
    members a plugin may define beside its hooks."""
    from kschedfw.fwk.extension_points import HOOKS, OPTIONAL_METHODS

    out = heading("Summary", "-")
    out += list_table(("Hook", "Configured under", "Upstream interface", "Returns"),
                      [(f":ref:`{h.name} <hook-{h.name}>`", literal(f"plugins.{h.field}") if h.field else "",
                        literal(h.interface), literal(h.result)) for h in HOOKS], "20 20 25 35")
    for h in HOOKS:
        out += [f".. _hook-{h.name}:", ""] + heading(h.name, "-")
        fields = [("Upstream", literal(h.interface)), ("Returns", literal(h.result)),
                  ("Configured under", literal(f"plugins.{h.field}") if h.field else
                   "the point of the plugin that implements it")]
        if h.own:
            fields.append(("Extension point", text(h.doc)))
        if h.label:
            fields.append(("Metric label", f"``extension_point={h.label}``"))
        if h.weighted:
            fields.append(("Weighted", "the profile's ``weight`` multiplies its scores"))
        if h.only:
            fields.append(("Called for", f"the plugin named {h.only} only; another plugin implementing it "
                                         "has no effect"))
        out += [f":{name}: {value}" for name, value in fields] + [""]
        out += [f".. autofunction:: {HOOKSPECS}.{h.name}", "   :no-index:", ""]
    out += [".. _optional-members:", ""] + heading("Optional members", "-")
    out += ["Plain methods and attributes (not hookimpls) the runtime looks up by name. A plugin member "
            "named almost like one of these, or like a hook, is refused at load with \"did you mean\".", ""]
    out += list_table(("Member", "Goes with"),
                      [(literal(name), f":ref:`{hook} <hook-{hook}>`" if hook else "any hook")
                       for name, hook in OPTIONAL_METHODS.items()], "40 60")
    for protocol in ("FilterVerdictKey", "WholeListFilter", "WholeListScore", "WholeListNormalizeScore"):
        out += [f".. autoclass:: {HOOKSPECS}.{protocol}", "   :members:", "   :undoc-members:",
                "   :exclude-members: __init__",
                "   :no-index:", ""]
    return "\n".join(out)


# --------------------------------------------------------------------------- schemas

def type_of(schema: dict[str, Any]) -> str:
    """A field's type as a reader of YAML thinks of it (int32, duration, list of string)."""
    if "const" in schema:
        return literal(schema["const"])
    if "enum" in schema:
        return "one of " + ", ".join(literal(v) for v in schema["enum"])
    if "anyOf" in schema:
        return " or ".join(type_of(s) for s in schema["anyOf"])
    kind = schema.get("type", "any")
    if kind == "integer":
        bounds = (schema.get("minimum"), schema.get("maximum"))
        return "int32" if bounds == _INT32 else "int64" if bounds == _INT64 else "integer"
    if kind == "string" and "pattern" in schema and "duration" in schema.get("description", "").lower() + \
            schema.get("x-pattern-message", "").lower():
        return "duration"
    if kind == "array":
        return "list of " + type_of(schema.get("items", {}))
    return str(kind)


def _describe(schema: dict[str, Any]) -> str:
    parts = [text(schema.get("description", ""))]
    if schema.get("examples"):
        parts.append("E.g. " + ", ".join(literal(v) for v in schema["examples"]) + ".")
    return " ".join(p for p in parts if p)


def _objects(schema: dict[str, Any], path: str) -> Iterator[tuple[str, dict[str, Any]]]:
    """``(path, schema)`` of ``schema`` and each object nested in it (through lists too), parents first."""
    if schema.get("type") == "array":
        yield from _objects(schema.get("items", {}), path + "[]")
        return
    if not isinstance(schema.get("properties"), dict):
        return
    yield path, schema
    for name, sub in schema["properties"].items():
        yield from _objects(sub, f"{path}.{name}" if path else name)


def _shape(schema: dict[str, Any]) -> str:
    return json.dumps({k: v for k, v in schema.items() if k != "description"}, sort_keys=True)


def _common_path(paths: list[str]) -> str:
    """The paths of objects of one shape as one: ``*`` where they differ (``plugins.*``)."""
    parts = [p.split(".") for p in paths]
    if len({len(p) for p in parts}) != 1:
        return paths[0]
    return ".".join(col[0] if len(set(col)) == 1 else "*" + ("[]" if col[0].endswith("[]") else "")
                    for col in zip(*parts))


def schema_reference(schema: dict[str, Any], root: str, anchor: str, underline: str) -> list[str]:
    """One table per object of ``schema`` (``root`` first, then each nested object by its path):
    field, type, default and description. An object of the same shape as one shown before it
    (every PluginSet of ``plugins``) links to that one instead of repeating it."""
    paths: dict[str, list[str]] = {}  # shape -> the paths of the objects of that shape
    first: dict[str, dict[str, Any]] = {}
    for path, obj in _objects(schema, ""):
        paths.setdefault(_shape(obj), []).append(path)
        first.setdefault(_shape(obj), obj)
    labels = {shape: f"{anchor}-{where[0].replace('[]', '').replace('.', '-')}" if where[0] else anchor
              for shape, where in paths.items()}
    out: list[str] = []
    for shape, obj in first.items():
        label, where = labels[shape], _common_path(paths[shape])
        title = f"{root}.{where}" if where else root
        out += [f".. _{label}:", ""] + heading(title, underline)
        if obj.get("description"):
            out += [text(obj["description"]), ""]
        rows = []
        for name, sub in obj["properties"].items():
            kind = type_of(sub)
            nested = sub.get("items", {}) if sub.get("type") == "array" else sub
            if isinstance(nested.get("properties"), dict):
                kind = f":ref:`{kind} <{labels[_shape(nested)]}>`"
            rows.append((literal(name), kind, literal(sub["default"]) if "default" in sub else "",
                         _describe(sub)))
        out += list_table(("Field", "Type", "Default", "Description"), rows, "20 20 20 40")
        if obj.get("required"):
            out += ["Required: " + ", ".join(literal(r) for r in obj["required"]) + ".", ""]
    return out


def config_reference() -> str:
    """KubeSchedulerConfiguration, field by field, from :data:`kschedfw.config.schema.CONFIG_SCHEMA`."""
    from kschedfw.config.schema import CONFIG_SCHEMA
    return "\n".join(schema_reference(CONFIG_SCHEMA, "KubeSchedulerConfiguration", "config", "-"))


def in_tree_plugins() -> list[tuple[str, type]]:
    """``(name, class)`` of each plugin kschedfw itself ships, by name."""
    from kschedfw.framework.registry import Registry
    registry = Registry.discover(warn_without_effect=False)
    return [(ref.name, registry.load(ref.name)) for ref in registry.refs() if ref.builtin]


def plugin_args_reference() -> str:
    """Each in-tree plugin that takes args: its ``<name>Args`` fields and its defaults, as its
    ArgsSpec gives them (upstream's v1 defaulting, not only the schema's ``default``\\ s)."""
    from kschedfw.config.schema import V1_ARGS_PLUGINS, API_VERSION
    out: list[str] = []
    takes_none = []
    for name, cls in in_tree_plugins():
        spec = getattr(cls, "args_spec", None)
        schema = spec.schema if spec is not None else getattr(cls, "args_schema", None)
        if not schema:
            takes_none.append(name)
            continue
        out += schema_reference(schema, f"{name}Args", f"args-{name}", "-")
        defaults = spec.default({}) if spec is not None else None
        if defaults is not None:
            version = API_VERSION if name in V1_ARGS_PLUGINS else "kschedfw"
            out += [f"Defaults of ``{name}Args`` ({text(version)}), as ``pluginConfig`` args:", "",
                    ".. code-block:: json", ""]
            out += ["   " + line for line in json.dumps(defaults, indent=2, sort_keys=True).splitlines()] + [""]
    if takes_none:
        out += heading("Plugins without args", "-")
        out += [", ".join(literal(n) for n in takes_none) + ".", ""]
    return "\n".join(out)


PAGES = {"hooks.rst": hook_reference, "config.rst": config_reference, "plugin-args.rst": plugin_args_reference}


def write_pages(target: Path = GENERATED) -> None:
    """Write each generated page where the reference pages include it (only when it changed,
    so Sphinx rebuilds only what did)."""
    target.mkdir(exist_ok=True)
    for name, make in PAGES.items():
        path = target / name
        content = make() + "\n"
        if not path.exists() or path.read_text() != content:
            path.write_text(content)


def setup(app: Any) -> dict[str, Any]:
    app.connect("builder-inited", lambda _app: write_pages())
    return {"parallel_read_safe": True, "parallel_write_safe": True}
