"""The result files of ``reproduce``: OUT.csv (the paper's ``analysis_allo_discrete.csv``
format) and OUT.times.csv (each run's wall time and pods/s), both sorted by workload, policy and
seed so that their content never depends on the order in which runs finished. Rewritten whole
(through a temporary file) after every run, so an interrupted sweep leaves valid files to resume
from."""

from __future__ import annotations

import csv
import os
from typing import Iterable

TIMES_HEADER = ("workload", "sc_policy", "seed", "seconds", "pods", "bound", "pods_per_second")

Key = tuple[str, str, int]


def times_path(out: str) -> str:
    root, ext = os.path.splitext(out)
    return f"{root}.times{ext or '.csv'}"


def read_rows(path: str, header: tuple[str, ...]) -> dict[Key, list[str]]:
    """The rows of an existing result file by (workload, sc_policy, seed); empty when there is
    no file. A file with another header is refused rather than overwritten."""
    if not os.path.exists(path):
        return {}
    with open(path, newline="", encoding="utf-8") as fh:
        reader = csv.reader(fh)
        found = next(reader, None)
        if found is None:
            return {}
        if tuple(found) != tuple(header):
            raise ValueError(f"{path}: not a result file of this command (unexpected header)")
        rows = {}
        for row in reader:
            if row:
                rows[(row[0], row[1], int(row[header.index("seed")]))] = row
        return rows


def write_rows(path: str, header: Iterable[str], rows: dict[Key, list[str]]) -> None:
    tmp = f"{path}.tmp"
    with open(tmp, "w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh, lineterminator="\n")
        writer.writerow(header)
        for key in sorted(rows):
            writer.writerow(rows[key])
    os.replace(tmp, path)


def times_row(workload: str, policy: str, seed: int, seconds: float, pods: int, bound: int) -> list[str]:
    rate = pods / seconds if seconds > 0 else 0.0
    return [workload, policy, str(seed), f"{seconds:.3f}", str(pods), str(bound), f"{rate:.1f}"]
