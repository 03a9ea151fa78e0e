"""What the executors raise."""

from __future__ import annotations


class ExecutorError(RuntimeError):
    """An executor cannot be had (Ray not installed, a cluster that cannot be reached, ...)."""
