"""`kschedfw` command line: validate | schema | plugins | simulate | sweep | diff | run | controlplane | record."""

from __future__ import annotations

import argparse
import contextlib
import importlib
import logging
import os
import sys
from typing import Iterator

_COMMANDS = ("validate", "schema", "plugins", "simulate", "sweep", "diff", "run", "controlplane", "record")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="kschedfw",
        description="The Kubernetes scheduler framework for Python plugins.")
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    parser.add_argument("--debug", action="store_true",
                        help="log at DEBUG (the first traceback of each plugin fault) and show internal errors' tracebacks")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in _COMMANDS:
        importlib.import_module(f"kschedfw.cli.{name}").add_parser(subparsers)
    return parser


@contextlib.contextmanager
def _debug_logging(enabled: bool) -> Iterator[None]:
    """``--debug``: kschedfw's log records down to DEBUG on stderr, tracebacks included (only for
    this call: ``main`` also runs in-process, from tests)."""
    if not enabled:
        yield
        return
    logger = logging.getLogger("kschedfw")
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
    level = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)
    try:
        yield
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)


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
    debug = bool(getattr(args, "debug", False))
    try:
        with _debug_logging(debug):
            return int(args.func(args) or 0)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # output piped into `head`: stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except Exception as exc:  # never a traceback: exit 2 means "could not run"
        print(f"kschedfw {args.command}: internal error: {type(exc).__name__}: {exc}", file=sys.stderr)
        if debug:
            raise
        return 2


if __name__ == "__main__":
    sys.exit(main())
