"""The contract between the scheduling core, its plugins and the world it runs in.

The counterpart of upstream's ``pkg/scheduler/framework/interface.go``: everything a plugin may
rely on is named here as a ``typing.Protocol``, and nothing else. A plugin receives a
:class:`Handle`; the scheduler runs against a :class:`Backend`. The embedded cluster
(``kschedfw.cluster.memory.MemoryCluster``) is one Backend, a real API server is another; a
plugin never imports either (a test enforces it).

Objects are the parsed API types of :mod:`kschedfw.api` (``Pod``, ``Node``, ``Namespace``...)
for the kinds kschedfw knows, and :class:`kschedfw.api.GenericObject` (``api_version``,
``kind``, ``name``, ``namespace``, ``raw``) for any other kind, custom resources included.

**Naming a kind.** Listers, subscriptions and watch events name a resource by its plain
``Kind``, exactly as the object's ``kind`` field spells it: ``"Pod"``, ``"PodGroup"``,
``"ElasticQuota"``; never a plural resource name, never ``Kind.group``. The group and version
are not part of the name (the object's ``api_version`` carries them): one scheduler reads one
group per Kind. A backend maps each Kind to its group (the embedded cluster stores objects as
loaded; an API-server backend resolves Kinds by discovery) and fails at start, naming the
groups, when a Kind it is asked for is served by more than one group and its configuration does
not say which.
"""

from __future__ import annotations

import datetime as _dt
from typing import (TYPE_CHECKING, Any, Callable, Collection, Iterable, Literal, Mapping, Protocol, Sequence,
                    TypedDict, cast, overload, runtime_checkable)

import attrs

if TYPE_CHECKING:
    from kschedfw.api import (CSINode, GenericObject, Namespace, Node, PersistentVolume, PersistentVolumeClaim,
                              Pod, PodDisruptionBudget, PriorityClass, RuntimeClass, StorageClass)
    from kschedfw.fwk.cycle_state import CycleState
    from kschedfw.fwk.node_reuse import NodeMemo
    from kschedfw.fwk.podgroup import PodGroupManager, PodGroupStateLister
    from kschedfw.fwk.status import Status
    from kschedfw.fwk.types import NodeInfo, NominatingInfo
    from kschedfw.fwk.victims import Victims

__all__ = [
    "ADDED", "MODIFIED", "DELETED", "WatchEventType", "WatchEvent", "NotFound", "Conflict",
    "Clock", "ObjectLister", "Subscriber", "Unsubscribe", "WatchCallback", "Client",
    "PersistentVolumeClaimBinder", "ResourceClaimStatusWriter", "ResourceClaimWriter",
    "ContainerExtendedResourceRequest", "ExtendedResourceClaimStatus", "EventRecorder",
    "SharedLister", "PodLabelIndex", "PodAffinityTermIndex", "IndexedSharedLister", "snapshot_label_index",
    "snapshot_term_index", "Nominator", "WaitingPodHandle", "Extender", "ExtenderError", "FeatureGateReader", "PreemptionMetrics",
    "FilterFunction", "Handle", "Backend",
    "Plugin", "PluginFactory", "PodAnnotationWriter", "BackgroundApiCalls",
]

WatchEventType = Literal["ADDED", "MODIFIED", "DELETED"]
ADDED: WatchEventType = "ADDED"
MODIFIED: WatchEventType = "MODIFIED"
DELETED: WatchEventType = "DELETED"


@attrs.frozen
class WatchEvent:
    """One change of one object, as an informer delivers it: ``old`` is None on ADDED, ``new``
    is None on DELETED; ``kind`` is the plain Kind (see the module docstring)."""

    type: WatchEventType
    kind: str
    old: Any
    new: Any


WatchCallback = Callable[[WatchEvent], None]
#: Returned by :meth:`Subscriber.subscribe`: call it to stop receiving changes.
Unsubscribe = Callable[[], None]


class NotFound(LookupError):
    """The object does not exist (HTTP 404)."""


class Conflict(ValueError):
    """The write conflicts with the object's current state (HTTP 409)."""


# ---------------------------------------------------------------------------------------- time
@runtime_checkable
class Clock(Protocol):
    """The scheduler's time. ``now()`` drives queues and timeouts (seconds, never going back);
    ``now_datetime()`` is the aware UTC wall-clock instant of ``now()``, for comparing with
    object timestamps (``creationTimestamp``, ``startTime``, a metrics ``window.end``).
    Plugins read time only here, so a simulation is reproducible."""

    def now(self) -> float: ...

    def now_datetime(self) -> _dt.datetime: ...


# ---------------------------------------------------------------------------------------- reads
#: The Kinds the scheduler reads that have no class of their own in :mod:`kschedfw.api`: a lister
#: returns them as :class:`kschedfw.api.GenericObject`.
GenericKind = Literal["CSIDriver", "CSIStorageCapacity", "VolumeAttachment", "ResourceClaim", "DeviceClass",
                      "ResourceSlice", "Service", "ReplicationController", "ReplicaSet", "StatefulSet"]


@runtime_checkable
class ObjectLister(Protocol):
    """Read access to the informer caches, by plain Kind.

    The kinds the scheduler itself reads: ``"Pod"``, ``"Node"``, ``"Namespace"``,
    ``"PriorityClass"``, ``"PodDisruptionBudget"``, ``"PersistentVolumeClaim"``,
    ``"PersistentVolume"``, ``"StorageClass"``, ``"CSINode"``, ``"CSIDriver"``,
    ``"ResourceClaim"``, ``"DeviceClass"``, ``"ResourceSlice"``; any other Kind, custom
    resources included (``"PodGroup"``, ``"ElasticQuota"``), is listed the same way.
    ``get`` returns None for a missing object; ``namespace=None`` lists all namespaces and
    ``""`` the cluster-scoped objects. What is returned is shared: treat it as read-only.

    Typed per Kind: ``get("Pod", ...)`` is a ``Pod | None``, ``list("StorageClass")`` a
    ``list[StorageClass]``, a :data:`GenericKind` a :class:`~kschedfw.api.GenericObject`. A Kind
    the type checker cannot see (a ``str`` variable, a custom resource) reads as ``Any``: it may be
    any of those (custom resources are GenericObjects). The overloads are annotations only: a
    backend implements one ``get`` and one ``list`` taking any Kind."""

    @overload
    def get(self, kind: Literal["Pod"], name: str, namespace: str = "") -> Pod | None: ...
    @overload
    def get(self, kind: Literal["Node"], name: str, namespace: str = "") -> Node | None: ...
    @overload
    def get(self, kind: Literal["Namespace"], name: str, namespace: str = "") -> Namespace | None: ...
    @overload
    def get(self, kind: Literal["PriorityClass"], name: str, namespace: str = "") -> PriorityClass | None: ...
    @overload
    def get(self, kind: Literal["PodDisruptionBudget"], name: str, namespace: str = ""
            ) -> PodDisruptionBudget | None: ...
    @overload
    def get(self, kind: Literal["PersistentVolumeClaim"], name: str, namespace: str = ""
            ) -> PersistentVolumeClaim | None: ...
    @overload
    def get(self, kind: Literal["PersistentVolume"], name: str, namespace: str = "") -> PersistentVolume | None: ...
    @overload
    def get(self, kind: Literal["StorageClass"], name: str, namespace: str = "") -> StorageClass | None: ...
    @overload
    def get(self, kind: Literal["CSINode"], name: str, namespace: str = "") -> CSINode | None: ...
    @overload
    def get(self, kind: Literal["RuntimeClass"], name: str, namespace: str = "") -> RuntimeClass | None: ...
    @overload
    def get(self, kind: GenericKind, name: str, namespace: str = "") -> GenericObject | None: ...
    @overload
    def get(self, kind: str, name: str, namespace: str = "") -> Any: ...

    def get(self, kind: str, name: str, namespace: str = "") -> Any:
        """The object, or None when there is none."""

    @overload
    def list(self, kind: Literal["Pod"], namespace: str | None = None) -> list[Pod]: ...
    @overload
    def list(self, kind: Literal["Node"], namespace: str | None = None) -> list[Node]: ...
    @overload
    def list(self, kind: Literal["Namespace"], namespace: str | None = None) -> list[Namespace]: ...
    @overload
    def list(self, kind: Literal["PriorityClass"], namespace: str | None = None) -> list[PriorityClass]: ...
    @overload
    def list(self, kind: Literal["PodDisruptionBudget"], namespace: str | None = None
             ) -> list[PodDisruptionBudget]: ...
    @overload
    def list(self, kind: Literal["PersistentVolumeClaim"], namespace: str | None = None
             ) -> list[PersistentVolumeClaim]: ...
    @overload
    def list(self, kind: Literal["PersistentVolume"], namespace: str | None = None) -> list[PersistentVolume]: ...
    @overload
    def list(self, kind: Literal["StorageClass"], namespace: str | None = None) -> list[StorageClass]: ...
    @overload
    def list(self, kind: Literal["CSINode"], namespace: str | None = None) -> list[CSINode]: ...
    @overload
    def list(self, kind: Literal["RuntimeClass"], namespace: str | None = None) -> list[RuntimeClass]: ...
    @overload
    def list(self, kind: GenericKind, namespace: str | None = None) -> list[GenericObject]: ...
    @overload
    def list(self, kind: str, namespace: str | None = None) -> list[Any]: ...

    def list(self, kind: str, namespace: str | None = None) -> list[Any]:
        """The objects of ``kind`` in ``namespace`` (None: every namespace)."""


@runtime_checkable
class Subscriber(Protocol):
    """Changes to objects of one Kind, for plugins that keep their own state (PodGroups,
    ElasticQuotas, recently bound pods). Callbacks run on the scheduler's thread, in the order
    the changes of that Kind happened, before the scheduler's own handlers see the same change if
    the subscription was made while plugins were being built. Changes of different Kinds come
    through different watches (one informer per Kind, as upstream): their relative order is not
    kept. An API server deleting a pod may first mark it terminating (a MODIFIED with
    ``deletion_timestamp``), even with no grace period. List first, then subscribe, as an
    informer does."""

    def subscribe(self, kind: str, callback: WatchCallback) -> Unsubscribe: ...


# ---------------------------------------------------------------------------------------- writes
@runtime_checkable
class Client(Protocol):
    """Writes to the API server. Each raises :class:`NotFound` or :class:`Conflict` as the API
    server answers; anything else is a failure of the backend."""

    def bind(self, pod: Pod, node_name: str) -> None:
        """POST pods/binding (carries the pod's uid): NotFound when the pod is gone, Conflict
        when it is bound already or was replaced by a same-named pod. The node is not looked up
        (the API server binds to any name)."""

    def patch_pod_scheduling_failure(self, pod: Pod, reason: str, message: str,
                                     nominated_node_name: str | None = None) -> None:
        """The PodScheduled=False condition and nominatedNodeName, in one status patch;
        ``nominated_node_name`` None leaves it as it is, "" clears it."""

    def set_nominated_node_name(self, pod: Pod, node_name: str) -> None:
        """Patch ``status.nominatedNodeName`` ("" clears it)."""

    def add_pod_condition(self, pod: Pod, type_: str, status: str, reason: str,
                          message: str) -> Pod | None:
        """Set one condition in pods/status (DisruptionTarget before a preemption); the patched
        pod, or None when this pod (this uid) is already gone."""

    def delete_pod(self, pod: Pod, grace_period_seconds: int | None = None) -> None:
        """Delete with the pod's grace period, or ``grace_period_seconds`` if given; the uid is a
        precondition (NotFound when this pod is gone). A pod on no node, or with no grace
        period, goes at once; one on a node is marked terminating for its grace period."""


@runtime_checkable
class PersistentVolumeClaimBinder(Protocol):
    """A Client that can also pre-bind claims (VolumeBinding PreBind). Optional: without it the
    bindings stay assumed, which is what a cluster without a PV controller needs."""

    def bind_pvc(self, claim: Any, volume: Any) -> Any:
        """Pre-bind ``claim`` to ``volume`` (its claimRef set); ``volume`` None marks the claim
        for provisioning on its selected node."""


@runtime_checkable
class PodGroupStatusWriter(Protocol):
    """A Client that can also write a PodGroup's status (the pod-group cycle's
    ``PodGroupScheduled`` condition). Optional: without it the condition is not written."""

    def patch_pod_group_condition(self, pod_group: Any, condition: Any) -> None:
        """Set ``condition`` (a :class:`kschedfw.api.workload.Condition`) in podgroups/status,
        as apimachinery's SetStatusCondition does; NotFound when the group is gone."""


@runtime_checkable
class ResourceClaimStatusWriter(Protocol):
    """A Client that can also write ResourceClaim status (DynamicResources PreBind and
    PostFilter deallocation). Optional: without it allocations stay in the scheduler."""

    def update_resource_claim_status(self, claim: Any) -> Any: ...


class ContainerExtendedResourceRequest(TypedDict):
    """Which device request of the pod's extended resource claim serves a container's extended
    resource (core/v1 ContainerExtendedResourceRequest)."""

    containerName: str
    resourceName: str
    requestName: str


class ExtendedResourceClaimStatus(TypedDict):
    """A pod's ``status.extendedResourceClaimStatus`` (core/v1 PodExtendedResourceClaimStatus)."""

    requestMappings: list[ContainerExtendedResourceRequest]
    resourceClaimName: str


@runtime_checkable
class ResourceClaimWriter(Protocol):
    """A Client that can also create and delete ResourceClaims and write a pod's
    ``status.extendedResourceClaimStatus``: DynamicResources' claim for extended resources
    backed by a DeviceClass (DRAExtendedResource). Optional: without it that claim is neither
    created nor recorded (the pod binds all the same)."""

    def create_resource_claim(self, claim: Any) -> Any:
        """POST resourceclaims; a ``metadata.generateName`` gets its suffix. The created claim."""

    def delete_resource_claim(self, claim: Any) -> None:
        """Drop the claim's ``resource.kubernetes.io/delete-protection`` finalizer (an Update),
        then DELETE it (upstream deleteClaim); NotFound when it is gone."""

    def set_extended_resource_claim_status(self, pod: Pod, status: ExtendedResourceClaimStatus) -> None:
        """Patch pods/status with ``extendedResourceClaimStatus``; NotFound when this pod is gone."""


@runtime_checkable
class PodAnnotationWriter(Protocol):
    """A Client that can set annotations on a pod (a PreBind recording its choice on the pod, as
    out-of-tree plugins do through the clientset). Optional: a test Handle's client may lack it."""

    def patch_pod_annotations(self, pod: Pod, annotations: Mapping[str, str]) -> None:
        """Merge ``annotations`` into the pod's (JSON merge patch, the pod's uid as precondition);
        NotFound when this pod is gone."""


@runtime_checkable
class BackgroundApiCalls(Protocol):
    """A Client whose API calls can run off the scheduler's thread (a real API server): upstream
    runs them in a goroutine. Optional: without it they run at once, in the cycle."""

    def run_api_calls(self, work: Callable[[], Any], done: Callable[[Any], None]) -> None:
        """Run ``work`` (API calls only: it must not touch the scheduler's state) elsewhere and
        hand its result, or the exception it raised, to ``done`` on the scheduler's thread."""


@runtime_checkable
class EventRecorder(Protocol):
    """Kubernetes Events (events.k8s.io/v1): Scheduled, FailedScheduling, Preempted..."""

    def record_event(self, obj: Any, type_: str, reason: str, message: str) -> None: ...


# ---------------------------------------------------------------------------------------- scheduler state
class SharedLister(Protocol):
    """The cycle's snapshot of NodeInfos (upstream SharedLister/NodeInfoLister). Valid during
    one scheduling cycle only: do not keep what it returns."""

    def node_infos(self) -> list[NodeInfo]: ...

    def get(self, node_name: str) -> NodeInfo | None: ...

    def have_pods_with_affinity(self) -> list[NodeInfo]: ...

    def have_pods_with_required_anti_affinity(self) -> list[NodeInfo]: ...

    def pod_group_states(self) -> PodGroupStateLister:
        """The PodGroup states as of the cycle's start, which a pod-group cycle updates as it
        assumes and forgets its pods."""
        ...

    def __len__(self) -> int: ...


class PodLabelIndex(Protocol):
    """An optional index a snapshot may carry (see :class:`IndexedSharedLister`): assigned pods by
    label, ``(key, value) -> {NodeInfo: {namespace: pods}}``, with a log of the pods added and
    removed so a plugin can keep its aggregates across cycles. Read-only for plugins."""

    @property
    def sequence(self) -> int:
        """The position the next change gets (for :meth:`changes_since`)."""
        ...

    def kept_for(self, nodes: Any) -> dict[Any, Any]:
        """A dict to keep aggregates in for the snapshot node list ``nodes``; emptied when
        another list is given."""
        ...

    def changes_since(self, sequence: int) -> list[tuple[Any, Any, int]] | None:
        """``(NodeInfo, pod, +1 | -1)`` per change since ``sequence``; None when the log no longer
        reaches back that far."""
        ...

    def nodes_with(self, key: str, value: str) -> Mapping[Any, Mapping[str, int]]: ...

    def terminating_with(self, key: str, value: str) -> Mapping[Any, Mapping[str, int]]:
        """:meth:`nodes_with` over the terminating pods only."""
        ...


class PodAffinityTermIndex(Protocol):
    """An optional index a snapshot may carry (see :class:`IndexedSharedLister`): assigned pods'
    affinity terms grouped by term, each mapping to ``{NodeInfo: pods}``; the preferred tables are
    keyed by ``(term, weight)``. Read-only for plugins."""

    @property
    def required_affinity(self) -> Mapping[Any, Mapping[Any, int]]: ...

    @property
    def required_anti_affinity(self) -> Mapping[Any, Mapping[Any, int]]: ...

    @property
    def preferred_affinity(self) -> Mapping[tuple[Any, int], Mapping[Any, int]]: ...

    @property
    def preferred_anti_affinity(self) -> Mapping[tuple[Any, int], Mapping[Any, int]]: ...

    def domain_counts(self, table: int, key: Any, topology_key: str, nodes: Any) -> dict[str, int]:
        """``{topology value: pods}`` over entry ``key`` of table ``table`` (0 required affinity,
        1 required anti-affinity, 2 preferred affinity, 3 preferred anti-affinity) on ``nodes``."""
        ...


@runtime_checkable
class IndexedSharedLister(SharedLister, Protocol):
    """A snapshot that also carries the cache's pod indexes, a capability a plugin may use for a
    fast path and must not require: a snapshot without them (a test's, another engine's) is a
    plain :class:`SharedLister`, and either index may be None. Find them with
    :func:`snapshot_label_index` and :func:`snapshot_term_index`."""

    @property
    def label_index(self) -> PodLabelIndex | None: ...

    @property
    def term_index(self) -> PodAffinityTermIndex | None: ...


#: snapshot type -> whether it is an IndexedSharedLister (checked once per type: the check walks
#: the protocol's members, too slow for every cycle)
_INDEXED_TYPES: dict[type, bool] = {}


def _indexed(snapshot: SharedLister | None) -> IndexedSharedLister | None:
    if snapshot is None:
        return None
    kind = type(snapshot)
    known = _INDEXED_TYPES.get(kind)
    if known is None:
        known = _INDEXED_TYPES[kind] = isinstance(snapshot, IndexedSharedLister)
    return cast(IndexedSharedLister, snapshot) if known else None


def snapshot_label_index(snapshot: SharedLister | None) -> PodLabelIndex | None:
    """The snapshot's :class:`PodLabelIndex`, or None when it carries none."""
    indexed = _indexed(snapshot)
    return None if indexed is None else indexed.label_index


def snapshot_term_index(snapshot: SharedLister | None) -> PodAffinityTermIndex | None:
    """The snapshot's :class:`PodAffinityTermIndex`, or None when it carries none."""
    indexed = _indexed(snapshot)
    return None if indexed is None else indexed.term_index


class Nominator(Protocol):
    """Pods nominated to nodes by preemption (upstream PodNominator)."""

    def nominated_pods_for_node(self, node_name: str) -> list[Pod]: ...

    def add_nominated_pod(self, pod: Pod, nominating_info: NominatingInfo | None = None) -> None: ...

    def delete_nominated_pod_if_exists(self, pod: Pod) -> None: ...

    def nominated_node_names(self) -> Collection[str]:
        """The nodes that have nominated pods (a live view: do not keep it past the cycle)."""


class WaitingPodHandle(Protocol):
    """A pod held at Permit (upstream WaitingPod)."""

    @property
    def pod(self) -> Pod: ...

    def get_pod(self) -> Pod: ...

    def get_pending_plugins(self) -> list[str]: ...

    def allow(self, plugin_name: str) -> None: ...

    def reject(self, plugin_name: str, message: str) -> None: ...

    def preempt(self, plugin_name: str, message: str) -> bool:
        """Rejected as a preemption victim: it goes back to the queue, not marked unschedulable.
        False when it was already allowed or rejected, and nothing changed."""


class ExtenderError(Exception):
    """A call to an extender failed; ``str()`` is upstream's error text. What
    :meth:`Extender.process_preemption` raises."""


class Extender(Protocol):
    """A scheduler extender of the configuration (upstream framework.Extender), as preemption
    sees it through ``Handle.extenders``."""

    @property
    def name(self) -> str: ...

    def is_interested(self, pod: Pod) -> bool: ...

    def is_ignorable(self) -> bool: ...

    def supports_preemption(self) -> bool: ...

    def process_preemption(self, pod: Pod, victims: Mapping[str, Victims], node_infos: SharedLister
                           ) -> Mapping[str, Victims]: ...


class FeatureGateReader(Protocol):
    """What a plugin reads of ``--feature-gates`` (a :class:`kschedfw.fwk.features.FeatureGates`)."""

    def enabled(self, name: str) -> bool: ...


class PreemptionMetrics(Protocol):
    """The scheduler's preemption metrics, as a PostFilter plugin that preempts reports to them
    (``scheduler_preemption_attempts_total``, ``scheduler_preemption_victims``)."""

    def preemption_attempt(self) -> None:
        """A preemption PostFilter ran (upstream counts every call)."""

    def preemption_victims_chosen(self, victims: int) -> None:
        """The chosen candidate's victims are about to be evicted."""


#: A Filter as the runtime calls it this cycle: ``fn(state, pod, node_info) -> Status | None``.
FilterFunction = Callable[["CycleState", "Pod", "NodeInfo"], "Status | None"]


# ---------------------------------------------------------------------------------------- handle
@runtime_checkable
class Handle(Protocol):
    """What a plugin gets at construction (upstream framework.Handle).

    ``client`` is None when the Handle has no backend to write to (a unit test's Handle, as
    upstream's framework without a clientset): a plugin that writes says what it does then.
    Every other facet is always there; a test Handle lists nothing and never changes.
    """

    @property
    def profile_name(self) -> str: ...

    @property
    def snapshot(self) -> SharedLister: ...

    @property
    def lister(self) -> ObjectLister: ...

    @property
    def pod_group_manager(self) -> PodGroupManager:
        """The cache's live PodGroup states (read them from ``snapshot`` in a pod-group cycle)."""
        ...

    @property
    def client(self) -> Client | None: ...

    @property
    def event_recorder(self) -> EventRecorder: ...

    @property
    def clock(self) -> Clock: ...

    def wait_for(self, ready: Callable[[], bool], interval: float, timeout: float) -> bool:
        """From PreBind or Bind only, in a cycle marked with ``BINDING_MAY_WAIT_KEY``: poll ``ready``
        now and every ``interval`` seconds until it is true (True) or ``timeout`` passed (False),
        as upstream's ``wait.PollUntilContextTimeout`` in a binding goroutine; other pods are
        scheduled meanwhile. A Handle without a backend calls ``ready`` once."""

    @property
    def feature_gates(self) -> FeatureGateReader: ...

    @property
    def extenders(self) -> Sequence[Extender]: ...

    @property
    def metrics(self) -> PreemptionMetrics | None:
        """The scheduler's metrics when it reports any (``kschedfw run``), else None."""

    @property
    def fast_paths(self) -> bool:
        """Whether the scheduler runs its fast paths: a plugin uses the snapshot's indexes or
        another algorithm that must give what the plain one gives only while this is True (False
        runs the plain path, e.g. to check both agree). Memos need not ask: see :meth:`node_memo`."""
        ...

    def node_memo(self, keep: int = 4, most: int = 64, entries: int = 100_000) -> NodeMemo[Any]:
        """A per-node memo for this plugin (:mod:`kschedfw.fwk.node_reuse`: its rule and
        arguments), owned by the profile's runtime, which may clear it; with the fast paths off,
        one that keeps nothing."""
        ...

    def subscribe(self, kind: str, callback: WatchCallback) -> Unsubscribe: ...

    def activate(self, pods: Iterable[Pod]) -> None: ...

    def get_waiting_pod(self, uid: str) -> WaitingPodHandle | None: ...

    def iterate_over_waiting_pods(self, callback: Callable[[WaitingPodHandle], None]) -> None: ...

    def reject_waiting_pod(self, uid: str) -> bool: ...

    def nominated_pods_for_node(self, node_name: str) -> list[Pod]: ...

    def add_nominated_pod(self, pod: Pod, info: NominatingInfo) -> None: ...

    def delete_nominated_pod_if_exists(self, pod: Pod) -> None: ...

    def nominated_node_names(self) -> Collection[str]:
        """The nodes that have nominated pods (a live view: do not keep it past the cycle)."""

    def nominated_pods_to_add(self, state: CycleState, pod: Pod, node_name: str) -> Sequence[Pod]:
        """The pods nominated to ``node_name`` that ``pod`` must leave room for, as
        :meth:`run_filter_plugins_with_nominated_pods` adds them: priority at least ``pod``'s,
        ``pod`` itself excluded, in nomination order (upstream addGENominatedPods). Worked out
        once per node and cycle; do not change the list."""

    # The profile's plugins, as preemption runs them on a node without its victims (upstream
    # Handle's RunFilterPluginsWithNominatedPods and PreFilter extensions).
    def run_filter_plugins_with_nominated_pods(self, state: CycleState, pod: Pod,
                                               node_info: NodeInfo) -> Status | None: ...

    def run_pre_filter_extension_add_pod(self, state: CycleState, pod: Pod, pod_to_add: Pod,
                                         node_info: NodeInfo) -> Status | None: ...

    def run_pre_filter_extension_remove_pod(self, state: CycleState, pod: Pod,
                                            pod_to_remove: Pod, node_info: NodeInfo) -> Status | None: ...

    def filter_plugins_to_run(self, state: CycleState) -> Sequence[tuple[str, FilterFunction]]:
        """``(plugin name, function)`` for each Filter that ``state``'s cycle runs, in order,
        those PreFilter told to skip left out: what :meth:`run_filter_plugins_with_nominated_pods`
        calls. A function is the plugin's own bound ``filter`` unless the engine wraps it (an
        adapter for a hook taking a subset of its arguments, a timer on a sampled cycle), so a
        plugin can tell which plugins run and call them as the runtime would. Empty when the
        Handle is not attached to a profile."""

    def pre_filter_extensions_to_run(self, state: CycleState) -> tuple[str, ...]:
        """The PreFilter plugins whose AddPod or RemovePod extension ``state``'s cycle runs (those
        told to skip left out), each once: empty when adding or removing a pod changes nothing a
        Filter reads besides the NodeInfo."""


# ---------------------------------------------------------------------------------------- backend
@runtime_checkable
class Backend(ObjectLister, Subscriber, Client, EventRecorder, Protocol):
    """The world the scheduler runs in: informer caches, their change stream, writes, events,
    time and timers. ``watch`` delivers every change of every kind, in order within each Kind, on
    the scheduler's thread; timers (grace periods, backoff) run through ``call_at`` on the backend's clock."""

    @property
    def clock(self) -> Clock: ...

    def watch(self, callback: WatchCallback) -> None: ...

    def deliver(self, timeout: float = 0.0) -> int:
        """Hand the changes queued so far to the ``watch`` and ``subscribe`` callbacks, in order
        (waiting up to ``timeout`` seconds for a first one from outside); how many. The scheduler's
        loop calls it between cycles: no callback runs inside a write or a plugin call."""

    def call_at(self, when: float, callback: Callable[[], None]) -> None: ...

    def next_timer(self) -> float | None: ...

    def run_due_timers(self) -> bool: ...

    def recorder_for(self, profile: str) -> EventRecorder:
        """The event recorder of one profile's plugins (a victim's Preempted event names the
        preemptor's profile, as upstream)."""

    def submit_binding(self, work: Callable[[], Any], done: Callable[[Any], None], *,
                       may_wait: bool = False) -> None:
        """Run ``work`` (the Bind step) and hand its result to ``done`` on the scheduler's thread:
        at once (the embedded cluster, so a run stays reproducible) or after the API call
        returned, while the scheduler goes on (a real API server, as upstream's goroutine).
        ``may_wait``: ``work`` may call :meth:`wait_for` (the cycle has ``BINDING_MAY_WAIT_KEY``)."""

    def wait_for(self, ready: Callable[[], bool], interval: float, timeout: float) -> bool:
        """From a binding cycle submitted with ``may_wait``: call ``ready`` now and then every
        ``interval`` seconds of the backend's clock until it returns true (True) or ``timeout``
        seconds passed (False); what ``ready`` raises propagates. The scheduler goes on meanwhile."""

    def apply_extender_binding(self, pod: Pod, node_name: str) -> None:
        """A binding extender bound ``pod`` through its own API server: a backend that stands in
        for that server records it; a real one sees it through its informer."""


# ---------------------------------------------------------------------------------------- plugins
class Plugin(Protocol):
    """A plugin instance: a ``name`` (the one used in YAML) and ``@hookimpl`` methods named after
    the extension points of :mod:`kschedfw.fwk.hookspecs`."""

    @property
    def name(self) -> str: ...


class PluginFactory(Protocol):
    """A plugin class: built once per profile with its args and a Handle (upstream
    PluginFactory). ``args`` is a fresh dict, defaulted from the optional ``args_schema`` class
    attribute (JSON Schema with defaults) and validated, that the plugin may keep."""

    @property
    def name(self) -> str: ...

    def __call__(self, args: dict[str, Any], handle: Handle) -> Plugin: ...
