"""The status writer's rules with a scripted client: merging per pod (upstream
PodStatusPatchCall.Merge), upstream's retriable errors, the fence, no PodScheduled=False onto a
bound pod, a bind superseding a waiting patch, and PodGroup status patches on the same path."""

from __future__ import annotations

import threading
import time

import pytest

from kschedfw.cluster.kube.client import ApiError, TransportError
from kschedfw.cluster.kube.statuswriter import StatusWriter
from kschedfw.testing.builders import make_pod


class Client:
    def __init__(self, answers=()) -> None:
        self.answers = list(answers)  # exceptions to raise, in order; then success
        self.sent: list[tuple[str, dict]] = []
        self.gate = threading.Event()
        self.gate.set()
        self.entered: list[str] = []  # paths whose request started (and may wait at the gate)

    def request(self, method, path, *, body=None, content_type=None):
        self.entered.append(path)
        self.gate.wait(10)
        self.sent.append((path, body))
        if self.answers:
            raise self.answers.pop(0)
        return {}


def condition(reason="Unschedulable"):
    return {"conditions": [{"type": "PodScheduled", "status": "False", "reason": reason}]}


def writer(client, *, bound=None, fence=lambda: True):
    return StatusWriter(client, current=lambda kind, pod: bound, fence=fence, sleep=lambda s: None)


def test_a_newer_patch_merges_into_the_waiting_one():
    client = Client()
    client.gate.clear()
    w = writer(client)
    blocker, pod = make_pod("blocker"), make_pod("p")
    w.submit(blocker, {"nominatedNodeName": "x"})  # holds both workers' attention... one of them
    w.submit(make_pod("blocker2"), {"nominatedNodeName": "x"})
    w.submit(pod, {**condition(), "nominatedNodeName": "n1"})
    w.submit(pod, condition("SchedulerError"))
    client.gate.set()
    assert w.flush(5)
    bodies = [b["status"] for path, b in client.sent if path.endswith("/p/status")]
    assert bodies == [{**condition("SchedulerError"), "nominatedNodeName": "n1"}]
    w.close()


@pytest.mark.parametrize("fault, tries", [
    (ApiError(500, "etcd leader changed", "InternalError"), 4),
    (ApiError(503, "unavailable", "ServiceUnavailable"), 4),
    (TransportError("PATCH", "p", ConnectionRefusedError(), maybe_sent=False), 4),
    (ApiError(403, "forbidden", "Forbidden"), 1),
    (ApiError(422, "invalid", "Invalid"), 1),
])
def test_retriable_errors_are_tried_four_times_then_dropped(fault, tries):
    client = Client([fault] * 10)
    w = writer(client)
    w.submit(make_pod("p"), condition())
    assert w.flush(5)
    assert len(client.sent) == tries and w.dropped == 1 and w.sent == 0
    w.close()


def test_a_patch_refused_for_another_pods_uid_is_not_a_failure():
    # a same-named successor: the server answers 422 on metadata.uid (not 409); the pod the
    # patch was for is gone, so nothing is retried and nothing is dropped with a warning
    refusal = ApiError(422, "uid mismatch", "Invalid", body={"details": {"causes": [
        {"reason": "FieldValueInvalid", "field": "metadata.uid"}]}})
    client = Client([refusal])
    w = writer(client)
    w.submit(make_pod("p"), condition())
    assert w.flush(5)
    assert len(client.sent) == 1 and w.dropped == 0
    w.close()


def test_nothing_is_sent_after_the_fence_closes_nor_onto_a_bound_pod():
    client = Client()
    w = writer(client, fence=lambda: False)
    w.submit(make_pod("p"), condition())
    assert w.flush(5) and client.sent == []
    w.close()
    pod = make_pod("q")
    w = writer(client, bound=pod.with_node("n1"))
    w.submit(pod, condition())
    w.submit(make_pod("r"), {"nominatedNodeName": "n2"})  # no condition: still sent
    assert w.flush(5)
    assert [path.rsplit("/", 2)[-2] for path, _ in client.sent] == ["r"]
    w.close()


def test_a_bind_drops_the_waiting_patch_and_waits_for_the_patch_in_flight():
    client = Client()
    client.gate.clear()
    w = writer(client)
    flying, waiting = make_pod("flying"), make_pod("waiting")
    w.submit(flying, condition())
    w.submit(make_pod("other"), condition())  # keeps the second worker busy
    deadline = time.monotonic() + 5
    while len(client.entered) < 2 and time.monotonic() < deadline:  # both workers on the wire
        time.sleep(0.01)
    w.submit(waiting, {**condition(), "nominatedNodeName": "n1"})
    done = threading.Event()

    def bind():
        w.supersede(flying.uid, 10)
        done.set()
    threading.Thread(target=bind).start()
    w.supersede(waiting.uid, 10)
    assert not done.wait(0.2)  # "flying" is on the wire: its bind waits
    client.gate.set()
    assert done.wait(5) and w.flush(5)
    sent = {path.rsplit("/", 2)[-2]: body["status"] for path, body in client.sent}
    # upstream's call queue: the binding overwrites the pending status patch, nomination and all
    # (the API server refuses a nominatedNodeName on a bound pod)
    assert "waiting" not in sent and set(sent) == {"flying", "other"}
    w.close()


# ---------------------------------------------------------------------- PodGroup status
class Group:
    """What the writer reads of a PodGroup: its namespace, name, uid and key."""

    def __init__(self, name="g", uid="g-uid", namespace="default") -> None:
        self.name, self.uid, self.namespace, self.key = name, uid, namespace, f"{namespace}/{name}"


def group_condition(type_="PodGroupScheduled", status="False", reason="Unschedulable"):
    return {"$setElementOrder/conditions": [{"type": type_}],
            "conditions": [{"type": type_, "status": status, "reason": reason}]}


@pytest.mark.parametrize("fault, tries", [
    (ApiError(500, "etcd leader changed", "InternalError"), 4),
    (ApiError(503, "unavailable", "ServiceUnavailable"), 4),
    (TransportError("PATCH", "g", TimeoutError("read timed out"), maybe_sent=True), 4),
    (ApiError(403, "forbidden", "Forbidden"), 1),
])
def test_a_pod_group_status_patch_is_retried_as_pod_status(fault, tries):
    # upstream PatchPodGroupStatus: retry.OnError(retry.DefaultBackoff, util.Retriable), as pods'
    client = Client([fault] * 10)
    w = writer(client)
    w.submit(Group(), group_condition(), kind="scheduling.k8s.io/PodGroup")
    assert w.flush(5)
    assert [path for path, _ in client.sent] == \
        ["/apis/scheduling.k8s.io/v1alpha2/namespaces/default/podgroups/g/status"] * tries
    assert client.sent[0][1] == {"metadata": {"uid": "g-uid"}, "status": group_condition()}
    assert w.dropped == 1 and w.sent == 0
    w.close()


def test_pod_group_patches_merge_conditions_by_type_and_apart_from_pods():
    client = Client()
    client.gate.clear()
    w = writer(client)
    group = Group()
    w.submit(make_pod("blocker"), condition())  # the two workers are busy: the rest waits
    w.submit(make_pod("blocker2"), condition())
    wait_until(lambda: len(client.entered) == 2)
    w.submit(group, group_condition("DisruptionTarget", "True", "PreemptionByScheduler"),
             kind="scheduling.k8s.io/PodGroup")
    w.submit(group, group_condition(), kind="scheduling.k8s.io/PodGroup")
    w.submit(group, group_condition(reason="SchedulerError"), kind="scheduling.k8s.io/PodGroup")
    w.submit(make_pod("g", uid="g-uid"), condition())  # a pod of the same uid is another object
    client.gate.set()
    assert w.flush(5)
    [merged] = [b["status"] for path, b in client.sent if "/podgroups/" in path]
    # one patch: the newer condition of a type wins, the other type is kept, in order
    assert merged == {
        "$setElementOrder/conditions": [{"type": "DisruptionTarget"}, {"type": "PodGroupScheduled"}],
        "conditions": [{"type": "DisruptionTarget", "status": "True", "reason": "PreemptionByScheduler"},
                       {"type": "PodGroupScheduled", "status": "False", "reason": "SchedulerError"}]}
    assert "/api/v1/namespaces/default/pods/g/status" in [path for path, _ in client.sent]
    assert w.sent == 4 and w.dropped == 0
    w.close()


def test_no_pod_group_patch_is_sent_once_the_fence_closes():
    client = Client()
    w = writer(client, fence=lambda: False)
    w.submit(Group(), group_condition(), kind="scheduling.k8s.io/PodGroup")
    assert w.flush(5)
    assert client.sent == [] and w.sent == 0
    w.close()


def wait_until(condition, timeout=5.0):
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)
