"""The repository's text says what the code does, never how the work on it was organised: no
file names a work session or a tracker number (an issue or task number of this project, also
bare: a ``#`` and digits in brackets or after a space). A test states the rule it checks; a
benchmark page gives the machine and the date of its figures. Citations of other projects
(``kubernetes/kubernetes#12345``), numbered items of upstream's messages (``constraint #0``,
``selector #0``), hex colours and ``#`` comments are not matched."""

from __future__ import annotations

import os
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SUFFIXES = (".py", ".md", ".rst", ".toml", ".ini", ".yaml", ".yml", ".cfg")
# Caches, build output and installed environments: not the project's text.
SKIPPED_DIRS = {".git", ".mypy_cache", ".pytest_cache", ".ruff_cache", ".tox", ".venv", "venv",
                "__pycache__", "build", "dist", "node_modules"}
# A work session, a tracker number in any of its forms (the samples of the test below), or the
# occasion a figure was measured at: a benchmark page gives the machine and the date instead.
# A bare ``#N`` counts unless it is glued to what precedes it (``owner/repo#N``, ``&#N;``, a
# colour after ``:``, ``=`` or a quote) or numbers an item of upstream's messages.
BARE_NUMBER = (r"\(#\d+\)"
               r"|(?<![\w/&!$%#:='\"-])(?<!color: )(?<!constraint )(?<!selector )#\d+\b(?![\w-])")
ORGANISATION = re.compile(r"\bsessions? \d|\bissue #\d|\btask #\d|\(issue \d|\bsee issue \d|\bbugs? #?\d"
                          r"|\bsittings?\b|" + BARE_NUMBER, re.IGNORECASE)


def text_files() -> list[Path]:
    found = []
    for folder, dirs, files in os.walk(ROOT):
        dirs[:] = sorted(d for d in dirs if d not in SKIPPED_DIRS and not d.endswith(".egg-info"))
        found += [Path(folder, f) for f in sorted(files) if f.endswith(SUFFIXES)]
    return found


def test_no_file_mentions_a_work_session_or_a_tracker_number() -> None:
    hits = []
    for path in text_files():
        relative = path.relative_to(ROOT).as_posix()
        for number, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
            if ORGANISATION.search(line):
                hits.append(f"{relative}:{number}: {line.strip()}")
    assert not hits, "state the rule or name the commit instead:\n" + "\n".join(hits)


def test_the_scan_sees_the_repository_and_the_pattern_matches() -> None:
    """Guards the test above against passing vacuously: it reads this file and the README, and the
    pattern finds each form it is meant to find (built here, so this file stays clean)."""
    relative = {p.relative_to(ROOT).as_posix() for p in text_files()}
    assert {"README.md", "pyproject.toml", "tests/test_repo_text.py"} <= relative
    for sample in ("Session " + "7's figures", "(issue " + "#8)", "see task " + "#3", "sessions " + "6-7",
                   "(issue " + "16)", "see issue " + "12", "bug " + "123", "in one sit" + "ting",
                   "figures (" + "#12)", "#" + "12 asked for it", "see " + "#4.", "fixes " + "#7",
                   "a pod " + "#2"):
        assert ORGANISATION.search(sample), sample
    for citation in ("kubernetes/kubernetes#12345", "upstream issue 109437", "scope=\"session\"",
                     "constraint #0 (matchAttribute", "selector #0: CEL runtime error", "color: #333;",
                     "fill=\"#000\"", "background:#123456", "# 12 pods on 3 nodes", "&#123;", "%$!#5",
                     "see [the table](#every-workload)", "#1e90ff"):
        assert not ORGANISATION.search(citation), citation
