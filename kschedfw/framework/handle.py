"""Handle: the concrete :class:`kschedfw.fwk.interface.Handle` a plugin receives.

Each profile's runtime builds its own from a factory: the scheduler's holds every facet, from its
Backend (:func:`kschedfw.framework.profile.new_profile`); tests and tools give only what they need
(``Framework(..., handle=Handle.factory(snapshot=...))``, or ``Handle(snapshot=...)`` for a
plugin built alone). Whatever is not given is an inert stand-in, never None, except ``client``:
without a backend there is nothing to write to. Without a backend or a clock, time is the wall clock, as
upstream's ``time.Now()``.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any, Callable, Collection, Iterable, Mapping, Protocol, Sequence

import attrs

from kschedfw.cache.podgroupstate import PodGroupStates
from kschedfw.cache.snapshot import Snapshot
from kschedfw.clock import WallClock
from kschedfw.fwk.features import DEFAULT_FEATURE_GATES, FeatureGates
from kschedfw.fwk.interface import (Backend, Client, Clock, EventRecorder, Extender, FilterFunction,
                                    Nominator, ObjectLister, PreemptionMetrics, Subscriber, Unsubscribe,
                                    WaitingPodHandle, WatchCallback)
from kschedfw.fwk.node_reuse import NodeMemo

if TYPE_CHECKING:
    from kschedfw.api import Pod
    from kschedfw.fwk.cycle_state import CycleState
    from kschedfw.fwk.podgroup import PodGroupManager
    from kschedfw.fwk.status import Status
    from kschedfw.fwk.types import NodeInfo, NominatingInfo

__all__ = ["Handle", "HandleFactory", "EmptyLister", "EventLog", "NoPodGroups", "RecordedEvent", "PluginRunner"]


class PluginRunner(Protocol):
    """The profile's runtime, as the Handle forwards to it (the ``Framework`` that built it)."""

    def filter_plugins_to_run(self, state: CycleState) -> Sequence[tuple[str, FilterFunction]]: ...

    def pre_filter_extensions_to_run(self, state: CycleState) -> tuple[str, ...]: ...

    def nominated_pods_to_add(self, state: CycleState, pod: Pod, node_name: str) -> list[Pod]: ...

    def run_filter_plugins_with_nominated_pods(self, state: CycleState, pod: Pod,
                                               node_info: NodeInfo) -> Status | None: ...

    def run_pre_filter_extension_add_pod(self, state: CycleState, pod: Pod, pod_to_add: Pod,
                                         node_info: NodeInfo) -> Status | None: ...

    def run_pre_filter_extension_remove_pod(self, state: CycleState, pod: Pod, pod_to_remove: Pod,
                                            node_info: NodeInfo) -> Status | None: ...


class HandleFactory(Protocol):
    """Builds a profile's Handle for its runtime, which calls it with itself before building a
    plugin (``Handle`` itself, or :meth:`Handle.factory`)."""

    def __call__(self, *, framework: PluginRunner, profile_name: str, fast_paths: bool) -> "Handle": ...


class EmptyLister:
    """A lister of a cluster with no objects (a test Handle's default)."""

    def get(self, kind: str, name: str, namespace: str = "") -> Any:
        return None

    def list(self, kind: str, namespace: str | None = None) -> list[Any]:
        return []


@attrs.frozen
class RecordedEvent:
    obj: Any
    type: str
    reason: str
    message: str


class EventLog:
    """An event recorder that keeps what it is given (a test Handle's default), so a test can
    assert on the Events a plugin emits."""

    def __init__(self) -> None:
        self.events: list[RecordedEvent] = []

    def record_event(self, obj: Any, type_: str, reason: str, message: str) -> None:
        self.events.append(RecordedEvent(obj, type_, reason, message))


class NoPodGroups:
    """The PodGroup manager of a Handle without a cache (a test Handle's default): no groups."""

    def pod_group_states(self) -> PodGroupStates:
        return PodGroupStates()


def _no_unsubscribe() -> None:
    return None


def _feature_gates(gates: Mapping[str, bool] | None) -> FeatureGates:
    """A FeatureGates from what the caller has. Names kschedfw does not know (a perf workload's
    upstream-only gates) change nothing here; the command line rejects them before this point."""
    if isinstance(gates, FeatureGates):
        return gates
    return FeatureGates({k: v for k, v in (gates or {}).items() if k in DEFAULT_FEATURE_GATES})


class Handle:
    """Everything a plugin may use besides its args, as upstream's framework.Handle.

    ``backend`` fills ``lister``, ``client``, ``event_recorder``, the subscriptions and
    ``clock`` at once; each may also be given on its own (and then wins). A profile's runtime
    builds its Handle first thing, from a :class:`HandleFactory` (:meth:`factory`), giving it
    itself, its profile's name and ``fast_paths``: every facet is there before a plugin's
    constructor sees the Handle, and nothing is written to it afterwards.
    """

    def __init__(self, *, backend: Backend | None = None, snapshot: Snapshot | None = None,
                 lister: ObjectLister | None = None, client: Client | None = None,
                 subscriber: Subscriber | None = None, event_recorder: EventRecorder | None = None,
                 clock: Clock | None = None, nominator: Nominator | None = None,
                 waiting_pods: Mapping[str, WaitingPodHandle] | None = None,
                 framework: PluginRunner | None = None, profile_name: str = "default-scheduler",
                 activate: Callable[[Iterable[Pod]], None] | None = None,
                 feature_gates: Mapping[str, bool] | None = None, fast_paths: bool = True,
                 extenders: Sequence[Extender] = (), metrics: PreemptionMetrics | None = None,
                 pod_group_manager: PodGroupManager | None = None) -> None:
        self.profile_name = profile_name
        self.snapshot = snapshot if snapshot is not None else Snapshot()
        # "is not None", not "or": an empty lister is falsy and still the one to use
        self.lister: ObjectLister = lister if lister is not None else backend if backend is not None \
            else EmptyLister()
        self.client: Client | None = client if client is not None else backend
        self.event_recorder: EventRecorder = event_recorder if event_recorder is not None \
            else backend if backend is not None else EventLog()
        self.clock: Clock = clock if clock is not None else backend.clock if backend is not None \
            else WallClock()
        self.feature_gates: FeatureGates = _feature_gates(feature_gates)
        self.nominator: Nominator | None = nominator
        self.waiting_pods: Mapping[str, WaitingPodHandle] | None = waiting_pods
        self.framework: PluginRunner | None = framework
        #: whether the fast paths run (the Framework's ``fast_paths``; off: the plain path, which
        #: the fast one must equal): the switch of the memos :meth:`node_memo` hands out
        self.fast_paths = fast_paths
        self._node_memos: list[NodeMemo[Any]] = []  # (node_memo: handed out, kept with the switch)
        #: the scheduler's :class:`kschedfw.metrics.SchedulerMetrics` when metrics are on (else None)
        self.metrics: PreemptionMetrics | None = metrics
        self._subscriber: Subscriber | None = subscriber if subscriber is not None else backend
        self._backend = backend
        self._activate = activate
        #: the scheduler's HTTP extenders (upstream Handle.Extenders), for preemption
        self.extenders: Sequence[Extender] = tuple(extenders)
        #: the live PodGroup states (the scheduler's cache; upstream Handle.PodGroupManager)
        self.pod_group_manager: PodGroupManager = pod_group_manager if pod_group_manager is not None \
            else NoPodGroups()

    @classmethod
    def factory(cls, **facets: Any) -> HandleFactory:
        """A factory of Handles with ``facets`` (this class's keyword arguments but ``framework``,
        ``profile_name`` and ``fast_paths``, which the runtime gives): what a test or a tool
        passes to ``Framework(..., handle=Handle.factory(snapshot=...))``."""
        given = sorted(set(facets) & {"framework", "profile_name", "fast_paths"})
        if given:
            raise TypeError(f"the profile's runtime gives the Handle its {', '.join(given)}")
        return functools.partial(cls, **facets)

    # ------------------------------------------------------------------ per-node memos (fwk.node_reuse)
    def node_memo(self, keep: int = 4, most: int = 64, entries: int = 100_000) -> NodeMemo[Any]:
        """A memo owned by this profile: it keeps nothing while ``fast_paths`` is off, dies with
        the profile, and :meth:`clear_node_memos` empties it."""
        memo: NodeMemo[Any] = NodeMemo(keep, most, entries, keeps=self.fast_paths)
        self._node_memos.append(memo)
        return memo

    def clear_node_memos(self) -> None:
        """Forget every per-node result the profile's plugins keep (the runtime's call, e.g. when
        the NodeInfos they were worked out from are replaced)."""
        for memo in self._node_memos:
            memo.clear()

    def subscribe(self, kind: str, callback: WatchCallback) -> Unsubscribe:
        """Follow changes of ``kind``; a Handle without a backend sees none."""
        if self._subscriber is None:
            return _no_unsubscribe
        return self._subscriber.subscribe(kind, callback)

    def wait_for(self, ready: Callable[[], bool], interval: float, timeout: float) -> bool:
        """Poll ``ready`` from a binding cycle that may wait (see the Handle protocol); without a
        backend there is no time to wait in: ``ready`` is asked once."""
        if self._backend is None:
            return bool(ready())
        return self._backend.wait_for(ready, interval, timeout)

    def activate(self, pods: Iterable[Pod]) -> None:
        if self._activate is not None:
            self._activate(pods)

    # ------------------------------------------------------------------ waiting pods (Permit)
    def get_waiting_pod(self, uid: str) -> WaitingPodHandle | None:
        return self.waiting_pods.get(uid) if self.waiting_pods is not None else None

    def iterate_over_waiting_pods(self, callback: Callable[[WaitingPodHandle], None]) -> None:
        if self.waiting_pods is not None:
            for wp in list(self.waiting_pods.values()):
                callback(wp)

    def reject_waiting_pod(self, uid: str) -> bool:
        wp = self.get_waiting_pod(uid)
        if wp is None:
            return False
        wp.reject("", "removed")
        return True

    # ------------------------------------------------------------------ nominator
    def nominated_pods_for_node(self, node_name: str) -> list[Pod]:
        return self.nominator.nominated_pods_for_node(node_name) if self.nominator is not None else []

    def add_nominated_pod(self, pod: Pod, info: NominatingInfo) -> None:
        if self.nominator is not None:
            self.nominator.add_nominated_pod(pod, info)

    def delete_nominated_pod_if_exists(self, pod: Pod) -> None:
        if self.nominator is not None:
            self.nominator.delete_nominated_pod_if_exists(pod)

    def nominated_node_names(self) -> Collection[str]:
        return self.nominator.nominated_node_names() if self.nominator is not None else ()

    def nominated_pods_to_add(self, state: CycleState, pod: Pod, node_name: str) -> Sequence[Pod]:
        framework = self.framework
        if framework is not None:
            return framework.nominated_pods_to_add(state, pod, node_name)
        uid, priority = pod.uid, pod.effective_priority
        return [p for p in self.nominated_pods_for_node(node_name) if p.uid != uid and p.effective_priority >= priority]

    # ------------------------------------------------------------------ the profile's plugins
    def _runner(self) -> PluginRunner:
        if self.framework is None:
            raise RuntimeError(f"Handle of profile {self.profile_name!r} is not attached to a framework")
        return self.framework

    def run_filter_plugins_with_nominated_pods(self, state: CycleState, pod: Pod,
                                               node_info: NodeInfo) -> Status | None:
        return self._runner().run_filter_plugins_with_nominated_pods(state, pod, node_info)

    def run_pre_filter_extension_add_pod(self, state: CycleState, pod: Pod, pod_to_add: Pod,
                                         node_info: NodeInfo) -> Status | None:
        return self._runner().run_pre_filter_extension_add_pod(state, pod, pod_to_add, node_info)

    def run_pre_filter_extension_remove_pod(self, state: CycleState, pod: Pod, pod_to_remove: Pod,
                                            node_info: NodeInfo) -> Status | None:
        return self._runner().run_pre_filter_extension_remove_pod(state, pod, pod_to_remove, node_info)

    def filter_plugins_to_run(self, state: CycleState) -> Sequence[tuple[str, FilterFunction]]:
        if self.framework is None:
            return ()
        return self.framework.filter_plugins_to_run(state)

    def pre_filter_extensions_to_run(self, state: CycleState) -> tuple[str, ...]:
        if self.framework is None:
            return ()
        return self.framework.pre_filter_extensions_to_run(state)


if TYPE_CHECKING:
    from kschedfw.fwk import interface

    def _implements_the_contract(handle: Handle, snapshot: Snapshot) -> tuple[interface.Handle, interface.SharedLister]:
        """Never called: mypy proves here that Handle and Snapshot satisfy the protocols."""
        return handle, snapshot
