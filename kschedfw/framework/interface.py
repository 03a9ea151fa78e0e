"""The contract between the scheduling core, its plugins and the world it runs in.

The counterpart of upstream's ``pkg/scheduler/framework/interface.go``: everything a plugin may
rely on is named here as a ``typing.Protocol``, and nothing else. A plugin receives a
:class:`Handle`; the scheduler runs against a :class:`Backend`. The embedded cluster
(``kschedfw.cluster.memory``) is one Backend, a real API server is another; a plugin never
imports either.

Objects are the parsed API types of :mod:`kschedfw.api` (``Pod``, ``Node``, ...) for the kinds
kschedfw knows, and :class:`kschedfw.api.Unstructured`-like objects (``kind``, ``name``,
``namespace``, ``raw``) for custom resources such as ``PodGroup`` or ``ElasticQuota``.
"""

from __future__ import annotations

import datetime as _dt
from typing import TYPE_CHECKING, Any, Callable, Iterable, Literal, Mapping, Protocol, runtime_checkable

import attrs

if TYPE_CHECKING:
    from kschedfw.api import Pod
    from kschedfw.framework.cycle_state import CycleState
    from kschedfw.framework.status import Status
    from kschedfw.framework.types import NodeInfo, NominatingInfo

__all__ = [
    "ADDED", "MODIFIED", "DELETED", "WatchEvent", "NotFound", "Conflict",
    "Clock", "ObjectLister", "Subscriber", "Unsubscribe", "Client", "EventRecorder",
    "SharedLister", "Nominator", "WaitingPodHandle", "FeatureGateReader", "Handle", "Backend",
    "Plugin", "PluginFactory",
]

WatchEventType = Literal["ADDED", "MODIFIED", "DELETED"]
ADDED: WatchEventType = "ADDED"
MODIFIED: WatchEventType = "MODIFIED"
DELETED: WatchEventType = "DELETED"


@attrs.frozen
class WatchEvent:
    """One change of one object, as an informer delivers it: ``old`` is None on ADDED, ``new``
    is None on DELETED."""

    type: WatchEventType
    kind: str
    old: Any
    new: Any


class NotFound(LookupError):
    """The object does not exist (HTTP 404)."""


class Conflict(ValueError):
    """The write conflicts with the object's current state (HTTP 409)."""


# ---------------------------------------------------------------------------------------- time
class Clock(Protocol):
    """The scheduler's time. ``now()`` drives queues and timeouts (seconds, monotonic);
    ``now_datetime()`` is the wall-clock instant of ``now()``, for comparing with object
    timestamps (``creationTimestamp``, metrics' ``window.end``...)."""

    def now(self) -> float: ...

    def now_datetime(self) -> _dt.datetime: ...


# ---------------------------------------------------------------------------------------- reads
class ObjectLister(Protocol):
    """Read access to the informer caches, by kind.

    ``kind`` is the object's Kind for core and well-known kinds (``"Pod"``, ``"Node"``,
    ``"Namespace"``, ``"PodDisruptionBudget"``, ``"PersistentVolumeClaim"``,
    ``"PersistentVolume"``, ``"StorageClass"``, ``"CSINode"``, ``"CSIDriver"``,
    ``"ResourceClaim"``, ``"DeviceClass"``, ``"ResourceSlice"``, ``"PriorityClass"``) and for
    custom resources (``"PodGroup"``, ``"ElasticQuota"``). ``namespace=None`` lists all
    namespaces. What is returned must be treated as read-only."""

    def get(self, kind: str, name: str, namespace: str = "") -> Any: ...

    def list(self, kind: str, namespace: str | None = None) -> list[Any]: ...


Unsubscribe = Callable[[], None]


class Subscriber(Protocol):
    """Changes to objects of a kind, for plugins that keep their own state (quotas, groups)."""

    def subscribe(self, kind: str, callback: Callable[[WatchEvent], None]) -> Unsubscribe: ...


# ---------------------------------------------------------------------------------------- writes
class Client(Protocol):
    """Writes to the API server. Each raises :class:`NotFound` or :class:`Conflict` as the API
    server answers; anything else is an error of the backend."""

    def bind(self, pod: "Pod", node_name: str) -> None:
        """POST pods/binding (carries the pod's uid)."""

    def patch_pod_scheduling_failure(self, pod: "Pod", reason: str, message: str,
                                     nominated_node_name: str | None) -> None:
        """The PodScheduled=False condition and nominatedNodeName, in one status patch;
        ``nominated_node_name`` None leaves it as it is, "" clears it."""

    def set_nominated_node_name(self, pod: "Pod", node_name: str) -> None: ...

    def add_pod_condition(self, pod: "Pod", type_: str, status: str, reason: str,
                          message: str) -> "Pod | None":
        """Set one condition in pods/status (DisruptionTarget before a preemption)."""

    def delete_pod(self, pod: "Pod", grace_period_seconds: int | None = None) -> None: ...

    def bind_pvc(self, claim: Any, volume: Any) -> Any:
        """Pre-bind a PersistentVolumeClaim to a PersistentVolume (VolumeBinding PreBind)."""

    def update_resource_claim_status(self, claim: Any) -> Any: ...


class EventRecorder(Protocol):
    """Kubernetes Events (events.k8s.io/v1): Scheduled, FailedScheduling, Preempted..."""

    def record_event(self, obj: Any, type_: str, reason: str, message: str) -> None: ...


# ---------------------------------------------------------------------------------------- scheduler state
class SharedLister(Protocol):
    """The cycle's snapshot of NodeInfos (upstream SharedLister/NodeInfoLister)."""

    def node_infos(self) -> "list[NodeInfo]": ...

    def get(self, name: str) -> "NodeInfo | None": ...

    def have_pods_with_affinity_node_infos(self) -> "list[NodeInfo]": ...

    def have_pods_with_required_anti_affinity_node_infos(self) -> "list[NodeInfo]": ...

    def __len__(self) -> int: ...


class Nominator(Protocol):
    def nominated_pods_for_node(self, node_name: str) -> "list[Pod]": ...

    def add_nominated_pod(self, pod: "Pod", info: "NominatingInfo") -> None: ...

    def delete_nominated_pod_if_exists(self, pod: "Pod") -> None: ...


class WaitingPodHandle(Protocol):
    """A pod held at Permit (upstream WaitingPod)."""

    @property
    def pod(self) -> "Pod": ...

    def get_pending_plugins(self) -> list[str]: ...

    def allow(self, plugin: str) -> None: ...

    def reject(self, plugin: str, message: str) -> None: ...


class FeatureGateReader(Protocol):
    def enabled(self, name: str) -> bool: ...


# ---------------------------------------------------------------------------------------- handle
@runtime_checkable
class Handle(Protocol):
    """What a plugin gets at construction (upstream framework.Handle)."""

    profile_name: str
    snapshot: SharedLister
    lister: ObjectLister
    client: Client
    event_recorder: EventRecorder
    clock: Clock
    feature_gates: FeatureGateReader

    def subscribe(self, kind: str, callback: Callable[[WatchEvent], None]) -> Unsubscribe: ...

    def activate(self, pods: Iterable["Pod"]) -> None: ...

    def get_waiting_pod(self, uid: str) -> WaitingPodHandle | None: ...

    def iterate_over_waiting_pods(self, callback: Callable[[WaitingPodHandle], None]) -> None: ...

    def reject_waiting_pod(self, uid: str) -> bool: ...

    def nominated_pods_for_node(self, node_name: str) -> "list[Pod]": ...

    def add_nominated_pod(self, pod: "Pod", info: "NominatingInfo") -> None: ...

    def delete_nominated_pod_if_exists(self, pod: "Pod") -> None: ...

    def run_filter_plugins_with_nominated_pods(self, state: "CycleState", pod: "Pod",
                                               node_info: "NodeInfo") -> "Status | None": ...

    def run_pre_filter_extension_add_pod(self, state: "CycleState", pod: "Pod", pod_to_add: "Pod",
                                         node_info: "NodeInfo") -> "Status | None": ...

    def run_pre_filter_extension_remove_pod(self, state: "CycleState", pod: "Pod",
                                            pod_to_remove: "Pod", node_info: "NodeInfo") -> "Status | None": ...


# ---------------------------------------------------------------------------------------- backend
class Backend(ObjectLister, Subscriber, Client, EventRecorder, Protocol):
    """The world the scheduler runs in: informer caches, their change stream, writes, events,
    time and timers. ``watch`` delivers every change of every kind, in order, on the scheduler's
    thread; timers (grace periods, backoff) run through ``call_at`` on the backend's clock."""

    clock: Clock

    def watch(self, callback: Callable[[WatchEvent], None]) -> None: ...

    def call_at(self, when: float, callback: Callable[[], None]) -> None: ...

    def next_timer(self) -> float | None: ...

    def run_due_timers(self) -> bool: ...


# ---------------------------------------------------------------------------------------- plugins
class Plugin(Protocol):
    """A plugin instance: a ``name`` (the one used in YAML) and ``@hookimpl`` methods named after
    the extension points of :mod:`kschedfw.hookspecs`."""

    name: str


class PluginFactory(Protocol):
    """A plugin class: built once per profile with its defaulted, validated args and a Handle.
    ``args_schema`` (JSON Schema with defaults) is optional; without it the plugin takes no args."""

    name: str

    def __call__(self, args: Mapping[str, Any], handle: Handle) -> Plugin: ...
