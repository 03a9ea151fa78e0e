"""client-go's Reflector for one resource: list, then watch from the list's resourceVersion
with bookmarks and a random 5-10 minute server timeout. Every change goes to ``sink`` as
``(type, kind, old, new)`` from the informer's own thread.

What ends a watch decides what follows, as upstream:

- the server closed it, or the stream broke after it delivered events: watch again at once from
  the last resourceVersion (advanced by every event, bookmarks included);
- nothing arrived for ``inactivity_timeout`` (a hung server or a dead connection): watch again;
- the watch could not be opened because nothing listened (connection refused) or the server
  said 429: back off, then watch again;
- the version expired (HTTP 410, or an ERROR event with code 410): back off, then relist;
- anything else (a failed list, an ERROR event, an undecodable line, a watch that ended at once
  with nothing): back off, then relist.

The backoff is upstream's (0.8 s doubling to 30 s, each wait up to twice that, back to 0.8 s once
the backoff has not been reset for ``backoff_reset``, 2 minutes), so a fault after a long
healthy stream waits 0.8-1.6 s. Failures are logged without repeating the same line at every
step (:class:`~kschedfw.cluster.kube.ratelog.RateLimitedLog`), and the informer says when it recovered. The thread never dies:
whatever goes wrong is logged and retried.
"""

from __future__ import annotations

import errno
import json
import logging
import random
import threading
import time
from typing import Any, Callable

import urllib3.exceptions

from kschedfw.cluster.kube.client import ApiError, KubeClient
from kschedfw.cluster.kube.loop import BackgroundLoop
from kschedfw.cluster.kube.ratelog import RateLimitedLog
from kschedfw.cluster.kube.resources import Resource, parse_api_object
from kschedfw.cluster.kube.transport import NotConnected
from kschedfw.cluster.store import key_of
from kschedfw.fwk.interface import NotFound

__all__ = ["Backoff", "Informer", "Sink"]

log = logging.getLogger(__name__)

Sink = Callable[[str, str, Any, Any], None]
#: no HTTP answer: refused, reset, timed out, cut short
_TRANSPORT_FAULTS = (OSError, urllib3.exceptions.HTTPError)
#: a watch ending this soon with nothing delivered is a failure, not a normal close (upstream)
_VERY_SHORT_WATCH = 1.0
_WATCH_TYPES = ("ADDED", "MODIFIED", "DELETED")


class _Expired(Exception):
    """The resourceVersion we watch from is too old: relist."""


class WatchFailure(ValueError):
    """An answer the informer cannot use: an undecodable watch line, a very short watch, a list
    that is not one."""


class Backoff:
    """client-go's reflector backoff (``wait.Backoff.DelayWithReset``): each delay doubles up
    to ``cap``, jittered by up to as much again; when more than ``reset_after`` seconds have
    passed since it was last reset, it starts over from ``initial``."""

    def __init__(self, initial: float, cap: float, reset_after: float, rng: random.Random,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.initial = initial
        self.cap = cap
        self.reset_after = reset_after
        self.rng = rng
        self.clock = clock
        self._next = initial
        self._reset_at = clock()

    def delay(self) -> float:
        now = self.clock()
        if now - self._reset_at > self.reset_after:
            self._next = self.initial
            self._reset_at = now
        base = self._next
        self._next = min(base * 2, self.cap)
        return base * (1 + self.rng.random())


#: failure lines shared by the informers: a closed port or refused credentials fail every
#: informer the same way, and the same text is logged once a minute, not once per informer and
#: backoff step
FAILURES = RateLimitedLog(log, interval=60.0)


def describe(exc: BaseException, verb: str, resource: str) -> str:
    """A failure as one line a user can act on."""
    if isinstance(exc, ApiError):
        if exc.status == 403:
            return f"forbidden by RBAC: the scheduler's user may not {verb} {resource} ({exc})"
        if exc.status == 401:
            return f"the API server refused the credentials ({exc})"
        return str(exc)
    if isinstance(exc, NotFound):  # the API is not served
        return f"{exc} (404)"
    cause = exc.__cause__ if isinstance(exc, OSError) and exc.__cause__ is not None else exc
    if isinstance(cause, urllib3.exceptions.ReadTimeoutError):
        return "no answer within the client timeout (a hung API server?)"
    text = str(cause) or type(cause).__name__
    return text if isinstance(cause, (OSError, urllib3.exceptions.HTTPError, WatchFailure)) \
        else f"{type(cause).__name__}: {text}"


def _same_for_every_resource(exc: BaseException) -> bool:
    """A failure of the server or the connection, not of this resource: no answer, or 401."""
    return isinstance(exc, _TRANSPORT_FAULTS) or (isinstance(exc, ApiError) and exc.status == 401)


def _may_rewatch(exc: BaseException) -> bool:
    """Upstream's isWatchErrorRetriable: nothing listened, or 429; watch again from the same version."""
    if isinstance(exc, ApiError):
        return exc.status == 429
    for cause in (exc, exc.__cause__):
        if isinstance(cause, (NotConnected, ConnectionRefusedError)):
            return True
        if isinstance(cause, OSError) and cause.errno == errno.ECONNREFUSED:
            return True
    return False


class Informer(BackgroundLoop):
    def __init__(self, client: KubeClient, resource: Resource, sink: Sink, *,
                 min_watch_timeout: float = 300.0, inactivity_timeout: float = 90.0,
                 initial_backoff: float = 0.8, max_backoff: float = 30.0, backoff_reset: float = 120.0,
                 page_size: int = 500, rng: random.Random | None = None,
                 decode_page: Callable[[bytes], Any] | None = None,
                 decode_event: Callable[[bytes], Any] | None = None,
                 parse: Callable[[Resource, Any], Any] | None = None,
                 failures: RateLimitedLog | None = None) -> None:
        self.client = client
        self.resource = resource
        self.sink = sink
        # how a list page and a watch line are decoded (default: whole JSON; pods: only what is read)
        self.decode_page = decode_page
        self.decode_event = decode_event or json.loads
        # how an object becomes what ``sink`` gets (default: the kschedfw.api type; None skips it)
        self.parse = parse or parse_api_object
        self.min_watch_timeout = min_watch_timeout
        self.inactivity_timeout = inactivity_timeout
        self.page_size = page_size
        self.rng = rng or random.Random()
        self.backoff = Backoff(initial_backoff, max_backoff, backoff_reset, self.rng)
        self.failures = failures or FAILURES
        self.synced = threading.Event()
        self.resource_version = ""
        self.lists = 0  # how many times the resource was (re)listed
        self.watches = 0  # how many watch requests were made
        self._known: dict[str, Any] = {}  # key -> object, this thread only
        group = resource.group_version.rpartition("/")[0]
        self.name = f"{resource.plural}.{group}" if group else resource.plural
        self.thread_name = f"informer-{resource.plural}"
        self._failing: tuple[int, float, bool] | None = None  # (failures, since, a warning was logged)
        super().__init__()

    # ------------------------------------------------------------------ lifecycle
    def _run(self) -> None:
        while not self._stop.is_set():
            verb = "list"
            try:
                self._list()
                self._recovered("list")
                verb = "watch"
                self._watch_until_failure()
                return  # stopped
            except Exception as exc:  # whatever it is, the informer carries on after a backoff
                if isinstance(exc, _Expired) or (isinstance(exc, ApiError) and exc.status == 410):
                    log.info("%s: resourceVersion %s expired, relisting", self.name, self.resource_version)
                    if self._stop.wait(self.backoff.delay()):
                        return
                elif self._back_off(verb, exc):
                    return

    def _back_off(self, verb: str, exc: BaseException) -> bool:
        """Log the failure (unless just logged), wait the backoff; True when stopped meanwhile."""
        delay = self.backoff.delay()
        failures, since, warned = self._failing or (0, time.monotonic(), False)
        text = describe(exc, verb, self.name)
        shared = _same_for_every_resource(exc)
        if self.failures.due(f"{verb} {'*' if shared else self.name}: {text}"):
            # (NotFound: the API is not served, e.g. a gated kind's group version not enabled)
            expected = isinstance(exc, (ApiError, NotFound, WatchFailure, *_TRANSPORT_FAULTS))
            log.warning("failed to %s %s: %s; retrying in %.1fs%s", verb, self.name, text, delay,
                        f" (the same for other resources is not logged again for {self.failures.interval:.0f}s)"
                        if shared else "", exc_info=None if expected else exc)
            warned = True
        else:
            log.debug("failed to %s %s: %s; retrying in %.1fs", verb, self.name, text, delay)
        self._failing = (failures + 1, since, warned)
        return self._stop.wait(delay)

    def _recovered(self, verb: str) -> None:
        if self._failing is None:
            return
        failures, since, warned = self._failing
        self._failing = None
        (log.info if warned else log.debug)("%s: %s recovered after %d failure%s in %.0fs", self.name, verb,
                                            failures, "" if failures == 1 else "s", time.monotonic() - since)

    # ------------------------------------------------------------------ list and watch
    def _params(self) -> dict[str, Any]:
        return {"fieldSelector": self.resource.field_selector} if self.resource.field_selector else {}

    def _list(self) -> None:
        # each page is parsed as it comes, so a long list holds its parsed objects only, not
        # every page's JSON besides; nothing reaches the sink before the last page
        parsed: list[Any] = []
        cont = None
        while True:
            page = self.client.get(self.resource.path, decode=self.decode_page, limit=self.page_size,
                                   **({"continue": cont} if cont else {}), **self._params())
            if not isinstance(page, dict) or not isinstance(page.get("items") or [], list):
                raise WatchFailure(f"the list answer is not a list: {_excerpt(str(page).encode())}")
            parsed.extend(obj for obj in map(self._parse, page.get("items") or []) if obj is not None)
            meta = page.get("metadata")
            meta = meta if isinstance(meta, dict) else {}
            del page
            cont = meta.get("continue")
            if not cont:
                break
        version = meta.get("resourceVersion") or ""
        self._replace(parsed)
        self.resource_version = version
        self.lists += 1
        self.synced.set()

    def _replace(self, parsed: list[Any]) -> None:
        """Bring the known set to the list's content (its objects parsed): adds, changes (new
        resourceVersion only) and deletions of what is no longer there, as events."""
        seen: set[str] = set()
        for obj in parsed:
            key = key_of(obj)
            seen.add(key)
            old = self._known.get(key)
            if old is None:
                self._known[key] = obj
                self.sink("ADDED", self.resource.store_kind, None, obj)
            elif _rv(old) != _rv(obj):
                self._known[key] = obj
                self.sink("MODIFIED", self.resource.store_kind, old, obj)
        for key in [k for k in self._known if k not in seen]:
            self.sink("DELETED", self.resource.store_kind, self._known.pop(key), None)

    def _watch_until_failure(self) -> None:
        """Watch, and again, from the last resourceVersion, until :meth:`stop` or a failure that
        needs a relist (raised)."""
        while not self._stop.is_set():
            try:
                self._watch()
            except Exception as exc:
                if not _may_rewatch(exc):
                    raise
                if self._back_off("watch", exc):
                    return

    def _watch(self) -> None:
        """One watch request, to its end; returns when the next watch can start at once."""
        timeout = int(self.min_watch_timeout * (1 + self.rng.random()))
        params = {**self._params(), "resourceVersion": self.resource_version, "allowWatchBookmarks": "true",
                  "timeoutSeconds": timeout}
        self.watches += 1
        started = time.monotonic()
        received = 0
        try:
            for event in self.client.watch(self.resource.path, params, inactivity_timeout=self.inactivity_timeout,
                                           decode=self._decode_line):
                if self._stop.is_set():
                    return
                received += 1
                if received == 1:
                    self._recovered("watch")
                self._handle(event)
        except urllib3.exceptions.ReadTimeoutError:  # the stream was open, then silent
            self._recovered("watch")
            log.info("%s: no data for %.0fs, watching again", self.name, self.inactivity_timeout)
            return
        except _TRANSPORT_FAULTS as exc:
            if received == 0:  # it may never have opened: a failure
                raise
            # upstream reads a broken stream as a closed one: watch again from the last version
            log.info("%s: watch closed: %s; watching again", self.name, describe(exc, "watch", self.name))
            return
        if received == 0 and time.monotonic() - started < _VERY_SHORT_WATCH:
            raise WatchFailure("very short watch: the watch ended within a second and delivered nothing")
        self._recovered("watch")

    def _decode_line(self, line: bytes) -> Any:
        try:
            event = self.decode_event(line)
        except ValueError as exc:
            raise WatchFailure(f"unable to decode an event from the watch stream: {exc}: {_excerpt(line)}") from None
        if not isinstance(event, dict):
            raise WatchFailure(f"a watch line that is not an event: {_excerpt(line)}")
        return event

    def _handle(self, event: dict[str, Any]) -> None:
        type_ = event.get("type")
        d = event.get("object")
        if type_ == "ERROR":
            status = d if isinstance(d, dict) else {}
            if status.get("code") == 410 or status.get("reason") in ("Expired", "Gone"):
                raise _Expired()
            code = status.get("code")
            raise ApiError(code if isinstance(code, int) else 500, str(status.get("message") or "watch error"),
                           str(status.get("reason") or ""), d)
        if not isinstance(d, dict):
            raise WatchFailure(f"a {type_} event without an object: {_excerpt(str(event).encode())}")
        meta = d.get("metadata")
        version = meta.get("resourceVersion") if isinstance(meta, dict) else None
        if type_ == "BOOKMARK":  # the watch has caught up to this version
            if version and isinstance(version, str):
                self.resource_version = version
            return
        if type_ not in _WATCH_TYPES:
            if self.failures.due(f"event type {type_!r} of {self.name}"):
                log.warning("%s: unable to understand watch event of type %r, ignored", self.name, type_)
            return
        obj = self._parse(d)
        if version and isinstance(version, str):
            self.resource_version = version
        if obj is None:
            return
        key = key_of(obj)
        old = self._known.get(key)
        if type_ == "DELETED":
            if key in self._known:
                self.sink("DELETED", self.resource.store_kind, self._known.pop(key), None)
            return
        if old is not None and _rv(old) == _rv(obj):
            return  # no real change (upstream drops resync updates with the same resourceVersion)
        self._known[key] = obj
        self.sink("ADDED" if old is None else "MODIFIED", self.resource.store_kind, old, obj)

    def _parse(self, d: Any) -> Any:
        try:
            return self.parse(self.resource, d)
        except Exception as exc:  # a shape the parser cannot read (a ManifestError, or worse): skip that object
            meta = (d.get("metadata") if isinstance(d, dict) else None) or {}
            meta = meta if isinstance(meta, dict) else {}
            log.warning("%s %s/%s: cannot read it, ignored: %s", self.resource.kind, meta.get("namespace", ""),
                        meta.get("name", ""), exc)
            return None


def _excerpt(line: bytes) -> str:
    return repr(line[:120]) + ("..." if len(line) > 120 else "")


def _rv(obj: Any) -> str:
    rv = getattr(obj, "resource_version", None)
    if rv is None:
        raw = getattr(obj, "raw", None) or {}
        rv = (raw.get("metadata") or {}).get("resourceVersion", "")
    return rv or ""
