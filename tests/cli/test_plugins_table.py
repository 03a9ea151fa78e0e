"""`kschedfw plugins` prints a table that fits 100 columns; JSON keeps every hook."""

from __future__ import annotations

from kschedfw.cli.plugins import config_points, render_table
from kschedfw.testing.cli import run_cli


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
    assert lines[1].startswith("AVeryLongPluginNameThatGoesOnAn…")
    assert any(line.rstrip().endswith("…") and "ERROR: cannot import" in line for line in lines)


def test_points_are_the_config_fields_in_upstream_order():
    # normalize_score and pre_filter_add_pod are part of Score and PreFilter; unreserve alone
    # makes a Reserve plugin (upstream: ReservePlugin has both methods)
    assert config_points(["normalize_score", "score", "pre_filter_add_pod", "pre_filter",
                          "events_to_register", "unreserve", "less"]) == [
        "queueSort", "preFilter", "score", "reserve"]
