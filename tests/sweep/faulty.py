"""A plugin that raises, for the failed-run tests."""

from __future__ import annotations

from kschedfw import hookimpl


class FailingFilter:
    name = "FailingFilter"

    def __init__(self, args, handle):
        pass

    @hookimpl
    def filter(self, state, pod, node_info):
        raise RuntimeError("broken on purpose")
