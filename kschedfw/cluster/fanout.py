"""Who hears of a change, and in which order: the same in both backends.

The scheduler's handlers (``watch``) and the plugins' per-Kind subscriptions (``subscribe``) are
called in the order they were registered. Plugins subscribe while the profiles are built, before
the scheduler starts watching, so a plugin's own state is up to date when the scheduler's
QueueingHints (which may read it) run: the order :class:`~kschedfw.fwk.interface.Subscriber`
promises.
"""

from __future__ import annotations

from kschedfw.fwk.interface import Unsubscribe, WatchCallback, WatchEvent

__all__ = ["Fanout"]


class Fanout:
    def __init__(self) -> None:
        self._callbacks: list[tuple[str | None, WatchCallback]] = []

    def watch(self, callback: WatchCallback) -> None:
        """Every change, of every Kind."""
        self._callbacks.append((None, callback))

    def subscribe(self, kind: str, callback: WatchCallback) -> Unsubscribe:
        """Changes of ``kind`` only."""
        entry = (kind, callback)
        self._callbacks.append(entry)

        def unsubscribe() -> None:
            if entry in self._callbacks:
                self._callbacks.remove(entry)
        return unsubscribe

    def emit(self, event: WatchEvent) -> None:
        kind = event.kind
        for wanted, callback in list(self._callbacks):
            if wanted is None or wanted == kind:
                callback(event)
