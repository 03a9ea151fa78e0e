"""The executor API: every executor maps a top-level function over items, in any order, and
the same item gives the same result on each."""

from __future__ import annotations

import os
import sys

import pytest

from kschedfw.sweep import ExecutorError, executor, run_all
from kschedfw.sweep.matrix import Run, expand
from kschedfw.cli.sweep_run import simulate_row
from tests.sweep import work

LOCAL = [pytest.param({"workers": 1}, id="in-process"), pytest.param({"workers": 2}, id="processes")]


def without_wall_time(row):
    return {k: v for k, v in row.items() if k != "wall_seconds"}


@pytest.mark.parametrize("where", LOCAL)
def test_every_item_once(where):
    with executor(**where) as ex:
        results = list(ex.map_unordered(work.square, range(7)))
    assert sorted(results) == [(n, n * n) for n in range(7)]


def test_one_worker_runs_in_this_process_and_a_pool_does_not():
    with executor(workers=1) as ex:
        assert {pid for _, pid in ex.map_unordered(work.pid, range(3))} == {os.getpid()}
    with executor(workers=2) as ex:
        assert os.getpid() not in {pid for _, pid in ex.map_unordered(work.pid, range(4))}


@pytest.mark.parametrize("where", LOCAL)
def test_an_exception_in_a_run_propagates(where):
    with executor(**where) as ex, pytest.raises(ValueError, match="three is not allowed"):
        list(ex.map_unordered(work.fail_on_three, range(5)))


def test_ray_without_ray_installed_names_the_extra(monkeypatch):
    """kschedfw is installed from a clone (it is not on a package index): the command that adds
    the extra is the path form, run in the clone."""
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` raises ImportError
    with pytest.raises(ExecutorError, match=r"pip install '\.\[ray\]' in a kschedfw clone"):
        with executor(ray="local"):
            pass


def test_workers_must_be_positive():
    with pytest.raises(ExecutorError, match="at least 1"):
        with executor(workers=0):
            pass


def test_run_all_skips_what_is_done_and_reports_each_result_here():
    seen = []
    with executor(workers=1) as ex:
        ran = run_all(work.square, range(6), key=str, done={"1", "4"}, executor=ex,
                      on_result=lambda item, result: seen.append((item, result)), progress="never")
    assert ran == 4
    assert sorted(seen) == [(0, 0), (2, 4), (3, 9), (5, 25)]


def test_run_all_with_everything_done_starts_nothing():
    assert run_all(work.square, [1, 2], key=lambda n: n, done={1, 2}, progress="never") == 0


def test_progress_always_draws_a_bar_on_stderr(capfd):
    run_all(work.square, range(3), key=lambda n: n, executor=_in_process(), progress="always",
            description="squares")
    assert "squares" in capfd.readouterr().err


def _in_process():
    from kschedfw.sweep.executors import InProcess
    return InProcess()


def matrix(cluster):
    return expand([], [cluster], [0, 1, 2, 3], [""]) + expand([], [cluster], [0, 5], [""], once=True) \
        + expand([], [cluster], [2], [""], ties="name")


def rows_on(runs, **where):
    with executor(**where) as ex:
        return {item: without_wall_time(row) for item, row in ex.map_unordered(simulate_row, runs)}


def test_same_run_same_row_in_process_and_in_processes(cluster):
    runs = matrix(cluster)
    in_process = rows_on(runs, workers=1)
    assert rows_on(runs, workers=2) == in_process
    # the rows are worth comparing: the seeds place the pods differently
    assert len({row["nodes"] for run, row in in_process.items() if not run.once and run.ties == "random"}) > 1
    assert {(row["Bound"], row["Pending"], row["error"]) for row in in_process.values()} == {("9", "1", "")}


def test_same_run_same_row_on_ray(cluster, local_ray):
    runs = matrix(cluster)
    assert rows_on(runs, ray="local") == rows_on(runs, workers=1)
    assert local_ray.is_initialized()  # a Ray the caller started is left running


def test_an_exception_in_a_ray_run_propagates(local_ray):
    with executor(ray="local") as ex, pytest.raises(ValueError, match="three is not allowed"):
        list(ex.map_unordered(work.fail_on_three, range(5)))


def test_run_has_a_key_of_its_columns(cluster):
    run = Run("", cluster, 3, "A=true", True, "name")
    assert run.key() == ("", cluster, "3", "A=true", "true", "name")
