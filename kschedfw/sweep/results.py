"""The results file of a sweep: a CSV with one row per run, each on one line, appended to as
runs finish, so a sweep that stops resumes from what it holds."""

from __future__ import annotations

import csv
import io
import re
from typing import Iterable, Sequence

_LINE_BREAKS = re.compile(r"[\r\n]+")


class ResultsFileError(ValueError):
    """The file exists but was not written with these columns."""


class ResultsFile:
    def __init__(self, path: str, columns: Sequence[str]) -> None:
        self.path = path
        self.columns = list(columns)
        self._repaired = False

    def read(self) -> list[dict[str, str]]:
        """The rows already written (none when there is no file). A last line without its
        newline is a row an interrupted sweep was writing: it is left out, so its run is done
        again."""
        try:
            with open(self.path, newline="", encoding="utf-8") as fh:
                lines = fh.read().split("\n")[:-1]  # what follows the last newline is cut short
        except FileNotFoundError:
            return []
        if not lines:
            return []
        header = _parse(lines[0])
        if header != self.columns:
            raise ResultsFileError(f"{self.path} has other columns than this sweep writes "
                                   f"({', '.join(header[:8])}, ...)")
        rows = (_parse(line) for line in lines[1:])
        return [dict(zip(header, row)) for row in rows if len(row) == len(header)]

    def append(self, rows: Iterable[dict[str, str]]) -> None:
        """Append ``rows``, each one line written and flushed whole (the header first in a new
        file; a row cut short at the end is dropped first)."""
        if not self._repaired:
            self._drop_row_cut_short()
        with open(self.path, "ab") as fh:
            if fh.tell() == 0:
                fh.write(_line(self.columns))
            for row in rows:
                fh.write(_line([row[c] for c in self.columns]))
                fh.flush()

    def _drop_row_cut_short(self) -> None:
        try:
            with open(self.path, "r+b") as fh:
                content = fh.read()
                if content and not content.endswith(b"\n"):
                    fh.truncate(content.rfind(b"\n") + 1)
        except FileNotFoundError:
            pass
        self._repaired = True


def _line(values: Sequence[str]) -> bytes:
    """One CSV line: line breaks inside a value become spaces, so every row is one line."""
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerow([_LINE_BREAKS.sub(" ", v) for v in values])
    return out.getvalue().encode("utf-8")


def _parse(line: str) -> list[str]:
    return next(csv.reader([line]), [])
