"""The health checks `kschedfw run` publishes on /healthz, /livez and /readyz (served by
:mod:`kschedfw.serving`): a check is a callable returning None when healthy, else the reason.
Checks are run at request time from the server's threads, so they must only read values the
scheduler thread publishes (no walking its live structures)."""

from __future__ import annotations

from typing import Callable

__all__ = ["Check", "ping"]

Check = Callable[[], "str | None"]


def ping() -> str | None:
    """Upstream's PingHealthz: the server answers."""
    return None
