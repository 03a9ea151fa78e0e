"""The benchmark pages are a user's manual: every command they give names a script that exists
and only options that script accepts (checked against its ``--help``), and they give current
figures with the machine and the date rather than the history of the work (no "History" section,
no heading dated like a lab notebook's entry, no before/after table, no column or figure tied to a
commit, no "was at X before Y was fixed": that belongs in git and in CHANGELOG.md)."""

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
MONTHS = "January|February|March|April|May|June|July|August|September|October|November|December"
# A heading naming a day (``#### 3 December 2026, under load``, ``### 2026-12-03``): the date a
# figure was measured goes beside the figure, not into the page's structure.
DATED_HEADING = re.compile(rf"^#+ .*(?:\b\d{{1,2}} (?:{MONTHS})\b|\b(?:{MONTHS}) \d{{1,2}}\b|\b\d{{4}}-\d\d-\d\d\b)",
                           re.MULTILINE | re.IGNORECASE)
# A table comparing two trees: a header cell about "before"/"after", or a row labelled so.
BEFORE_AFTER_HEADER = re.compile(r"\b(?:before|after)\b", re.IGNORECASE)
BEFORE_AFTER_LABEL = re.compile(r"(?:before|after)(?: \(.*\))?", re.IGNORECASE)
# The work's history told on the page instead of the current state.
NARRATION = re.compile(r"\bbefore and after\b|\bbranch base\b|\bearlier figures\b|\b(?:was|were) fixed\b"
                       r"|\bpreviously\b|\bwas at [\d.,]+ |\bused to (?:be|take|give|run|schedule|hold)\b",
                       re.IGNORECASE)


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


def tables(text: str) -> list[tuple[list[str], list[list[str]]]]:
    """Each Markdown table of ``text`` as its header cells and its rows' cells."""
    def cells(line: str) -> list[str]:
        return [cell.strip() for cell in line.strip().strip("|").split("|")]

    lines = text.splitlines()
    found = []
    for i, line in enumerate(lines[:-1]):
        if line.startswith("|") and re.fullmatch(r"\|(?:\s*:?-{3,}:?\s*\|)+", lines[i + 1].strip()):
            rows = []
            for row in lines[i + 2:]:
                if not row.startswith("|"):
                    break
                rows.append(cells(row))
            found.append((cells(line), rows))
    return found


def lab_notebook(text: str) -> list[str]:
    """What makes a page read as the history of the work rather than a manual."""
    problems = [f"dated heading {h.group(0)!r}" for h in DATED_HEADING.finditer(text)]
    for header, rows in tables(text):
        problems += [f"column {c!r}" for c in header if BEFORE_AFTER_HEADER.search(c)]
        problems += [f"row {row[0]!r}" for row in rows if row and BEFORE_AFTER_LABEL.fullmatch(row[0])]
    problems += [f"narration {n.group(0)!r}" for n in NARRATION.finditer(text)]
    return problems


@pytest.mark.parametrize("page", PAGES)
def test_a_page_gives_the_current_state_not_a_lab_notebook(page: str) -> None:
    text = (ROOT / page).read_text(encoding="utf-8")
    assert tables(text), f"{page}: no table found (the check below would pass vacuously)"
    problems = lab_notebook(text)
    assert not problems, f"{page}: give the current figures, move the history to CHANGELOG.md: {problems}"


def test_the_lab_notebook_rules_find_what_they_are_meant_to() -> None:
    """Guards the test above against passing vacuously, on the forms a lab notebook takes, and
    against refusing what a manual legitimately says."""
    notebook = """#### 3 December 2026, under load

| tree | no pods | 3000 pods |
|---|---|---|
| before | 8.45 G | 38.45 G |
| after | 8.43 G | 31.25 G |

| Workload | before: Ir | after | change |
|---|---|---|---|
| a | 1 | 2 | +1% |

It was at 23.4 pods/s before the cache. Two hot spots were fixed; against the branch base.
"""
    problems = lab_notebook(notebook)
    assert len([p for p in problems if p.startswith("dated heading")]) == 1, problems
    assert len([p for p in problems if p.startswith("column")]) == 2, problems
    assert len([p for p in problems if p.startswith("row")]) == 2, problems
    assert len([p for p in problems if p.startswith("narration")]) == 3, problems
    manual = """## Throughput: 2000 pending pods, 500 nodes

Measured on 3 December 2026 at load 11. The node chosen last must no longer fit the pod.

| scheduler | seconds to the last bind | `F_before - F_after` |
|---|---|---|
| kube-scheduler | 992 (first bind after 255) | 1 |
"""
    assert lab_notebook(manual) == []
