"""Fills a trace from the API server with ``kschedfw run``'s informers (one per recorded kind,
the same list/watch, relist after a 410 and backoff), so a recording rides out API faults as a
scheduler does.

Objects are never parsed into :mod:`kschedfw.api` types: each stays the server's JSON, slimmed
(:func:`kschedfw.trace.format.slim`), and goes to ``emit`` as a trace line the moment it comes.
An informer's first list gives ``list`` lines, anything after it (a relist's differences
included) ``event`` lines; pod updates and FailedScheduling Events also give ``decision`` lines.
"""

from __future__ import annotations

import datetime as _dt
import threading
import time
from typing import Any, Callable

import attrs
import msgspec

from kschedfw.cluster.kube import leanpod
from kschedfw.cluster.kube.client import KubeClient
from kschedfw.cluster.kube.discovery import LateDiscovery, discover
from kschedfw.cluster.kube.informer import Informer
from kschedfw.cluster.kube.resources import Resource
from kschedfw.trace.format import slim
from kschedfw.trace.reader import Snapshot
from kschedfw.trace.resources import EVENTS, TRACED

__all__ = ["NotListed", "Recorder", "RecordedObject", "server_version", "take_snapshot"]

Emit = Callable[[dict[str, Any]], None]

#: the Event fields a FailedScheduling decision reads (the informer keeps only these)
_EVENT_FIELDS = ("metadata", "regarding", "note", "reason", "reportingController", "eventTime", "series",
                 "deprecatedLastTimestamp")


@attrs.frozen
class RecordedObject:
    """An object as the informer keeps it: its key and version and its slimmed JSON, encoded
    (a decoded dict holds about five times the bytes: for a cluster of 100,000 pods, most of the
    recorder's memory, and all of a first list's until its last page); ``placement`` is a pod's
    node and nominated node, what the next update's decisions compare with."""

    name: str
    namespace: str
    resource_version: str
    encoded: bytes
    placement: tuple[str, str] = ("", "")

    @property
    def raw(self) -> dict[str, Any]:
        decoded: dict[str, Any] = _decode(self.encoded)
        return decoded


_encode = msgspec.json.Encoder().encode
_decode = msgspec.json.Decoder().decode


def _recorded(resource: Resource, d: Any) -> RecordedObject | None:
    if not isinstance(d, dict):
        raise ValueError("not an object")
    if "kind" not in d or "apiVersion" not in d:  # list items carry neither
        d = {"kind": resource.kind, "apiVersion": resource.group_version, **d}
    if resource is EVENTS:
        if d.get("reason") != "FailedScheduling":
            return None  # other Events are not decisions: not even kept
        d = {k: d[k] for k in _EVENT_FIELDS if k in d}
        d["metadata"] = {k: v for k, v in (d.get("metadata") or {}).items()
                         if k in ("name", "namespace", "resourceVersion")}
    else:
        d = slim(d)
    meta = d.get("metadata") or {}
    name = meta.get("name")
    if not isinstance(name, str) or not name:
        raise ValueError("no metadata.name")
    placement = ("", "")
    if resource.kind == "Pod" and resource.group_version == "v1":
        spec, status = d.get("spec"), d.get("status")
        placement = (str((spec.get("nodeName") if isinstance(spec, dict) else "") or ""),
                     str((status.get("nominatedNodeName") if isinstance(status, dict) else "") or ""))
    return RecordedObject(name, str(meta.get("namespace") or ""), str(meta.get("resourceVersion") or ""),
                          _encode(d), placement)


def _placed(obj: RecordedObject) -> dict[str, Any]:
    """What :func:`pod_decisions` reads of a pod's previous version."""
    return {"spec": {"nodeName": obj.placement[0]}, "status": {"nominatedNodeName": obj.placement[1]}}


def _epoch(stamp: Any) -> float | None:
    """An RFC 3339 time (Time or MicroTime) as seconds since the epoch; None if it is not one."""
    if not isinstance(stamp, str) or not stamp:
        return None
    try:
        return _dt.datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def pod_decisions(old: dict[str, Any] | None, new: dict[str, Any]) -> list[dict[str, Any]]:
    """The decisions a pod update shows: a binding (``spec.nodeName`` set), a nomination change."""
    def part(d: dict[str, Any] | None, section: str) -> dict[str, Any]:
        value = (d or {}).get(section)
        return value if isinstance(value, dict) else {}

    meta, spec, status = part(new, "metadata"), part(new, "spec"), part(new, "status")
    pod = {"pod": f"{meta.get('namespace', '')}/{meta.get('name', '')}", "uid": meta.get("uid", ""),
           "scheduler": spec.get("schedulerName") or "default-scheduler"}
    out: list[dict[str, Any]] = []
    if old is not None and spec.get("nodeName") and not part(old, "spec").get("nodeName"):
        at = next((_epoch(c.get("lastTransitionTime")) for c in status.get("conditions") or []
                   if isinstance(c, dict) and c.get("type") == "PodScheduled" and c.get("status") == "True"), None)
        out.append({"type": "decision", "decision": "Bound", **pod, "node": spec["nodeName"],
                    **({"at": at} if at is not None else {})})
    nominated = status.get("nominatedNodeName") or ""
    if nominated != (part(old, "status").get("nominatedNodeName") or ""):
        out.append({"type": "decision", "decision": "Nominated", **pod, "node": nominated})
    return out


def event_decision(event: dict[str, Any]) -> dict[str, Any]:
    """A FailedScheduling Event as a decision line."""
    regarding = event.get("regarding") or {}
    series = event.get("series") or {}
    at = (_epoch(series.get("lastObservedTime")) or _epoch(event.get("eventTime"))
          or _epoch(event.get("deprecatedLastTimestamp")))
    return {"type": "decision", "decision": "FailedScheduling",
            "pod": f"{regarding.get('namespace', '')}/{regarding.get('name', '')}",
            "uid": regarding.get("uid", ""), "scheduler": event.get("reportingController", ""),
            "message": event.get("note", ""), **({"at": at} if at is not None else {})}


class Recorder:
    """:meth:`discover` what the server serves, :meth:`start` an informer per kind (and one for
    Events), :meth:`wait_for_sync` (which emits the ``synced`` line), :meth:`stop`."""

    def __init__(self, client: KubeClient, emit: Emit, *, resources: tuple[Resource, ...] = TRACED,
                 informer_options: dict[str, Any] | None = None) -> None:
        self.client = client
        self.emit = emit
        self.resources = resources
        self.informer_options = dict(informer_options or {})
        self.served: list[Resource] = []
        self.missing: list[Resource] = []
        self.informers: list[Informer] = []
        self._synced = False
        self._late: LateDiscovery | None = None
        self._lock = threading.Lock()  # late informers start from the discovery thread
        self._stopped = False

    def discover(self) -> list[Resource]:
        """The recorded kinds the server serves now (the optional ones by discovery)."""
        self.served, self.missing = discover(self.client, self.resources)
        return self.served

    def start(self) -> None:
        """An informer per served kind and one for Events; the optional kinds not served yet are
        asked for again, as ``run`` asks, and recorded once they appear (their objects as
        ``ADDED`` events: they were not in the first list)."""
        if not self.served:
            self.discover()
        for resource in [*self.served, EVENTS]:
            self._start_informer(resource)
        if self.missing:
            self._late = LateDiscovery(self.client, self.missing, self._start_informer,
                                       initial_backoff=self.informer_options.get("initial_backoff", 0.8),
                                       max_backoff=self.informer_options.get("max_backoff", 30.0))
            self._late.start()

    def _start_informer(self, resource: Resource) -> None:
        with self._lock:
            if self._stopped:
                return
            decoders: dict[str, Any] = {}
            if resource.kind == "Pod" and resource.group_version == "v1":
                decoders = {"decode_page": leanpod.pod_list_decoder(), "decode_event": leanpod.pod_event_decoder()}
            informer = Informer(self.client, resource, _ignore, parse=_recorded, **decoders,
                                **self.informer_options)
            informer.sink = self._sink(informer)
            self.informers.append(informer)
            informer.start()

    def _sink(self, informer: Informer) -> Callable[[str, str, Any, Any], None]:
        emit = self.emit
        events = informer.resource is EVENTS
        pods = informer.resource.kind == "Pod" and informer.resource.group_version == "v1"

        def sink(type_: str, kind: str, old: RecordedObject | None, new: RecordedObject | None) -> None:
            listing = not informer.synced.is_set()
            if events:  # decisions made while recording; the first list is history
                if not listing and new is not None:
                    emit(event_decision(new.raw))
                return
            obj = new if new is not None else old
            assert obj is not None
            if listing:
                with self._lock:  # a first list ending after ``synced`` (a kind served late) is events
                    if not self._synced:
                        emit({"type": "list", "object": obj.raw})
                        return
            raw = obj.raw
            emit({"type": "event", "event": type_, "object": raw})
            if pods and new is not None:
                for decision in pod_decisions(_placed(old) if old is not None else None, raw):
                    emit(decision)
        return sink

    def unsynced(self) -> list[str]:
        with self._lock:
            return [i.resource.path for i in self.informers if not i.synced.is_set()]

    def wait_for_sync(self, timeout: float | None = None, stop: threading.Event | None = None) -> bool:
        """True once every informer started by :meth:`start` has listed (the ``synced`` line is
        then emitted, once); False at ``timeout`` or once ``stop`` is set."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._lock:
            first = list(self.informers)
        for informer in first:
            while not informer.synced.wait(0.2):
                if (stop is not None and stop.is_set()) or (deadline is not None and time.monotonic() > deadline):
                    return False
        with self._lock:  # a kind discovered from now on is not part of the first list
            if self._synced:
                return True
            self._synced = True
            self.emit({"type": "synced"})
        return True

    def stop(self) -> None:
        with self._lock:
            self._stopped = True
        if self._late is not None:
            self._late.stop()
        for informer in self.informers:
            informer.stop()


def _ignore(*_: Any) -> None:
    """The sink an informer is built with, replaced by :meth:`Recorder._sink` at once."""


def server_version(client: KubeClient) -> str:
    """The server's ``gitVersion`` (``/version``); raises as the client does when it does not answer."""
    answer = client.get("/version")
    return str((answer or {}).get("gitVersion", "")) if isinstance(answer, dict) else ""


class NotListed(TimeoutError):
    """Some kinds could not be listed in time (RBAC, a server that does not answer...)."""


def take_snapshot(client: KubeClient, *, timeout: float = 60.0) -> list[dict[str, Any]]:
    """What ``record`` writes as its first part, in memory: every recorded object as the
    informers have listed it; :class:`NotListed` when some kind was not listed in ``timeout``."""
    snapshot = Snapshot()
    lock = threading.Lock()

    def apply(line: dict[str, Any]) -> None:
        with lock:
            snapshot.apply(line)

    recorder = Recorder(client, apply)
    recorder.start()
    try:
        if not recorder.wait_for_sync(timeout):
            raise NotListed(f"not listed within {timeout:.0f}s: {', '.join(recorder.unsynced())}")
    finally:
        recorder.stop()
    with lock:
        return snapshot.objects()
