"""KubeBackend + the scheduler against a real kube-apiserver: what upstream kube-scheduler does
through the API (bind, PodScheduled condition, events, preemption), observed from outside."""

from __future__ import annotations

import itertools
import threading

import pytest

from kschedfw.kube_runner import KubeRunner
from kschedfw.config.validate import load_config
from kschedfw.framework.registry import default_registry
from kschedfw.testing.controlplane import APIError, ControlPlane
from tests.kube.helpers import pod_manifest, sample, wait_for


_configs = itertools.count()


@pytest.fixture
def nodes(control_plane: ControlPlane, namespace: str):
    names = [f"{namespace}-a", f"{namespace}-b"]
    for name in names:
        control_plane.create_ready_node(name, cpu="2", memory="4Gi")
    yield names
    for name in names:
        control_plane.api("DELETE", f"/api/v1/nodes/{name}")


def start_runner(control_plane: ControlPlane, tmp_path, scheduler_name: str, leader_election: str = "",
                 **kwargs):
    config_file = tmp_path / f"config-{next(_configs)}.yaml"
    config_file.write_text("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
                           + (leader_election or "leaderElection:\n  leaderElect: false\n")
                           + f"profiles:\n- schedulerName: {scheduler_name}\n")
    registry = default_registry()
    config, diagnostics = load_config(str(config_file), registry)
    assert config is not None, diagnostics
    runner = KubeRunner(config, registry, kubeconfig=control_plane.kubeconfig, **kwargs)
    assert runner.start(sync_timeout=30)
    thread = threading.Thread(target=runner.run, daemon=True)
    thread.start()
    return runner, thread


@pytest.fixture
def priority_classes(control_plane: ControlPlane, namespace: str):
    """``<namespace>-low`` (10) and ``<namespace>-high`` (1000), deleted afterwards."""
    names = {f"{namespace}-low": 10, f"{namespace}-high": 1000}
    for name, value in names.items():
        control_plane.api("POST", "/apis/scheduling.k8s.io/v1/priorityclasses",
                          {"metadata": {"name": name}, "value": value})
    yield list(names)
    for name in names:
        try:
            control_plane.api("DELETE", f"/apis/scheduling.k8s.io/v1/priorityclasses/{name}")
        except APIError:
            pass


@pytest.fixture
def scheduler_name(namespace: str) -> str:
    return f"kschedfw-{namespace}"


@pytest.fixture
def runner(control_plane, tmp_path, scheduler_name, nodes):
    runner, thread = start_runner(control_plane, tmp_path, scheduler_name)
    yield runner
    runner.stop()
    thread.join(10)
    assert not thread.is_alive()
    runner.close()


def get_pod(cp: ControlPlane, namespace: str, name: str) -> dict:
    return cp.api("GET", f"/api/v1/namespaces/{namespace}/pods/{name}")


def events_for(cp: ControlPlane, namespace: str, name: str) -> list[dict]:
    events = cp.api("GET", f"/apis/events.k8s.io/v1/namespaces/{namespace}/events")["items"]
    return [e for e in events if e["regarding"]["name"] == name]


def test_binds_our_pods_and_leaves_other_schedulers_pods_alone(control_plane, namespace, scheduler_name, nodes,
                                                                runner):
    control_plane.api("POST", f"/api/v1/namespaces/{namespace}/pods",
                      pod_manifest("ours", namespace, scheduler=scheduler_name))
    control_plane.api("POST", f"/api/v1/namespaces/{namespace}/pods",
                      pod_manifest("theirs", namespace, scheduler="someone-else"))
    bound = wait_for(lambda: get_pod(control_plane, namespace, "ours")["spec"].get("nodeName"), what="a binding")
    assert bound in nodes
    scheduled = wait_for(lambda: [e for e in events_for(control_plane, namespace, "ours") if e["reason"] == "Scheduled"],
                         what="a Scheduled event")
    assert scheduled[0]["note"] == f"Successfully assigned {namespace}/ours to {bound}"
    assert scheduled[0]["reportingController"] == scheduler_name
    assert scheduled[0]["action"] == "Binding"
    condition = [c for c in get_pod(control_plane, namespace, "ours")["status"]["conditions"]
                 if c["type"] == "PodScheduled"]
    assert condition and condition[0]["status"] == "True"  # set by the API server's binding
    theirs = get_pod(control_plane, namespace, "theirs")
    assert not theirs["spec"].get("nodeName") and not theirs["status"].get("conditions")
    assert runner.scheduler.bound_count == 1


def test_unschedulable_pod_gets_upstreams_condition_and_event(control_plane, namespace, scheduler_name, nodes,
                                                              runner):
    control_plane.api("POST", f"/api/v1/namespaces/{namespace}/pods",
                      pod_manifest("huge", namespace, scheduler=scheduler_name, cpu="64"))
    total = len(control_plane.api("GET", "/api/v1/nodes")["items"])

    def condition():
        found = [c for c in get_pod(control_plane, namespace, "huge")["status"].get("conditions") or []
                 if c["type"] == "PodScheduled"]
        return found[0] if found else None
    cond = wait_for(condition, what="the PodScheduled condition")
    assert (cond["status"], cond["reason"]) == ("False", "Unschedulable")
    assert cond["message"].startswith(f"0/{total} nodes are available: ")
    assert "Insufficient cpu" in cond["message"]
    failed = wait_for(lambda: [e for e in events_for(control_plane, namespace, "huge")
                               if e["reason"] == "FailedScheduling"], what="a FailedScheduling event")
    assert failed[0]["type"] == "Warning" and failed[0]["action"] == "Scheduling"
    assert failed[0]["note"] == cond["message"]
    assert not get_pod(control_plane, namespace, "huge")["spec"].get("nodeName")


def test_preemption_marks_and_deletes_the_lower_priority_victim(control_plane, namespace, scheduler_name, nodes,
                                                                runner, priority_classes):
    for i, node in enumerate(nodes):  # fill both nodes with low-priority pods
        control_plane.api("POST", f"/api/v1/namespaces/{namespace}/pods",
                          pod_manifest(f"low-{i}", namespace, cpu="1500m", nodeName=node,
                                       priorityClassName=f"{namespace}-low"))
    wait_for(lambda: len([p for p in runner.backend.list("Pod", namespace)]) == 2, what="the informer")
    control_plane.api("POST", f"/api/v1/namespaces/{namespace}/pods",
                      pod_manifest("high", namespace, scheduler=scheduler_name, cpu="1500m",
                                   priorityClassName=f"{namespace}-high"))
    nominated = wait_for(lambda: get_pod(control_plane, namespace, "high")["status"].get("nominatedNodeName"),
                         what="a nomination")
    # the eviction runs off the scheduling loop (upstream's preemption goroutine); a bound victim
    # with no kubelet stays terminating for its grace period
    victim = wait_for(lambda: next((p for p in control_plane.api("GET", f"/api/v1/namespaces/{namespace}/pods")[
        "items"] if p["spec"].get("nodeName") == nominated and p["metadata"]["name"].startswith("low-")
        and p["metadata"].get("deletionTimestamp")), None), what="the victim's graceful deletion")
    target = [c for c in victim["status"]["conditions"] if c["type"] == "DisruptionTarget"]
    assert target and (target[0]["status"], target[0]["reason"]) == ("True", "PreemptionByScheduler")
    other = [p for p in control_plane.api("GET", f"/api/v1/namespaces/{namespace}/pods")["items"]
             if p["metadata"]["name"].startswith("low-") and p["metadata"]["name"] != victim["metadata"]["name"]]
    assert not other[0]["metadata"].get("deletionTimestamp")
    preempted = wait_for(lambda: [e for e in events_for(control_plane, namespace, victim["metadata"]["name"])
                                  if e["reason"] == "Preempted"], what="a Preempted event")
    # upstream: the preemptor's profile reports it (the victim belongs to default-scheduler)
    assert preempted[0]["reportingController"] == scheduler_name
    metrics = runner.metrics_text()  # upstream: every PostFilter call counts, one victim observed
    assert sample(metrics, "scheduler_preemption_attempts_total") == 1
    assert sample(metrics, "scheduler_preemption_victims_count") == 1
    assert sample(metrics, "scheduler_preemption_victims_bucket", le="1.0") == 1


def test_dry_run_decides_without_writing(control_plane, tmp_path, namespace, scheduler_name, nodes):
    decisions = []
    runner, thread = start_runner(control_plane, tmp_path, scheduler_name, dry_run=True, on_decision=decisions.append)
    try:
        control_plane.api("POST", f"/api/v1/namespaces/{namespace}/pods",
                          pod_manifest("shadow", namespace, scheduler=scheduler_name))
        control_plane.api("POST", f"/api/v1/namespaces/{namespace}/pods",
                          pod_manifest("huge", namespace, scheduler=scheduler_name, cpu="64"))
        wait_for(lambda: len(decisions) >= 2, what="two decisions")
        by_pod = {d.pod: d for d in decisions}
        bound = by_pod[f"{namespace}/shadow"]
        assert (bound.status, bound.scheduler_name) == ("Bound", scheduler_name) and bound.node in nodes
        pending = by_pod[f"{namespace}/huge"]
        assert (pending.status, pending.reason) == ("Pending", "Unschedulable")
        assert "Insufficient cpu" in pending.message  # why: upstream's FitError message
        for name in ("shadow", "huge"):
            pod = get_pod(control_plane, namespace, name)
            assert not pod["spec"].get("nodeName") and not pod["status"].get("conditions")
            assert not events_for(control_plane, namespace, name)
    finally:
        runner.stop()
        thread.join(10)
        runner.close()


def test_scheduling_carries_on_after_the_api_server_restarts(control_plane, namespace, scheduler_name, nodes,
                                                             runner):
    control_plane.api("POST", f"/api/v1/namespaces/{namespace}/pods",
                      pod_manifest("before", namespace, scheduler=scheduler_name))
    wait_for(lambda: get_pod(control_plane, namespace, "before")["spec"].get("nodeName"), what="a binding")
    control_plane.restart_apiserver()
    control_plane.api("POST", f"/api/v1/namespaces/{namespace}/pods",
                      pod_manifest("after", namespace, scheduler=scheduler_name))
    wait_for(lambda: get_pod(control_plane, namespace, "after")["spec"].get("nodeName"), timeout=60,
             what="a binding after the restart")
    # nothing bound twice, nothing forgotten (the second bind's reply is handled a moment after)
    wait_for(lambda: runner.scheduler.bound_count == 2, what="the bind's reply")


def test_a_preemptions_evictions_do_not_hold_up_the_scheduling_loop(control_plane, namespace, scheduler_name,
                                                                     nodes, runner, priority_classes):
    """Upstream evicts victims in a goroutine (SchedulerAsyncPreemption): while a victim's
    deletion hangs on the API server, other pods are still scheduled and bound."""
    release = threading.Event()
    try:
        control_plane.api("POST", f"/api/v1/namespaces/{namespace}/pods",
                          pod_manifest("low", namespace, cpu="1500m", nodeName=nodes[0],
                                       priorityClassName=f"{namespace}-low", terminationGracePeriodSeconds=0))
        control_plane.api("POST", f"/api/v1/namespaces/{namespace}/pods",
                          pod_manifest("blocker", namespace, cpu="1500m", nodeName=nodes[1],
                                       priorityClassName=f"{namespace}-high"))
        wait_for(lambda: len(runner.backend.list("Pod", namespace)) == 2, what="the informer")
        deleting = hold(runner, "DELETE", "/pods/", release)
        control_plane.api("POST", f"/api/v1/namespaces/{namespace}/pods",
                          pod_manifest("high", namespace, scheduler=scheduler_name, cpu="1500m",
                                       priorityClassName=f"{namespace}-high"))
        wait_for(lambda: deleting == ["low"], what="the victim's deletion in flight")
        control_plane.api("POST", f"/api/v1/namespaces/{namespace}/pods",
                          pod_manifest("small", namespace, scheduler=scheduler_name, cpu="100m"))
        wait_for(lambda: get_pod(control_plane, namespace, "small")["spec"].get("nodeName"),
                 what="another pod bound while the eviction hangs")
        assert deleting == ["low"] and not release.is_set()
        release.set()
        wait_for(lambda: get_pod(control_plane, namespace, "high")["spec"].get("nodeName") == nodes[0],
                 what="the preemptor bound once its victim is gone", timeout=60)
    finally:
        release.set()


def test_prebind_writes_run_off_the_scheduling_loop(control_plane, namespace, scheduler_name, nodes, runner):
    """Upstream runs PreBind in the binding goroutine: while VolumeBinding's write of a claim's
    selected node hangs on the API server, other pods are scheduled and bound; then the claim
    carries the node and the pod is bound there."""
    storage_class = f"{namespace}-late"
    control_plane.api("POST", "/apis/storage.k8s.io/v1/storageclasses", {
        "apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": storage_class},
        "provisioner": "example.com/none", "volumeBindingMode": "WaitForFirstConsumer"})
    control_plane.api("POST", f"/api/v1/namespaces/{namespace}/persistentvolumeclaims", {
        "apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "data"},
        "spec": {"storageClassName": storage_class, "accessModes": ["ReadWriteOnce"],
                 "resources": {"requests": {"storage": "1Gi"}}}})
    release = threading.Event()
    try:
        wait_for(lambda: runner.backend.get("PersistentVolumeClaim", "data", namespace), what="the informer")
        writing = hold(runner, "PATCH", "/persistentvolumeclaims/", release)
        control_plane.api("POST", f"/api/v1/namespaces/{namespace}/pods", pod_manifest(
            "with-volume", namespace, scheduler=scheduler_name,
            volumes=[{"name": "data", "persistentVolumeClaim": {"claimName": "data"}}]))
        wait_for(lambda: writing == ["data"], what="the claim's write in flight")
        control_plane.api("POST", f"/api/v1/namespaces/{namespace}/pods",
                          pod_manifest("plain", namespace, scheduler=scheduler_name))
        wait_for(lambda: get_pod(control_plane, namespace, "plain")["spec"].get("nodeName"),
                 what="another pod bound while PreBind hangs")
        assert not get_pod(control_plane, namespace, "with-volume")["spec"].get("nodeName")
        release.set()
        node = wait_for(lambda: get_pod(control_plane, namespace, "with-volume")["spec"].get("nodeName"),
                        what="the pod bound after its PreBind")
        claim = control_plane.api("GET", f"/api/v1/namespaces/{namespace}/persistentvolumeclaims/data")
        assert claim["metadata"]["annotations"]["volume.kubernetes.io/selected-node"] == node
    finally:
        release.set()
        control_plane.api("DELETE", f"/apis/storage.k8s.io/v1/storageclasses/{storage_class}")


def intercept(runner, verb, path_part, before_send):
    """Route the client's ``verb`` requests whose path contains ``path_part`` through
    ``before_send(path, body)`` first, on whichever thread sends them."""
    send = runner.client.request

    def request(method, path, **kwargs):
        if method == verb and path_part in path:
            before_send(path, kwargs.get("body"))
        return send(method, path, **kwargs)
    runner.client.request = request


def intercept_binds(runner, before_send):
    """Route the backend's binding POSTs through ``before_send(path, body)`` on the bind worker."""
    intercept(runner, "POST", "/binding", before_send)


def hold(runner, verb, path_part, release):
    """Hold every matching request until ``release`` is set; the names of those held so far."""
    held: list[str] = []

    def wait(path, body):
        held.append(path.rsplit("/", 1)[-1])
        release.wait(60)
    intercept(runner, verb, path_part, wait)
    return held


def test_the_loop_schedules_on_while_binds_are_in_flight(control_plane, namespace, scheduler_name, nodes, runner):
    """Upstream binds in a goroutine per pod (schedule_one.go): the next pod is scheduled while the
    previous pod's binding call has not returned."""
    release = threading.Event()
    in_flight: list[str] = []

    def hold(path, body):
        in_flight.append(body["metadata"]["name"])
        release.wait(20)
    intercept_binds(runner, hold)
    for name in ("first", "second"):
        control_plane.api("POST", f"/api/v1/namespaces/{namespace}/pods",
                          pod_manifest(name, namespace, scheduler=scheduler_name))
    try:
        wait_for(lambda: sorted(in_flight) == ["first", "second"], what="two binds in flight at once")
        assert runner.scheduler.bound_count == 0
    finally:
        release.set()
    for name in ("first", "second"):
        wait_for(lambda: get_pod(control_plane, namespace, name)["spec"].get("nodeName"), what="a binding")
    wait_for(lambda: runner.scheduler.bound_count == 2, what="the binds' replies")


@pytest.mark.parametrize("race", ["bound elsewhere", "deleted"])
def test_a_bind_that_loses_a_race_is_forgotten_not_requeued(control_plane, namespace, scheduler_name, nodes, runner,
                                                          race):
    """handleBindingCycleError: Unreserve and forget the assumed pod; it goes back to the queue only
    when the informer's copy still exists, has no node and the same uid."""
    taken: list[str] = []

    def someone_else_first(path, body):
        name = body["metadata"]["name"]
        if race == "deleted":
            control_plane.api("DELETE", f"/api/v1/namespaces/{namespace}/pods/{name}")
            wait_for(lambda: runner.backend.get("Pod", name, namespace) is None, what="the informer to see it")
            return
        other = next(n for n in nodes if n != body["target"]["name"])
        control_plane.api("POST", path, {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": name},
                                         "target": {"apiVersion": "v1", "kind": "Node", "name": other}})
        taken.append(other)
        wait_for(lambda: runner.backend.get("Pod", name, namespace).node_name == other, what="the informer")
    intercept_binds(runner, someone_else_first)
    control_plane.api("POST", f"/api/v1/namespaces/{namespace}/pods",
                      pod_manifest("raced", namespace, scheduler=scheduler_name, cpu="1500m"))
    wait_for(lambda: [e for e in events_for(control_plane, namespace, "raced") if e["reason"] == "FailedScheduling"],
             what="the failed bind's handling")
    scheduler = runner.scheduler
    wait_for(lambda: not any(scheduler.queue.pending_pods().values()), what="nothing queued")
    assert scheduler.bound_count == 0
    if race == "bound elsewhere":
        # the informer's copy wins: the pod counts on the node it was bound to, and only there
        assert get_pod(control_plane, namespace, "raced")["spec"]["nodeName"] == taken[0]
        counted = {n: [p.name for p in scheduler.cache.node_info(n).pods] for n in nodes}
        assert counted == {n: (["raced"] if n == taken[0] else []) for n in nodes}


def test_metrics_count_attempts_and_pending_pods_with_upstreams_names(control_plane, namespace, scheduler_name,
                                                                       nodes, runner):
    """pkg/scheduler/metrics: attempts by result and profile, their latency histogram (1 ms..16 s
    buckets), pending pods by queue including gated."""
    control_plane.api("POST", f"/api/v1/namespaces/{namespace}/pods",
                      pod_manifest("fits", namespace, scheduler=scheduler_name))
    control_plane.api("POST", f"/api/v1/namespaces/{namespace}/pods",
                      pod_manifest("huge", namespace, scheduler=scheduler_name, cpu="64"))
    control_plane.api("POST", f"/api/v1/namespaces/{namespace}/pods",
                      pod_manifest("gated", namespace, scheduler=scheduler_name,
                                   schedulingGates=[{"name": "example.com/wait"}]))
    attempts = "scheduler_schedule_attempts_total"
    wait_for(lambda: sample(runner.metrics_text(), attempts, result="scheduled", profile=scheduler_name) == 1
             and sample(runner.metrics_text(), attempts, result="unschedulable", profile=scheduler_name) == 1
             and sample(runner.metrics_text(), "scheduler_pending_pods", queue="gated") == 1
             and sample(runner.metrics_text(), "scheduler_pending_pods", queue="unschedulable") == 1,
             what="the metrics")
    text = runner.metrics_text()
    assert sample(text, "scheduler_pending_pods", queue="active") == 0
    duration = "scheduler_scheduling_attempt_duration_seconds"
    assert sample(text, duration + "_count", result="scheduled", profile=scheduler_name) == 1
    assert sample(text, duration + "_bucket", result="scheduled", profile=scheduler_name, le="16.384") == 1
    assert "_created" not in text  # upstream's exposition has no creation-time series
    assert "# TYPE scheduler_plugin_execution_duration_seconds histogram" in text
    # one bound pod: its attempts and SLI latency; two cycles ran the algorithm
    assert sample(text, "scheduler_pod_scheduling_attempts_count") == 1
    assert sample(text, "scheduler_pod_scheduling_sli_duration_seconds_count", attempts="1") == 1
    assert sample(text, "scheduler_scheduling_algorithm_duration_seconds_count") == 2
    assert sample(text, "scheduler_framework_extension_point_duration_seconds_count", extension_point="Bind",
                  status="Success", profile=scheduler_name) == 1
    assert sample(text, "scheduler_goroutines", operation="binding") == 0
    # the copies published about once a second: queue arrivals, unschedulable plugins, cache
    wait_for(lambda: sample(runner.metrics_text(), "scheduler_unschedulable_pods", plugin="NodeResourcesFit",
                            profile=scheduler_name) == 1, what="the published counts")
    text = runner.metrics_text()
    assert sample(text, "scheduler_queue_incoming_pods_total", queue="active", event="UnschedulablePodAdd") == 2
    assert sample(text, "scheduler_queue_incoming_pods_total", queue="unschedulable",
                  event="ScheduleAttemptFailure") == 1
    assert sample(text, "scheduler_cache_size", type="assumed_pods") == 0
    assert sample(text, "scheduler_cache_size", type="nodes") >= 2  # other tests' nodes may still be there


def test_dry_run_reports_a_preemption_without_deleting(control_plane, tmp_path, namespace, scheduler_name, nodes,
                                                     priority_classes):
    """Shadow mode decides a preemption as upstream would (victim, nomination), then carries on
    as if the victim were gone: the preemptor is reported bound to the victim's node. Nothing is
    written: every pod keeps its resourceVersion, no Binding, no condition, no event."""
    decisions = []
    runner, thread = start_runner(control_plane, tmp_path, scheduler_name, dry_run=True, on_decision=decisions.append)
    try:
        for i, node in enumerate(nodes):
            control_plane.api("POST", f"/api/v1/namespaces/{namespace}/pods",
                              pod_manifest(f"low-{i}", namespace, cpu="1500m", nodeName=node,
                                           priorityClassName=f"{namespace}-low"))
        wait_for(lambda: len(runner.backend.list("Pod", namespace)) == 2, what="the informer")
        control_plane.api("POST", f"/api/v1/namespaces/{namespace}/pods",
                          pod_manifest("high", namespace, scheduler=scheduler_name, cpu="1500m",
                                       priorityClassName=f"{namespace}-high"))
        versions = {p["metadata"]["name"]: p["metadata"]["resourceVersion"]
                    for p in control_plane.api("GET", f"/api/v1/namespaces/{namespace}/pods")["items"]}
        preempted = wait_for(lambda: [d for d in decisions if d.status == "Preempted"], what="a preemption decision")
        assert len(preempted) == 1 and preempted[0].pod.startswith(f"{namespace}/low-")
        assert preempted[0].message.startswith("Preempted by pod") and preempted[0].node in nodes
        high = wait_for(lambda: [(d.status, d.node or d.nominated_node) for d in decisions
                                 if d.pod == f"{namespace}/high"] if any(d.status == "Bound" for d in decisions)
                        else None, what="the preemptor's bind")
        # upstream: nominated to the victim's node, then bound there once the victim is gone
        assert high == [("Pending", preempted[0].node), ("Bound", preempted[0].node)]
        assert len(decisions) == 3
        pods = control_plane.api("GET", f"/api/v1/namespaces/{namespace}/pods")["items"]
        assert {p["metadata"]["name"]: p["metadata"]["resourceVersion"] for p in pods} == versions
        assert not [p for p in pods if p["metadata"].get("deletionTimestamp") or p["status"].get("conditions")]
        assert not get_pod(control_plane, namespace, "high")["spec"].get("nodeName")
        assert not events_for(control_plane, namespace, preempted[0].pod.split("/")[1])
        assert not events_for(control_plane, namespace, "high")
        # the local view: the victim gone, the preemptor on its node
        assert runner.backend.get("Pod", preempted[0].pod.split("/")[1], namespace) is None
        assert runner.backend.get("Pod", "high", namespace).node_name == preempted[0].node
    finally:
        runner.stop()
        thread.join(10)
        runner.close()
