"""Our seed means side by side with the paper's, and whether they reproduce its figures.

Per workload and policy: the mean ± sample sd over seeds of the allocation at 100% and at 130%
arrived, ours and the paper's; ours is within tolerance when it lies within 2 of the paper's sd
of the paper's mean (never tighter than 0.3 points). At 100% the policies must also keep the
paper's order: FGD > BestFit > GpuPacking ≈ GpuClustering > DotProd > Random.
"""

from __future__ import annotations

import csv
import statistics
from importlib import resources
from typing import IO, Iterable

import attrs

COLUMNS = ("100", "130")
MIN_TOLERANCE = 0.3
PAPER_FIXTURE = "paper_allocation.csv"


def read_allocation(lines: Iterable[str]) -> dict[tuple[str, str], dict[str, list[float]]]:
    """(workload, sc_policy) -> column -> the per-seed values, from a file in the format of
    ``analysis_allo_discrete.csv`` (or any file with its key columns and the "100"/"130"
    columns; lines starting with ``#`` are skipped)."""
    out: dict[tuple[str, str], dict[str, list[float]]] = {}
    for row in csv.DictReader(line for line in lines if not line.startswith("#")):
        cells = out.setdefault((row["workload"], row["sc_policy"]), {c: [] for c in COLUMNS})
        for c in COLUMNS:
            if row.get(c) not in (None, ""):
                cells[c].append(float(row[c]))
    return out


def paper_allocation() -> dict[tuple[str, str], dict[str, list[float]]]:
    """The paper's per-seed values for default and cpu050, shipped with this package."""
    text = resources.files("kschedfw_gpushare.experiment").joinpath(PAPER_FIXTURE).read_text(encoding="utf-8")
    return read_allocation(text.splitlines(keepends=True))


@attrs.frozen
class Stat:
    mean: float
    sd: float
    n: int

    @classmethod
    def of(cls, values: list[float]) -> "Stat":
        sd = statistics.stdev(values) if len(values) > 1 else 0.0
        return cls(statistics.fmean(values), sd, len(values))

    def __str__(self) -> str:
        return f"{self.mean:6.2f} ± {self.sd:4.2f}"


def tolerance(paper: Stat) -> float:
    return max(2 * paper.sd, MIN_TOLERANCE)


def order_holds(means: dict[str, float]) -> bool:
    """FGD > BestFit > GpuPacking ≈ GpuClustering > DotProd > Random (the two packers in
    either order)."""
    m = {label.split("-", 1)[1]: v for label, v in means.items()}
    if not {"FGD", "BestFit", "GpuPacking", "GpuClustering", "DotProd", "Random"} <= m.keys():
        return False
    packers = (m["GpuPacking"], m["GpuClustering"])
    return m["FGD"] > m["BestFit"] > max(packers) and min(packers) > m["DotProd"] > m["Random"]


def compare(ours: dict[tuple[str, str], dict[str, list[float]]],
            paper: dict[tuple[str, str], dict[str, list[float]]], out: IO[str]) -> bool:
    """Print the table to ``out``; true when every value is within tolerance and the order holds
    for every workload that has all six policies."""
    ok = True
    header = (f"{'workload':<24} {'policy':<17} {'@100 ours':>14} {'@100 paper':>14} {'diff':>6} {'':3} "
              f"{'@130 ours':>14} {'@130 paper':>14} {'diff':>6} {'':3} seeds")
    print(header, file=out)
    workloads: dict[str, dict[str, float]] = {}
    for key in sorted(ours):
        if key not in paper:
            continue
        workload, policy = key
        cells = []
        for c in COLUMNS:
            mine, theirs = Stat.of(ours[key][c]), Stat.of(paper[key][c])
            diff = mine.mean - theirs.mean
            within = abs(diff) <= tolerance(theirs)
            ok &= within
            cells.append(f"{mine!s:>14} {theirs!s:>14} {diff:+6.2f} {'ok' if within else 'NO':3}")
            if c == "100":
                workloads.setdefault(workload, {})[policy] = mine.mean
        print(f"{workload:<24} {policy:<17} {cells[0]} {cells[1]} {Stat.of(ours[key]['100']).n}", file=out)
    for workload, means in sorted(workloads.items()):
        if len(means) == 6:
            holds = order_holds(means)
            ok &= holds
            ranked = " > ".join(p.split("-", 1)[1] for p, _ in sorted(means.items(), key=lambda kv: -kv[1]))
            print(f"{workload}: order at 100% {'holds' if holds else 'DOES NOT hold'}: {ranked}", file=out)
    return ok
