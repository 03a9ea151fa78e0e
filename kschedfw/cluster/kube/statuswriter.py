"""pods/status and podgroups/status patches off the scheduler's thread, as upstream's API
dispatcher sends pods' (a PodGroup's condition goes the same way: queued, merged, fenced, retried).

The scheduler decides a pod's PodScheduled condition and nominatedNodeName; a worker sends the
strategic-merge patch. A newer patch for a pod whose previous one has not been sent yet is merged
into it (upstream ``PodStatusPatchCall.Merge``: the newer condition and nomination win, an absent
part keeps the older one), so a pod has at most one patch waiting and one in flight, and the
waiting ones are bounded by :data:`MAX_PENDING`. A patch is retried on upstream's retriable errors
(``util.Retriable``: 500, 503, a 409, a refused connection; and any
other fault that left no answer, since the same patch may be sent twice) with
``retry.DefaultBackoff``, then dropped with a warning: the pod stays queued and is tried again,
so nothing waits on the network and nothing is lost.

Before each send it checks that the write is still wanted: never after leadership was lost
(``fence``), and never a PodScheduled=False onto a pod the cache already sees bound.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import OrderedDict
from typing import Any, Callable

from kschedfw.cluster.kube.client import ApiError, KubeClient, STRATEGIC_MERGE_PATCH, TransportError
from kschedfw.api.workload_names import API_VERSION, POD_GROUP_KIND
from kschedfw.cluster.kube.ratelog import RateLimitedLog
from kschedfw.fwk.interface import Conflict, NotFound

__all__ = ["StatusWriter", "RETRY_DELAYS", "MAX_PENDING", "retriable"]

log = logging.getLogger(__name__)

RETRY_DELAYS = (0.01, 0.05, 0.25)  # client-go retry.DefaultBackoff: 4 tries, 10 ms x5
MAX_PENDING = 10000  # pods with a patch waiting; more are dropped (the pod is retried anyway)
WORKERS = 2
_RETRIABLE = (500, 503)
_ORDER_KEY = "$setElementOrder/conditions"


class _Patch:
    __slots__ = ("obj", "kind", "status")

    def __init__(self, obj: Any, status: dict[str, Any], kind: str = "Pod") -> None:
        self.obj = obj
        self.kind = kind
        self.status = status

    @property
    def key(self) -> tuple[str, str]:
        """What patches merge by: the object's kind and uid."""
        return self.kind, self.obj.uid

    @property
    def path(self) -> str:
        obj = self.obj
        if self.kind == POD_GROUP_KIND:
            return f"/apis/{API_VERSION}/namespaces/{obj.namespace}/podgroups/{obj.name}/status"
        return f"/api/v1/namespaces/{obj.namespace}/pods/{obj.name}/status"

    @property
    def subresource(self) -> str:
        return "podgroups/status" if self.kind == POD_GROUP_KIND else "pods/status"

    @property
    def subject(self) -> str:
        """The object as warnings name it."""
        return f"{'PodGroup' if self.kind == POD_GROUP_KIND else 'pod'} {self.obj.key}"

    def merge_older(self, older: "_Patch") -> None:
        """Keep the parts of ``older`` this patch does not set (upstream Merge); conditions
        merge by type, the newer one of a type winning."""
        merged = {**older.status, **self.status}
        newer = self.status.get("conditions")
        if newer and older.status.get("conditions"):
            types = {c.get("type") for c in newer}
            merged["conditions"] = [c for c in older.status["conditions"] if c.get("type") not in types] + newer
            order = [*older.status.get(_ORDER_KEY, ()), *self.status.get(_ORDER_KEY, ())]
            if order:
                merged[_ORDER_KEY] = list({e.get("type"): e for e in order}.values())
        self.status = merged


class StatusWriter:
    def __init__(self, client: KubeClient, *, current: Callable[[str, Any], Any],
                 fence: Callable[[], bool], sleep: Callable[[float], None] = time.sleep) -> None:
        """``current(kind, obj)``: the cache's object of that kind, name and uid, or None;
        ``fence()``: False once this process may no longer write."""
        self.client = client
        self.current = current
        self.fence = fence
        self.sleep = sleep
        self.sent = 0
        self.dropped = 0
        self._pending: OrderedDict[tuple[str, str], _Patch] = OrderedDict()
        self._in_flight: set[tuple[str, str]] = set()
        self._ready = threading.Condition()
        self._closed = False
        self._warn = RateLimitedLog(log)
        self._threads = [threading.Thread(target=self._run, name=f"status-{i}", daemon=True) for i in range(WORKERS)]
        for thread in self._threads:
            thread.start()

    def submit(self, pod: Any, status: dict[str, Any], kind: str = "Pod") -> None:
        """Queue a patch of the status of ``pod`` (a PodGroup with its ``kind``), merged into
        one still waiting for it."""
        patch = _Patch(pod, status, kind)
        with self._ready:
            older = self._pending.pop(patch.key, None)
            if older is not None:
                patch.merge_older(older)
            elif len(self._pending) >= MAX_PENDING:
                self.dropped += 1
                self._warn.warning("status-queue-full", "status queue full (%d objects), dropped the patch of %s",
                                   MAX_PENDING, patch.subject)
                return
            self._pending[patch.key] = patch
            self._ready.notify()

    def supersede(self, uid: str, timeout: float) -> None:
        """A bind of this pod is about to be sent: a waiting status patch is dropped whole
        (upstream's call queue overwrites a pending pod_status_patch with the more relevant
        pod_binding; a nominatedNodeName sent after the bind would be refused, 422), and a patch
        in flight is waited for (at most ``timeout`` seconds), so nothing lands after the bind."""
        deadline = time.monotonic() + timeout
        key = ("Pod", uid)
        with self._ready:
            self._pending.pop(key, None)
            while key in self._in_flight:
                left = deadline - time.monotonic()
                if left <= 0:
                    return
                self._ready.wait(left)

    def pending(self) -> int:
        with self._ready:
            return len(self._pending) + len(self._in_flight)

    def flush(self, timeout: float) -> bool:
        """Wait until every queued patch was sent or dropped; False on timeout."""
        deadline = time.monotonic() + timeout
        with self._ready:
            while self._pending or self._in_flight:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._ready.wait(min(left, 0.05))
        return True

    def close(self, timeout: float = 5.0) -> None:
        """Send what is queued (for at most ``timeout`` seconds), then stop."""
        self.flush(timeout)
        with self._ready:
            self._closed = True
            self._ready.notify_all()

    def _next(self) -> tuple[tuple[str, str], _Patch] | None:
        with self._ready:
            while True:
                for key in self._pending:
                    if key not in self._in_flight:
                        patch = self._pending.pop(key)
                        self._in_flight.add(key)
                        return key, patch
                if self._closed:
                    return None
                self._ready.wait()

    def _run(self) -> None:
        while True:
            item = self._next()
            if item is None:
                return
            key, patch = item
            try:
                self._send(patch)
            except Exception:  # a bug here must not stop the writer
                log.exception("patching the status of %s failed", patch.subject)
            finally:
                with self._ready:
                    self._in_flight.discard(key)
                    self._ready.notify_all()

    def _wanted(self, patch: _Patch) -> bool:
        if not self.fence():
            return False
        if patch.kind != "Pod":
            return True
        current = self.current(patch.kind, patch.obj)
        if current is not None and current.node_name and _reports_unscheduled(patch.status):
            return False  # bound meanwhile: a bound pod is never reported unschedulable
        return True

    def _send(self, patch: _Patch) -> None:
        path = patch.path
        body = {"metadata": {"uid": patch.obj.uid}, "status": patch.status}
        for delay in (*RETRY_DELAYS, None):
            if not self._wanted(patch):
                return
            try:
                self.client.request("PATCH", path, body=body, content_type=STRATEGIC_MERGE_PATCH)
                self.sent += 1
                return
            except NotFound:
                return  # the object is gone
            except Conflict as exc:
                error: Exception = exc
            except (ApiError, TransportError) as exc:
                if isinstance(exc, ApiError) and uid_refused(exc):
                    return  # the object is gone: another of the same name took its place
                if not retriable(exc):
                    delay = None
                error = exc
            if delay is None:
                self.dropped += 1
                self._warn.warning(_reason(error), "could not patch the status of %s (patch %s): %s",
                                   patch.subject, patch.subresource, error)
                return
            self.sleep(delay)


def retriable(error: Exception) -> bool:
    """Upstream ``util.Retriable`` for a write that may be sent twice: 500 or 503, or no answer
    at all (a 409 is retried by the caller)."""
    if isinstance(error, ApiError):
        return error.status in _RETRIABLE
    return isinstance(error, TransportError)


def uid_refused(exc: ApiError) -> bool:
    """The server refused a patch carrying another pod's uid: it answers 422 Invalid with the
    cause on ``metadata.uid`` (the uid is immutable), not a 409."""
    details = exc.body.get("details") if isinstance(exc.body, dict) else None
    causes = details.get("causes") if isinstance(details, dict) else None
    return exc.status == 422 and any(isinstance(c, dict) and c.get("field") == "metadata.uid"
                                     for c in causes or [])


def _reports_unscheduled(status: dict[str, Any]) -> bool:
    return any(c.get("type") == "PodScheduled" and c.get("status") == "False"
               for c in status.get("conditions") or () if isinstance(c, dict))


def _reason(error: Exception) -> str:
    """What groups repeated warnings: the kind of failure, not the pod."""
    if isinstance(error, ApiError):
        return f"status-{error.status}"
    return f"status-{type(error).__name__}"
