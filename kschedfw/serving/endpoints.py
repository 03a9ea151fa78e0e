"""What the scheduler serves: /healthz, /livez, /readyz (k8s.io/apiserver's healthz handler) and
/metrics, as a function of the request path, shared by the secure and the plain server.

A health endpoint runs its named checks: ``ok`` when all pass (``[+]name ok`` lines with
``?verbose``), else 500 with every check's line, the failed ones as ``[-]name failed: reason
withheld`` (the reason goes to the log); ``?exclude=name`` skips a check and ``/<endpoint>/<name>``
runs one. Checks and metrics are read from the server's threads, so they must only read values the
scheduler thread publishes."""

from __future__ import annotations

import logging
import urllib.parse
from typing import Callable, Mapping, NamedTuple

__all__ = ["Check", "Endpoints", "Reply", "TEXT", "METRICS"]

log = logging.getLogger(__name__)

Check = Callable[[], "str | None"]
TEXT = "text/plain; charset=utf-8"
METRICS = "text/plain; version=0.0.4; charset=utf-8"


class Reply(NamedTuple):
    status: int
    body: str
    content_type: str = TEXT


class Endpoints:
    """``health`` maps an endpoint name (``healthz``, ``livez``, ``readyz``) to its checks in
    report order; ``metrics`` renders /metrics."""

    def __init__(self, health: Mapping[str, Mapping[str, Check]], metrics: Callable[[], str]) -> None:
        self.health = health
        self.metrics = metrics

    def get(self, target: str) -> Reply:
        """The answer to a GET of ``target`` (path and query)."""
        url = urllib.parse.urlsplit(target)
        if url.path == "/metrics":
            return Reply(200, self.metrics(), METRICS)
        endpoint, _, name = url.path.strip("/").partition("/")
        checks = self.health.get(endpoint)
        if checks is None or name and name not in checks:
            return Reply(404, "404 page not found\n")
        if name:
            reason = checks[name]()
            return Reply(200, "ok") if reason is None else Reply(500, f"internal server error: {reason}\n")
        return _run(endpoint, checks, urllib.parse.parse_qs(url.query, keep_blank_values=True))


def _run(endpoint: str, checks: Mapping[str, Check], query: dict[str, list[str]]) -> Reply:
    excluded = {name for value in query.get("exclude", []) for name in value.split(",") if name}
    lines: list[str] = []
    failed: list[str] = []
    for name, check in checks.items():
        if name in excluded:
            lines.append(f"[+]{name} excluded: ok\n")
            continue
        reason = check()
        if reason is None:
            lines.append(f"[+]{name} ok\n")
        else:
            lines.append(f"[-]{name} failed: reason withheld\n")
            failed.append(f"[-]{name} failed: {reason}")
    unknown = sorted(excluded - set(checks))
    if unknown:
        lines.append("warn: some health checks cannot be excluded: no matches for "
                     + ",".join(f'"{n}"' for n in unknown) + "\n")
    if failed:
        log.debug("%s check failed: %s", endpoint, "; ".join(failed))
        return Reply(500, "".join(lines) + f"{endpoint} check failed\n")
    if "verbose" not in query:
        return Reply(200, "ok")
    return Reply(200, "".join(lines) + f"{endpoint} check passed\n")
