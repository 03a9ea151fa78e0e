"""Device choice inside a node: which GPU(s) a pod gets (the simulator's ``AllocateGpuId``
family). ``idle`` is the idle milli of each device, by index. Ties go to the lowest index."""

from __future__ import annotations

import random
from typing import Sequence

from kschedfw_gpushare.resources import MILLI


def fits(idle: Sequence[int], milli: int, count: int) -> bool:
    """Open-Gpu-Share's fit test: one GPU needs a device with ``milli`` idle; several take the
    devices in index order, each as many times as it holds ``milli`` (so whole-GPU pods need
    ``count`` fully free devices)."""
    if count == 1:
        return max(idle, default=0) >= milli
    return packed(idle, milli, count) is not None


def packed(idle: Sequence[int], milli: int, count: int) -> tuple[int, ...] | None:
    """The filter's two-pointer allocation for a multi-GPU pod: walk the devices in index order,
    taking a device again while it still holds ``milli``."""
    if milli <= 0 or count <= 0:
        return None
    left = list(idle)
    taken: list[int] = []
    dev = 0
    while dev < len(left) and len(taken) < count:
        if left[dev] >= milli:
            taken.append(dev)
            left[dev] -= milli
        else:
            dev += 1
    return tuple(taken) if len(taken) == count else None


def best_fit(idle: Sequence[int], milli: int) -> int | None:
    """The device with the least idle milli that still holds ``milli``."""
    chosen = None
    for i, g in enumerate(idle):
        if g >= milli and (chosen is None or g < idle[chosen]):
            chosen = i
    return chosen


def worst_fit(idle: Sequence[int], milli: int) -> int | None:
    """The device with the most idle milli."""
    chosen = None
    for i, g in enumerate(idle):
        if g >= milli and (chosen is None or g > idle[chosen]):
            chosen = i
    return chosen


def random_fit(idle: Sequence[int], milli: int, rng: random.Random) -> int | None:
    """A uniform pick among the devices that hold ``milli`` (reservoir sampling, in index order:
    the i-th candidate replaces the pick with probability 1/i)."""
    chosen = None
    seen = 0
    for i, g in enumerate(idle):
        if g >= milli:
            seen += 1
            if rng.randrange(seen) == 0:
                chosen = i
    return chosen


def exclusive(idle: Sequence[int], total_milli: int) -> tuple[int, ...] | None:
    """Whole GPUs: the lowest-index fully free devices until ``total_milli`` is covered."""
    taken: list[int] = []
    need = total_milli
    for i, g in enumerate(idle):
        if need <= 0:
            break
        if g == MILLI:
            taken.append(i)
            need -= MILLI
    return tuple(taken) if need <= 0 else None
