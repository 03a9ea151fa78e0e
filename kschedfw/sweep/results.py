"""The results file of a sweep: a CSV with one row per run, appended to as runs finish, so a
sweep that stops resumes from what it holds."""

from __future__ import annotations

import csv
import io
import os
from typing import Iterable, Sequence


class ResultsFileError(ValueError):
    """The file exists but was not written with these columns."""


class ResultsFile:
    def __init__(self, path: str, columns: Sequence[str]) -> None:
        self.path = path
        self.columns = list(columns)

    def read(self) -> list[dict[str, str]]:
        """The complete rows already written (none when there is no file; a row cut short by an
        interrupted write is left out, so its run is done again)."""
        try:
            with open(self.path, newline="", encoding="utf-8") as fh:
                reader = csv.reader(fh)
                header = next(reader, None)
                if header is None:
                    return []
                if header != self.columns:
                    raise ResultsFileError(f"{self.path} has other columns than this sweep writes "
                                           f"({', '.join(header[:8])}...)")
                return [dict(zip(header, row)) for row in reader if len(row) == len(header)]
        except FileNotFoundError:
            return []

    def append(self, rows: Iterable[dict[str, str]]) -> None:
        """Append ``rows``, each written and flushed whole (with the header first in a new file)."""
        with open(self.path, "a", newline="", encoding="utf-8") as fh:
            if fh.tell() == 0:
                fh.write(_line(self.columns))
            elif not _ends_with_newline(self.path):
                fh.write("\n")  # after a row cut short: what follows starts a line of its own
            for row in rows:
                fh.write(_line([row[c] for c in self.columns]))
                fh.flush()


def _line(values: Sequence[str]) -> str:
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerow(values)
    return out.getvalue()


def _ends_with_newline(path: str) -> bool:
    with open(path, "rb") as fh:
        fh.seek(-1, os.SEEK_END)
        return fh.read(1) == b"\n"
