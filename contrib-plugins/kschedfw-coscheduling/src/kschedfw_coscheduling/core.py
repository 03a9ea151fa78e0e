"""PodGroup bookkeeping for Coscheduling: the part upstream keeps in ``pkg/coscheduling/core``.

The manager answers the questions the plugin's hooks ask about a pod's group: which PodGroup it
belongs to, whether enough members exist, whether the cluster could hold the group's
``minResources``, how many members are already assumed or bound, and when the group last failed.
It reads PodGroups and pods through ``handle.lister`` and time through ``handle.clock`` (the
simulated clock in ``kschedfw simulate``), so every cache below expires on simulated time.
"""

from __future__ import annotations

import datetime as _dt
import enum
import time
from typing import TYPE_CHECKING, Any, Iterable, Mapping

import attrs

from kschedfw.api import format_quantity, parse_resource_list
from kschedfw.fwk.cycle_state import PODS_TO_ACTIVATE_KEY, StateNotFound

if TYPE_CHECKING:
    from kschedfw import Handle, ObjectLister
    from kschedfw.api import Pod
    from kschedfw.fwk.cycle_state import CycleState
    from kschedfw.fwk.types import NodeInfo

#: The label that makes a pod a member of a PodGroup (in the pod's namespace).
POD_GROUP_LABEL = "scheduling.x-k8s.io/pod-group"
#: The kind PodGroups have in the embedded cluster (``scheduling.x-k8s.io/v1alpha1``).
POD_GROUP_KIND = "PodGroup"
#: Used when neither the PodGroup nor the plugin args give a Permit timeout.
DEFAULT_WAIT_SECONDS = 60.0
#: CycleState key of :class:`PermitState`.
PERMIT_STATE_KEY = "PermitCoscheduling"

# go-cache default expirations upstream uses when an entry is added with a zero duration.
_PERMITTED_DEFAULT_TTL = 3.0


class PermitStatus(str, enum.Enum):
    """What :meth:`PodGroupManager.permit` decided (upstream ``core.Status``)."""

    POD_GROUP_NOT_SPECIFIED = "PodGroup not specified"
    POD_GROUP_NOT_FOUND = "PodGroup not found"
    SUCCESS = "Success"
    WAIT = "Wait"


@attrs.define
class PermitState:
    """Written at Permit by the first member of a group to get there: activate its siblings."""

    activate: bool = False

    def clone(self) -> "PermitState":
        return PermitState(self.activate)


@attrs.frozen
class PodGroupInfo:
    """The parts of a ``PodGroup`` (``scheduling.x-k8s.io/v1alpha1``) the plugin reads."""

    name: str
    namespace: str
    uid: str = ""
    min_member: int = 0
    #: ``spec.minResources`` (cpu in millicores, like every kschedfw resource list); None if unset
    min_resources: dict[str, int] | None = None
    schedule_timeout_seconds: int | None = None
    creation_timestamp: _dt.datetime | None = None

    @property
    def full_name(self) -> str:
        return f"{self.namespace}/{self.name}"

    @classmethod
    def from_object(cls, obj: Any) -> "PodGroupInfo":
        """Read a PodGroup as the embedded cluster stores it (a ``GenericObject``, or a dict)."""
        raw = obj if isinstance(obj, dict) else (getattr(obj, "raw", None) or {})
        meta = raw.get("metadata") if isinstance(raw.get("metadata"), dict) else {}
        spec = raw.get("spec") if isinstance(raw.get("spec"), dict) else {}
        name = getattr(obj, "name", None) or str(meta.get("name", ""))
        namespace = getattr(obj, "namespace", None) or str(meta.get("namespace") or "default")
        min_resources = None
        if isinstance(spec.get("minResources"), dict):
            min_resources = parse_resource_list(spec["minResources"], field="spec.minResources")
        timeout = spec.get("scheduleTimeoutSeconds")
        return cls(name=name, namespace=namespace,
                   uid=getattr(obj, "uid", None) or str(meta.get("uid", "")),
                   min_member=_as_int(spec.get("minMember"), 0),
                   min_resources=min_resources,
                   schedule_timeout_seconds=_as_int(timeout, None) if timeout is not None else None,
                   creation_timestamp=_parse_time(meta.get("creationTimestamp")))


def pod_group_label(pod: "Pod") -> str:
    """The group name a pod asks for ("" when it is not in a group)."""
    return pod.labels.get(POD_GROUP_LABEL, "")


def pod_group_full_name(pod: "Pod") -> str:
    """``namespace/group`` for a group member, "" otherwise."""
    name = pod_group_label(pod)
    return f"{pod.namespace}/{name}" if name else ""


def wait_time_seconds(pg: PodGroupInfo | None, schedule_timeout: float | None) -> float:
    """Permit timeout: the PodGroup's ``scheduleTimeoutSeconds``, else the plugin's, else 60 s."""
    if pg is not None and pg.schedule_timeout_seconds is not None:
        return float(pg.schedule_timeout_seconds)
    if schedule_timeout:
        return float(schedule_timeout)
    return DEFAULT_WAIT_SECONDS


class PodGroupManager:
    """Group state shared by the hooks of one Coscheduling instance (upstream ``PodGroupManager``).

    ``schedule_timeout`` is ``permitWaitingTimeSeconds``. Assigned members are tracked as upstream
    does (added at Permit, removed at Unreserve) and completed from the lister with the members
    that are bound, so a member deleted since it was counted stops counting.
    """

    def __init__(self, handle: Handle | None, schedule_timeout: float | None) -> None:
        self.handle = handle
        self.schedule_timeout = schedule_timeout
        self._assigned: dict[str, set[str]] = {}
        self._permitted: dict[str, float] = {}      # group -> expiry of the minResources pass
        self._backed_off: dict[str, float] = {}     # group -> end of its backoff
        self._last_failed: dict[str, float] = {}    # group -> last failed scheduling attempt
        self._first_seen: dict[tuple[str, str], float] = {}

    # ------------------------------------------------------------------ clock and lister
    def now(self) -> float:
        return self.handle.clock.now() if self.handle is not None else time.monotonic()

    def _lister(self) -> ObjectLister | None:
        return self.handle.lister if self.handle is not None else None

    def get_pod_group(self, pod: "Pod") -> tuple[str, PodGroupInfo | None]:
        """(``namespace/name``, the group) for a member; ("", None) for a pod in no group."""
        name = pod_group_label(pod)
        if not name:
            return "", None
        full = f"{pod.namespace}/{name}"
        lister = self._lister()
        obj = lister.get(POD_GROUP_KIND, name, pod.namespace) if lister is not None else None
        if obj is None:
            return full, None
        return full, PodGroupInfo.from_object(obj)

    def group_pods(self, namespace: str, group: str) -> list["Pod"]:
        """Every pod of the namespace labelled for ``group`` (bound or not), as the pod lister sees them."""
        lister = self._lister()
        if lister is None or not group:
            return []
        return [p for p in lister.list("Pod", namespace) if p.labels.get(POD_GROUP_LABEL) == group]

    # ------------------------------------------------------------------ PreFilter
    def pre_filter(self, pod: "Pod", nodes: Iterable["NodeInfo"] | None = None) -> str | None:
        """Why ``pod`` cannot be scheduled now because of its group, or None (upstream PreFilter).

        A pod naming a PodGroup that does not exist passes here; Permit rejects it.
        """
        full, pg = self.get_pod_group(pod)
        if pg is None:
            return None
        if self.is_backed_off(full):
            return f"podGroup {full} failed recently"
        pods = self.group_pods(pod.namespace, pg.name)
        quorum_gap = pg.min_member - len(pods)
        if quorum_gap > 0:
            return (f"pre-filter pod {pod.name} cannot find enough sibling pods, current pods number: "
                    f"{len(pods)}, minMember of group: {pg.min_member}")
        # Gated members cannot be scheduled yet: only as many as minMember leaves spare are tolerated.
        for member in pods:
            if member.scheduling_gates:
                quorum_gap += 1
            if quorum_gap > 0:
                return f"pre-filter pod {pod.name} cannot proceed due to gated pods in the same PodGroup"
        if pg.min_resources is None:
            return None
        # This only pre-catches groups whose resources the whole cluster cannot hold; a group that
        # passes may still fail Filter (affinity, taints, fragmentation...).
        if self._permitted.get(full, -1.0) > self.now():
            return None
        if nodes is None:
            nodes = self.handle.snapshot.node_infos() if self.handle is not None else []
        request = dict(pg.min_resources)
        request["pods"] = pg.min_member
        gap = check_cluster_resource(nodes, request, full)
        if gap is not None:
            return gap
        ttl = self.schedule_timeout or _PERMITTED_DEFAULT_TTL
        self._permitted[full] = self.now() + ttl
        return None

    # ------------------------------------------------------------------ Permit / Unreserve
    def permit(self, state: "CycleState | None", pod: "Pod") -> PermitStatus:
        """Count ``pod`` as assigned; Success once ``minMember`` members are assigned (upstream Permit)."""
        full, pg = self.get_pod_group(pod)
        if not full:
            return PermitStatus.POD_GROUP_NOT_SPECIFIED
        if pg is None:
            return PermitStatus.POD_GROUP_NOT_FOUND
        self._assigned.setdefault(full, set()).add(pod.name)
        assigned = self.assigned_names(full, pg.name, pod.namespace)
        if len(assigned) >= pg.min_member:
            return PermitStatus.SUCCESS
        if len(assigned) == 1 and state is not None:
            # The first member to get here has passed PreFilter (quorum and minResources): from now
            # on its siblings are worth trying, so ask the scheduler to move them to activeQ.
            state.write(PERMIT_STATE_KEY, PermitState(activate=True))
        return PermitStatus.WAIT

    def unreserve(self, pod: "Pod") -> None:
        """Stop counting ``pod`` as assigned (its reservation was given up)."""
        full = pod_group_full_name(pod)
        if not full:
            return
        assigned = self._assigned.get(full)
        if assigned is not None:
            assigned.discard(pod.name)
            if not assigned:
                del self._assigned[full]

    def assigned_names(self, full_name: str, group: str | None = None, namespace: str | None = None) -> set[str]:
        """Members assumed at Permit (waiting or binding) or bound, by pod name."""
        if namespace is None or group is None:
            namespace, _, group = full_name.partition("/")
        members = {p.name: p for p in self.group_pods(namespace, group)}
        tracked = self._assigned.get(full_name, set())
        live = {name for name in tracked if name in members}
        if live != tracked:  # members deleted since they were counted
            if live:
                self._assigned[full_name] = live
            else:
                self._assigned.pop(full_name, None)
        live.update(name for name, p in members.items() if p.node_name)
        return live

    def assigned_count(self, full_name: str) -> int:
        return len(self.assigned_names(full_name))

    def activate_siblings(self, pod: "Pod", state: "CycleState") -> None:
        """Put the pod's siblings in ``kubernetes.io/pods-to-activate`` when Permit asked for it."""
        group = pod_group_label(pod)
        if not group:
            return
        try:
            permit_state = state.read(PERMIT_STATE_KEY)
        except StateNotFound:
            return
        if not isinstance(permit_state, PermitState) or not permit_state.activate:
            return
        siblings = [p for p in self.group_pods(pod.namespace, group) if p.uid != pod.uid]
        target = state.get(PODS_TO_ACTIVATE_KEY)
        if not siblings or target is None:
            return
        for sibling in siblings:
            target.map[f"{sibling.namespace}/{sibling.name}"] = sibling

    # ------------------------------------------------------------------ group failures
    def backoff_pod_group(self, full_name: str, seconds: float) -> None:
        if seconds > 0:
            self._backed_off[full_name] = self.now() + seconds

    def is_backed_off(self, full_name: str) -> bool:
        """In its ``podGroupBackoffSeconds``, or failed at this very instant of the simulated clock.

        The second case is kschedfw's: simulated time stands still while pods are tried, so members
        still queued when their group failed would otherwise start a new round at once, activate
        every sibling and fail again, forever. They are held back instead and wait, in the
        unschedulable pool, for an event that can change the outcome.
        """
        now = self.now()
        if self._backed_off.get(full_name, -1.0) > now:
            return True
        self._backed_off.pop(full_name, None)
        return self._last_failed.get(full_name) == now

    def delete_permitted_pod_group(self, full_name: str) -> None:
        self._permitted.pop(full_name, None)

    def mark_pod_group_schedule_failure(self, full_name: str) -> None:
        """Remember when the group last failed: it then sorts as if created now (no head-of-line blocking)."""
        self._last_failed[full_name] = self.now()

    def clear_pod_group_schedule_failure(self, full_name: str) -> None:
        self._last_failed.pop(full_name, None)

    def last_failure(self, full_name: str) -> float | None:
        return self._last_failed.get(full_name)

    # ------------------------------------------------------------------ queue order
    def get_creation_timestamp(self, pod: "Pod", ts: float) -> float:
        """The time a pod sorts by, in clock seconds (upstream GetCreationTimestamp).

        A member sorts by its group's last failure if it failed, else by the PodGroup's
        ``creationTimestamp`` (or, for a PodGroup written without one, when this plugin first saw
        it); any other pod by ``ts``, its initial attempt.
        """
        name = pod_group_label(pod)
        if not name:
            return ts
        full = f"{pod.namespace}/{name}"
        failed = self._last_failed.get(full)
        if failed is not None:
            return failed
        lister = self._lister()
        obj = lister.get(POD_GROUP_KIND, name, pod.namespace) if lister is not None else None
        if obj is None:
            return ts
        created = _parse_time(((getattr(obj, "raw", None) or {}).get("metadata") or {}).get("creationTimestamp"))
        if created is not None:
            seconds = self._clock_seconds(created)
            if seconds is not None:
                return seconds
        key = (full, getattr(obj, "uid", "") or "")
        seen = self._first_seen.get(key)
        if seen is None:
            seen = self._first_seen[key] = self.now()
        return seen

    def _clock_seconds(self, when: _dt.datetime) -> float | None:
        """A wall-clock time on the scheduler's clock (the Handle's clock maps one to the other)."""
        if self.handle is None:
            return None
        clock = self.handle.clock
        return clock.now() + (when - clock.now_datetime()).total_seconds()


def check_cluster_resource(nodes: Iterable["NodeInfo"], request: Mapping[str, int],
                           desired_pod_group: str) -> str | None:
    """None if the nodes' free resources add up to ``request``, else ``resource gap: ...``.

    Resources used by members of ``desired_pod_group`` count as free (upstream CheckClusterResource).
    """
    remaining = dict(request)
    for info in nodes:
        if info is None or info.node is None:
            continue
        free = _node_free(info, desired_pod_group)
        for name in list(remaining):
            left = remaining[name] - free.get(name, 0)
            if left <= 0:
                del remaining[name]
            else:
                remaining[name] = left
        if not remaining:
            return None
    gap = " ".join(f"{name}:{format_quantity(name, amount)}" for name, amount in sorted(remaining.items()))
    return f"resource gap: map[{gap}]"


def _node_free(info: "NodeInfo", desired_pod_group: str) -> dict[str, int]:
    others = [p for p in info.pods if pod_group_full_name(p) != desired_pod_group]
    requested: dict[str, int] = {}
    for pod in others:
        for name, amount in pod.request().items():
            requested[name] = requested.get(name, 0) + amount
    allocatable = info.allocatable
    free = {name: amount - requested.get(name, 0) for name, amount in allocatable.items()}
    free["pods"] = allocatable.get("pods", 0) - len(others)
    return free


def _as_int(value: Any, default: Any) -> Any:
    if isinstance(value, bool):
        return default
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str):
        try:
            return int(value)
        except ValueError:
            return default
    return default


def _parse_time(value: Any) -> _dt.datetime | None:
    if isinstance(value, _dt.datetime):
        return value if value.tzinfo is not None else value.replace(tzinfo=_dt.timezone.utc)
    if not isinstance(value, str) or not value:
        return None
    try:
        parsed = _dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=_dt.timezone.utc)
