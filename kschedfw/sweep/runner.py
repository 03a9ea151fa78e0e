"""run_all: every item not done yet through an executor, with a progress bar."""

from __future__ import annotations

import contextlib
import sys
from typing import Any, Callable, Collection, Hashable, Iterable

from kschedfw.sweep.executors import Executor, executor as default_executor


def run_all(fn: Callable[[Any], Any], items: Iterable[Any], *, key: Callable[[Any], Hashable],
            done: Collection[Hashable] = (), executor: Executor | None = None,
            on_result: Callable[[Any, Any], None] | None = None, progress: str = "auto",
            description: str = "runs") -> int:
    """Run ``fn`` on every item whose ``key(item)`` is not in ``done``, calling
    ``on_result(item, result)`` here, in the parent, as each finishes (write it down there, and
    an interrupted sweep resumes where it stopped). ``executor``: None for local processes, one
    per core. ``progress``: a bar on stderr, ``"auto"`` (on a terminal), ``"always"`` or
    ``"never"``. Returns how many items ran."""
    finished = set(done)
    todo = [item for item in items if key(item) not in finished]
    if not todo:
        return 0
    with contextlib.ExitStack() as stack:
        if executor is None:
            executor = stack.enter_context(default_executor())
        advance = stack.enter_context(progress_bar(progress, len(todo), description))
        for item, result in executor.map_unordered(fn, todo):
            if on_result is not None:
                on_result(item, result)
            advance()
    return len(todo)


@contextlib.contextmanager
def progress_bar(mode: str, total: int, description: str) -> Any:
    """A callable that advances a rich progress bar on stderr by one (does nothing without one)."""
    if mode not in ("auto", "always", "never"):
        raise ValueError(f"progress: {mode!r} is not auto, always or never")
    if mode == "never" or (mode == "auto" and not sys.stderr.isatty()):
        yield lambda: None
        return
    from rich.console import Console
    from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn,
                               TimeRemainingColumn)
    # the console keeps this stderr: a run in this process may redirect sys.stderr meanwhile
    console = Console(file=sys.stderr, force_terminal=mode == "always" or None)
    with Progress("[progress.description]{task.description}", BarColumn(), MofNCompleteColumn(),
                  TimeElapsedColumn(), TimeRemainingColumn(), console=console) as bar:
        task = bar.add_task(description, total=total)
        yield lambda: bar.advance(task)
