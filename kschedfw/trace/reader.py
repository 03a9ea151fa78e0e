"""Reading a trace back: its lines, checked against the format's version, and the cluster as the
trace starts (the one reading of the initial list that ``simulate --kubeconfig`` and a replay
share)."""

from __future__ import annotations

import gzip
import json
import zlib
from pathlib import Path
from typing import Any, Iterable, Iterator

from kschedfw.trace.format import FORMAT_VERSION

__all__ = ["TraceError", "read_lines", "numbered_lines", "initial_objects", "object_key", "Snapshot"]


class TraceError(ValueError):
    """A file that is not a trace this version can read (the message says why)."""


def read_lines(path: str | Path) -> Iterator[dict[str, Any]]:
    """Every line of the trace at ``path``, header first. A trace cut short (a recorder killed
    mid-write) ends at its last whole line; anything else unreadable is a :class:`TraceError`."""
    for _, line in numbered_lines(path):
        yield line


def numbered_lines(path: str | Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """:func:`read_lines` with each line's number in the file (from 1), for messages."""
    try:
        with gzip.open(path, "rb") as fh:
            first = True
            number = 0
            while True:
                try:
                    raw = fh.readline()
                except (EOFError, zlib.error):
                    return  # cut short: what was flushed is whole
                if not raw:
                    return
                number += 1
                if not raw.endswith(b"\n"):
                    return  # the last line was being written
                try:
                    line = json.loads(raw)
                except ValueError as exc:
                    raise TraceError(f"{path}:{number}: not a JSON line: {exc}") from None
                if not isinstance(line, dict) or not isinstance(line.get("type"), str):
                    raise TraceError(f"{path}:{number}: a line without a type")
                if first:
                    _check_header(path, line)
                    first = False
                yield number, line
    except gzip.BadGzipFile:
        raise TraceError(f"{path}: not a trace (not gzip-compressed)") from None
    except FileNotFoundError:
        raise TraceError(f"{path}: no such file") from None


def _check_header(path: str | Path, line: dict[str, Any]) -> None:
    version = line.get("format_version")
    if line["type"] != "header" or not isinstance(version, int):
        raise TraceError(f"{path}:1: not a trace (no header line with a format_version)")
    if version > FORMAT_VERSION:
        raise TraceError(f"{path}:1: trace format version {version} is newer than this kschedfw reads "
                         f"({FORMAT_VERSION}): upgrade kschedfw")


def object_key(obj: dict[str, Any]) -> tuple[str, str, str, str]:
    """An object's identity in a trace: apiVersion, kind, namespace, name."""
    meta = obj.get("metadata") or {}
    return (str(obj.get("apiVersion", "")), str(obj.get("kind", "")), str(meta.get("namespace") or ""),
            str(meta.get("name", "")))


class Snapshot:
    """The cluster built from list and event lines, applied in order: objects by apiVersion,
    kind, namespace and name, in the order each first appeared."""

    def __init__(self) -> None:
        self._objects: dict[tuple[str, str, str, str], dict[str, Any]] = {}
        self.synced = False

    def apply(self, line: dict[str, Any]) -> None:
        """One trace line (lines other than list and event, and any after ``synced``, change nothing)."""
        type_ = line["type"]
        if type_ == "synced":
            self.synced = True
        if self.synced or type_ not in ("list", "event"):
            return
        obj = line.get("object")
        if not isinstance(obj, dict):
            return
        key = object_key(obj)
        if line.get("event") == "DELETED":
            self._objects.pop(key, None)
        else:
            self._objects[key] = obj

    def objects(self) -> list[dict[str, Any]]:
        return list(self._objects.values())


def initial_objects(lines: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """The cluster as the trace starts: every listed object with the events before ``synced``
    applied. A trace that ends before ``synced`` is a :class:`TraceError`."""
    snapshot = Snapshot()
    for line in lines:
        snapshot.apply(line)
        if snapshot.synced:
            return snapshot.objects()
    raise TraceError("the trace ends before every kind was listed (no synced line)")
