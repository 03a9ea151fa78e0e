"""Waiting pods: pods that a Permit plugin asked to Wait, until allowed, rejected or timed out."""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable

from kschedfw.fwk.status import Code, Status

if TYPE_CHECKING:
    from kschedfw.api import Pod


class WaitingPod:
    """A pod held at Permit. Each waiting plugin has its own deadline (upstream per-plugin timers).

    ``on_resolved(waiting_pod)`` is called once, when the last plugin allows it or any rejects it;
    the scheduler then resumes or fails the binding cycle.
    """

    def __init__(self, pod: "Pod", node_name: str, deadlines: dict[str, float],
                 on_resolved: Callable[["WaitingPod"], None] | None = None) -> None:
        self.pod = pod
        self.node_name = node_name
        self.pending: dict[str, float] = dict(deadlines)
        self.timeouts: dict[str, float] = {}
        self.status: Status | None = None
        self.on_resolved = on_resolved

    def get_pod(self) -> "Pod":
        return self.pod

    def get_pending_plugins(self) -> list[str]:
        return sorted(self.pending)

    def allow(self, plugin_name: str) -> None:
        if self.status is not None:
            return
        self.pending.pop(plugin_name, None)
        if not self.pending:
            self._resolve(Status(Code.Success))

    def reject(self, plugin_name: str, message: str) -> None:
        if self.status is None:
            self._resolve(Status(Code.Unschedulable, (message,), plugin=plugin_name))

    def preempt(self, plugin_name: str, message: str) -> bool:
        """Rejected because it was chosen as a preemption victim: not marked unschedulable.
        False when it was already allowed or rejected (upstream WaitingPod.Preempt)."""
        if self.status is not None:
            return False
        self._resolve(Status(Code.Error, (message,), plugin=plugin_name))
        return True

    def expire(self, now: float) -> None:
        """Reject for the first plugin whose deadline has passed (called by the scheduler's timer)."""
        for plugin, deadline in sorted(self.pending.items(), key=lambda kv: kv[1]):
            if deadline <= now:
                waited = self.timeouts.get(plugin, 0.0)
                self.reject(plugin, f"rejected due to timeout after waiting {_go_duration(waited)} at plugin {plugin}")
                return

    def next_deadline(self) -> float | None:
        return min(self.pending.values()) if self.pending and self.status is None else None

    def _resolve(self, status: Status) -> None:
        self.status = status
        if self.on_resolved is not None:
            self.on_resolved(self)


def _go_duration(seconds: float) -> str:
    """Render seconds as Go's time.Duration String does for whole-ish values (e.g. 10s, 1m30s)."""
    if seconds == 0:
        return "0s"
    whole = int(seconds)
    frac = seconds - whole
    hours, rem = divmod(whole, 3600)
    minutes, secs = divmod(rem, 60)
    sec_text = f"{secs + frac:g}s"
    if hours:
        return f"{hours}h{minutes}m{sec_text}"
    if minutes:
        return f"{minutes}m{sec_text}"
    return sec_text
