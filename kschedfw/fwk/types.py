"""Public types the hooks use: NodeInfo, queue entries, PreFilter/PostFilter results, scores."""

from __future__ import annotations

import enum
from typing import TYPE_CHECKING, Any, Iterable, Iterator, Sequence

import attrs

from kschedfw.fwk.status import Code, Status

if TYPE_CHECKING:
    from kschedfw.api import Node, Pod

MAX_NODE_SCORE = 100
MIN_NODE_SCORE = 0
MAX_TOTAL_SCORE = (1 << 63) - 1
MAX_PERMIT_TIMEOUT_SECONDS = 15 * 60


@attrs.define(slots=True)
class ImageStateSummary:
    """An image on a node, with how many nodes in the cluster have it (for ImageLocality)."""

    size: int
    num_nodes: int


def _index_of_uid(pods: list["Pod"], uid: str) -> int:
    """The index of the pod with ``uid`` in ``pods`` (searched from the end), or -1."""
    for i in range(len(pods) - 1, -1, -1):
        if pods[i].uid == uid:
            return i
    return -1


def same_objects(kept: Sequence[Any], current: Sequence[Any]) -> bool:
    """The same objects in the same order (identity, not equality): whether something kept for
    a list of pods is still valid for ``current``."""
    if kept is current:
        return True
    if len(kept) != len(current):
        return False
    for a, b in zip(kept, current):
        if a is not b:
            return False
    return True


def _name_of_node(info: "NodeInfo") -> str:
    return info.node.name if info.node is not None else ""


@attrs.define(slots=True, eq=False)
class NodeInfo:
    """A node with the aggregates plugins need, kept up to date by the cache.

    ``requested`` holds the real requests of the pods on the node; ``non_zero_requested`` the cpu
    and memory used for scoring (missing requests count as 100m / 200Mi). Plugins treat it as
    read-only: the framework clones it for preemption dry runs.

    ``name`` is the node's name ("" without a node), a plain attribute because the hot path reads
    it for every node of every cycle: it is set from ``node`` on construction and by
    :meth:`set_node`, the one way to replace the node.
    """

    node: "Node | None" = None
    pods: list["Pod"] = attrs.Factory(list)
    pods_with_affinity: list["Pod"] = attrs.Factory(list)
    pods_with_required_anti_affinity: list["Pod"] = attrs.Factory(list)
    used_ports: dict[tuple[str, str, int], int] = attrs.Factory(dict)
    requested: dict[str, int] = attrs.Factory(dict)
    non_zero_requested: dict[str, int] = attrs.Factory(dict)
    image_states: dict[str, ImageStateSummary] = attrs.Factory(dict)
    pvc_ref_counts: dict[str, int] = attrs.Factory(dict)
    generation: int = 0
    name: str = attrs.field(init=False, default=attrs.Factory(_name_of_node, takes_self=True))

    def set_node(self, node: "Node | None") -> None:
        """Replace the node (the cache's job), keeping ``name`` in step."""
        self.node = node
        self.name = node.name if node is not None else ""

    @property
    def allocatable(self) -> dict[str, int]:
        return self.node.allocatable if self.node is not None else {}

    def add_pod(self, pod: "Pod") -> None:
        self._update(pod, +1)
        self.pods.append(pod)
        if pod.affinity is not None and (pod.affinity.pod_affinity or pod.affinity.pod_anti_affinity):
            self.pods_with_affinity.append(pod)
        if pod.affinity is not None and pod.affinity.pod_anti_affinity and pod.affinity.pod_anti_affinity.required:
            self.pods_with_required_anti_affinity.append(pod)

    def remove_pod(self, pod: "Pod") -> bool:
        """Remove by uid; returns False when the pod was not on this node. A pod is on a node's
        lists once; they are searched from the end, where the pod a binding confirms (just
        assumed, so appended last) is, on a node holding thousands (SchedulingDaemonset)."""
        uid = pod.uid
        for lst in (self.pods_with_affinity, self.pods_with_required_anti_affinity):
            i = _index_of_uid(lst, uid)
            if i >= 0:
                del lst[i]
        pods = self.pods
        i = _index_of_uid(pods, uid)
        if i < 0:
            return False
        existing = pods.pop(i)
        self._update(existing, -1)
        return True

    def _update(self, pod: "Pod", sign: int) -> None:
        # HOT PATH (binds, preemption dry runs): the pod's contribution is computed once per pod.
        requests, non_zero, port_keys, claim_keys = pod.node_delta()
        requested = self.requested
        for name, amount in requests:
            requested[name] = requested.get(name, 0) + sign * amount
        non_zero_requested = self.non_zero_requested
        for name, amount in non_zero:
            non_zero_requested[name] = non_zero_requested.get(name, 0) + sign * amount
        for key in port_keys:
            count = self.used_ports.get(key, 0) + sign
            if count > 0:
                self.used_ports[key] = count
            else:
                self.used_ports.pop(key, None)
        for claim in claim_keys:
            count = self.pvc_ref_counts.get(claim, 0) + sign
            if count > 0:
                self.pvc_ref_counts[claim] = count
            else:
                self.pvc_ref_counts.pop(claim, None)
        self.generation += 1

    def clone(self) -> "NodeInfo":
        return NodeInfo(
            node=self.node,
            pods=list(self.pods),
            pods_with_affinity=list(self.pods_with_affinity),
            pods_with_required_anti_affinity=list(self.pods_with_required_anti_affinity),
            used_ports=dict(self.used_ports),
            requested=dict(self.requested),
            non_zero_requested=dict(self.non_zero_requested),
            image_states=self.image_states,
            pvc_ref_counts=dict(self.pvc_ref_counts),
            generation=self.generation,
        )


@attrs.define(slots=True, eq=False)
class QueuedPodInfo:
    """A pod in the scheduling queue with its queueing bookkeeping (upstream QueuedPodInfo)."""

    pod: "Pod"
    timestamp: float = 0.0
    initial_attempt_timestamp: float | None = None
    attempts: int = 0
    unschedulable_count: int = 0
    consecutive_errors_count: int = 0
    unschedulable_plugins: set[str] = attrs.Factory(set)
    pending_plugins: set[str] = attrs.Factory(set)
    gating_plugin: str = ""
    #: the gating status's message (upstream only logs it; kschedfw reports it)
    gating_message: str = ""
    gated: bool = False
    backoff_expiration: float | None = None
    #: the scheduling signature taken when queued (gate OpportunisticBatching); None: unsignable
    pod_signature: Any = None
    #: last left the unschedulable pool by the leftover flush, not by an event (upstream
    #: WasFlushedFromUnschedulable, for scheduler_pod_scheduled_after_flush_total)
    was_flushed_from_unschedulable: bool = False

    @property
    def key(self) -> str:
        return self.pod.key


@attrs.frozen
class PreFilterResult:
    """Nodes a PreFilter plugin narrowed the search to; ``node_names=None`` means all nodes."""

    node_names: frozenset[str] | None = None

    def all_nodes(self) -> bool:
        return self.node_names is None

    def merge(self, other: "PreFilterResult | None") -> "PreFilterResult":
        if other is None or other.all_nodes():
            return self
        if self.all_nodes():
            return other
        return PreFilterResult(self.node_names & other.node_names)  # type: ignore[operator]


class NominatingMode(enum.Enum):
    Noop = 0
    Override = 1


@attrs.frozen
class NominatingInfo:
    """What the scheduler should do with ``status.nominatedNodeName`` after an attempt."""

    nominated_node_name: str = ""
    mode: NominatingMode = NominatingMode.Noop


@attrs.frozen
class PostFilterResult:
    nominating_info: NominatingInfo | None = None
    #: not upstream: each node's verdict when the PostFilter found no node to nominate (for
    #: preemption: why no victims there), so a report can count them as the message does
    node_to_status: "NodeToStatus | None" = attrs.field(default=None, eq=False, repr=False)

    @classmethod
    def nominate(cls, node_name: str, node_to_status: "NodeToStatus | None" = None) -> "PostFilterResult":
        return cls(NominatingInfo(node_name, NominatingMode.Override), node_to_status)


@attrs.define(slots=True)
class NodeScore:
    """One node's score from one plugin; NormalizeScore edits ``score`` in place."""

    name: str
    score: int


@attrs.define(slots=True)
class NodePluginScores:
    """All plugin scores for one node and their weighted total."""

    name: str
    scores: list[tuple[str, int]] = attrs.Factory(list)
    total_score: int = 0


class NodeToStatus:
    """Node name -> rejection status, with a status for nodes not listed (upstream NodeToStatus)."""

    __slots__ = ("_statuses", "absent_nodes_status")

    def __init__(self, statuses: dict[str, Status] | None = None,
                 absent_nodes_status: Status | None = None) -> None:
        self._statuses: dict[str, Status] = statuses if statuses is not None else {}
        self.absent_nodes_status = absent_nodes_status or Status.unresolvable()

    def get(self, node_name: str) -> Status:
        return self._statuses.get(node_name, self.absent_nodes_status)

    def set(self, node_name: str, status: Status) -> None:
        self._statuses[node_name] = status

    def update(self, statuses: Iterable[tuple[str, Status]]) -> None:
        """:meth:`set` for each (node name, status), in order."""
        self._statuses.update(statuses)

    def __len__(self) -> int:
        return len(self._statuses)

    def items(self) -> Iterator[tuple[str, Status]]:
        return iter(self._statuses.items())

    def nodes_for_status_code(self, node_names: Iterable[str], code: Code) -> list[str]:
        """The given nodes whose status has exactly ``code`` (absent ones use the absent status)."""
        return [n for n in node_names if self.get(n).code is code]


@attrs.frozen
class SignFragment:
    """One piece of a pod's signature for opportunistic batching (SignPod)."""

    key: str
    value: object


@attrs.frozen
class PreBindPreFlightResult:
    allow_parallel: bool = False
