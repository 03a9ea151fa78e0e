"""Against a real API server the scheduler's handlers get a scripted sequence of changes (create
node, create pod, the scheduler's bind, update, delete) in the same order as on the embedded
cluster (tests/scheduler/test_event_discipline.py): upstream's informer handlers run apart from
the binding goroutine, and the bind's outcome and the watch event confirming it are distinct
steps, both handed to the scheduler's loop through the backend's inbox."""

from __future__ import annotations

import json
import time

from kschedfw.config.validate import load_config
from kschedfw.fwk.features import FeatureGates
from kschedfw.framework.registry import default_registry
from tests.kube.helpers import pod_manifest
from tests.scheduler.event_order import BIND_FINISHED, EXPECTED_EVENTS, RecordingScheduler


def test_the_handlers_get_a_scripted_sequence_in_the_embedded_clusters_order(control_plane, namespace, backend,
                                                                              tmp_path):
    config_path = tmp_path / "config.yaml"
    config_path.write_text(json.dumps({"apiVersion": "kubescheduler.config.k8s.io/v1",
                                       "kind": "KubeSchedulerConfiguration", "leaderElection": {"leaderElect": False},
                                       "profiles": [{"schedulerName": f"order-{namespace}"}]}))
    registry = default_registry()
    config, diagnostics = load_config(str(config_path), registry, FeatureGates.parse(""))
    assert config is not None, diagnostics
    scheduler = RecordingScheduler(config, registry, backend, namespace=namespace, node_prefix=f"{namespace}-",
                                   record_attempts=False)
    backend.start()
    assert backend.wait_for_sync(30)

    def until(count: int) -> None:
        deadline = time.monotonic() + 30

        def done() -> bool:
            assert time.monotonic() < deadline, f"waited for {count} entries, have {scheduler.log}"
            return len(scheduler.log) >= count

        scheduler.run(stop=done, idle=lambda deadline: (backend.deliver(timeout=0.05), True)[1])

    node = f"{namespace}-n1"
    pod_path = f"/api/v1/namespaces/{namespace}/pods/p"
    control_plane.create_ready_node(node, labels={"order": namespace})
    try:
        until(2)  # created, and the not-ready taint lifted
        control_plane.api("POST", f"/api/v1/namespaces/{namespace}/pods",
                          pod_manifest("p", namespace, scheduler=f"order-{namespace}", nodeSelector={"order": namespace}))
        until(5)  # added, bound, the bind's outcome
        control_plane.api("PATCH", pod_path, {"metadata": {"labels": {"step": "updated"}}},
                          content_type="application/merge-patch+json")
        until(6)
        control_plane.api("DELETE", pod_path, {"gracePeriodSeconds": 0})
        until(8)
    finally:
        control_plane.api("DELETE", f"/api/v1/nodes/{node}")
    # two writes of the real server's the embedded cluster makes in one: a ready node is the
    # POST and the PATCH that lifts the not-ready taint the server puts on a new node, and a
    # delete with gracePeriodSeconds 0 first marks the pod terminating
    extra = [("MODIFIED", "Node", "n1", "", ""), ("MODIFIED", "Pod", "p", "n1", "updated terminating")]
    assert [entry for entry in scheduler.log if entry != BIND_FINISHED and entry not in extra] == [
        *EXPECTED_EVENTS[:-1], ("DELETED", "Pod", "p", "n1", "updated terminating")]
    assert scheduler.log[:2] == [EXPECTED_EVENTS[0], extra[0]]
    assert scheduler.log[-2:] == [extra[1], ("DELETED", "Pod", "p", "n1", "updated terminating")]
    # the bind's outcome comes through the inbox; whether before or after its watch event is the
    # network's race, as upstream's
    assert scheduler.log.index(BIND_FINISHED) > scheduler.log.index(EXPECTED_EVENTS[1])
    assert scheduler.inside_bind == []
