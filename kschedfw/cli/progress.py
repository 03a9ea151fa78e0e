"""A progress bar for long simulations (rich), counting bound pods."""

from __future__ import annotations

from typing import Any, Callable


class BindProgress:
    def __init__(self, total: int) -> None:
        self.total = total

    def __enter__(self) -> Callable[[int, int], None]:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn
        self._progress = Progress("[progress.description]{task.description}", BarColumn(),
                                  MofNCompleteColumn(), TimeElapsedColumn(), transient=True)
        self._progress.__enter__()
        self._task = self._progress.add_task("binding pods", total=self.total)

        def update(bound: int, _: int) -> None:
            if bound % 100 == 0:
                self._progress.update(self._task, completed=bound)
        return update

    def __exit__(self, *exc: Any) -> None:
        self._progress.__exit__(*exc)
