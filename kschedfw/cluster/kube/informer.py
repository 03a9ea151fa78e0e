"""client-go's Reflector for one resource: list, then watch from the list's resourceVersion
with bookmarks and a random 5-10 minute server timeout; on a broken stream watch again from the
last resourceVersion seen, after a backoff; relist when the server says the version expired
(an ERROR event with code 410, or HTTP 410). Every change goes to ``sink`` as
``(type, kind, old, new)`` from the informer's own thread.
"""

from __future__ import annotations

import json
import logging
import random
import threading
from typing import Any, Callable

import urllib3.exceptions

from kschedfw.cluster.kube.client import ApiError, KubeClient
from kschedfw.cluster.kube.loop import BackgroundLoop
from kschedfw.cluster.kube.resources import Resource, parse_api_object
from kschedfw.errors import ManifestError

__all__ = ["Informer", "Sink"]

log = logging.getLogger(__name__)

Sink = Callable[[str, str, Any, Any], None]
_TRANSIENT = (urllib3.exceptions.HTTPError, OSError, ApiError, ValueError)


class _Expired(Exception):
    """The resourceVersion we watch from is too old: relist."""


class Informer(BackgroundLoop):
    def __init__(self, client: KubeClient, resource: Resource, sink: Sink, *,
                 min_watch_timeout: float = 300.0, inactivity_timeout: float = 90.0,
                 initial_backoff: float = 0.8, max_backoff: float = 30.0, page_size: int = 500,
                 rng: random.Random | None = None, decode_page: Callable[[bytes], Any] | None = None,
                 decode_event: Callable[[bytes], Any] | None = None) -> None:
        self.client = client
        self.resource = resource
        self.sink = sink
        # how a list page and a watch line are decoded (default: whole JSON; pods: only what is read)
        self.decode_page = decode_page
        self.decode_event = decode_event or json.loads
        self.min_watch_timeout = min_watch_timeout
        self.inactivity_timeout = inactivity_timeout
        self.initial_backoff = initial_backoff
        self.max_backoff = max_backoff
        self.page_size = page_size
        self.rng = rng or random.Random()
        self.synced = threading.Event()
        self.resource_version = ""
        self.lists = 0  # how many times the resource was (re)listed
        self.watches = 0  # how many watch requests were made
        self._known: dict[str, Any] = {}  # key -> object, this thread only
        self.thread_name = f"informer-{resource.plural}"
        super().__init__()

    # ------------------------------------------------------------------ lifecycle
    def _run(self) -> None:
        backoff = self.initial_backoff
        need_list = True
        while not self._stop.is_set():
            try:
                if need_list:
                    self._list()
                    need_list = False
                self._watch()
                backoff = self.initial_backoff  # a watch that ended normally (server timeout)
            except _Expired:
                need_list = True
                log.info("%s: resourceVersion %s expired, relisting", self.resource.plural, self.resource_version)
            except _TRANSIENT as exc:
                if isinstance(exc, ApiError) and exc.status == 410:
                    need_list = True
                    continue
                log.warning("%s: %s; retrying in %.1fs", self.resource.plural, exc, backoff)
                if self._stop.wait(backoff * (1 + self.rng.random() * 0.5)):
                    return
                backoff = min(backoff * 2, self.max_backoff)
            except Exception:  # never let the informer thread die silently
                log.exception("%s: informer error", self.resource.plural)
                if self._stop.wait(backoff):
                    return
                backoff = min(backoff * 2, self.max_backoff)

    # ------------------------------------------------------------------ list and watch
    def _params(self) -> dict[str, Any]:
        return {"fieldSelector": self.resource.field_selector} if self.resource.field_selector else {}

    def _list(self) -> None:
        items: list[dict[str, Any]] = []
        cont = None
        while True:
            page = self.client.get(self.resource.path, decode=self.decode_page, limit=self.page_size,
                                   **({"continue": cont} if cont else {}), **self._params())
            items.extend(page.get("items") or [])
            cont = (page.get("metadata") or {}).get("continue")
            if not cont:
                break
        version = (page.get("metadata") or {}).get("resourceVersion", "")
        self._replace(items)
        self.resource_version = version
        self.lists += 1
        self.synced.set()

    def _replace(self, items: list[dict[str, Any]]) -> None:
        """Bring the known set to the list's content: adds, changes (new resourceVersion
        only) and deletions of what is no longer there, as events."""
        seen: set[str] = set()
        for d in items:
            obj = self._parse(d)
            if obj is None:
                continue
            key = _key(obj)
            seen.add(key)
            old = self._known.get(key)
            if old is None:
                self._known[key] = obj
                self.sink("ADDED", self.resource.kind, None, obj)
            elif _rv(old) != _rv(obj):
                self._known[key] = obj
                self.sink("MODIFIED", self.resource.kind, old, obj)
        for key in [k for k in self._known if k not in seen]:
            self.sink("DELETED", self.resource.kind, self._known.pop(key), None)

    def _watch(self) -> None:
        timeout = int(self.min_watch_timeout * (1 + self.rng.random()))
        params = {**self._params(), "resourceVersion": self.resource_version, "allowWatchBookmarks": "true",
                  "timeoutSeconds": timeout}
        self.watches += 1
        try:
            for event in self.client.watch(self.resource.path, params, inactivity_timeout=self.inactivity_timeout,
                                           decode=self.decode_event):
                if self._stop.is_set():
                    return
                self._handle(event)
        except urllib3.exceptions.ReadTimeoutError:
            log.info("%s: no data for %.0fs, watching again", self.resource.plural, self.inactivity_timeout)
        except urllib3.exceptions.ProtocolError:
            # the server went away mid-stream: watch again from the last version (after a pause)
            raise

    def _handle(self, event: dict[str, Any]) -> None:
        type_ = event.get("type")
        d = event.get("object") or {}
        if type_ == "ERROR":
            if d.get("code") == 410 or d.get("reason") in ("Expired", "Gone"):
                raise _Expired()
            raise ApiError(int(d.get("code") or 500), d.get("message", "watch error"), d.get("reason", ""), d)
        version = (d.get("metadata") or {}).get("resourceVersion")
        if type_ == "BOOKMARK":
            if version:
                self.resource_version = version
            return
        obj = self._parse(d)
        if version:
            self.resource_version = version
        if obj is None:
            return
        key = _key(obj)
        old = self._known.get(key)
        if type_ == "DELETED":
            if key in self._known:
                self.sink("DELETED", self.resource.kind, self._known.pop(key), None)
            return
        if old is not None and _rv(old) == _rv(obj):
            return  # no real change (upstream drops resync updates with the same resourceVersion)
        self._known[key] = obj
        self.sink("ADDED" if old is None else "MODIFIED", self.resource.kind, old, obj)

    def _parse(self, d: dict[str, Any]) -> Any:
        try:
            return parse_api_object(self.resource, d)
        except ManifestError as exc:
            meta = d.get("metadata") or {}
            log.warning("%s %s/%s: cannot read it, ignored: %s", self.resource.kind, meta.get("namespace", ""),
                        meta.get("name", ""), exc)
            return None


def _key(obj: Any) -> str:
    ns = getattr(obj, "namespace", "") or ""
    return f"{ns}/{obj.name}" if ns else obj.name


def _rv(obj: Any) -> str:
    rv = getattr(obj, "resource_version", None)
    if rv is None:
        raw = getattr(obj, "raw", None) or {}
        rv = (raw.get("metadata") or {}).get("resourceVersion", "")
    return rv or ""
