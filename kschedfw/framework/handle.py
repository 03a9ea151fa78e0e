"""Handle: what a plugin receives at construction to reach the scheduler and the cluster.

The scheduler fills the providers in; tests and tools build a Handle with only what they need
(for example ``Handle(snapshot=Snapshot.from_objects(nodes, pods))``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Iterable, Protocol

from kschedfw.cache.snapshot import Snapshot
from kschedfw.features import DEFAULT_FEATURE_GATES

if TYPE_CHECKING:
    from kschedfw.api import Pod
    from kschedfw.framework.cycle_state import CycleState
    from kschedfw.framework.status import Status
    from kschedfw.framework.types import NodeInfo, NominatingInfo


class ObjectLister(Protocol):
    """Read access to cluster objects by kind (``"Namespace"``, ``"PriorityClass"``, ``"PodGroup"``...)."""

    def get(self, kind: str, name: str, namespace: str = "") -> Any: ...

    def list(self, kind: str, namespace: str | None = None) -> list[Any]: ...


class EmptyLister:
    def get(self, kind: str, name: str, namespace: str = "") -> Any:
        return None

    def list(self, kind: str, namespace: str | None = None) -> list[Any]:
        return []


class Handle:
    """Everything a plugin may use besides its args, as upstream's framework.Handle.

    Attributes set by the scheduler (all optional for tests):
    ``snapshot`` (valid during a scheduling cycle), ``lister`` (cluster objects), ``client``
    (writes: bind, delete, patch status, events), ``nominator``, ``waiting_pods``, ``framework``
    (the profile runtime: run_filter_plugins_with_nominated_pods, ...), ``clock`` (``now()`` in
    seconds), ``activate`` (move pods to the active queue), ``profile_name``.
    """

    def __init__(self, *, snapshot: Snapshot | None = None, lister: ObjectLister | None = None,
                 client: Any = None, nominator: Any = None, waiting_pods: Any = None,
                 framework: Any = None, clock: Any = None, profile_name: str = "default-scheduler",
                 activate: Callable[[Iterable["Pod"]], None] | None = None,
                 feature_gates: dict[str, bool] | None = None) -> None:
        self.snapshot = snapshot if snapshot is not None else Snapshot()
        self.lister: ObjectLister = lister if lister is not None else EmptyLister()
        self.client = client
        self.nominator = nominator
        self.waiting_pods = waiting_pods
        self.framework = framework
        self.clock = clock
        self.profile_name = profile_name
        self.feature_gates: dict[str, bool] = dict(feature_gates or DEFAULT_FEATURE_GATES)
        self._activate = activate

    def activate(self, pods: Iterable["Pod"]) -> None:
        if self._activate is not None:
            self._activate(pods)

    def get_waiting_pod(self, uid: str) -> Any:
        return self.waiting_pods.get(uid) if self.waiting_pods is not None else None

    def iterate_over_waiting_pods(self, callback: Callable[[Any], None]) -> None:
        if self.waiting_pods is not None:
            for wp in list(self.waiting_pods.values()):
                callback(wp)

    def reject_waiting_pod(self, uid: str) -> bool:
        wp = self.get_waiting_pod(uid)
        if wp is None:
            return False
        wp.reject("", "removed")
        return True

    def nominated_pods_for_node(self, node_name: str) -> list["Pod"]:
        return self.nominator.nominated_pods_for_node(node_name) if self.nominator is not None else []

    def add_nominated_pod(self, pod: "Pod", info: "NominatingInfo") -> None:
        if self.nominator is not None:
            self.nominator.add_nominated_pod(pod, info)

    def delete_nominated_pod_if_exists(self, pod: "Pod") -> None:
        if self.nominator is not None:
            self.nominator.delete_nominated_pod_if_exists(pod)

    def run_filter_plugins_with_nominated_pods(self, state: "CycleState", pod: "Pod",
                                               node_info: "NodeInfo") -> "Status | None":
        return self.framework.run_filter_plugins_with_nominated_pods(state, pod, node_info)

    def run_pre_filter_extension_add_pod(self, state: "CycleState", pod: "Pod", pod_to_add: "Pod",
                                         node_info: "NodeInfo") -> "Status | None":
        return self.framework.run_pre_filter_extension_add_pod(state, pod, pod_to_add, node_info)

    def run_pre_filter_extension_remove_pod(self, state: "CycleState", pod: "Pod", pod_to_remove: "Pod",
                                            node_info: "NodeInfo") -> "Status | None":
        return self.framework.run_pre_filter_extension_remove_pod(state, pod, pod_to_remove, node_info)
