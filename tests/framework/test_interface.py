"""The contract of kschedfw.fwk.interface: the embedded cluster is a Backend, the Handle is
a Handle, and both behave as the protocols' docstrings say (upstream
``framework/interface.go``: plugins see only the Handle)."""

from __future__ import annotations

import datetime as dt
import inspect

import pytest

import kschedfw
from kschedfw.api import parse_object
from kschedfw.cache.snapshot import Snapshot
from kschedfw.clock import SIMULATION_EPOCH, SimulatedClock, WallClock
from kschedfw.cluster import memory
from kschedfw.cluster.memory import MemoryCluster
from kschedfw.fwk.features import FeatureGates
from kschedfw.fwk import interface
from kschedfw.framework.handle import EmptyLister, EventLog, Handle
from kschedfw.framework.waiting_pods import WaitingPod
from kschedfw.queue.nominator import Nominator
from kschedfw.testing.builders import container, make_pod


def members(protocol: type) -> set[str]:
    """The names a protocol requires (its own and inherited), without object's."""
    names: set[str] = set()
    for klass in protocol.__mro__:
        if klass.__module__ != interface.__name__:
            continue  # object, typing.Protocol, typing.Generic
        names |= {n for n in vars(klass) if not n.startswith("_") or n == "__len__"}
        names |= set(getattr(klass, "__annotations__", {}))
    return names - {"__annotations__"}


def node(name: str):
    return parse_object({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name}})


def pod(name: str, node_name: str = ""):
    return make_pod(name, node_name=node_name, containers=[container("c", image="i")])


def quota(name: str):
    return parse_object({"apiVersion": "scheduling.x-k8s.io/v1alpha1", "kind": "ElasticQuota",
                         "metadata": {"name": name, "namespace": "default"}, "spec": {}})


# ------------------------------------------------------------------------------------ conformance
@pytest.mark.parametrize("protocol, implementation", [
    pytest.param(interface.Backend, lambda: MemoryCluster(), id="MemoryCluster is a Backend"),
    pytest.param(interface.Handle, lambda: Handle(), id="a bare Handle is a Handle"),
    pytest.param(interface.Handle, lambda: Handle(backend=MemoryCluster()), id="a backed Handle is a Handle"),
    pytest.param(interface.Clock, lambda: SimulatedClock(), id="SimulatedClock is a Clock"),
    pytest.param(interface.Clock, lambda: WallClock(), id="WallClock is a Clock"),
    pytest.param(interface.ObjectLister, lambda: EmptyLister(), id="EmptyLister is an ObjectLister"),
    pytest.param(interface.EventRecorder, lambda: EventLog(), id="EventLog is an EventRecorder"),
])
def test_runtime_checkable_protocols(protocol, implementation):
    assert isinstance(implementation(), protocol)


@pytest.mark.parametrize("protocol, implementation", [
    pytest.param(interface.Backend, MemoryCluster(), id="Backend"),
    pytest.param(interface.Handle, Handle(), id="Handle"),
    pytest.param(interface.SharedLister, Snapshot(), id="SharedLister"),
    pytest.param(interface.WaitingPodHandle, WaitingPod(pod("p"), "n", {}), id="WaitingPodHandle"),
    pytest.param(interface.Nominator, Nominator(), id="Nominator"),
    pytest.param(interface.FeatureGateReader, FeatureGates(), id="FeatureGateReader"),
])
def test_every_protocol_member_is_implemented_with_its_parameters(protocol, implementation):
    required = members(protocol)
    assert required, protocol
    for name in sorted(required):
        assert hasattr(implementation, name), f"{type(implementation).__name__} lacks {name}"
        wanted = getattr(protocol, name, None)
        if inspect.isfunction(wanted):
            got = getattr(implementation, name)
            want_params = list(inspect.signature(wanted).parameters)[1:]
            got_params = list(inspect.signature(got).parameters)
            assert got_params[:len(want_params)] == want_params, f"{name}: {got_params} != {want_params}"


def test_memory_backend_raises_the_contracts_errors():
    cluster = MemoryCluster()
    assert memory.NotFound is interface.NotFound and memory.Conflict is interface.Conflict
    with pytest.raises(interface.NotFound):
        cluster.delete_pod(pod("ghost"))
    cluster.create(node("n1"))
    with pytest.raises(interface.Conflict):
        cluster.create(node("n1"))


def test_the_contract_is_exported_from_kschedfw():
    for name in ("Handle", "Backend", "ObjectLister", "Subscriber", "Client", "EventRecorder", "Clock",
                 "WatchEvent", "NotFound", "Conflict", "Plugin", "PluginFactory"):
        assert name in kschedfw.__all__
        assert getattr(kschedfw, name) is getattr(interface, name)
    assert kschedfw.FeatureGates is FeatureGates


def test_per_pod_info_and_preemption_types_are_exported_from_kschedfw():
    from kschedfw.fwk import pod_info, victims
    for name in ("AffinityTerm", "WeightedAffinityTerm", "PodTerms", "pod_terms"):
        assert name in kschedfw.__all__ and getattr(kschedfw, name) is getattr(pod_info, name)
    for name in ("Victims", "Candidate"):
        assert name in kschedfw.__all__ and getattr(kschedfw, name) is getattr(victims, name)


def test_the_contract_package_exports_what_kschedfw_does():
    # everything an author needs, from kschedfw and from kschedfw.fwk alike: the same objects
    import kschedfw.fwk as fwk
    assert sorted(fwk.__all__) == sorted(fwk.EXPORTS)
    for name in fwk.__all__:
        assert name in kschedfw.__all__
        assert getattr(fwk, name) is getattr(kschedfw, name)
        # defined in the contract, or an API type it hands out (FieldError, what validate_args returns)
        assert fwk.EXPORTS[name].startswith(("kschedfw.fwk.", "kschedfw.api."))


# ------------------------------------------------------------------------------------ subscriptions
def test_subscribe_delivers_one_kind_in_order_until_unsubscribed():
    cluster = MemoryCluster()
    handle = Handle(backend=cluster)
    seen: list[tuple[str, str, str]] = []
    everything: list[str] = []
    unsubscribe = handle.subscribe("ElasticQuota", lambda e: seen.append((e.type, e.kind, (e.new or e.old).name)))
    cluster.watch(lambda e: everything.append(e.kind))
    cluster.create(node("n1"))
    q = cluster.create(quota("q1"))
    cluster.update(q)
    cluster.remove("ElasticQuota", "q1", "default")
    cluster.deliver()
    assert seen == [("ADDED", "ElasticQuota", "q1"), ("MODIFIED", "ElasticQuota", "q1"),
                    ("DELETED", "ElasticQuota", "q1")]
    assert everything == ["Node", "ElasticQuota", "ElasticQuota", "ElasticQuota"]
    unsubscribe()
    cluster.create(quota("q2"))
    cluster.deliver()
    assert len(seen) == 3
    unsubscribe()  # a second call is harmless


def test_subscribers_made_first_hear_a_change_first():
    """Plugins subscribe while the scheduler builds them, before it watches: their state is
    current when the scheduler reacts to the same change."""
    cluster = MemoryCluster()
    order: list[str] = []
    Handle(backend=cluster).subscribe("Pod", lambda e: order.append("plugin"))
    cluster.watch(lambda e: order.append("scheduler"))
    cluster.create(pod("p"))
    cluster.deliver()
    assert order == ["plugin", "scheduler"]


# ------------------------------------------------------------------------------------ the Handle
def test_handle_from_a_backend_uses_it_for_every_facet():
    clock = SimulatedClock()
    cluster = MemoryCluster(clock)
    handle = Handle(backend=cluster, profile_name="p1")
    assert (handle.lister, handle.client, handle.event_recorder, handle.clock) == (cluster, cluster, cluster, clock)
    handle.event_recorder.record_event(pod("p"), "Normal", "Preempted", "m")
    assert [(e.reason, e.object_key) for e in cluster.events] == [("Preempted", "default/p")]


def test_bare_handle_lists_nothing_writes_nowhere_and_keeps_events():
    handle = Handle()
    assert handle.lister.list("Pod") == [] and handle.lister.get("Node", "n") is None
    assert handle.client is None
    handle.subscribe("Pod", lambda e: None)()  # nothing ever changes; unsubscribing is fine
    handle.event_recorder.record_event(pod("p"), "Warning", "FailedScheduling", "no")
    assert [e.reason for e in handle.event_recorder.events] == ["FailedScheduling"]
    assert isinstance(handle.clock, WallClock)
    with pytest.raises(RuntimeError, match="not attached to a framework"):
        handle.run_filter_plugins_with_nominated_pods(None, pod("p"), None)


def test_handle_feature_gates_are_a_feature_gates_value():
    gates = FeatureGates({"StorageCapacityScoring": True})
    assert Handle(feature_gates=gates).feature_gates is gates
    from_dict = Handle(feature_gates={"StorageCapacityScoring": True, "SchedulerQueueingHints": True}).feature_gates
    assert isinstance(from_dict, FeatureGates)
    assert from_dict.enabled("StorageCapacityScoring")
    assert "SchedulerQueueingHints" not in from_dict  # upstream-only gates of a perf workload change nothing
    assert Handle().feature_gates == FeatureGates()  # the v1.36 defaults
    assert Handle().feature_gates.enabled("SchedulerAsyncPreemption")


# ------------------------------------------------------------------------------------ time
def test_simulated_clock_is_the_one_map_from_seconds_to_a_datetime():
    clock = SimulatedClock()
    assert clock.now_datetime() == SIMULATION_EPOCH == dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)
    clock.set(90.5)
    assert clock.now_datetime() == SIMULATION_EPOCH + dt.timedelta(seconds=90.5)
    cluster = MemoryCluster(clock)
    cluster.create(node("n1"))
    created = cluster.create(pod("p"))
    # stored as the API server stores it: whole seconds, truncated
    assert created.creation_timestamp == SIMULATION_EPOCH + dt.timedelta(seconds=90)
    clock.set(100)
    cluster.bind(created, "n1")
    assert cluster.get("Pod", "p", "default").start_time == SIMULATION_EPOCH + dt.timedelta(seconds=100)


def test_wall_clock_reads_real_time():
    clock = WallClock()
    before = dt.datetime.now(dt.timezone.utc)
    assert before <= clock.now_datetime() <= dt.datetime.now(dt.timezone.utc)
    assert clock.now() <= clock.now()


def test_a_given_facet_is_kept_even_when_it_is_falsy():
    """An empty lister (one with ``__len__`` 0) is still the lister to use, not replaced by a default."""
    class EmptyButReal(list):
        def get(self, kind, name, namespace=""):
            return None

        def list(self, kind, namespace=None):
            return []

    lister = EmptyButReal()
    assert Handle(lister=lister, backend=MemoryCluster()).lister is lister
    assert Handle(lister=lister).lister is lister


# ------------------------------------------------------------------------------------ optional capabilities
def test_the_snapshot_indexes_are_a_declared_optional_capability():
    """The cache's snapshot carries the pod indexes, typed by the contract's protocols, and is found
    as an IndexedSharedLister; a SharedLister without them (a test's, another engine's) gives None,
    so a plugin falls back to walking the pods."""
    from kschedfw.cache.label_index import PodLabelIndex
    from kschedfw.cache.term_index import PodAffinityTermIndex

    snapshot = Snapshot([])
    snapshot.label_index, snapshot.term_index = PodLabelIndex(), PodAffinityTermIndex()
    assert isinstance(snapshot, interface.IndexedSharedLister)
    assert interface.snapshot_label_index(snapshot) is snapshot.label_index
    assert interface.snapshot_term_index(snapshot) is snapshot.term_index

    class PlainLister:
        def node_infos(self): return []
        def get(self, node_name): return None
        def have_pods_with_affinity(self): return []
        def have_pods_with_required_anti_affinity(self): return []
        def __len__(self): return 0

    assert not isinstance(PlainLister(), interface.IndexedSharedLister)
    assert interface.snapshot_label_index(PlainLister()) is None
    assert interface.snapshot_term_index(PlainLister()) is None
    assert interface.snapshot_label_index(None) is None


def test_pods_to_activate_is_the_contract_type_the_scheduler_writes():
    """Upstream framework.PodsToActivate: plugins add pods under PODS_TO_ACTIVATE_KEY; the value
    the scheduler puts in every cycle's state is the contract's own type, shared across clones."""
    from kschedfw.fwk.cycle_state import PODS_TO_ACTIVATE_KEY
    from kschedfw.scheduler.schedule_one import new_cycle_state

    state, pods = new_cycle_state()
    assert type(pods) is kschedfw.PodsToActivate and state.read(PODS_TO_ACTIVATE_KEY) is pods
    assert state.clone().read(PODS_TO_ACTIVATE_KEY) is pods
