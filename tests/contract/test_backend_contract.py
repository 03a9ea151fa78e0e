"""The Backend contract of ``framework/interface.py``, run on both backends: the embedded cluster
and KubeBackend over a real kube-apiserver. The same test, the same assertions: where the two
differ, one of them breaks the contract."""

from __future__ import annotations

import datetime as _dt
import threading

import pytest

from kschedfw.framework.handle import Handle
from kschedfw.fwk.interface import Backend, Conflict, Handle as HandleProtocol, NotFound, WatchEvent
from tests.contract.worlds import node_manifest, pod_manifest


def names(objects) -> set[str]:
    return {o.name for o in objects}


def in_namespace(world, heard: list[WatchEvent]) -> list[WatchEvent]:
    """The heard changes of pods in the world's namespace, but for the marking of a pod as
    terminating: an API server deleting a pod first stamps its deletionTimestamp (a MODIFIED),
    even with no grace period; the embedded cluster removes it in one step."""
    return [e for e in heard if e.kind == "Pod" and (e.new or e.old).namespace == world.namespace
            and not (e.type == "MODIFIED" and e.new.deletion_timestamp is not None)]


def pod_events(world, heard: list[WatchEvent]) -> list[tuple[str, str]]:
    """(type, name) of :func:`in_namespace`."""
    return [(e.type, (e.new or e.old).name) for e in in_namespace(world, heard)]


def test_both_are_backends(world):
    assert isinstance(world.backend, Backend)


# ------------------------------------------------------------------------------------ listers
def test_lister_gets_and_lists_by_kind_and_namespace(world):
    ns = world.namespace
    world.create(pod_manifest("a", ns))
    world.create(pod_manifest("b", ns))
    world.create(node_manifest(f"{ns}-n"))
    backend = world.backend
    world.settle(lambda: backend.get("Pod", "b", ns) and backend.get("Node", f"{ns}-n"), "the objects")
    assert names(backend.list("Pod", ns)) == {"a", "b"}
    assert {"a", "b"} <= names(backend.list("Pod"))  # None: every namespace
    assert f"{ns}-n" in names(backend.list("Node", ""))  # "": the cluster-scoped objects
    assert f"{ns}-n" in names(backend.list("Node"))
    assert backend.list("Pod", "") == []  # pods are never cluster-scoped
    assert backend.get("Pod", "a", ns).namespace == ns
    assert backend.get("Namespace", ns).name == ns
    assert backend.get("Pod", "a") is None  # the namespace is part of the key
    assert backend.get("Pod", "missing", ns) is None
    assert backend.list("Pod", f"{ns}-none") == []


def test_lister_follows_updates_and_deletes(world):
    ns = world.namespace
    backend = world.backend
    world.create(pod_manifest("a", ns))
    world.create(pod_manifest("b", ns))
    world.settle(lambda: backend.get("Pod", "b", ns), "the pods")
    world.relabel("Pod", "a", {"tier": "web"}, ns)
    world.delete("Pod", "b", ns)
    world.settle(lambda: backend.get("Pod", "b", ns) is None and backend.get("Pod", "a", ns).labels, "the changes")
    assert backend.get("Pod", "a", ns).labels == {"tier": "web"}
    assert names(backend.list("Pod", ns)) == {"a"}


# ------------------------------------------------------------------------------------ subscriptions
def test_a_subscription_hears_add_update_delete_with_old_and_new_on_the_delivering_thread(world):
    ns = world.namespace
    heard: list[WatchEvent] = []
    threads: set[int] = set()

    def callback(event: WatchEvent) -> None:
        heard.append(event)
        threads.add(threading.get_ident())
    world.backend.subscribe("Pod", callback)
    world.create(pod_manifest("a", ns))
    world.settle(lambda: pod_events(world, heard), "the ADDED")
    world.relabel("Pod", "a", {"tier": "web"}, ns)
    world.settle(lambda: len(pod_events(world, heard)) == 2, "the MODIFIED")
    world.delete("Pod", "a", ns)
    world.settle(lambda: len(pod_events(world, heard)) == 3, "the DELETED")
    added, modified, deleted = in_namespace(world, heard)
    assert (added.type, added.kind, added.old, added.new.name) == ("ADDED", "Pod", None, "a")
    assert (modified.type, modified.old.labels, modified.new.labels) == ("MODIFIED", {}, {"tier": "web"})
    assert (deleted.type, deleted.old.labels, deleted.new) == ("DELETED", {"tier": "web"}, None)
    assert threads == {threading.get_ident()}  # the scheduler's thread: the one delivering


def test_a_subscription_hears_its_kind_only(world):
    ns = world.namespace
    kinds: list[str] = []
    world.backend.subscribe("Node", lambda e: kinds.append(e.kind))
    world.create(pod_manifest("a", ns))
    world.create(node_manifest(f"{ns}-n"))
    world.settle(lambda: kinds, "the Node")
    world.settle(lambda: world.backend.get("Pod", "a", ns), "the Pod")
    assert set(kinds) == {"Node"}


def test_unsubscribe_stops_the_callbacks(world):
    ns = world.namespace
    kept: list[WatchEvent] = []
    dropped: list[WatchEvent] = []
    world.backend.subscribe("Pod", kept.append)
    unsubscribe = world.backend.subscribe("Pod", dropped.append)
    world.create(pod_manifest("a", ns))
    world.settle(lambda: pod_events(world, kept), "the first pod")
    unsubscribe()
    unsubscribe()  # a second call changes nothing
    world.create(pod_manifest("b", ns))
    world.settle(lambda: len(pod_events(world, kept)) == 2, "the second pod")
    assert pod_events(world, kept) == [("ADDED", "a"), ("ADDED", "b")]
    assert pod_events(world, dropped) == [("ADDED", "a")]


# ------------------------------------------------------------------------------------ event order
def test_watchers_and_subscriptions_hear_each_change_in_registration_order(world):
    ns = world.namespace
    heard: list[str] = []

    def recorder(who: str):
        def callback(event: WatchEvent) -> None:
            obj = event.new or event.old
            if obj.namespace == ns:
                heard.append(f"{who} {event.type} {obj.name}")
        return callback
    world.backend.subscribe("Pod", recorder("plugin"))
    world.backend.watch(recorder("scheduler"))
    world.backend.subscribe("Pod", recorder("late-plugin"))
    world.create(pod_manifest("a", ns))
    world.settle(lambda: len(heard) == 3, "the pod")
    assert heard == ["plugin ADDED a", "scheduler ADDED a", "late-plugin ADDED a"]


def test_changes_of_one_kind_are_heard_in_the_order_they_happened(world):
    ns = world.namespace
    heard: list[WatchEvent] = []
    world.backend.watch(heard.append)
    world.create(pod_manifest("a", ns))
    world.create(pod_manifest("b", ns))
    world.relabel("Pod", "a", {"v": "1"}, ns)
    world.delete("Pod", "b", ns)
    world.relabel("Pod", "a", {"v": "2"}, ns)
    world.settle(lambda: len(pod_events(world, heard)) == 5, "five changes")
    assert pod_events(world, heard) == [("ADDED", "a"), ("ADDED", "b"), ("MODIFIED", "a"), ("DELETED", "b"),
                                        ("MODIFIED", "a")]
    last = [e for e in heard if e.kind == "Pod" and e.new is not None and e.new.name == "a"][-1]
    assert (last.old.labels, last.new.labels) == ({"v": "1"}, {"v": "2"})


# ------------------------------------------------------------------------------------ client writes
def pending_pod(world, name: str, uid: str = "", **spec):
    world.create(pod_manifest(name, world.namespace, uid=uid, **spec))
    world.settle(lambda: world.backend.get("Pod", name, world.namespace), f"pod {name}")
    return world.backend.get("Pod", name, world.namespace)


def bound_pod(world, name: str, node: str, **spec):
    pod = pending_pod(world, name, **spec)
    world.backend.bind(pod, node)
    world.settle(lambda: world.backend.get("Pod", name, world.namespace).node_name, f"pod {name} bound")
    return world.backend.get("Pod", name, world.namespace)


def test_bind_sets_the_node_and_pod_scheduled_and_is_heard(world):
    ns = world.namespace
    world.create(node_manifest(f"{ns}-n"))
    pod = pending_pod(world, "p")
    heard: list[WatchEvent] = []
    world.backend.subscribe("Pod", heard.append)
    world.backend.bind(pod, f"{ns}-n")
    world.settle(lambda: pod_events(world, heard), "the binding")
    event = heard[-1]
    assert (event.type, event.old.node_name, event.new.node_name) == ("MODIFIED", "", f"{ns}-n")
    assert event.new.condition("PodScheduled").status == "True"
    on_server = world.server("Pod", "p", ns)
    assert on_server.node_name == f"{ns}-n" and on_server.uid == pod.uid


def test_bind_to_a_node_the_server_does_not_know_is_accepted_as_the_api_server_does(world):
    pod = pending_pod(world, "p")
    world.backend.bind(pod, f"{world.namespace}-nowhere")
    assert world.server("Pod", "p", world.namespace).node_name == f"{world.namespace}-nowhere"


def test_bind_refuses_a_bound_pod_a_deleted_pod_and_a_same_named_successor(world):
    ns = world.namespace
    pod = pending_pod(world, "p")
    world.backend.bind(pod, "first")
    with pytest.raises(Conflict):
        world.backend.bind(pod, "second")
    assert world.server("Pod", "p", ns).node_name == "first"
    gone = pending_pod(world, "gone")
    world.delete("Pod", "gone", ns)
    with pytest.raises(NotFound):
        world.backend.bind(gone, "first")
    old = pending_pod(world, "again")
    world.delete("Pod", "again", ns)
    world.settle(lambda: world.backend.get("Pod", "again", ns) is None, "the deletion")
    pending_pod(world, "again", uid="successor")
    with pytest.raises(Conflict):  # the binding carries the uid: never bind a successor
        world.backend.bind(old, "first")
    assert not world.server("Pod", "again", ns).node_name


def test_scheduling_failure_sets_the_condition_and_the_nomination_in_one_patch(world):
    ns = world.namespace
    backend = world.backend
    pod = pending_pod(world, "p")
    backend.patch_pod_scheduling_failure(pod, "Unschedulable", "0/3 nodes are available: x.", "n1")
    world.settle(lambda: backend.get("Pod", "p", ns).nominated_node_name == "n1", "the patch")
    current = backend.get("Pod", "p", ns)
    condition = current.condition("PodScheduled")
    assert (condition.status, condition.reason, condition.message) == \
        ("False", "Unschedulable", "0/3 nodes are available: x.")
    backend.patch_pod_scheduling_failure(current, "Unschedulable", "0/3 nodes are available: y.")  # None: kept
    world.settle(lambda: backend.get("Pod", "p", ns).condition("PodScheduled").message.endswith("y."), "the patch")
    assert backend.get("Pod", "p", ns).nominated_node_name == "n1"
    backend.patch_pod_scheduling_failure(backend.get("Pod", "p", ns), "Unschedulable",
                                         "0/3 nodes are available: y.", "")  # "": cleared
    world.settle(lambda: not backend.get("Pod", "p", ns).nominated_node_name, "the cleared nomination")
    assert world.server("Pod", "p", ns).nominated_node_name == ""


def test_a_scheduling_failure_leaves_a_pod_bound_meanwhile_alone(world):
    ns = world.namespace
    pod = pending_pod(world, "p")
    world.backend.patch_pod_scheduling_failure(pod, "Unschedulable", "0/3 nodes are available: x.")
    world.backend.bind(pod, "n1")
    world.settle(lambda: world.backend.get("Pod", "p", ns).node_name, "the binding")
    world.backend.patch_pod_scheduling_failure(world.backend.get("Pod", "p", ns), "Unschedulable", "late")
    world.create(pod_manifest("marker", ns))  # changes of one Kind are heard in order: the patch came first
    world.settle(lambda: world.backend.get("Pod", "marker", ns), "the marker")
    condition = world.server("Pod", "p", ns).condition("PodScheduled")
    assert (world.server("Pod", "p", ns).node_name, condition.status) == ("n1", "True")


def test_set_nominated_node_name_sets_and_clears(world):
    ns = world.namespace
    backend = world.backend
    pod = pending_pod(world, "p")
    backend.set_nominated_node_name(pod, "n1")
    world.settle(lambda: backend.get("Pod", "p", ns).nominated_node_name == "n1", "the nomination")
    assert world.server("Pod", "p", ns).nominated_node_name == "n1"
    backend.set_nominated_node_name(backend.get("Pod", "p", ns), "")
    world.settle(lambda: not backend.get("Pod", "p", ns).nominated_node_name, "the cleared nomination")
    assert world.server("Pod", "p", ns).nominated_node_name == ""


def test_add_pod_condition_answers_the_pod_or_none_once_it_is_gone(world):
    ns = world.namespace
    pod = pending_pod(world, "p")
    patched = world.backend.add_pod_condition(pod, "DisruptionTarget", "True", "PreemptionByScheduler", "why")
    assert patched is not None and patched.uid == pod.uid
    condition = patched.condition("DisruptionTarget")
    assert (condition.status, condition.reason, condition.message) == ("True", "PreemptionByScheduler", "why")
    assert world.server("Pod", "p", ns).condition("DisruptionTarget").reason == "PreemptionByScheduler"
    world.delete("Pod", "p", ns)
    assert world.backend.add_pod_condition(pod, "DisruptionTarget", "True", "PreemptionByScheduler", "why") is None
    successor = pending_pod(world, "p", uid="successor")
    assert world.backend.add_pod_condition(pod, "DisruptionTarget", "True", "PreemptionByScheduler", "why") is None
    assert world.server("Pod", "p", ns).uid == successor.uid
    assert world.server("Pod", "p", ns).condition("DisruptionTarget") is None


def test_delete_pod_honours_the_grace_period_and_the_uid(world):
    ns = world.namespace
    backend = world.backend
    backend.delete_pod(pending_pod(world, "pending"))  # never on a node: gone at once
    world.settle(lambda: backend.get("Pod", "pending", ns) is None, "the pending pod's deletion")
    assert world.server("Pod", "pending", ns) is None
    backend.delete_pod(bound_pod(world, "bound", "n1"))  # on a node: terminating for its grace period
    world.settle(lambda: backend.get("Pod", "bound", ns).deletion_timestamp is not None, "the terminating pod")
    assert world.server("Pod", "bound", ns).deletion_grace_period_seconds == 30
    backend.delete_pod(bound_pod(world, "now", "n1"), grace_period_seconds=0)
    world.settle(lambda: backend.get("Pod", "now", ns) is None, "the deletion without grace")
    assert world.server("Pod", "now", ns) is None
    old = pending_pod(world, "again")
    world.delete("Pod", "again", ns)
    with pytest.raises(NotFound):
        backend.delete_pod(old)
    pending_pod(world, "again", uid="successor")
    with pytest.raises(NotFound):  # the uid is a precondition: never the same-named successor
        backend.delete_pod(old)
    assert world.server("Pod", "again", ns) is not None


def test_record_event_writes_a_kubernetes_event(world):
    pod = pending_pod(world, "p")
    world.backend.record_event(pod, "Warning", "FailedScheduling", "0/1 nodes are available: x.")
    world.backend.recorder_for("some-profile").record_event(pod, "Normal", "Preempted", "Preempted by pod u")
    events = world.wait_events("p", 2)
    assert sorted(events) == [("Normal", "Preempted", "Preempted by pod u"),
                              ("Warning", "FailedScheduling", "0/1 nodes are available: x.")]


def test_submit_binding_hands_the_result_to_done_on_the_scheduler_thread(world):
    outcomes: list[tuple[object, int]] = []
    world.backend.submit_binding(lambda: "bound", lambda result: outcomes.append((result, threading.get_ident())))
    world.settle(lambda: outcomes, "the outcome")
    assert outcomes == [("bound", threading.get_ident())]


def test_patch_pod_annotations_merges_and_refuses_a_successor(world):
    ns = world.namespace
    backend = world.backend
    pod = world.create(pod_manifest("annotated", ns))
    world.settle(lambda: backend.get("Pod", "annotated", ns), "the pod")
    pod = backend.get("Pod", "annotated", ns)
    backend.patch_pod_annotations(pod, {"example.com/gpu-index": "3"})
    backend.patch_pod_annotations(pod, {"example.com/other": "x"})
    world.settle(lambda: len(backend.get("Pod", "annotated", ns).annotations) >= 2, "the annotations")
    assert world.server("Pod", "annotated", ns).annotations == {"example.com/gpu-index": "3",
                                                                 "example.com/other": "x"}
    world.delete("Pod", "annotated", ns)
    successor = pod_manifest("annotated", ns)
    successor["metadata"]["uid"] = "successor"  # the API server gives it a new one anyway
    world.create(successor)
    world.settle(lambda: (p := backend.get("Pod", "annotated", ns)) is not None and p.uid != pod.uid, "the successor")
    with pytest.raises(NotFound):
        backend.patch_pod_annotations(pod, {"example.com/gpu-index": "4"})


def test_a_binding_that_may_wait_polls_until_ready_while_the_caller_goes_on(world):
    ns = world.namespace
    backend = world.backend
    outcomes: list[tuple[object, int]] = []

    def work() -> bool:
        return backend.wait_for(lambda: backend.get("Pod", "attached", ns) is not None, 0.1, 30.0)
    backend.submit_binding(work, lambda result: outcomes.append((result, threading.get_ident())), may_wait=True)
    assert outcomes == []  # submit_binding returned while the work waits
    world.create(pod_manifest("attached", ns))
    world.settle(lambda: backend.get("Pod", "attached", ns), "the pod")
    world.advance(0.2)
    backend.run_due_timers()  # the embedded cluster's next poll is a timer on its clock
    world.settle(lambda: outcomes, "the outcome")
    assert outcomes == [(True, threading.get_ident())]


# ------------------------------------------------------------------------------------ clock and timers
def test_the_clock_never_goes_back_and_its_datetime_is_utc_at_the_same_instant(world):
    clock = world.backend.clock
    t0, d0 = clock.now(), clock.now_datetime()
    world.advance(0.2)
    t1, d1 = clock.now(), clock.now_datetime()
    assert t1 - t0 >= 0.2
    assert d0.utcoffset() == _dt.timedelta(0)
    assert abs((d1 - d0).total_seconds() - (t1 - t0)) < 0.05


def test_timers_run_when_due_in_deadline_then_registration_order(world):
    backend = world.backend
    ran: list[str] = []
    now = backend.clock.now()
    assert backend.next_timer() is None
    backend.call_at(now + 0.2, lambda: ran.append("a"))
    backend.call_at(now + 0.2, lambda: ran.append("b"))
    backend.call_at(now + 0.1, lambda: ran.append("c"))
    assert backend.next_timer() == now + 0.1
    assert backend.run_due_timers() is False and ran == []
    world.advance(0.1)
    assert backend.run_due_timers() is True and ran == ["c"]
    assert backend.next_timer() == now + 0.2
    world.advance(0.1)
    assert backend.run_due_timers() is True and ran == ["c", "a", "b"]
    assert backend.next_timer() is None


# ------------------------------------------------------------------------------------ a plugin's view
def test_a_handle_on_the_backend_shows_plugins_the_same_world(world):
    """What a plugin gets: the Handle the scheduler builds on the backend reads, hears, writes and
    tells time through it."""
    ns = world.namespace
    backend = world.backend
    handle = Handle(backend=backend, event_recorder=backend.recorder_for("some-profile"), profile_name="some-profile")
    assert isinstance(handle, HandleProtocol)
    heard: list[WatchEvent] = []
    handle.subscribe("Pod", heard.append)
    pod = pending_pod(world, "p")
    assert pod_events(world, heard) == [("ADDED", "p")]
    assert handle.lister.get("Pod", "p", ns).uid == pod.uid
    assert handle.clock is backend.clock
    assert handle.client is not None
    handle.client.bind(pod, "n1")
    world.settle(lambda: len(pod_events(world, heard)) == 2, "the binding")
    assert heard[-1].new.node_name == "n1"
    handle.event_recorder.record_event(pod, "Normal", "Scheduled", f"Successfully assigned {ns}/p to n1")
    assert world.wait_events("p", 1) == [("Normal", "Scheduled", f"Successfully assigned {ns}/p to n1")]
