"""Top-level functions the executors run in their workers (they must be importable there)."""

from __future__ import annotations

import os


def square(n: int) -> int:
    return n * n


def fail_on_three(n: int) -> int:
    if n == 3:
        raise ValueError("three is not allowed")
    return n


def pid(_: int) -> int:
    return os.getpid()
