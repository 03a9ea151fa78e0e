"""kube-scheduler-simulator's recorder files, read as a trace so that `simulate --replay` takes them.

Its recorder (``sched-recorder``) writes JSON lines ``{"time": RFC 3339, "event": "Add" | "Update" |
"Delete", "resource": <object>}``, one per informer callback, for namespaces, PriorityClasses,
StorageClasses, PVCs, PVs, nodes and pods (its defaults). The mapping and what such a file lacks:

- There is no first list apart from the events (the informers' lists come as ``Add`` records) and no
  ``synced`` mark: the replay starts empty at the first record's time and every record is an event
  at its time, so the listed objects are created in the first instant, bound pods bound.
- A ``Delete`` carries only the object's kind, name and namespace: the object as last recorded is
  used (its uid, its node).
- No decisions are recorded: a pod ``Update`` that sets ``spec.nodeName`` is read as the binding,
  by the pod's schedulerName; with no FailedScheduling Events, no first verdict is known, so the
  agreement compares nodes and whether pods were bound, not first verdicts.
- Not recorded at all: PDBs, RuntimeClasses, CSINodes, CSIDrivers, CSIStorageCapacities, the DRA
  kinds, PodGroups and Workloads, and nominations; objects keep every field (managedFields
  included), which is dropped here as a trace drops it.
"""

from __future__ import annotations

import datetime as _dt
import json
from pathlib import Path
from typing import Any, Iterator

from kschedfw.trace.format import FORMAT_VERSION, slim
from kschedfw.trace.reader import TraceError, object_key

__all__ = ["is_kss_record_file", "kss_lines"]

_EVENTS = {"Add": "ADDED", "Update": "MODIFIED", "Delete": "DELETED"}


def is_kss_record_file(path: str | Path) -> bool:
    """A plain (not gzip) file whose first line is a recorder record."""
    try:
        with open(path, "rb") as fh:
            start = fh.read(2)
            if start == b"\x1f\x8b":
                return False
            first = (start + fh.readline()).strip()
    except OSError:
        return False
    try:
        record = json.loads(first)
    except ValueError:
        return False
    return isinstance(record, dict) and "resource" in record and "event" in record


def _time(value: Any, path: str | Path, number: int) -> float:
    try:
        text = str(value)
        if "." in text:  # Go's nanoseconds: Python takes up to microseconds
            head, _, rest = text.partition(".")
            digits = "".join(c for c in rest if c.isdigit())
            text = f"{head}.{digits[:6]}{rest[len(digits):]}"
        return _dt.datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()
    except ValueError:
        raise TraceError(f"{path}:{number}: time {value!r} is not an RFC 3339 time") from None


def kss_lines(path: str | Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """The file's records as numbered trace lines: a header, ``synced`` at the first record's
    time, then an event per record and a Bound decision per pod update that binds it."""
    last: dict[tuple[str, str, str, str], dict[str, Any]] = {}
    started = False
    with open(path, "rb") as fh:
        for number, raw in enumerate(fh, 1):
            if not raw.strip():
                continue
            try:
                record = json.loads(raw)
            except ValueError as exc:
                raise TraceError(f"{path}:{number}: not a JSON line: {exc}") from None
            event = _EVENTS.get(str(record.get("event"))) if isinstance(record, dict) else None
            obj = record.get("resource") if isinstance(record, dict) else None
            if event is None or not isinstance(obj, dict) or not isinstance(obj.get("metadata"), dict):
                raise TraceError(f"{path}:{number}: not a kube-scheduler-simulator record "
                                 "(time, event Add/Update/Delete, resource)")
            t = _time(record.get("time"), path, number)
            if not started:
                started = True
                yield number, {"type": "header", "format_version": FORMAT_VERSION, "started": t,
                               "server": "", "resources": []}
                yield number, {"type": "synced", "t": t}
            key = object_key(obj)
            before = last.get(key)
            if event == "DELETED":
                obj = last.pop(key, obj)
            else:
                obj = last[key] = slim(obj)
            yield number, {"type": "event", "t": t, "event": event, "object": obj}
            if obj.get("kind") == "Pod" and event == "MODIFIED":
                node = (obj.get("spec") or {}).get("nodeName")
                if node and not ((before or {}).get("spec") or {}).get("nodeName"):
                    meta, spec = obj["metadata"], obj.get("spec") or {}
                    yield number, {"type": "decision", "t": t, "decision": "Bound", "derived": True,
                                   "pod": f"{meta.get('namespace', '')}/{meta.get('name', '')}",
                                   "uid": meta.get("uid", ""), "node": node,
                                   "scheduler": spec.get("schedulerName") or "default-scheduler"}
