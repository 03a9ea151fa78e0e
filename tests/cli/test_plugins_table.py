"""`kschedfw plugins` prints a table that fits 100 columns and cuts nothing: a long name or load
error goes on over the row's next lines; JSON keeps every hook."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from kschedfw.cli.plugins import config_points, render_table
from kschedfw.testing.cli import run_cli
from tests.contract.author_plugins import install

ROOT = Path(__file__).resolve().parents[2]


def column_text(lines: list[str], start: int, column: int) -> str:
    """What row ``start`` holds from ``column`` on, its continuation lines included, joined."""
    end = next((i for i in range(start + 1, len(lines)) if not lines[i].startswith(" ")), len(lines))
    return " ".join(line[column:].strip() for line in lines[start:end])


def test_installed_plugins_fit_100_columns():
    result = run_cli("plugins")
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    assert lines[0].split() == ["NAME", "DISTRIBUTION", "VERSION", "EXTENSION", "POINTS"]
    assert max(len(line) for line in lines) <= 100
    # NodeResourcesFit's row, with the lines it wraps onto when installed contrib packages widen
    # the other columns
    start = next(i for i, line in enumerate(lines) if line.startswith("NodeResourcesFit "))
    end = next((i for i in range(start + 1, len(lines)) if not lines[i].startswith(" ")), len(lines))
    row = " ".join(line.strip() for line in lines[start:end])
    assert "preFilter, filter, preScore, score" in row


def test_long_rows_wrap_between_items_and_stay_within_width():
    rows = [{"name": "AVeryLongPluginNameThatGoesOnAndOnForeverAndEver",
             "distribution": "kschedfw-some-really-long-distribution-name", "version": "1.2.3",
             "status": "ok", "args": {"minCandidateNodesPercentage": 1, "another": 2},
             "extension_points": ["pre_enqueue", "events_to_register", "pre_filter", "filter",
                                  "post_filter", "pre_score", "score", "normalize_score",
                                  "unreserve", "permit", "pre_bind", "bind", "post_bind"]},
            {"name": "Broken", "distribution": "x", "version": "0", "status": "error",
             "error": "cannot import module 'x': " + "y" * 200, "args": {},
             "extension_points": []}]
    lines = render_table(rows)
    assert max(len(line) for line in lines) <= 100
    text = " ".join(line.strip() for line in lines[1:])
    for point in ("preEnqueue,", "preFilter,", "postFilter,", "reserve,", "permit,", "postBind"):
        assert point in text
    assert "args:" in text and "minCandidateNodesPercentage," in text
    assert not any("…" in line for line in lines)
    names = [line[:32].strip() for line in lines[1:] if line[:32].strip()]
    assert "".join(names[:2]) == "AVeryLongPluginNameThatGoesOnAndOnForeverAndEver"
    error_row = next(i for i, line in enumerate(lines) if "ERROR:" in line)
    error = column_text(lines, error_row, lines[error_row].index("ERROR:"))
    assert error.replace(" ", "") == ("ERROR: cannot import module 'x': " + "y" * 200).replace(" ", "")


def test_a_load_error_is_shown_whole_in_the_table(tmp_path):
    """The reason a plugin did not load (here the hookimpl argument the hookspec lacks, said
    last) is in the table as in ``-o json``, however wide the terminal claims to be."""
    site = install(tmp_path)
    env = {**os.environ, "COLUMNS": "250",
           "PYTHONPATH": os.pathsep.join([str(site), str(ROOT), os.environ.get("PYTHONPATH", "")])}

    def plugins(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "kschedfw.cli.main", "plugins", *args], env=env,
                              text=True, capture_output=True, timeout=120)
    table = plugins("--check")
    assert table.returncode == 1
    error = next(r["error"] for r in json.loads(plugins("-o", "json").stdout) if r["name"] == "Misspelled")
    assert "can not be found in the hookspec" in error
    lines = table.stdout.splitlines()
    row = next(i for i, line in enumerate(lines) if line.startswith("Misspelled "))
    shown = column_text(lines, row, lines[row].index("ERROR: "))
    assert shown.split() == f"ERROR: {error}".split()


def test_points_are_the_config_fields_in_upstream_order():
    # normalize_score and pre_filter_add_pod are part of Score and PreFilter; unreserve alone
    # makes a Reserve plugin (upstream: ReservePlugin has both methods)
    assert config_points(["normalize_score", "score", "pre_filter_add_pod", "pre_filter",
                          "events_to_register", "unreserve", "less"]) == [
        "queueSort", "preFilter", "score", "reserve"]
