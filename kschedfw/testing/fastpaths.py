"""Run code on the plain path: the cross-cycle memos and indexes (``nodememo``) and, if asked, the
whole-list Filter/Score forms (``columnar``) off, so a test can compare a fast path with what it
replaces."""

from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator

from kschedfw.framework import columnar
from kschedfw.plugins import nodememo

__all__ = ["plain_path"]


@contextmanager
def plain_path(*, columnar_forms: bool = True) -> Iterator[None]:
    """Memos and incremental indexes off inside the block (and the whole-list forms too unless
    ``columnar_forms``); both back on after it, whatever happens."""
    nodememo.set_enabled(False)
    if not columnar_forms:
        columnar.set_enabled(False)
    try:
        yield
    finally:
        nodememo.set_enabled(True)
        if not columnar_forms:
            columnar.set_enabled(True)
