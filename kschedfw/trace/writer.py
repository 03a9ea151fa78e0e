"""Streams trace lines to a gzip file as they come: nothing is kept but the counters, so
memory stays flat however long the recording. Lines come from every informer's thread; one
lock keeps each whole and their times in file order."""

from __future__ import annotations

import gzip
import threading
import time
from pathlib import Path
from typing import IO, Any, Callable

import msgspec

from kschedfw.trace.format import FORMAT_VERSION

__all__ = ["TraceWriter"]

#: how often what was written is flushed to disk, so a killed recorder leaves a readable trace
FLUSH_EVERY = 2.0
_COUNTERS = {"list": "listed", "event": "events", "decision": "decisions"}


class TraceWriter:
    """Writes the header at once; :meth:`write` each further line; :meth:`close` the end line."""

    def __init__(self, path: str | Path, *, server: str = "", resources: list[dict[str, str]] | None = None,
                 clock: Callable[[], float] = time.time, compresslevel: int = 6) -> None:
        self.clock = clock
        started = clock()
        self._raw: IO[bytes] = open(path, "wb")
        self._gz = gzip.GzipFile(fileobj=self._raw, mode="wb", compresslevel=compresslevel)
        self._encode = msgspec.json.Encoder().encode
        self._lock = threading.Lock()
        self._flushed = started
        self.closed = False
        self._size = 0
        self.counts = {"listed": 0, "events": 0, "decisions": 0}
        self._put({"type": "header", "format_version": FORMAT_VERSION, "started": started, "server": server,
                   "resources": list(resources or [])})

    @property
    def bytes_written(self) -> int:
        """Compressed bytes on disk so far (what was flushed)."""
        with self._lock:
            return self._size if self.closed else self._raw.tell()

    def write(self, line: dict[str, Any]) -> None:
        """One line (a ``type`` and its fields), stamped with the time now (ignored once
        closed: informers may still be stopping)."""
        with self._lock:
            if self.closed:
                return
            now = self.clock()
            self._put({"type": line["type"], "t": now, **line})
            counter = _COUNTERS.get(line["type"])
            if counter:
                self.counts[counter] += 1
            if now - self._flushed >= FLUSH_EVERY:
                self._gz.flush()
                self._flushed = now

    def flush(self) -> None:
        """What was written, to disk now (a reader sees every line so far)."""
        with self._lock:
            if not self.closed:
                self._gz.flush()
                self._flushed = self.clock()

    def close(self) -> None:
        """Write the end line and close the file (once)."""
        with self._lock:
            if self.closed:
                return
            self._put({"type": "end", "t": self.clock(), "counts": dict(self.counts)})
            self.closed = True
            self._gz.close()
            self._size = self._raw.tell()
            self._raw.close()

    def _put(self, line: dict[str, Any]) -> None:
        self._gz.write(self._encode(line) + b"\n")
