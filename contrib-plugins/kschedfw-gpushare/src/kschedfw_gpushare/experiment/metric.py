"""The paper's allocation metric and its CSV row (``analysis_allo_discrete.csv``).

After every pod event the simulator logs U, the GPU milli allocated in the cluster, and A, the
GPU milli asked by every pod that has arrived so far (failed ones included). The authors' merge
script then buckets the events by A as a whole percent of capacity and averages U per bucket.
This module reproduces that arithmetic, including what pandas and numpy do underneath: Python's
half-to-even ``round`` per event, a mean by numpy's pairwise summation, numpy's rounding of the
mean, and the fallback to the neighbouring buckets (k-1..k+1) for a bucket with no event.
"""

from __future__ import annotations

from typing import Iterable, Sequence

#: Columns of the result file: the run's key, the cluster's GPU count, then one per % arrived.
KEY_COLUMNS = ("workload", "sc_policy", "tune", "seed", "total_gpus")
BUCKETS = range(0, 131)
HEADER = (*KEY_COLUMNS, *(str(k) for k in BUCKETS))

MILLI = 1000


def allocation_events(asks: Sequence[int], bound: Sequence[bool]) -> list[tuple[int, int]]:
    """(U, A) after each pod event, in arrival order. Pods are never deleted, so U is the
    running sum of the bound pods' asks."""
    used = arrived = 0
    events = []
    for ask, ok in zip(asks, bound, strict=True):
        arrived += ask
        if ok:
            used += ask
        events.append((used, arrived))
    return events


def _pairwise_sum(values: Sequence[float], start: int, n: int) -> float:
    """numpy's float64 ``add.reduce`` on a contiguous array (what pandas' mean sums with)."""
    if n < 8:
        total = 0.0
        for i in range(start, start + n):
            total += values[i]
        return total
    if n <= 128:
        r = list(values[start:start + 8])
        i = 8
        while i < n - n % 8:
            for j in range(8):
                r[j] += values[start + i + j]
            i += 8
        total = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]))
        while i < n:
            total += values[start + i]
            i += 1
        return total
    half = n // 2
    half -= half % 8
    return _pairwise_sum(values, start, half) + _pairwise_sum(values, start + half, n - half)


def _mean(values: Sequence[float]) -> float:
    return (0.0 + _pairwise_sum(values, 0, len(values))) / len(values)


def _numpy_round2(x: float) -> float:
    """``round(numpy.float64, 2)``: scale, round half to even, unscale (not Python's exact
    decimal rounding, which the per-event ratios get as plain floats)."""
    return round(x * 100.0) / 100.0


def discrete_allocation(events: Iterable[tuple[int, int]], total_gpus: int) -> dict[int, float]:
    """Column k (0..130): the mean allocation %, over the events whose arrived % rounds to k;
    with none, over those rounding to k-1..k+1; with none there either, no value."""
    buckets: dict[int, list[float]] = {}
    for used, arrived in events:
        arrive_ratio = round(arrived / total_gpus / 10, 0)
        buckets.setdefault(int(arrive_ratio), []).append(round(used / total_gpus / 10, 2))
    columns: dict[int, float] = {}
    for k in BUCKETS:
        values = buckets.get(k)
        if not values:  # events are in arrival order, so buckets k-1, k, k+1 keep their order
            values = [v for b in (k - 1, k, k + 1) for v in buckets.get(b, ())]
            if not values:
                continue
        columns[k] = _numpy_round2(_mean(values))
    return columns


def csv_row(workload: str, policy_label: str, seed: int, total_gpus: int, columns: dict[int, float],
            tune: float = 1.3) -> list[str]:
    """One row of the result file, formatted as pandas writes the authors' file (``12.0``,
    ``95.29``; an empty cell for a column with no value)."""
    return [f"openb_pod_list_{workload}", policy_label, repr(tune), str(seed), str(total_gpus),
            *(repr(columns[k]) if k in columns else "" for k in BUCKETS)]


def total_gpus(nodes: Iterable[dict]) -> int:
    """GPUs in the cluster (the ``Total GPUs`` of the simulator's log)."""
    return sum(int((n.get("status", {}).get("capacity") or {}).get("alibabacloud.com/gpu-count", 0) or 0)
               for n in nodes)
