"""A progress bar for long simulations (rich), counting bound pods, on stderr: stdout holds the
report, and a bar there would be mixed into it, or vanish exactly when stdout is redirected."""

from __future__ import annotations

from typing import Any, Callable


class BindProgress:
    def __init__(self, total: int, description: str = "binding pods") -> None:
        self.total = total
        self.description = description

    def __enter__(self) -> Callable[[int, int], None]:
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn
        # forced: `--progress always` asks for the bar even when stderr is not a terminal
        self._progress = Progress("[progress.description]{task.description}", BarColumn(),
                                  MofNCompleteColumn(), TimeElapsedColumn(), transient=True,
                                  console=Console(stderr=True, force_terminal=True))
        self._progress.__enter__()
        self._task = self._progress.add_task(self.description, total=self.total)

        def update(bound: int, _: int) -> None:
            if bound % 100 == 0:
                self._progress.update(self._task, completed=bound)
        return update

    def __exit__(self, *exc: Any) -> None:
        self._progress.__exit__(*exc)
