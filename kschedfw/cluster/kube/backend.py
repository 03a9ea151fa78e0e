"""KubeBackend: the :class:`~kschedfw.fwk.interface.Backend` over a real kube-apiserver.

Informer threads only put changes into a thread-safe inbox; :meth:`KubeBackend.deliver`, called on
the scheduler's thread, applies them to the object store the scheduler reads (the one the embedded
cluster writes, :mod:`kschedfw.cluster.store`) and hands them to watchers and subscribers, so the scheduler sees one consistent, ordered world as with the embedded cluster.
Nothing on the scheduler's thread waits for a write: binds run on a small worker pool
(:meth:`KubeBackend.submit_binding`, as upstream binds in a goroutine per pod) and hand each
outcome back through the inbox; status patches (:class:`StatusWriter`) and events
(:class:`EventWriter`) are queued for their own threads. A bind whose outcome is unknown (the
connection broke after it was sent, or the server failed mid-write) is settled before its slot is
given up (:meth:`KubeBackend.bind`). Every write first checks ``write_fence``: once leadership is
lost, nothing more is sent. With
``dry_run`` nothing is written: binds and status changes are applied to the local cache only and
reported through ``on_decision`` as :class:`~kschedfw.cluster.kube.decisions.Decision`.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
import logging
import queue
import threading
import time
from typing import TYPE_CHECKING, Any, Callable, Mapping

import attrs

from kschedfw.api import Pod
from kschedfw.api.workload_names import POD_GROUP_KIND
from kschedfw.cluster.kube.client import (ApiError, KubeClient, LeadershipLost, MERGE_PATCH, STRATEGIC_MERGE_PATCH,
                                          TransportError)
from kschedfw.api.timestamps import rfc3339
from kschedfw.clock import WallClock
from kschedfw.cluster.kube.decisions import Decision
from kschedfw.cluster.kube.discovery import LateDiscovery, discover
from kschedfw.cluster.kube.events import EventWriter
from kschedfw.cluster.kube import leanpod
from kschedfw.cluster.kube.informer import Informer
from kschedfw.cluster.kube.resources import BY_KIND, RESOURCES, Resource, parse_api_object
from kschedfw.cluster.kube.ratelog import RateLimitedLog
from kschedfw.cluster.kube.shadow import ShadowWrites
from kschedfw.cluster.kube.statuswriter import RETRY_DELAYS, StatusWriter, retriable, uid_refused
from kschedfw.cluster.controllers.resourceclaim import CLAIM_FINALIZER
from kschedfw.cluster.store import ObjectStore
from kschedfw.cluster.timers import TimerFacet, Timers
from kschedfw.fwk.features import enabled
from kschedfw.fwk.interface import Conflict, ExtendedResourceClaimStatus, NotFound, WatchEvent

__all__ = ["KubeBackend", "LeadershipLost"]

log = logging.getLogger(__name__)

_WAKE = ("WAKE", "", None, None)
_DONE = "DONE"  # an inbox item (_DONE, "", callback, result): a finished off-thread bind
BIND_WORKERS = 32  # binds in flight at once (upstream: a goroutine each); the client QPS limit applies to all
SETTLE_BACKOFF = (0.2, 5.0)  # seconds: first and longest pause between tries to settle a bind


class _Unsettled(Exception):
    """A bind's outcome is still unknown: the server refused the new request and the pod
    could not be read (see :meth:`KubeBackend._bind_again`)."""


class KubeBackend(TimerFacet):
    def __init__(self, client: KubeClient, *, dry_run: bool = False, kinds: list[str] | None = None,
                 on_decision: Callable[[Decision], None] | None = None,
                 informer_options: dict[str, Any] | None = None, event_client: KubeClient | None = None,
                 lean_pods: bool = True, feature_gates: Mapping[str, bool] | None = None) -> None:
        """``feature_gates``: the scheduler's; a gated kind (the workload API's PodGroups) is
        watched only with its gate on."""
        self.client = client
        self.feature_gates = feature_gates
        self.dry_run = dry_run
        # cache pods with only the fields the scheduler reads (extenders get the cached manifest:
        # a scheduler with extenders keeps whole pods, as upstream sends them)
        self.lean_pods = lean_pods
        self.clock = WallClock()
        self.on_decision = on_decision
        self._kinds = kinds
        self._informer_options = dict(informer_options or {})
        self._store = ObjectStore()
        self._inbox: queue.SimpleQueue[tuple[str, str, Any, Any]] = queue.SimpleQueue()
        self._timers = Timers()
        self.informers: list[Informer] = []
        self._informers_lock = threading.Lock()
        self._stopped = False
        self._late: LateDiscovery | None = None
        #: the gated kinds whose gate is on that the server did not serve at start
        self.unserved: list[Resource] = []
        self._write_fence: Callable[[], bool] | None = None
        self._event_client = None if dry_run else (event_client or client)
        self._closing = threading.Event()
        self._request_timeout = client.timeout
        self._warn = RateLimitedLog(log)
        self.events = EventWriter(self._event_client, fence=self.may_write)
        self.statuses = None if dry_run else StatusWriter(client, current=self._cached, fence=self.may_write)
        #: a dry run's pretended binds and deletions, kept over what the informers report
        self.shadow = ShadowWrites() if dry_run else None
        self._binders = ThreadPoolExecutor(BIND_WORKERS, thread_name_prefix="bind")

    @property
    def write_fence(self) -> Callable[[], bool] | None:
        """False once this process may no longer write (leader election sets it to the lease
        check). The clients check it right before each write is sent; the status and event
        writers also before queueing one."""
        return self._write_fence

    @write_fence.setter
    def write_fence(self, fence: Callable[[], bool] | None) -> None:
        self._write_fence = fence
        self.client.write_fence = fence
        if self._event_client is not None:
            self._event_client.write_fence = fence

    def may_write(self) -> bool:
        """Whether a write may be sent now (the leader-election fence)."""
        fence = self._write_fence
        return fence is None or fence()

    def _cached_pod(self, pod: Pod) -> Pod | None:
        current: Pod | None = self._cached("Pod", pod)
        return current

    def _cached(self, kind: str, obj: Any) -> Any:
        """The cache's object of ``kind`` with ``obj``'s namespace, name and uid, or None."""
        current = self._store.get(kind, obj.name, obj.namespace)
        return current if current is not None and current.uid == obj.uid else None

    # ------------------------------------------------------------------ informers
    def start(self) -> None:
        """Start an informer per watched kind the server serves; the optional kinds it does not
        serve yet are asked for again (:class:`LateDiscovery`) and watched once they appear. A
        gated kind is watched only with its gate on, and is then required, as kube-scheduler's
        informer for it: when it is not served its list is retried and :meth:`wait_for_sync`
        waits (:attr:`unserved` says why)."""
        wanted = [BY_KIND[k] for k in self._kinds] if self._kinds else list(RESOURCES)
        wanted = [r for r in wanted if not r.feature_gate or enabled(self.feature_gates, r.feature_gate)]
        served, missing = discover(self.client, wanted)
        self.unserved = [r for r in missing if r.feature_gate]
        missing = [r for r in missing if not r.feature_gate]
        for resource in served + self.unserved:
            self._start_informer(resource)
        if missing:
            options = self._informer_options
            self._late = LateDiscovery(self.client, missing, self._start_informer,
                                       initial_backoff=options.get("initial_backoff", 0.8),
                                       max_backoff=options.get("max_backoff", 30.0))
            self._late.start()

    def _start_informer(self, resource: Resource) -> None:
        with self._informers_lock:  # late ones start from the discovery thread
            if self._stopped:
                return
            decoders: dict[str, Any] = {}
            if resource.kind == "Pod" and self.lean_pods:
                decoders = {"decode_page": leanpod.pod_list_decoder(), "decode_event": leanpod.pod_event_decoder()}
            informer = Informer(self.client, resource, self._enqueue, **decoders, **self._informer_options)
            self.informers.append(informer)
            informer.start()

    def wait_for_sync(self, timeout: float | None = None) -> bool:
        """True once every informer has listed (upstream WaitForCacheSync)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        for informer in self.informers:
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            if not informer.synced.wait(left):
                return False
        return True

    def unsynced(self) -> list[str]:
        """The resources whose first list has not succeeded yet (for error messages)."""
        return [i.resource.path for i in self.informers if not i.synced.is_set()]

    def unserved_messages(self) -> list[str]:
        """Why the gated kinds still unlisted are not: the API server does not serve them."""
        unsynced = set(self.unsynced())
        return [unserved_message(r) for r in self.unserved if r.path in unsynced]

    def stop(self) -> None:
        """Let binds in flight finish (their outcomes are not delivered: a restart rebuilds
        from the API; one still being settled gives up), send the queued status patches and
        events (a few seconds at most), then stop the informers."""
        self._closing.set()
        self._binders.shutdown(wait=True, cancel_futures=True)
        if self.statuses is not None:
            self.statuses.close()
        with self._informers_lock:
            self._stopped = True
        if self._late is not None:
            self._late.stop()
        for informer in self.informers:
            informer.stop()
        self.events.close()

    def _enqueue(self, type_: str, kind: str, old: Any, new: Any) -> None:
        self._inbox.put((type_, kind, old, new))

    def wake(self) -> None:
        """Make a :meth:`deliver` that is waiting return (e.g. on shutdown)."""
        self._inbox.put(_WAKE)

    def deliver(self, timeout: float = 0.0) -> int:
        """Apply and hand out the changes received so far (waiting up to ``timeout`` seconds for
        the first); the number of changes delivered."""
        count = 0
        block = timeout > 0
        while True:
            try:
                item = self._inbox.get(block, timeout) if block else self._inbox.get_nowait()
            except queue.Empty:
                return count
            block = False
            if item is _WAKE:
                continue
            if item[0] == _DONE:
                item[2](item[3])
                count += 1
                continue
            type_, kind, _, new = item
            self._apply(type_, kind, new if new is not None else item[2])
            count += 1

    def _apply(self, type_: str, kind: str, obj: Any) -> None:
        if self.shadow is not None and kind == "Pod":
            obj = self.shadow.adjust(type_, obj)
            if obj is None:
                return
        event = self._store.apply(type_, kind, obj)
        if event is not None:
            self._store.emit(event)

    # ------------------------------------------------------------------ Backend: watch, timers
    def watch(self, callback: Callable[[WatchEvent], None]) -> None:
        self._store.watch(callback)

    def subscribe(self, kind: str, callback: Callable[[WatchEvent], None]) -> Callable[[], None]:
        return self._store.subscribe(kind, callback)

    def now_datetime(self) -> Any:
        return self.clock.now_datetime()

    # ------------------------------------------------------------------ Backend: reads
    def get(self, kind: str, name: str, namespace: str = "") -> Any:
        return self._store.get(kind, name, namespace)

    def list(self, kind: str, namespace: str | None = None) -> list[Any]:
        return self._store.list(kind, namespace)

    # ------------------------------------------------------------------ Backend: writes
    def submit_binding(self, work: Callable[[], Any], done: Callable[[Any], None], *,
                       may_wait: bool = False) -> None:
        """Run ``work`` (the Bind plugins) on a bind worker; ``done(result)`` is called on the
        scheduler's thread by :meth:`deliver`. A dry run binds inline (there is no round trip).
        One that may wait (minutes, for DRA's binding conditions) gets a thread of its own, so
        it holds no bind worker, as upstream's goroutine per pod."""
        def bind() -> Any:
            try:
                return work()
            except Exception as exc:  # the Bind plugins' runner turns plugin faults into a Status
                from kschedfw.fwk.status import Status
                log.exception("binding failed")
                return Status.as_status(exc)
        if not may_wait or self.dry_run:
            self.run_api_calls(bind, done)
            return

        def run() -> None:
            self._inbox.put((_DONE, "", done, bind()))
        threading.Thread(target=run, name="bind-wait", daemon=True).start()

    def wait_for(self, ready: Callable[[], bool], interval: float, timeout: float) -> bool:
        """Poll on the wall clock; a dry run (nothing is written, so nothing changes) asks once,
        and stopping the backend ends the wait as a timeout."""
        deadline = time.monotonic() + timeout
        while not ready():
            left = deadline - time.monotonic()
            if left <= 0 or self.dry_run or self._closing.wait(min(interval, left)):
                return False
        return True

    def run_api_calls(self, work: Callable[[], Any], done: Callable[[Any], None]) -> None:
        """Run ``work`` (API calls only: binds, a preemption's evictions) on a worker and hand
        its result, or the exception it raised, to ``done`` on the scheduler's thread. A dry run
        runs it inline: nothing goes on the wire, and its pretended writes touch the cache."""
        if self.dry_run:
            done(work())
            return

        def run() -> None:
            try:
                result = work()
            except Exception as exc:
                log.exception("API calls off the scheduling loop failed")
                result = exc
            self._inbox.put((_DONE, "", done, result))
        self._binders.submit(run)

    def bind(self, pod: Pod, node_name: str) -> None:
        """POST pods/binding with the pod's uid; success is any 2xx (201 with a Status body).

        When the outcome is unknown (the connection broke after the request was sent, or the
        server failed mid-write with a 5xx), the bind is settled before the slot is given up:
        the same binding is sent again until the server answers; a 409 then means the pod is
        bound already, and a read tells whether to ``node_name`` (our first bind went through).
        Meanwhile the pod stays assumed on the node, so its slot is not given to another."""
        if self.shadow is not None:
            self._decide(Decision(pod.key, pod.scheduler_name, "Bound", node=node_name))
            self.shadow.bound(pod, node_name)
            self._apply("MODIFIED", "Pod", pod.with_node(node_name))
            return
        if self.statuses is not None:
            self.statuses.supersede(pod.uid, self._request_timeout)
        try:
            self._post_binding(pod, node_name)
        except TransportError as exc:
            if not exc.maybe_sent:  # nothing was sent: an ordinary failure, retried with backoff
                self._warn.warning("bind-unreachable", "could not bind pod %s to %s (create pods/binding): %s",
                                   pod.key, node_name, exc)
                raise
            log.warning("bind of pod %s to %s: %s; settling whether it was bound", pod.key, node_name, exc)
            self._settle_bind(pod, node_name)
        except ApiError as exc:
            if exc.status < 500:
                self._warn.warning(f"bind-{exc.status}", "could not bind pod %s to %s (create pods/binding): %s",
                                   pod.key, node_name, exc)
                raise
            log.warning("bind of pod %s to %s: %s; settling whether it was bound", pod.key, node_name, exc)
            self._settle_bind(pod, node_name)

    def _post_binding(self, pod: Pod, node_name: str) -> None:
        body = {"apiVersion": "v1", "kind": "Binding",
                "metadata": {"name": pod.name, "namespace": pod.namespace, "uid": pod.uid},
                "target": {"apiVersion": "v1", "kind": "Node", "name": node_name}}
        self.client.request("POST", f"/api/v1/namespaces/{pod.namespace}/pods/{pod.name}/binding", body=body)

    def _settle_bind(self, pod: Pod, node_name: str) -> None:
        """Send the binding again until the server answers, and read the pod on a conflict;
        return when it is bound to ``node_name``, raise when it is not (or when the process
        stops or loses its lease, leaving the outcome to the next leader's informers)."""
        pause, longest = SETTLE_BACKOFF
        while True:
            if self._closing.wait(pause):
                raise TransportError("POST", "pods/binding", RuntimeError("stopped before the bind was settled"),
                                     maybe_sent=True)
            try:
                return self._bind_again(pod, node_name)
            except (TransportError, _Unsettled):
                pass
            except ApiError as exc:
                if exc.status < 500 and exc.status != 429:
                    raise
            pause = min(pause * 2, longest)

    def _bind_again(self, pod: Pod, node_name: str) -> None:
        """One try of :meth:`_settle_bind`. A refusal of the new request (409, or a 403 while a
        restarted server's authorizer warms up) says nothing of the earlier one: only a read
        settles it. Bound to ``node_name``: success; readable and not bound there: the refusal
        stands; unreadable: still unknown (:class:`_Unsettled`, tried again)."""
        try:
            self._post_binding(pod, node_name)  # it had not gone through; now it has
        except (Conflict, ApiError) as exc:
            if isinstance(exc, ApiError) and (exc.status >= 500 or exc.status == 429):
                raise
            try:
                bound = self._bound_to(pod, node_name)
            except NotFound:
                raise exc from None  # the pod is gone: nothing is bound
            except (ApiError, TransportError) as read_failed:
                raise _Unsettled(str(read_failed)) from None
            if not bound:
                raise
            log.info("pod %s was bound to %s by the earlier request", pod.key, node_name)

    def _bound_to(self, pod: Pod, node_name: str) -> bool:
        """A direct read: is this very pod (same uid) bound to ``node_name``?"""
        answer = self.client.request("GET", f"/api/v1/namespaces/{pod.namespace}/pods/{pod.name}")
        meta = answer.get("metadata") or {}
        return meta.get("uid") == pod.uid and (answer.get("spec") or {}).get("nodeName") == node_name

    def patch_pod_scheduling_failure(self, pod: Pod, reason: str, message: str,
                                     nominated_node_name: str | None = None) -> None:
        """Upstream updatePod: the PodScheduled=False condition and nominatedNodeName in one
        strategic-merge patch of pods/status, queued for the status writer; nothing is sent when
        neither changes, nor for a pod the cache sees bound (it was bound after all)."""
        current = self._cached_pod(pod) or pod
        if current.node_name:
            return
        existing = current.condition("PodScheduled")
        nominate = nominated_node_name is not None and nominated_node_name != current.nominated_node_name
        same = existing is not None and (existing.status, existing.reason, existing.message) == \
            ("False", reason, message)
        if same and not nominate:
            return
        if self.dry_run:
            self._decide(Decision(pod.key, pod.scheduler_name, "Pending", reason=reason, message=message,
                                  nominated_node=nominated_node_name or ""))
            return
        status: dict[str, Any] = {}
        if not same:
            status = _condition_patch(current, "PodScheduled", "False", reason, message)
        if nominate:
            status["nominatedNodeName"] = nominated_node_name or None
        assert self.statuses is not None
        self.statuses.submit(pod, status)

    def patch_pod_group_condition(self, pod_group: Any, condition: Any) -> None:
        """Upstream updatePodGroupCondition and PatchPodGroupStatus: ``condition`` set as
        meta.SetStatusCondition sets it, stamped with the group's generation, in one
        strategic-merge patch of podgroups/status, queued for the status writer (fenced, merged
        and retried as pod status); nothing is sent when it would not change the condition.
        NotFound when the cache no longer has this group. A dry run writes nothing."""
        current = self._cached(POD_GROUP_KIND, pod_group)
        if current is None:
            raise _not_found(f'podgroups.scheduling.k8s.io "{pod_group.name}" not found')
        if self.statuses is None:
            return
        from kschedfw.api.workload import pod_group_manifest  # (loaded with the first PodGroup)
        generation = (current.raw.get("metadata") or {}).get("generation") or 0
        condition = attrs.evolve(condition, observed_generation=generation)
        existing = current.condition(condition.type)
        if existing is not None and (existing.status, existing.reason, existing.message,
                                     existing.observed_generation) == \
                (condition.status, condition.reason, condition.message, condition.observed_generation):
            return
        updated = current.with_condition(condition, self.clock.now_datetime())
        conditions = (pod_group_manifest(updated).get("status") or {}).get("conditions") or []
        entry = next(c for c in conditions if c.get("type") == condition.type)
        order = [{"type": c.type} for c in updated.conditions]
        self.statuses.submit(current, {"$setElementOrder/conditions": order, "conditions": [entry]},
                             kind=POD_GROUP_KIND)

    def set_nominated_node_name(self, pod: Pod, node_name: str) -> None:
        current = self.get("Pod", pod.name, pod.namespace) or pod
        if current.nominated_node_name == node_name or self.statuses is None:
            return
        self.statuses.submit(pod, {"nominatedNodeName": node_name or None})

    def add_pod_condition(self, pod: Pod, type_: str, status: str, reason: str, message: str) -> Pod | None:
        """The patched pod; None when it is gone (deleted, or replaced by a same-named successor)."""
        if self.dry_run:  # a step of preemption: the victim's Preempted event reports it
            return pod
        try:
            answer = self._patch_status(pod, _condition_patch(pod, type_, status, reason, message))
        except NotFound:
            return None
        if not answer:
            return None
        patched: Pod = parse_api_object(BY_KIND["Pod"], leanpod.prune(answer) if self.lean_pods else answer)
        return patched

    def delete_pod(self, pod: Pod, grace_period_seconds: int | None = None) -> None:
        """DELETE with the pod's uid as precondition (never a same-named successor)."""
        if self.shadow is not None:  # reported by the Preempted event that follows
            # delivered between cycles as the informer would, once the victim is gone
            self.shadow.deleted(pod)
            self._inbox.put(("DELETED", "Pod", pod, None))
            return
        body: dict[str, Any] = {"apiVersion": "v1", "kind": "DeleteOptions", "preconditions": {"uid": pod.uid}}
        if grace_period_seconds is not None:
            body["gracePeriodSeconds"] = grace_period_seconds
        try:
            self.client.request("DELETE", f"/api/v1/namespaces/{pod.namespace}/pods/{pod.name}", body=body)
        except Conflict as exc:  # the uid precondition failed: that pod is gone
            raise _not_found(str(exc)) from None

    def bind_pvc(self, claim: Any, volume: Any) -> Any:
        """VolumeBinding PreBind: a static binding sets the PV's claimRef; a claim to provision
        gets the selected-node annotation (already on ``claim``)."""
        if self.dry_run:
            return volume if volume is not None else claim
        if volume is not None:
            ref = {"kind": "PersistentVolumeClaim", "apiVersion": "v1", "namespace": claim.namespace,
                   "name": claim.name, "uid": claim.uid}
            answer = self.client.request("PATCH", f"/api/v1/persistentvolumes/{volume.name}",
                                         body={"spec": {"claimRef": ref}}, content_type=MERGE_PATCH)
            return parse_api_object(BY_KIND["PersistentVolume"], answer)
        answer = self.client.request("PATCH", BY_KIND["PersistentVolumeClaim"].object_path(claim.name, claim.namespace),
                                     body={"metadata": {"annotations": dict(claim.annotations)}},
                                     content_type=MERGE_PATCH)
        return parse_api_object(BY_KIND["PersistentVolumeClaim"], answer)

    def update_resource_claim_status(self, claim: Any) -> Any:
        """PUT resourceclaims/status; a finalizer the claim gains is first written with an
        Update of the claim, as DynamicResources' PreBind does upstream (status ignores it)."""
        if self.dry_run:
            return claim
        resource = BY_KIND["ResourceClaim"]
        path = resource.object_path(claim.name, claim.namespace)
        body = claim.raw
        wanted = set((body.get("metadata") or {}).get("finalizers") or ())
        known = self.get("ResourceClaim", claim.name, claim.namespace)
        have = set(((getattr(known, "raw", None) or {}).get("metadata") or {}).get("finalizers") or ())
        if wanted - have:
            updated = self.client.request("PUT", path, body=body)
            body = {**updated, "status": body.get("status") or {}}
        answer = self.client.request("PUT", path + "/status", body=body)
        return parse_api_object(resource, answer)

    def create_resource_claim(self, claim: Any) -> Any:
        """POST resourceclaims (the API server completes a ``generateName``)."""
        if self.dry_run:  # named as the API server would, with a fixed suffix
            meta = claim.raw.get("metadata") or {}
            name = meta.get("name") or f"{meta.get('generateName', '')}dryrn"
            return parse_api_object(BY_KIND["ResourceClaim"], {**claim.raw, "metadata": {**meta, "name": name}})
        resource = BY_KIND["ResourceClaim"]
        answer = self.client.request("POST", f"/apis/{resource.group_version}/namespaces/{claim.namespace}/"
                                             f"{resource.plural}", body=claim.raw)
        return parse_api_object(resource, answer)

    def delete_resource_claim(self, claim: Any) -> None:
        """Update the claim without the delete-protection finalizer (again with the stored claim
        after a conflict, as upstream's retry.RetryOnConflict), then DELETE it."""
        if self.dry_run:
            return
        path = BY_KIND["ResourceClaim"].object_path(claim.name, claim.namespace)
        body = claim.raw
        for attempt in range(5):
            if attempt:
                body = self.client.request("GET", path)
            meta = dict(body.get("metadata") or {})
            meta["finalizers"] = [f for f in meta.get("finalizers") or () if f != CLAIM_FINALIZER]
            try:
                self.client.request("PUT", path, body={**body, "metadata": meta})
                break
            except Conflict:
                if attempt == 4:
                    raise
        self.client.request("DELETE", path)

    def patch_pod_annotations(self, pod: Pod, annotations: Mapping[str, str]) -> None:
        """JSON merge patch of the pod's annotations, with its uid (a same-named successor is
        refused: NotFound)."""
        if self.dry_run:
            return
        body = {"metadata": {"uid": pod.uid, "annotations": dict(annotations)}}
        path = f"/api/v1/namespaces/{pod.namespace}/pods/{pod.name}"
        try:
            self.client.request("PATCH", path, body=body, content_type=MERGE_PATCH)
        except ApiError as exc:
            # a successor refuses another uid as immutable (422): this pod is gone
            if exc.status == 422 and self.client.request("GET", path).get("metadata", {}).get("uid") != pod.uid:
                raise _not_found(str(exc)) from None
            raise

    def set_extended_resource_claim_status(self, pod: Pod, status: ExtendedResourceClaimStatus) -> None:
        """Strategic-merge patch of pods/status (upstream schedutil.PatchPodStatus)."""
        if self.dry_run:
            return
        self._patch_status(pod, {"extendedResourceClaimStatus": dict(status)})

    def record_event(self, obj: Any, type_: str, reason: str, message: str, controller: str = "") -> None:
        if self.dry_run and reason == "Preempted":
            self._decide(Decision(obj.key, obj.scheduler_name, "Preempted", node=obj.node_name, reason=reason,
                                  message=message))
        if self.dry_run:
            return  # binds and failures are reported where they are decided
        self.events.record(obj, type_, reason, message, controller)

    def apply_extender_binding(self, pod: Pod, node_name: str) -> None:
        """The extender bound the pod through this API server: the pod informer sees it."""

    def recorder_for(self, profile: str) -> "ProfileEventRecorder":
        """The event recorder of one profile's framework: upstream reports a plugin's events (a
        victim's Preempted) as the preemptor's profile, not as the victim's scheduler."""
        return ProfileEventRecorder(self, profile)

    # ------------------------------------------------------------------ helpers
    def _patch_status(self, pod: Pod, status: dict[str, Any]) -> Any:
        """Strategic-merge patch of pods/status on the caller's thread (preemption needs the
        answer), retried as the status writer retries (upstream ``util.Retriable``)."""
        path = f"/api/v1/namespaces/{pod.namespace}/pods/{pod.name}/status"
        body = {"metadata": {"uid": pod.uid}, "status": status}
        for delay in (*RETRY_DELAYS, None):
            try:
                return self.client.request("PATCH", path, body=body, content_type=STRATEGIC_MERGE_PATCH)
            except Conflict as exc:
                if "uid" in str(exc).lower():  # a different pod of the same name
                    raise _not_found(str(exc)) from None
                if delay is None:
                    raise
            except (ApiError, TransportError) as exc:
                if isinstance(exc, ApiError) and uid_refused(exc):  # a different pod of the same name
                    raise _not_found(str(exc)) from None
                if delay is None or not retriable(exc):
                    raise
            time.sleep(delay)
        return None

    def _decide(self, decision: Decision) -> None:
        if self.on_decision is not None:
            self.on_decision(decision)


class ProfileEventRecorder:
    """An :class:`~kschedfw.fwk.interface.EventRecorder` reporting as one profile."""

    def __init__(self, backend: KubeBackend, profile: str) -> None:
        self.backend = backend
        self.profile = profile

    def record_event(self, obj: Any, type_: str, reason: str, message: str) -> None:
        self.backend.record_event(obj, type_, reason, message, self.profile)


def _condition_patch(pod: Pod, type_: str, status: str, reason: str, message: str) -> dict[str, Any]:
    """The status patch that sets one condition; lastTransitionTime moves only when the status
    changes (upstream UpdatePodCondition); ``$setElementOrder`` keeps the list's order."""
    raw_conditions = [c for c in ((pod.raw.get("status") or {}).get("conditions") or []) if isinstance(c, dict)]
    existing = next((c for c in raw_conditions if c.get("type") == type_), None)
    transition = existing.get("lastTransitionTime") if existing and existing.get("status") == status else None
    entry = {"type": type_, "status": status, "reason": reason or None, "message": message or None,
             "lastProbeTime": None, "lastTransitionTime": transition or rfc3339(WallClock().now_datetime())}
    order = [{"type": c.get("type")} for c in raw_conditions]
    if existing is None:
        order.append({"type": type_})
    return {"$setElementOrder/conditions": order, "conditions": [entry]}


def unserved_message(resource: Resource) -> str:
    """The gate is on but the API server does not serve the kind: what to change."""
    group_version = resource.group_version
    return (f"feature gate {resource.feature_gate} is on but the API server does not serve "
            f"{resource.display_name}: scheduling waits until it does, as kube-scheduler's informers do "
            f"(start kube-apiserver with --runtime-config={group_version}=true and "
            f"--feature-gates={resource.feature_gate}=true, or turn the gate off here)")


def _not_found(message: str) -> NotFound:
    from kschedfw.cluster.kube.client import _NotFound
    return _NotFound(message)


if TYPE_CHECKING:
    from kschedfw.fwk.interface import Backend, BackgroundApiCalls, PersistentVolumeClaimBinder, \
        PodGroupStatusWriter, ResourceClaimStatusWriter, ResourceClaimWriter

    def _implements_the_contract(backend: KubeBackend) -> tuple[Backend, BackgroundApiCalls,
                                                                PersistentVolumeClaimBinder, ResourceClaimStatusWriter,
                                                                ResourceClaimWriter, PodGroupStatusWriter]:
        """Never called: mypy proves here that KubeBackend is a Backend with the optional facets."""
        return backend, backend, backend, backend, backend, backend
