"""`kschedfw` command line: validate | schema | plugins | simulate | run."""

from __future__ import annotations

import argparse
import importlib
import os
import sys

_COMMANDS = ("validate", "schema", "plugins", "simulate", "run")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="kschedfw",
        description="The Kubernetes scheduler framework for Python plugins.")
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in _COMMANDS:
        importlib.import_module(f"kschedfw.cli.{name}").add_parser(subparsers)
    return parser


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version
    try:
        return version("kschedfw")
    except PackageNotFoundError:
        return "unknown"


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # output piped into `head`: stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except Exception as exc:  # never a traceback: exit 2 means "could not run"
        print(f"kschedfw {args.command}: internal error: {type(exc).__name__}: {exc}", file=sys.stderr)
        if "--debug" in (argv or sys.argv):
            raise
        return 2


if __name__ == "__main__":
    sys.exit(main())
