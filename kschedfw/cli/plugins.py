"""`kschedfw plugins`: what is installed, from which distribution, implementing which points."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser("plugins", help="list installed scheduler plugins",
                                   description="List installed plugins: name, distribution, version, "
                                               "extension points and args.")
    parser.add_argument("--output", "-o", choices=("table", "json"), default="table")
    parser.add_argument("--check", action="store_true", help="exit 1 if any plugin fails to load")
    parser.set_defaults(func=run)


def describe_plugins() -> list[dict[str, Any]]:
    from kschedfw.framework.registry import default_catalog, implemented_hooks

    registry = default_catalog()
    rows = []
    for ref in registry.refs():
        row: dict[str, Any] = {"name": ref.name, "distribution": ref.distribution, "version": ref.version,
                               "entry_point": ref.value, "builtin": ref.builtin}
        error = registry.load_error(ref.name)
        if error is None:
            cls = registry.load(ref.name)
            schema = getattr(cls, "args_schema", None) or {}
            row["extension_points"] = list(implemented_hooks(cls))
            row["args"] = {k: v.get("default") for k, v in (schema.get("properties") or {}).items()}
            row["status"] = "ok"
        else:
            row["extension_points"] = []
            row["args"] = {}
            row["status"] = "error"
            row["error"] = error
        rows.append(row)
    for problem in registry.problems:
        rows.append({"name": problem.display, "status": "error", "error": problem.message,
                     "distribution": problem.display.split("[")[0], "version": "", "extension_points": [],
                     "args": {}, "builtin": False, "entry_point": ""})
    return rows


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
    failed = any(r["status"] != "ok" for r in rows)
    if failed:
        print("some plugins failed to load (see ERROR above)", file=sys.stderr)
    return 1 if failed and args.check else 0
