"""`kschedfw plugins`: what is installed, from which distribution, implementing which points."""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kschedfw.framework.registry import Registry


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser("plugins", help="list installed scheduler plugins",
                                   description="List installed plugins: name, distribution, version, "
                                               "extension points and args.")
    parser.add_argument("--output", "-o", choices=("table", "json"), default="table")
    parser.add_argument("--check", action="store_true",
                        help="exit 1 if any plugin fails to load; warn about every plugin implementing "
                             "a hook this version does not call yet")
    parser.set_defaults(func=run)


def describe_plugins(registry: "Registry | None" = None) -> list[dict[str, Any]]:
    """One row per installed plugin (and per discovery problem), as ``--output json`` prints them."""
    from kschedfw.framework.registry import Registry, hooks_not_called_yet, implemented_hooks

    if registry is None:  # this command reports hooks not called yet itself, so loading stays quiet
        registry = Registry.discover(warn_not_called_yet=False)
    rows = []
    for ref in registry.refs():
        row: dict[str, Any] = {"name": ref.name, "distribution": ref.distribution, "version": ref.version,
                               "entry_point": ref.value, "builtin": ref.builtin}
        error = registry.load_error(ref.name)
        if error is None:
            cls = registry.load(ref.name)
            schema = getattr(cls, "args_schema", None) or {}
            row["extension_points"] = list(implemented_hooks(cls))
            row["hooks_not_called_yet"] = list(hooks_not_called_yet(cls))
            row["args"] = {k: v.get("default") for k, v in (schema.get("properties") or {}).items()}
            row["status"] = "ok"
        else:
            row["extension_points"] = []
            row["hooks_not_called_yet"] = []
            row["args"] = {}
            row["status"] = "error"
            row["error"] = error
        rows.append(row)
    for problem in registry.problems:
        rows.append({"name": problem.display, "status": "error", "error": problem.message,
                     "distribution": problem.display.split("[")[0], "version": "", "extension_points": [],
                     "hooks_not_called_yet": [], "args": {}, "builtin": False, "entry_point": ""})
    return rows


def hook_warnings(rows: list[dict[str, Any]], *, include_builtin: bool) -> list[str]:
    """One warning per plugin implementing hooks this version does not call yet.

    Without ``--check`` only plugins from other distributions are named, as at load time (in-tree
    plugins implement ``sign_pod`` ahead of batching); ``--check`` names every one.
    """
    from kschedfw.framework.registry import not_called_yet_message

    return ["warning: " + not_called_yet_message(f"{r['distribution']}[{r['name']}]", r["hooks_not_called_yet"])
            for r in rows if r["hooks_not_called_yet"] and (include_builtin or not r["builtin"])]


def run(args: argparse.Namespace) -> int:
    rows = describe_plugins()
    if args.output == "json":
        print(json.dumps(rows, indent=2))
    else:
        headers = ("NAME", "DISTRIBUTION", "VERSION", "EXTENSION POINTS", "ARGS")
        table = [(r["name"], r["distribution"], r["version"],
                  ",".join(r["extension_points"]) if r["status"] == "ok" else f"ERROR: {r['error']}",
                  ",".join(r["args"])) for r in rows]
        widths = [max(len(str(x)) for x in col) for col in zip(headers, *table)]
        for line in (headers, *table):
            print("  ".join(str(v).ljust(w) for v, w in zip(line, widths)).rstrip())
    for warning in hook_warnings(rows, include_builtin=args.check):
        print(warning, file=sys.stderr)
    failed = any(r["status"] != "ok" for r in rows)
    if failed:
        print("some plugins failed to load (see ERROR above)", file=sys.stderr)
    return 1 if failed and args.check else 0
