"""`kschedfw validate FILE...`: check KubeSchedulerConfiguration files against upstream's rules.

Exit status: 0 every file is valid (warnings allowed), 1 at least one is invalid (YAML errors
included; every problem is listed), 2 validation could not run (a file cannot be read or is past
the YAML reader's caps, a plugin the config names cannot be loaded, a bad ``--feature-gates``, an
internal error).

As for kube-scheduler, only the first YAML document of a file is its configuration; later
documents are checked too, but their findings are warnings naming the document.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from kschedfw.api.yamlinput import STDIN, STDIN_SOURCE, read_stdin
from kschedfw.cli.gates import add_feature_gates_option, feature_gates_of
from kschedfw.cli.jsonout import print_json

EXIT_OK, EXIT_INVALID, EXIT_ERROR = 0, 1, 2


def add_parser(subparsers: "argparse._SubParsersAction[argparse.ArgumentParser]") -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "validate", help="check KubeSchedulerConfiguration files",
        description="Check KubeSchedulerConfiguration files (kubescheduler.config.k8s.io/v1) the way "
                    "kube-scheduler would: shape, upstream validation, installed plugins and their "
                    "args. Every problem is reported as FILE:LINE:COLUMN: PATH: MESSAGE. "
                    "Exit 0 when all files are valid, 1 when one is invalid, 2 when validation "
                    "could not run.")
    parser.add_argument("files", nargs="+", metavar="FILE", help="configuration file ('-' = stdin)")
    parser.add_argument("--output", "-o", choices=("text", "json"), default="text",
                        help="text (one line per problem, then a summary) or json")
    parser.add_argument("--show-defaults", action="store_true",
                        help="print the fully defaulted configuration of each valid file (YAML on "
                             "stdout; in text mode the problems and summary then go to stderr)")
    add_feature_gates_option(parser)
    parser.set_defaults(func=run)
    return parser


def _read(path: str) -> str:
    if path == STDIN:
        return read_stdin()
    with open(path, encoding="utf-8") as fh:
        return fh.read()


def run(args: argparse.Namespace) -> int:
    from kschedfw.config.diagnostics import UNUSABLE, sort_unique, summary_line
    from kschedfw.config.expand import PLUGIN_LOAD_ERROR
    from kschedfw.config.validate import load_config_text

    gates = feature_gates_of(args, "validate")
    if gates is None:
        return EXIT_ERROR
    try:
        from kschedfw.framework.registry import default_registry
        registry = default_registry()
    except Exception as exc:  # noqa: BLE001
        print(f"kschedfw validate: cannot list installed plugins: {type(exc).__name__}: {exc}",
              file=sys.stderr)
        return EXIT_ERROR

    files: list[dict[str, Any]] = []
    diagnostics = []
    defaults: list[tuple[str, dict[str, Any]]] = []
    for path in args.files:
        name = STDIN_SOURCE if path == STDIN else path
        try:
            text = _read(path)
        except (OSError, UnicodeDecodeError) as exc:
            reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
            print(f"kschedfw validate: {name}: cannot read file: {reason}", file=sys.stderr)
            files.append({"file": name, "status": "error", "error": f"cannot read file: {reason}",
                          "errors": 0, "warnings": 0})
            continue
        config, diags = load_config_text(text, name, registry, gates)
        errors = sum(d.is_error for d in diags)
        entry: dict[str, Any] = {"file": name, "status": "valid" if config else "invalid",
                                 "errors": errors, "warnings": len(diags) - errors}
        if any(d.kind == PLUGIN_LOAD_ERROR for d in diags):
            entry["status"] = "error"
            entry["error"] = "a plugin named in the file cannot be loaded"
        elif any(d.kind == UNUSABLE for d in diags):
            entry["status"] = "error"
            entry["error"] = "the file cannot be read safely"
        if config is not None and args.show_defaults:
            defaults.append((name, config.document))
            if args.output == "json":
                entry["defaults"] = config.document
        files.append(entry)
        diagnostics.extend(diags)

    diagnostics = sort_unique(diagnostics)
    n_errors = sum(d.is_error for d in diagnostics)
    n_warnings = len(diagnostics) - n_errors
    valid = sum(f["status"] == "valid" for f in files)
    invalid = sum(f["status"] == "invalid" for f in files)
    failed = sum(f["status"] == "error" for f in files)
    code = EXIT_ERROR if failed else EXIT_INVALID if invalid else EXIT_OK

    if args.output == "json":
        payload = {
            "status": "error" if failed else "invalid" if invalid else "ok",
            "files": files,
            "diagnostics": [d.to_json() for d in diagnostics],
            "summary": {"files": len(files), "valid": valid, "invalid": invalid, "error": failed,
                        "errors": n_errors, "warnings": n_warnings},
        }
        print_json(payload)
        return code

    report = sys.stderr if args.show_defaults else sys.stdout
    for d in diagnostics:
        print(d.render(), file=report)
    print(summary_line(len(files), valid, invalid, n_errors, n_warnings, not_checked=failed),
          file=report)
    if defaults:
        import yaml
        out = []
        for name, document in defaults:
            text = yaml.safe_dump(document, sort_keys=False, default_flow_style=False)
            out.append((f"# {name}\n" if len(defaults) > 1 else "") + text)
        sys.stdout.write("---\n".join(out))
    return code
