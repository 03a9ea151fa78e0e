"""DefaultBinder: bind the pod to the chosen node through the cluster client."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kschedfw import hookimpl
from kschedfw.fwk.status import Status

if TYPE_CHECKING:
    from kschedfw.api import Pod
    from kschedfw.fwk.cycle_state import CycleState
    from kschedfw.fwk.interface import Handle


class DefaultBinder:
    """Bind: posts the binding (pod namespace/name/uid -> Node ``node_name``) via ``handle.client``.

    Any exception from the client becomes an Error status.
    """

    name = "DefaultBinder"

    def __init__(self, args: dict[str, Any] | None = None, handle: Handle | None = None) -> None:
        self.handle = handle

    @hookimpl
    def bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        client = self.handle.client if self.handle is not None else None
        if client is None:
            return Status.as_status("no client to bind pods with")
        try:
            client.bind(pod, node_name)
        except Exception as exc:  # noqa: BLE001 - any client failure is an Error status
            return Status.as_status(exc)
        return None
