"""events.k8s.io/v1 Events, written off the scheduler's thread (a stuck API server must not slow
scheduling), with client-go's series aggregation: the same event for the same object within six
minutes patches the first one's ``series`` instead of creating another.

Events are best effort, as client-go's broadcaster: the queue is bounded (a full queue drops the
newest), an event that cannot be written is dropped with a rate-limited warning, and none is sent
once ``fence()`` says this process lost its lease."""

from __future__ import annotations

import datetime as _dt
import logging
import queue
import socket
import threading
from typing import Any, Callable

from kschedfw.cluster.kube.client import ApiError, KubeClient, MERGE_PATCH
from kschedfw.cluster.kube.ratelog import RateLimitedLog
from kschedfw.api.timestamps import micro_time

__all__ = ["EventWriter", "MAX_NOTE"]

log = logging.getLogger(__name__)

MAX_NOTE = 1024  # the API server refuses longer notes
SERIES_WINDOW = _dt.timedelta(minutes=6)
_ACTIONS = {"Scheduled": "Binding", "FailedScheduling": "Scheduling", "Preempted": "Preempting"}


class EventWriter:
    def __init__(self, client: KubeClient | None, *, instance: str | None = None,
                 fence: Callable[[], bool] = lambda: True) -> None:
        self.client = client
        self.fence = fence
        self._warn = RateLimitedLog(log)
        self.instance = instance or socket.gethostname()
        self._queue: queue.Queue[tuple[Any, ...] | None] = queue.Queue(maxsize=10000)
        self._series: dict[tuple[str, ...], tuple[str, str, int, _dt.datetime]] = {}
        self.written = 0
        self._thread = threading.Thread(target=self._run, name="events", daemon=True)
        self._thread.start()

    def record(self, obj: Any, type_: str, reason: str, message: str, controller: str = "") -> None:
        """``controller``: the reportingController (a profile's schedulerName); by default the
        pod's own schedulerName."""
        note = message if len(message) <= MAX_NOTE else message[:MAX_NOTE - 4] + " ..."
        try:
            self._queue.put_nowait((obj, type_, reason, note, _dt.datetime.now(_dt.timezone.utc), controller))
        except queue.Full:  # client-go drops events too rather than block the caller
            self._warn.warning("event-queue-full", "event queue full, dropped %s event for %s", reason,
                               getattr(obj, "name", obj))

    def close(self, timeout: float = 5.0) -> None:
        """Write what is queued (for at most ``timeout`` seconds), then stop."""
        try:
            self._queue.put(None, timeout=timeout)
        except queue.Full:  # the writer is stuck on a hung server: leave it (a daemon thread)
            return
        self._thread.join(timeout)

    def _run(self) -> None:
        while True:
            item = self._queue.get()
            if item is None:
                return
            if self.client is None or not self.fence():
                continue
            try:
                self._write(*item)
                self.written += 1
            except Exception as exc:  # an event is best effort, as upstream
                kind = f"event-{exc.status}" if isinstance(exc, ApiError) else f"event-{type(exc).__name__}"
                self._warn.warning(kind, "could not write %s event (create events.k8s.io/events): %s", item[2], exc)

    def _write(self, obj: Any, type_: str, reason: str, note: str, when: _dt.datetime, controller: str) -> None:
        assert self.client is not None
        namespace = getattr(obj, "namespace", "") or "default"
        controller = controller or getattr(obj, "scheduler_name", "") or "default-scheduler"
        action = _ACTIONS.get(reason, reason)
        uid = getattr(obj, "uid", "") or ""
        key = (uid, namespace, obj.name, type_, reason, action, note, controller)
        previous = self._series.get(key)
        base = f"/apis/events.k8s.io/v1/namespaces/{namespace}/events"
        if previous is not None and when - previous[3] < SERIES_WINDOW:
            name, _, count, first = previous
            count += 1
            try:
                self.client.request("PATCH", f"{base}/{name}", body={"series": {
                    "count": count, "lastObservedTime": micro_time(when)}}, content_type=MERGE_PATCH)
                self._series[key] = (name, namespace, count, first)
                return
            except LookupError:
                pass  # the event expired (TTL): create a new one
        name = f"{obj.name}.{int(when.timestamp() * 1e9):x}"
        body = {
            "apiVersion": "events.k8s.io/v1", "kind": "Event",
            "metadata": {"name": name, "namespace": namespace},
            "eventTime": micro_time(when), "type": type_, "reason": reason, "action": action, "note": note,
            "reportingController": controller, "reportingInstance": f"{controller}-{self.instance}",
            "regarding": {"apiVersion": "v1", "kind": getattr(obj, "kind", None) or type(obj).__name__, "namespace": namespace,
                          "name": obj.name, "uid": uid,
                          "resourceVersion": getattr(obj, "resource_version", "") or ""},
        }
        self.client.request("POST", base, body=body)
        self._series[key] = (name, namespace, 1, when)
        if len(self._series) > 4096:  # forget the oldest series
            for stale in list(self._series)[:1024]:
                del self._series[stale]
