"""`kschedfw plugins`: what is installed, from which distribution, implementing which points."""

from __future__ import annotations

import argparse
import sys
import textwrap
from typing import TYPE_CHECKING, Any

from kschedfw.cli.jsonout import print_json

if TYPE_CHECKING:
    from kschedfw.framework.registry import Registry


def add_parser(subparsers: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    parser = subparsers.add_parser("plugins", help="list installed scheduler plugins",
                                   description="List installed plugins: name, distribution, version, "
                                               "extension points and args.")
    parser.add_argument("--output", "-o", choices=("table", "json"), default="table")
    parser.add_argument("--check", action="store_true",
                        help="exit 1 if any plugin fails to load; warn about every plugin implementing "
                             "a hook kschedfw calls for another plugin only")
    parser.set_defaults(func=run)


def describe_plugins(registry: "Registry | None" = None) -> list[dict[str, Any]]:
    """One row per installed plugin (and per discovery problem), as ``--output json`` prints them."""
    from kschedfw.framework.registry import Registry, hooks_without_effect, implemented_hooks

    if registry is None:  # this command reports hooks without effect itself, so loading stays quiet
        registry = Registry.discover(warn_without_effect=False)
    rows = []
    for ref in registry.refs():
        row: dict[str, Any] = {"name": ref.name, "distribution": ref.distribution, "version": ref.version,
                               "entry_point": ref.value, "builtin": ref.builtin}
        error = registry.load_error(ref.name)
        if error is None:
            cls = registry.load(ref.name)
            schema = getattr(cls, "args_schema", None) or {}
            row["extension_points"] = list(implemented_hooks(cls))
            row["hooks_without_effect"] = list(hooks_without_effect(cls))
            row["args"] = {k: v.get("default") for k, v in (schema.get("properties") or {}).items()}
            row["status"] = "ok"
        else:
            row["extension_points"] = []
            row["hooks_without_effect"] = []
            row["args"] = {}
            row["status"] = "error"
            row["error"] = error
        rows.append(row)
    for problem in registry.problems:
        rows.append({"name": problem.display, "status": "error", "error": problem.message,
                     "distribution": problem.display.split("[")[0], "version": "", "extension_points": [],
                     "hooks_without_effect": [], "args": {}, "builtin": False, "entry_point": ""})
    return rows


def hook_warnings(rows: list[dict[str, Any]], *, include_builtin: bool) -> list[str]:
    """One warning per plugin implementing hooks the runtime calls for another plugin only.

    Without ``--check`` only plugins from other distributions are named, as at load time;
    ``--check`` names every one.
    """
    from kschedfw.framework.registry import without_effect_message

    return ["warning: " + without_effect_message(f"{r['distribution']}[{r['name']}]", r["hooks_without_effect"])
            for r in rows if r["hooks_without_effect"] and (include_builtin or not r["builtin"])]


#: The table fits a terminal this wide (JSON output carries everything, unwrapped).
TABLE_WIDTH = 100
_COLUMN_CAPS = (32, 24, 10)  # NAME, DISTRIBUTION, VERSION; longer values wrap within the column
_MIN_POINTS_WIDTH = 24


def config_points(hooks: list[str]) -> list[str]:
    """The ``plugins.<point>`` fields a plugin can be enabled under, in upstream's order.

    Helper hooks (``normalize_score``, ``pre_filter_add_pod``, ``events_to_register``...) belong
    to a point or to no point and are left out; ``unreserve`` alone makes a Reserve plugin.
    """
    from kschedfw.fwk.extension_points import HOOK_NAMES, POINTS, hook
    present = {hook(name).enables for name in hooks if name in HOOK_NAMES}
    return [str(p.field) for p in POINTS if p.name in present]


def fold(text: str, width: int) -> list[str]:
    """``text`` in lines of at most ``width``, broken at spaces where it can be and inside a
    word only when the word is longer than a line: nothing is left out, so a load error is read
    whole in the table and not only in ``-o json``."""
    lines: list[str] = []
    for paragraph in text.splitlines() or [""]:
        lines += textwrap.wrap(paragraph, width, break_on_hyphens=False) or [""]
    return lines


def _wrap(items: list[str], width: int, label: str = "") -> list[str]:
    """``label`` then ``items`` joined by ", ", in lines of at most ``width`` that break only
    between items (an item longer than a line is folded onto the next lines)."""
    lines: list[str] = []
    line = label
    for i, item in enumerate(items):
        piece = item + ("," if i < len(items) - 1 else "")
        candidate = f"{line} {piece}" if line else piece
        if line and len(candidate) > width:
            lines.append(line)
            line = piece
        else:
            line = candidate
    lines.append(line)
    return [part for x in lines for part in fold(x, width)]


def render_table(rows: list[dict[str, Any]], width: int = TABLE_WIDTH) -> list[str]:
    """NAME, DISTRIBUTION, VERSION, then the extension points wrapped in what is left of
    ``width``; a plugin's args follow on their own line(s) under the points, a load error in
    place of both. No cell is cut: one longer than its column goes on over the row's next lines."""
    headers = ("NAME", "DISTRIBUTION", "VERSION")
    fixed = [[fold(str(r[key]), cap) for key, cap in zip(("name", "distribution", "version"), _COLUMN_CAPS)]
             for r in rows]
    widths = [max([len(h)] + [len(x) for cells in fixed for x in cells[i]]) for i, h in enumerate(headers)]
    indent = sum(widths) + 2 * len(widths)
    room = max(width - indent, _MIN_POINTS_WIDTH)

    def line(cells: tuple[str, ...], rest: str) -> str:
        return ("  ".join(c.ljust(w) for c, w in zip(cells, widths)) + "  " + rest).rstrip()
    out = [line(headers, "EXTENSION POINTS")]
    for row, cells in zip(rows, fixed):
        if row["status"] == "ok":
            body = _wrap(config_points(row["extension_points"]), room)
            if row["args"]:
                body += _wrap(list(row["args"]), room, label="args:")
        else:
            body = fold(f"ERROR: {row['error']}", room)
        height = max(len(body), *(len(c) for c in cells))
        for i in range(height):
            out.append(line(tuple(c[i] if i < len(c) else "" for c in cells), body[i] if i < len(body) else ""))
    return out


def run(args: argparse.Namespace) -> int:
    rows = describe_plugins()
    if args.output == "json":
        print_json(rows)
    else:
        for text in render_table(rows):
            print(text)
    for warning in hook_warnings(rows, include_builtin=args.check):
        print(warning, file=sys.stderr)
    failed = any(r["status"] != "ok" for r in rows)
    if failed:
        print("some plugins failed to load (see ERROR above)", file=sys.stderr)
    return 1 if failed and args.check else 0
