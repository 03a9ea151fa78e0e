"""The executors: in this process, a pool of local processes, or Ray. Each maps a top-level
function over items and yields ``(item, result)`` as results come in, in any order."""

from __future__ import annotations

import contextlib
import multiprocessing
import os
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from typing import Any, Callable, Iterable, Iterator, Protocol

from kschedfw.sweep.errors import ExecutorError


class Executor(Protocol):
    def map_unordered(self, fn: Callable[[Any], Any], items: Iterable[Any]) -> Iterator[tuple[Any, Any]]:
        """``(item, fn(item))`` for every item as each finishes; an exception from ``fn``
        propagates (the items not yet started are cancelled)."""
        ...


class InProcess:
    """``workers=1``: one item after another in this process (debugging, tests)."""

    def map_unordered(self, fn: Callable[[Any], Any], items: Iterable[Any]) -> Iterator[tuple[Any, Any]]:
        for item in items:
            yield item, fn(item)


class LocalProcesses:
    """A pool of worker processes started with "spawn": each imports ``fn``'s module afresh, so
    the run does not depend on what the parent had in memory (and works the same on every OS)."""

    def __init__(self, workers: int) -> None:
        self.workers = workers
        self._pool = ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("spawn"))

    def map_unordered(self, fn: Callable[[Any], Any], items: Iterable[Any]) -> Iterator[tuple[Any, Any]]:
        futures: dict[Future[Any], Any] = {self._pool.submit(fn, item): item for item in items}
        pending = set(futures)
        try:
            while pending:
                finished, pending = wait(pending, return_when=FIRST_COMPLETED)
                for future in finished:
                    yield futures[future], future.result()
        finally:
            for future in pending:
                future.cancel()

    def close(self) -> None:
        self._pool.shutdown(cancel_futures=True)


def default_workers() -> int:
    """One worker per core this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


@contextlib.contextmanager
def executor(ray: str | None = None, workers: int | None = None) -> Iterator[Executor]:
    """The executor for ``ray`` (None: local processes; ``"local"``: a Ray instance started on
    this machine; otherwise the address of a Ray cluster, ``ray://HEAD:10001`` or ``HEAD:6379``)
    and ``workers`` (local processes: one per core when None, in this process when 1; local
    Ray: its CPUs). Whatever it started is stopped on exit."""
    if workers is not None and workers < 1:
        raise ExecutorError(f"workers must be at least 1, not {workers}")
    if ray is not None:
        from kschedfw.sweep.ray_executor import RayExecutor
        ray_executor = RayExecutor(ray, workers)
        try:
            yield ray_executor
        finally:
            ray_executor.close()
        return
    if workers == 1:
        yield InProcess()
        return
    pool = LocalProcesses(workers or default_workers())
    try:
        yield pool
    finally:
        pool.close()
