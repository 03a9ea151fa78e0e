"""The embedded cluster: the shared object store (:mod:`kschedfw.cluster.store`), written
directly, with a watch stream and a simulated clock.

It plays the API server's part for the scheduler: objects are created, updated and deleted here,
every change is queued for the watchers and handed to them in order by :meth:`MemoryCluster.deliver`
(which the scheduler's loop calls, as it drains the real backend's inbox: no handler runs inside a
write, so a plugin that writes is never re-entered), binding sets ``spec.nodeName``, failures patch
the PodScheduled condition and record Events, and deleting a pod honours its grace period on the
simulated clock.
"""

from __future__ import annotations

import builtins
import collections
import copy
import datetime as _dt
import itertools
import uuid
from typing import TYPE_CHECKING, Any, Callable, Iterable, Mapping

import attrs

from kschedfw.api import Pod, parse_object
from kschedfw.api.workload_names import POD_GROUP_KIND, WORKLOAD_KIND
from kschedfw.cluster.store import ObjectStore, kind_of
from kschedfw.cluster.timers import TimerFacet, Timers
from kschedfw.api.timestamps import rfc3339
from kschedfw.clock import SimulatedClock
from kschedfw.cluster.apiserver.admission import (AdmissionError, validate_extended_resource_claim_status,
                                        validate_priority_class)
from kschedfw.cluster.apiserver.podadmission import ADMISSION_PLUGINS, admit_new_pod
from kschedfw.cluster.controllers.resourceclaim import (CLAIM_FINALIZER, claims_after_pod_removal, generated_suffix,
                                             with_generated_claims)
from kschedfw.cluster.memory.stepped_binding import SteppedBinding, current_binding
from kschedfw.fwk.features import enabled
from kschedfw.fwk.interface import (ADDED, DELETED, MODIFIED, Conflict, ExtendedResourceClaimStatus, NotFound,
                                    Unsubscribe, WatchCallback, WatchEvent)

__all__ = ["MemoryCluster", "EventRecord", "PodDeletion", "WatchEvent", "NotFound", "Conflict", "ADDED", "MODIFIED",
           "DELETED"]


@attrs.frozen
class EventRecord:
    """A Kubernetes Event (``kubectl get events``): Scheduled, FailedScheduling, Preempted..."""

    time: float
    type: str  # Normal | Warning
    reason: str
    object_kind: str
    object_key: str
    message: str
    object_uid: str = ""  # involvedObject.uid: which pod of that name


@attrs.define
class PodDeletion:
    """A pod whose deletion began on this cluster, kept after the object is gone (the
    reports still account for it): the pod as it was then (its node, labels, conditions),
    when, who asked (``by``, in the caller's words; "" when the caller did not say), and when
    the object went away (None while it is still terminating)."""

    pod: Pod
    at: float
    by: str = ""
    gone_at: float | None = None


class MemoryCluster(TimerFacet):
    """Objects by kind and (namespace, name); watchers get every change, in order, when
    :meth:`deliver` is called.

    One implementation of :class:`kschedfw.fwk.interface.Backend`; its time is its
    :class:`~kschedfw.clock.SimulatedClock` (``clock.now_datetime()`` stamps objects).
    """

    def __init__(self, clock: SimulatedClock | None = None,
                 feature_gates: Mapping[str, bool] | None = None, *,
                 admission_plugins: Iterable[str] = ADMISSION_PLUGINS) -> None:
        self.clock = clock or SimulatedClock()
        self.feature_gates = feature_gates
        #: the admission plugins run on create (none: objects are stored as given, as upstream's
        #: fake clientset stores them in unit tests)
        self.admission_plugins = frozenset(admission_plugins)
        self._store = ObjectStore()
        #: changes made and not yet handed to the watchers (see :meth:`deliver`)
        self._inbox: collections.deque[WatchEvent] = collections.deque()
        self._delivering = False
        self._timers = Timers()
        self._resource_version = itertools.count(1)
        self.events: list[EventRecord] = []
        self.rejected: list[tuple[str, str]] = []  # (object, reason) refused at admission
        #: every pod deleted here, in the order their deletions began
        self.deletions: list[PodDeletion] = []
        self._deleting: dict[str, PodDeletion] = {}  # uid -> the deletion of the pod still here
        #: pod uid -> (namespace/template, the FailedResourceClaimCreation event's message) while
        #: a claim of the pod cannot be created from its template
        self._claim_creation_failures: dict[str, tuple[str, str]] = {}
        #: objects refused before they reached this cluster ("Kind namespace/name" -> reason;
        #: `kschedfw simulate` validates what users wrote), to say why one is missing
        self.refused_on_input: dict[str, str] = {}

    # ------------------------------------------------------------------ watch and timers
    def watch(self, callback: WatchCallback) -> None:
        self._store.watch(callback)

    def subscribe(self, kind: str, callback: WatchCallback) -> Unsubscribe:
        """Changes of ``kind`` only, delivered in the same order as to ``watch`` callbacks."""
        return self._store.subscribe(kind, callback)

    def _emit(self, event: WatchEvent) -> None:
        self._inbox.append(event)

    def deliver(self, timeout: float = 0.0) -> int:
        """Hand the changes made so far to the watchers and subscribers, oldest first, and what
        their handlers change after them; the number handed out. As an informer's handlers, they
        run here and never inside the write that made the change. ``timeout`` is the real
        backend's (how long to wait for a change from outside): nothing comes from outside here."""
        if self._delivering:  # a handler asked: the changes it made follow once it returns
            return 0
        inbox, emit = self._inbox, self._store.emit
        count = 0
        self._delivering = True
        try:
            while inbox:
                emit(inbox.popleft())
                count += 1
        finally:
            self._delivering = False
        return count

    # ------------------------------------------------------------------ lister
    def get(self, kind: str, name: str, namespace: str = "") -> Any:
        return self._store.get(kind, name, namespace)

    def list(self, kind: str, namespace: str | None = None) -> list[Any]:
        return self._store.list(kind, namespace)

    # ------------------------------------------------------------------ writes
    def create(self, obj: Any) -> Any:
        kind = kind_of(obj)
        store = self._store
        if store.get(kind, obj.name, getattr(obj, "namespace", "") or "") is not None:
            raise Conflict(f'{kind} "{obj.name}" already exists')
        if kind == "PriorityClass":
            validate_priority_class(obj, self.list("PriorityClass") if "Priority" in self.admission_plugins else ())
        if kind == "Pod":
            obj = admit_new_pod(obj, priority_classes=self.list("PriorityClass"),
                                runtime_class=lambda name: self.get("RuntimeClass", name),
                                limit_ranges=self.list("LimitRange", obj.namespace), gates=self.feature_gates,
                                plugins=self.admission_plugins)
            if obj.scheduling_gates and not obj.node_name:
                obj = _set_condition(obj, "PodScheduled", "False", "SchedulingGated",
                                     "Scheduling is blocked due to non-empty scheduling gates")
            obj = self._with_generated_claims(obj)
        elif kind == POD_GROUP_KIND and enabled(self.feature_gates, "GenericWorkload"):
            from kschedfw.cluster.apiserver.podgroupadmission import admit_new_pod_group
            classes = (self.list("PriorityClass") if enabled(self.feature_gates, "WorkloadAwarePreemption")
                       else None)
            obj = admit_new_pod_group(obj, lambda namespace, name: self.get(WORKLOAD_KIND, name, namespace),
                                      plugins=self.admission_plugins, priority_classes=classes)
        obj = self._evolved(obj, self._stamp(obj))
        store.put(kind, obj)
        self._emit(WatchEvent(ADDED, kind, None, obj))
        if kind == "ResourceClaimTemplate":
            self._generate_claims_for_waiting_pods(obj.namespace)
        return obj

    def _generate_claims_for_waiting_pods(self, namespace: str) -> None:
        """A new template: the pods that name it get their claims now (the resourceclaim controller)."""
        for pod in self.list("Pod", namespace):
            updated = self._with_generated_claims(pod)
            if updated is not pod:
                self.update(updated)

    def _with_generated_claims(self, pod: Pod) -> Pod:
        """The resourceclaim controller's sync of ``pod``: its claims generated from templates, or
        a FailedResourceClaimCreation event (upstream's) for the first that cannot be."""
        failures: list[tuple[str, str]] = []
        updated = with_generated_claims(pod, self.get, self.create, lambda t, m: failures.append((t, m)))
        if not failures:
            self._claim_creation_failures.pop(pod.uid, None)
            return updated
        template, message = failures[0]
        self.record_event(pod, "Warning", "FailedResourceClaimCreation", message)
        self._claim_creation_failures[pod.uid] = (f"{pod.namespace}/{template}", message)
        return updated

    def claim_creation_failure(self, pod: Pod) -> str:
        """Why a claim of ``pod`` cannot be created from its ResourceClaimTemplate ("" when
        nothing failed): the FailedResourceClaimCreation message and, when the template was
        refused on creation, the refusal."""
        failure = self._claim_creation_failures.get(pod.uid)
        if failure is None:
            return ""
        template, message = failure
        refused = f"ResourceClaimTemplate {template}"
        reasons = [reason for what, reason in self.rejected if what == refused]
        reason = reasons[-1] if reasons else self.refused_on_input.get(refused)
        return message + (f" (the template was refused: {reason})" if reason else "")

    def stored_now(self) -> _dt.datetime:
        """Now as the API server stores a creationTimestamp: whole seconds, truncated (the
        watchers' own clock, e.g. the queue's timestamps, keeps the fraction)."""
        now: _dt.datetime = self.clock.now_datetime()
        return now.replace(microsecond=0)

    def _stamp(self, obj: Any) -> dict[str, Any]:
        """The changes giving ``obj`` a creationTimestamp, as the API server gives every object
        it creates, unless it came with one (a snapshot of a cluster keeps its history). Set on
        the typed field and in the manifest, where plugins read other kinds (coscheduling: its
        PodGroup's) and from which ``--write-out`` writes."""
        changes: dict[str, Any] = {}
        if not attrs.has(type(obj)):
            return changes
        if getattr(obj, "creation_timestamp", "") is None:
            changes["creation_timestamp"] = self.stored_now()
        raw = getattr(obj, "raw", None)
        meta = raw.get("metadata") if isinstance(raw, dict) else None
        if isinstance(raw, dict) and isinstance(meta, dict) and not meta.get("creationTimestamp"):
            stamp = changes.get("creation_timestamp") or getattr(obj, "creation_timestamp", None) or self.stored_now()
            changes["raw"] = {**raw, "metadata": {**meta, "creationTimestamp": rfc3339(stamp)}}
        return changes

    def try_create(self, obj: Any) -> Any | None:
        """Create, recording an admission refusal instead of raising (bulk loading)."""
        try:
            return self.create(obj)
        except (AdmissionError, Conflict) as exc:
            self.rejected.append((f"{kind_of(obj)} {_display(obj)}", str(exc)))
            return None

    def patch_pod_group_condition(self, pod_group: Any, condition: Any) -> None:
        """PATCH podgroups/status with one condition (meta.SetStatusCondition's rules)."""
        current = self.get(POD_GROUP_KIND, pod_group.name, pod_group.namespace)
        if current is None or (pod_group.uid and current.uid != pod_group.uid):
            raise NotFound(f'podgroups.scheduling.k8s.io "{pod_group.name}" not found')
        updated = current.with_condition(condition, self.stored_now())
        from kschedfw.api.workload import pod_group_manifest  # (the first PodGroup status loads it)
        status = pod_group_manifest(updated).get("status")
        raw = {k: v for k, v in current.raw.items() if k != "status"}
        if status:
            raw["status"] = status
        self.update(attrs.evolve(updated, raw=raw))

    def update(self, obj: Any) -> Any:
        kind = kind_of(obj)
        old = self._store.get(kind, obj.name, getattr(obj, "namespace", "") or "")
        if old is None:
            raise NotFound(f'{kind} "{obj.name}" not found')
        if kind == "Pod":
            _check_pod_update(old, obj)
        obj = self._with_version(obj)
        self._store.put(kind, obj)
        self._emit(WatchEvent(MODIFIED, kind, old, obj))
        return obj

    def delete(self, kind: str, name: str, namespace: str = "") -> Any:
        """DELETE an object other than a pod. A Workload or PodGroup that names finalizers in
        its manifest's metadata is only marked (``deletionTimestamp``) and stays, as the API
        server keeps it until they are removed (PodGroupWorkloadExists then refuses groups of
        that Workload); other objects are removed now, their controllers' finalizers being
        emulated by those controllers. The PodGroup protection finalizer does not hold its
        group here, as no PodGroupProtection controller runs to release it."""
        from kschedfw.cluster.apiserver.podgroupadmission import PROTECTION_FINALIZER
        obj = self.get(kind, name, namespace)
        raw = getattr(obj, "raw", None)
        meta = raw.get("metadata") if isinstance(raw, dict) else None
        if not isinstance(raw, dict) or not isinstance(meta, dict) or kind not in (WORKLOAD_KIND, POD_GROUP_KIND) \
                or not [f for f in meta.get("finalizers") or () if f != PROTECTION_FINALIZER]:
            return self.remove(kind, name, namespace)
        if not meta.get("deletionTimestamp"):
            marked = {**meta, "deletionTimestamp": rfc3339(self.stored_now())}
            obj = self.update(attrs.evolve(obj, raw={**raw, "metadata": marked}))
        return obj

    def remove(self, kind: str, name: str, namespace: str = "") -> Any:
        """Remove an object now (no grace period)."""
        old = self._store.pop(kind, name, namespace or "")
        if old is None:
            raise NotFound(f'{kind} "{name}" not found')
        if kind == "Pod":
            self._deletion_of(old).gone_at = self.clock.now()
            del self._deleting[old.uid]
        self._emit(WatchEvent(DELETED, kind, old, None))
        if kind == "Pod" and old.resource_claims:
            to_update, to_delete = claims_after_pod_removal(old, self.list("ResourceClaim", old.namespace))
            for claim in to_update:
                self.update(claim)
            for claim in to_delete:
                self.remove("ResourceClaim", claim.name, claim.namespace)
        return old

    def terminating_deletion(self, pod: Pod) -> PodDeletion | None:
        """The deletion begun here of this pod, still terminating; None if it was not deleted."""
        return self._deleting.get(pod.uid)

    def _deletion_of(self, pod: Pod, by: str = "") -> PodDeletion:
        """The record of this pod's deletion, begun now if it was not yet."""
        deletion = self._deleting.get(pod.uid)
        if deletion is None:
            deletion = self._deleting[pod.uid] = PodDeletion(pod, self.clock.now(), by)
            self.deletions.append(deletion)
        return deletion

    def _with_version(self, obj: Any) -> Any:
        return self._evolved(obj, {})

    def _evolved(self, obj: Any, changes: dict[str, Any]) -> Any:
        """``obj`` with ``changes`` and the next resourceVersion, in one copy (a Pod keeps its
        computed requests)."""
        if hasattr(obj, "resource_version"):
            changes["resource_version"] = str(next(self._resource_version))
        if not changes:
            return obj
        return obj._evolve_keep_caches(**changes) if kind_of(obj) == "Pod" else attrs.evolve(obj, **changes)

    # ------------------------------------------------------------------ the scheduler's client
    def bind(self, pod: Pod, node_name: str) -> None:
        """POST pods/binding, answered as the API server answers: NotFound if the pod is gone,
        Conflict if it is bound already or is a same-named successor (the binding carries the
        uid). The node is not looked up: the API server binds to any name."""
        current = self.get("Pod", pod.name, pod.namespace)
        if current is None:
            raise NotFound(f'pods "{pod.name}" not found')
        if current.uid != pod.uid:
            raise Conflict(f'Operation cannot be fulfilled on pods/binding "{pod.name}": Precondition failed: '
                           f"UID in precondition: {pod.uid}, UID in object meta: {current.uid}")
        if current.node_name:
            raise Conflict(f'pod {pod.name} is already assigned to node "{current.node_name}"')
        # spec.nodeName, startTime and PodScheduled=True in one copy of the pod
        raw = dict(current.raw)
        raw["spec"] = {**(raw.get("spec") or {}), "nodeName": node_name}
        changes: dict[str, Any] = {"node_name": node_name, "raw": raw}
        if current.start_time is None:
            changes["start_time"] = self.clock.now_datetime()
        changes.update(_condition_changes(current, raw, "PodScheduled", "True", "", ""))
        bound = self._evolved(current, changes)
        self._store.put("Pod", bound)
        self._emit(WatchEvent(MODIFIED, "Pod", current, bound))

    def update_resource_claim_status(self, claim: Any) -> Any:
        """PUT resourceclaims/status: the claim's status, and its finalizers as the scheduler's
        Update before it (DynamicResources PreBind) sets them."""
        current = self.get("ResourceClaim", claim.name, claim.namespace)
        if current is None or (claim.uid and current.uid != claim.uid):
            raise NotFound(f'resourceclaims.resource.k8s.io "{claim.name}" not found')
        sent = claim.raw
        raw = {**current.raw, "metadata": dict(current.raw.get("metadata") or {})}
        raw.pop("status", None)
        if sent.get("status"):
            raw["status"] = sent["status"]
        finalizers = (sent.get("metadata") or {}).get("finalizers")
        if finalizers:
            raw["metadata"]["finalizers"] = list(finalizers)
        else:
            raw["metadata"].pop("finalizers", None)
        return self.update(attrs.evolve(current, raw=raw))

    def create_resource_claim(self, claim: Any) -> Any:
        """POST resourceclaims. A ``generateName`` gets a suffix derived from the claim's owner
        (reproducible, where the API server's is random) and the claim a fresh uid."""
        raw = copy.deepcopy(claim.raw)
        meta = raw.setdefault("metadata", {})
        if not meta.get("name"):
            prefix = str(meta.get("generateName") or "")
            owner: dict[str, Any] = next(iter(meta.get("ownerReferences") or ()), {})
            meta["name"] = prefix + generated_suffix(f"{owner.get('uid', '')}/{prefix}")
        meta["uid"] = str(uuid.uuid5(uuid.NAMESPACE_OID, f"ResourceClaim/{meta.get('namespace', '')}/{meta['name']}/"
                                                         f"{next(self._resource_version)}"))
        raw.pop("status", None)
        return self.create(parse_object(raw))

    def delete_resource_claim(self, claim: Any) -> None:
        """Drop the delete-protection finalizer (an update), then delete (upstream deleteClaim)."""
        current = self.get("ResourceClaim", claim.name, claim.namespace)
        if current is None or (claim.uid and current.uid != claim.uid):
            raise NotFound(f'resourceclaims.resource.k8s.io "{claim.name}" not found')
        meta = current.raw.get("metadata") or {}
        if CLAIM_FINALIZER in (meta.get("finalizers") or ()):
            finalizers = [f for f in meta["finalizers"] if f != CLAIM_FINALIZER]
            new_meta = {k: v for k, v in meta.items() if k != "finalizers"}
            if finalizers:
                new_meta["finalizers"] = finalizers
            self.update(attrs.evolve(current, raw={**current.raw, "metadata": new_meta}))
        self.remove("ResourceClaim", claim.name, claim.namespace)

    def patch_pod_annotations(self, pod: Pod, annotations: Mapping[str, str]) -> None:
        """Merge ``annotations`` into this pod's (NotFound for a same-named successor)."""
        current = self.get("Pod", pod.name, pod.namespace)
        if current is None or current.uid != pod.uid:
            raise NotFound(f'pods "{pod.name}" not found')
        merged = {**current.annotations, **annotations}
        raw = dict(current.raw)
        raw["metadata"] = {**(raw.get("metadata") or {}), "annotations": merged}
        self.update(attrs.evolve(current, annotations=merged, raw=raw))

    def set_extended_resource_claim_status(self, pod: Pod, status: ExtendedResourceClaimStatus) -> None:
        """Patch pods/status with ``extendedResourceClaimStatus``, validated as the API server does."""
        current = self.get("Pod", pod.name, pod.namespace)
        if current is None or current.uid != pod.uid:
            raise NotFound(f'pods "{pod.name}" not found')
        validate_extended_resource_claim_status(current, status)
        raw = dict(current.raw)
        raw["status"] = {**(raw.get("status") or {}), "extendedResourceClaimStatus": copy.deepcopy(dict(status))}
        self.update(current._evolve_keep_caches(raw=raw))


    def submit_binding(self, work: Callable[[], Any], done: Callable[[Any], None], *,
                       may_wait: bool = False) -> None:
        """Bindings complete at once here, so a simulation is reproducible from its seed; one that
        may wait runs in lock step with the simulation (:mod:`.stepped_binding`)."""
        if not may_wait:
            done(work())
            return
        SteppedBinding(self._call_quietly, self.clock.now, work, done).start()

    def _call_quietly(self, when: float, callback: Callable[[], None]) -> None:
        """A waiting binding's next poll: a timer that is not progress (a run with nothing else
        left settles while a pod waits for its devices, as it would wait for ever)."""
        self._timers.call_at(when, callback, quiet=True)

    def wait_for(self, ready: Callable[[], bool], interval: float, timeout: float) -> bool:
        """Poll on the simulated clock, from a binding submitted with ``may_wait``."""
        binding = current_binding()
        if binding is None:
            raise RuntimeError("wait_for outside a binding cycle that may wait: the plugin must write "
                               "BINDING_MAY_WAIT_KEY to the cycle state in Reserve or Permit")
        deadline = self.clock.now() + timeout
        while not ready():
            left = deadline - self.clock.now()
            if left <= 0:
                return False
            binding.sleep(min(interval, left))
        return True

    def recorder_for(self, profile: str) -> "MemoryCluster":
        """Events are kept in one list here, whichever profile records them."""
        return self

    def apply_extender_binding(self, pod: Pod, node_name: str) -> None:
        """A binding extender bound ``pod`` through its own API server; this one, standing in for
        that server, records it (a real backend's informer sees it instead)."""
        self.bind(pod, node_name)

    def patch_pod_scheduling_failure(self, pod: Pod, reason: str, message: str,
                                     nominated_node_name: str | None = None) -> None:
        """PodScheduled=False with reason/message; nominatedNodeName if given ("" clears). Nothing
        for a pod that is gone or bound meanwhile (it was bound after all), as a real backend."""
        current = self.get("Pod", pod.name, pod.namespace)
        if current is None or current.uid != pod.uid or current.node_name:
            return
        updated = _set_condition(current, "PodScheduled", "False", reason, message)
        if nominated_node_name is not None and nominated_node_name != current.nominated_node_name:
            updated = updated.with_nominated_node(nominated_node_name)
        if updated != current:
            self.update(updated)

    def set_nominated_node_name(self, pod: Pod, node_name: str) -> None:
        current = self.get("Pod", pod.name, pod.namespace)
        if current is not None and current.uid == pod.uid and current.nominated_node_name != node_name:
            self.update(current.with_nominated_node(node_name))

    def add_pod_condition(self, pod: Pod, type_: str, status: str, reason: str, message: str) -> Pod | None:
        current = self.get("Pod", pod.name, pod.namespace)
        if current is None or current.uid != pod.uid:
            return None
        updated: Pod = self.update(_set_condition(current, type_, status, reason, message))
        return updated

    def delete_pod(self, pod: Pod, grace_period_seconds: int | None = None, *, by: str = "") -> None:
        """Graceful delete: mark terminating now, remove after the grace period (simulated).
        ``by`` says who asked, for :attr:`deletions` (a scenario step)."""
        current = self.get("Pod", pod.name, pod.namespace)
        if current is None or current.uid != pod.uid:
            raise NotFound(f'pods "{pod.name}" not found')
        self._deletion_of(current, by)
        grace = current.termination_grace_period_seconds if grace_period_seconds is None else grace_period_seconds
        if not current.node_name or grace <= 0:
            self.remove("Pod", current.name, current.namespace)
            return
        if current.deletion_timestamp is None:
            raw = dict(current.raw)
            meta = dict(raw.get("metadata") or {})
            meta["deletionTimestamp"] = rfc3339(self.clock.now_datetime())
            meta["deletionGracePeriodSeconds"] = grace
            raw["metadata"] = meta
            terminating = current._evolve_keep_caches(deletion_timestamp=self.clock.now_datetime(),
                                                      deletion_grace_period_seconds=grace, raw=raw)
            self.update(terminating)
            uid = current.uid

            def finish() -> None:
                still = self.get("Pod", current.name, current.namespace)
                if still is not None and still.uid == uid:
                    self.remove("Pod", still.name, still.namespace)

            self.call_at(self.clock.now() + grace, finish)

    def record_event(self, obj: Any, type_: str, reason: str, message: str) -> None:
        self.events.append(EventRecord(self.clock.now(), type_, reason, kind_of(obj), _display(obj), message,
                                       getattr(obj, "uid", "") or ""))

    # ------------------------------------------------------------------ bulk
    def load(self, objects: Iterable[Any], spacing: float = 0.0) -> None:
        """Create objects one after another, ``spacing`` simulated seconds apart from now, like
        ``kubectl create -f``: in file order, except that kinds others depend on come first
        (priority and runtime classes, namespaces, LimitRanges, nodes and Workloads, then the rest;
        the sort is stable)."""
        order = {"PriorityClass": 0, "RuntimeClass": 0, "Namespace": 1, "LimitRange": 2, "StorageClass": 2,
                 "CSINode": 3, "Node": 4, WORKLOAD_KIND: 4, "Pod": 9}
        start = self.clock.now()
        for i, obj in enumerate(sorted(objects, key=lambda o: order.get(kind_of(o), 5))):
            if spacing and i:
                self.clock.set(start + i * spacing)
            self.try_create(obj)
            self.deliver()  # the watchers hear of each object before the next is created

    def all_objects(self) -> builtins.list[Any]:
        return self._store.all_objects()


def _display(obj: Any) -> str:
    ns = getattr(obj, "namespace", "")
    return f"{ns}/{obj.name}" if ns else obj.name


def _set_condition(pod: Pod, type_: str, status: str, reason: str, message: str) -> Pod:
    changes = _condition_changes(pod, pod.raw, type_, status, reason, message)
    return pod._evolve_keep_caches(**changes) if changes else pod


def _condition_changes(pod: Pod, raw: dict[str, Any], type_: str, status: str, reason: str,
                       message: str) -> dict[str, Any]:
    """The changes setting the pod's condition ``type_`` (none if it is already so), on the
    typed field and in ``raw``, the manifest to change (copied, never changed in place)."""
    from kschedfw.api import PodCondition
    existing = pod.condition(type_)
    if existing is not None and (existing.status, existing.reason, existing.message) == (status, reason, message):
        return {}
    conditions = [c for c in pod.conditions if c.type != type_]
    conditions.append(PodCondition(type_, status, reason, message))
    raw = dict(raw)
    st = dict(raw.get("status") or {})
    raw_conditions = [c for c in (st.get("conditions") or []) if isinstance(c, dict) and c.get("type") != type_]
    entry = {"type": type_, "status": status}
    if reason:
        entry["reason"] = reason
    if message:
        entry["message"] = message
    raw_conditions.append(entry)
    st["conditions"] = raw_conditions
    raw["status"] = st
    return {"conditions": tuple(conditions), "raw": raw}


def _check_pod_update(old: Pod, new: Pod) -> None:
    """Scheduling gates can only be removed once a pod exists (upstream pod validation)."""
    for i, gate in enumerate(new.scheduling_gates):
        if gate not in old.scheduling_gates:
            raise AdmissionError(
                f'Pod "{new.name}" is invalid: spec.schedulingGates[{i}].name: Forbidden: only deletion '
                f"is allowed, but found new scheduling gate '{gate}'")


if TYPE_CHECKING:
    from kschedfw.fwk.interface import Backend, ResourceClaimWriter

    def _implements_the_contract(cluster: MemoryCluster) -> tuple[Backend, ResourceClaimWriter]:
        """Never called: mypy proves here that MemoryCluster is a Backend with the claim writes."""
        return cluster, cluster
