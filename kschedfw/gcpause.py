"""Keeping CPython's cycle collector off work that makes no reference cycles.

Loading a large cluster builds hundreds of thousands of dicts, lists and objects, none in a
cycle, and every collection of the oldest generation walks all of them again: on a 5000-node
file the collector costs more than the parsing (and writing the cluster out, likewise), and
a full collection during the scheduling loop walks the whole loaded cluster again. Reference
counting still frees everything as usual; only the search for cycles is put off (``paused``)
or kept off what was there before (``frozen``).
"""

from __future__ import annotations

import contextlib
import gc
from typing import Iterator

__all__ = ["paused", "frozen"]


@contextlib.contextmanager
def paused() -> Iterator[None]:
    """No cycle collection inside (for bounded work that builds acyclic data: parsing,
    dumping); whatever cycles it leaves are collected after, as before."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


@contextlib.contextmanager
def frozen() -> Iterator[None]:
    """Objects alive on entry are left out of cycle collection until exit (``gc.freeze``): a
    long loop over a large loaded state (the scheduling loop over a loaded cluster) then does
    not walk that state in each full collection; its own garbage is collected as usual."""
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()
