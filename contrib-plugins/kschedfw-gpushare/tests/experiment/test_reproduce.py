"""`kschedfw-gpushare reproduce` end to end on a cut-down trace (7 nodes, 50 pods), in-process,
on a local pool and on Ray: the same bytes; resuming redoes nothing."""

import csv
import importlib.util
import os

import pytest

from kschedfw_gpushare.experiment import metric
from kschedfw_gpushare.experiment.reproduce import main

MINI_TRACE = os.path.join(os.path.dirname(__file__), "data", "mini-trace")
ARGS = ["reproduce", "--traces", MINI_TRACE, "--workloads", "default", "--policies", "BestFit,FGD",
        "--seeds", "43,42"]


def reproduce(tmp_path, name, *extra):
    out = tmp_path / name
    assert main([*ARGS, *extra, "-o", str(out)]) == 0
    return out


@pytest.fixture(scope="module")
def in_process(tmp_path_factory):
    return reproduce(tmp_path_factory.mktemp("inproc"), "out.csv", "--workers", "1")


def test_one_row_per_run_sorted_in_the_papers_format(in_process):
    with open(in_process, newline="") as fh:
        rows = list(csv.reader(fh))
    assert tuple(rows[0]) == metric.HEADER
    assert [r[:5] for r in rows[1:]] == [
        ["openb_pod_list_default", "05-BestFit", "1.3", "42", "40"],
        ["openb_pod_list_default", "05-BestFit", "1.3", "43", "40"],
        ["openb_pod_list_default", "06-FGD", "1.3", "42", "40"],
        ["openb_pod_list_default", "06-FGD", "1.3", "43", "40"],
    ]
    for row in rows[1:]:
        values = [float(v) for v in row[5:] if v]
        assert 0 < values[-1] <= 100  # the cluster fills up, never past its capacity
        assert values == sorted(values)  # pods are never deleted: the curve never falls


def test_times_file_has_a_row_per_run(in_process):
    times = in_process.with_name("out.times.csv")
    with open(times, newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert [(r["sc_policy"], r["seed"]) for r in rows] == [("05-BestFit", "42"), ("05-BestFit", "43"),
                                                           ("06-FGD", "42"), ("06-FGD", "43")]
    assert all(int(r["pods"]) > 50 and float(r["seconds"]) > 0 for r in rows)  # inflated past the trace


def test_a_local_pool_writes_the_same_bytes(in_process, tmp_path):
    pooled = reproduce(tmp_path, "out.csv", "--workers", "2")
    assert pooled.read_bytes() == in_process.read_bytes()


def test_resuming_redoes_nothing(in_process, tmp_path, capsys):
    copy = tmp_path / "out.csv"
    copy.write_bytes(in_process.read_bytes())
    assert main([*ARGS, "--workers", "1", "-o", str(copy)]) == 0
    assert "4 runs, 4 already in" in capsys.readouterr().err
    assert copy.read_bytes() == in_process.read_bytes()


@pytest.mark.skipif(importlib.util.find_spec("ray") is None, reason="ray is not installed")
def test_ray_writes_the_same_bytes(in_process, tmp_path):
    on_ray = reproduce(tmp_path, "out.csv", "--ray", "local", "--workers", "2")
    assert on_ray.read_bytes() == in_process.read_bytes()
