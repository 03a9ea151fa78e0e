"""A background loop of the kube backend (an informer, late discovery): one daemon thread that
runs ``_run`` until :meth:`stop`, waiting on ``_stop`` between tries."""

from __future__ import annotations

import threading

__all__ = ["BackgroundLoop"]


class BackgroundLoop:
    thread_name = "loop"

    def __init__(self) -> None:
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name=self.thread_name, daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()

    def join(self, timeout: float | None = None) -> None:
        if self._thread is not None:
            self._thread.join(timeout)

    def _run(self) -> None:
        raise NotImplementedError
