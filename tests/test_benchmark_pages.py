"""The benchmark pages are a user's manual: every command they give names a script that exists
and only options that script accepts (checked against its ``--help``), and they give current
figures with the machine and the date rather than the history of the work (no "History" section,
no column or figure tied to a commit: that belongs in git and in CHANGELOG.md)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = ["benchmarks/README.md", "benchmarks/kube_apiserver.md", "contrib-plugins/kschedfw-gpushare/README.md"]
GPUSHARE = ROOT / "contrib-plugins" / "kschedfw-gpushare"
# ``python benchmarks/NAME.py ARGS`` or ``kschedfw-gpushare SUB ARGS``, up to the end of the command
# (a backtick, a comment or the line's end; a trailing backslash continues it).
COMMAND = re.compile(r"(?:python (benchmarks/[\w/]+\.py)|(kschedfw-gpushare (?:reproduce|compare)))"
                     r"((?:[^`#\n\\]|\\\n)*)")
GPUSHARE_CLI = ["-c", "import sys; from kschedfw_gpushare.experiment.reproduce import main; sys.exit(main())"]
OPTION = re.compile(r"(?<![\w-])(--[a-z][a-z-]*)")
COMMIT = re.compile(r"`[0-9a-f]{7,40}`")


def script_path(page: str, script: str) -> Path:
    """A page's ``benchmarks/...`` is kschedfw's, or the contrib package's own for its README."""
    own = (ROOT / page).parent / script
    return own if page.startswith("contrib-plugins/") and own.exists() else ROOT / script


@cache
def accepted_options(program: tuple[str, ...]) -> frozenset[str]:
    """The options ``program --help`` lists, its sub-commands' included."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(GPUSHARE / "src")])}

    def helptext(*args: str) -> str:
        done = subprocess.run([sys.executable, *program, *args, "--help"], capture_output=True, text=True,
                              env=env, cwd=ROOT, timeout=120)
        assert done.returncode == 0, done.stderr
        return done.stdout

    text = helptext()
    subcommands = re.search(r"\{([\w,-]+)\}", text.split("\n\n")[0])
    if subcommands:
        text += "".join(helptext(sub) for sub in subcommands.group(1).split(","))
    return frozenset(OPTION.findall(text))


def commands() -> list[tuple[str, str, str]]:
    found = []
    for page in PAGES:
        for script, cli, args in COMMAND.findall((ROOT / page).read_text(encoding="utf-8")):
            found.append((page, script or cli, args))
    return found


def test_the_pages_give_commands() -> None:
    """Guards the test below against passing on no command at all."""
    pages = {page for page, _, _ in commands()}
    assert pages == set(PAGES), pages
    assert len(commands()) >= 20


@pytest.mark.parametrize("page,script,args", commands())
def test_every_command_names_a_script_and_options_it_accepts(page: str, script: str, args: str) -> None:
    if script.startswith("kschedfw-gpushare "):
        program = (*GPUSHARE_CLI, script.split()[1])
    else:
        path = script_path(page, script)
        assert path.is_file(), f"{page}: {script} does not exist"
        program = (str(path),)
    options = set(OPTION.findall(args))
    unknown = options - accepted_options(program) if options else set()
    assert not unknown, f"{page}: {script} does not accept {sorted(unknown)}"


@pytest.mark.parametrize("page", PAGES)
def test_a_page_has_no_history_and_no_commit_columns(page: str) -> None:
    text = (ROOT / page).read_text(encoding="utf-8")
    assert not re.search(r"^#+ (History|Earlier)", text, re.M), f"{page}: history belongs in git and CHANGELOG.md"
    assert not COMMIT.findall(text), f"{page}: figures tied to commits {COMMIT.findall(text)}"
