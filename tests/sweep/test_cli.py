"""`kschedfw sweep` as a user runs it: the matrix, resuming, failed runs, exit statuses."""

from __future__ import annotations

import csv
import json

import pytest

from kschedfw.cli.main import main
from kschedfw.sweep import simulate_run
from kschedfw.sweep.simulate_run import COLUMNS


def sweep(capsys, *args):
    code = main(["sweep", "--progress", "never", *args])
    return code, capsys.readouterr().err


def read_rows(path):
    with open(path, newline="") as fh:
        return list(csv.DictReader(fh))


@pytest.fixture
def counted(monkeypatch):
    """The runs that actually run (in this process: --workers 1)."""
    ran = []

    def simulate_row(run):
        ran.append(run)
        return real(run)

    real = simulate_run.simulate_row
    monkeypatch.setattr(simulate_run, "simulate_row", simulate_row)
    return ran


def test_one_row_per_run_of_the_matrix(capsys, tmp_path, cluster, configs):
    out = tmp_path / "results.csv"
    good, _ = configs
    code, err = sweep(capsys, "--config", good, "--cluster", cluster, "--seeds", "0-2,7",
                      "--feature-gates", "", "--feature-gates", "OpportunisticBatching=false",
                      "--workers", "1", "-o", str(out))
    assert code == 0, err
    rows = read_rows(out)
    assert list(rows[0]) == list(COLUMNS)
    assert sorted((r["seed"], r["feature_gates"]) for r in rows) == sorted(
        (s, g) for s in ("0", "1", "2", "7") for g in ("", "OpportunisticBatching=false"))
    row = rows[0]
    assert (row["config"], row["cluster"], row["once"], row["ties"]) == (good, cluster, "false", "random")
    assert (row["Bound"], row["Pending"], row["rejected"], row["error"]) == ("9", "1", "0", "")
    nodes = json.loads(row["nodes"])
    assert [n["node"] for n in nodes] and sum(len(n["pods"]) for n in nodes) == 9
    assert float(row["wall_seconds"]) > 0


def test_rows_are_what_simulate_reports(capsys, tmp_path, cluster):
    out = tmp_path / "results.csv"
    assert sweep(capsys, "--cluster", cluster, "--seeds", "4", "--once", "--ties", "name",
                 "--workers", "1", "-o", str(out))[0] == 0
    (row,) = read_rows(out)
    assert main(["simulate", cluster, "--seed", "4", "--once", "--ties", "name", "-o", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert json.loads(row["nodes"]) == report["nodes"]
    assert {k: int(row[k]) for k in report["summary"]["total"]} == report["summary"]["total"]
    assert float(row["simulated_seconds"]) == report["simulatedSeconds"]
    assert (row["once"], row["ties"]) == ("true", "name")


def test_a_rerun_runs_only_what_the_file_lacks(capsys, tmp_path, cluster, counted):
    out = tmp_path / "results.csv"
    args = ("--cluster", cluster, "--seeds", "0-3", "--workers", "1", "-o", str(out))
    assert sweep(capsys, *args)[0] == 0
    assert len(counted) == 4
    lines = out.read_text().splitlines(keepends=True)
    dropped = lines.pop(2)  # the header is line 0
    out.write_text("".join(lines))
    counted.clear()
    code, err = sweep(capsys, *args)
    assert code == 0
    assert "3 of 4 runs already in" in err
    assert [run.seed for run in counted] == [int(dropped.split(",")[2])]
    after = out.read_text().splitlines(keepends=True)
    assert after[:4] == lines  # the rows kept are untouched, the new one is appended
    assert len(read_rows(out)) == 4
    counted.clear()
    assert sweep(capsys, *args)[0] == 0 and counted == []


def test_a_row_cut_short_is_run_again(capsys, tmp_path, cluster, counted):
    out = tmp_path / "results.csv"
    args = ("--cluster", cluster, "--seeds", "0,1", "--workers", "1", "-o", str(out))
    assert sweep(capsys, *args)[0] == 0
    text = out.read_text()
    out.write_text(text[:-40])  # the last row, cut in its middle
    counted.clear()
    assert sweep(capsys, *args)[0] == 0
    assert len(counted) == 1
    rows = read_rows(out)  # the cut row is gone: every line is a whole row
    assert sorted(r["seed"] for r in rows) == ["0", "1"] and all(r["wall_seconds"] for r in rows)
    assert out.read_text().startswith(text.split("\n")[0] + "\n" + text.split("\n")[1] + "\n")
    counted.clear()
    assert sweep(capsys, *args)[0] == 0 and counted == []


def test_a_failed_run_gets_a_row_with_its_error_and_exit_status_1(capsys, tmp_path, cluster, configs, counted):
    out = tmp_path / "results.csv"
    good, bad = configs
    args = ("--config", good, "--config", bad, "--cluster", cluster, "--seeds", "0,1", "--workers", "1",
            "-o", str(out))
    code, err = sweep(capsys, *args)
    assert code == 1
    assert "2 of 4 runs failed" in err and "Traceback" not in err
    rows = {(r["config"], r["seed"]): r for r in read_rows(out)}
    failed = rows[(bad, "0")]
    assert "NoSuchPlugin" in failed["error"] and f"{bad} is not a valid configuration" in failed["error"]
    assert failed["Bound"] == "" and failed["nodes"] == ""
    assert rows[(good, "0")]["error"] == "" and rows[(good, "0")]["Bound"] == "9"
    # the failed runs stay in the file: a rerun does not redo them, and still says they failed
    counted.clear()
    code, err = sweep(capsys, *args)
    assert code == 1 and counted == [] and "2 of 4 runs failed" in err


def test_an_unreadable_cluster_is_a_failed_run(capsys, tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("kind: [\n")
    out = tmp_path / "results.csv"
    code, _ = sweep(capsys, "--cluster", str(bad), "--workers", "1", "-o", str(out))
    assert code == 1
    (row,) = read_rows(out)
    assert row["error"].startswith("error: ") and str(bad) in row["error"]


def test_a_plugin_that_fails_gives_a_row_with_its_fault(capsys, tmp_path, cluster, monkeypatch):
    from kschedfw.framework import registry as registry_module
    from tests.sweep.faulty import FailingFilter

    def with_faulty():
        registry = registry_module.Registry.discover()
        registry.add_class(FailingFilter)
        return registry

    monkeypatch.setattr(registry_module, "default_registry", with_faulty)
    config = tmp_path / "faulty.yaml"
    config.write_text("""\
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  plugins:
    filter:
      enabled: [{name: FailingFilter}]
""")
    out = tmp_path / "results.csv"
    code, err = sweep(capsys, "--config", str(config), "--cluster", cluster, "--once", "--workers", "1",
                      "-o", str(out))
    assert code == 1, err
    (row,) = read_rows(out)
    assert "FailingFilter" in row["error"] and "RuntimeError" in row["error"]
    assert row["Pending"] == "10" and row["Bound"] == "0"


@pytest.mark.parametrize("args, message", [
    (("--seeds", "3-1"), "--seeds"),
    (("--feature-gates", "NoSuchGate=true"), "NoSuchGate"),
    (("--config", "missing.yaml"), "--config missing.yaml: no such file or directory"),
    (("--workers", "0"), "--workers must be at least 1"),
])
def test_usage_errors_exit_2_before_any_run(capsys, tmp_path, cluster, counted, args, message):
    out = tmp_path / "results.csv"
    code, err = sweep(capsys, "--cluster", cluster, *args, "-o", str(out))
    assert code == 2 and message in err
    assert counted == [] and not out.exists()


def test_a_file_with_other_columns_is_not_appended_to(capsys, tmp_path, cluster, counted):
    out = tmp_path / "results.csv"
    out.write_text("workload,seed\nx,1\n")
    code, err = sweep(capsys, "--cluster", cluster, "--workers", "1", "-o", str(out))
    assert code == 2 and "other columns" in err
    assert out.read_text() == "workload,seed\nx,1\n" and counted == []


def test_ray_local(capsys, tmp_path, cluster, local_ray):
    ray_out, local_out = tmp_path / "ray.csv", tmp_path / "local.csv"
    args = ("--cluster", cluster, "--seeds", "0-3")
    assert sweep(capsys, *args, "--ray", "local", "-o", str(ray_out))[0] == 0
    assert sweep(capsys, *args, "--workers", "2", "-o", str(local_out))[0] == 0

    def by_seed(path):
        return {r["seed"]: {k: v for k, v in r.items() if k != "wall_seconds"} for r in read_rows(path)}
    assert by_seed(ray_out) == by_seed(local_out)
    assert len(by_seed(ray_out)) == 4
