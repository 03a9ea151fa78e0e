"""A scheduler that notes, in order, each watch event its handlers get and each bind's outcome,
for the test that both backends hand a scripted sequence of changes to the handlers in one order."""

from __future__ import annotations

import threading
from typing import Any

from kschedfw.scheduler import Scheduler

#: what the script changes: node n1 created, pod p created (and bound by the scheduler), p's
#: label "step" set to "updated", p deleted
EXPECTED_EVENTS = [
    ("ADDED", "Node", "n1", "", ""),
    ("ADDED", "Pod", "p", "", ""),
    ("MODIFIED", "Pod", "p", "n1", ""),
    ("MODIFIED", "Pod", "p", "n1", "updated"),
    ("DELETED", "Pod", "p", "n1", "updated"),
]
BIND_FINISHED = ("BindFinished", "Pod", "p", "n1", "")


class RecordingScheduler(Scheduler):
    """Notes ``(type, kind, name, node, label "step")`` for the watch events of objects named in
    ``names`` (node names are prefixed by ``node_prefix``, dropped in the note), a
    ``BindFinished`` entry when a bind's outcome is handled, and every handler call made inside a
    Bind call on the same thread (``inside_bind``: upstream never runs a handler inside the
    binding goroutine's call). The note is watched before the scheduler's handlers, so the
    backend's fan-out calls it just before them, with each event."""

    def __init__(self, config: Any, registry: Any, cluster: Any, *, namespace: str = "default",
                 node_prefix: str = "", **kwargs: Any) -> None:
        self.log: list[tuple[str, str, str, str, str]] = []
        self.inside_bind: list[tuple[str, str, str]] = []
        self._binding: int | None = None  # the thread running a Bind call
        self._namespace = namespace
        self._node_prefix = node_prefix
        cluster.watch(self._note_event)
        super().__init__(config, registry, cluster, **kwargs)
        binding = self.binding
        bind, bind_finished = binding.bind, binding.bind_finished

        def noting_bind(*args: Any) -> Any:
            self._binding = threading.get_ident()
            try:
                return bind(*args)
            finally:
                self._binding = None

        def noting_bind_finished(fwk: Any, state: Any, qpi: Any, assumed: Any, host: str, *rest: Any) -> None:
            if assumed.namespace == self._namespace:
                self.log.append(("BindFinished", "Pod", assumed.name, host[len(self._node_prefix):], ""))
            bind_finished(fwk, state, qpi, assumed, host, *rest)

        binding.bind = noting_bind  # type: ignore[method-assign]
        binding.bind_finished = noting_bind_finished  # type: ignore[method-assign]

    def _note(self, kind: str, obj: Any) -> str | None:
        if kind == "Node" and obj.name.startswith(self._node_prefix):
            return obj.name[len(self._node_prefix):]
        if kind == "Pod" and obj.namespace == self._namespace:
            return obj.name
        return None

    def _note_event(self, event: Any) -> None:
        obj = event.new if event.new is not None else event.old
        name = self._note(event.kind, obj)
        if name is not None:
            node = obj.node_name[len(self._node_prefix):] if event.kind == "Pod" and obj.node_name else ""
            label = obj.labels.get("step", "") if event.kind == "Pod" else ""
            if event.kind == "Pod" and obj.deletion_timestamp is not None:
                label += " terminating"
            self.log.append((event.type, event.kind, name, node, label))
            if self._binding == threading.get_ident():
                self.inside_bind.append((event.type, event.kind, name))
