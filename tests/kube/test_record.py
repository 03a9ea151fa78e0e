"""`kschedfw record` and `simulate --kubeconfig` against a real API server: the trace holds the
initial list, every later watch event in order with its time, and the decisions kube-scheduler
made; an API server restart mid-record loses nothing; the live snapshot simulates as the same
objects written as manifests do."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest
import yaml

from kschedfw.cli.main import main
from kschedfw.cluster.kube.client import ApiError, KubeClient
from kschedfw.cluster.kube.credentials import load_connection
from kschedfw.testing.controlplane import ControlPlane
from kschedfw.trace.reader import initial_objects, read_lines
from kschedfw.trace.recorder import Recorder
from kschedfw.trace.writer import TraceWriter

from tests.kube.helpers import pod_manifest, wait_for

FAST = {"initial_backoff": 0.1, "max_backoff": 0.5}


@pytest.fixture
def kube_scheduler(control_plane: ControlPlane) -> Iterator[None]:
    if not (control_plane.assets / "kube-scheduler").exists():
        pytest.skip(f"no kube-scheduler in {control_plane.assets}")
    control_plane.start_kube_scheduler()
    yield
    control_plane.stop_kube_scheduler()


class Recording:
    """A recorder writing ``path`` in the background, as `kschedfw record` runs it."""

    def __init__(self, control_plane: ControlPlane, path: Path) -> None:
        self.client = KubeClient(load_connection(control_plane.kubeconfig))
        self.writer = TraceWriter(path, server="test")
        self.recorder = Recorder(self.client, self.writer.write, informer_options=FAST)
        self.path = path

    def __enter__(self) -> "Recording":
        self.recorder.start()
        assert self.recorder.wait_for_sync(30), self.recorder.unsynced()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.recorder.stop()
        self.writer.close()
        self.client.close()

    def wait_until(self, condition: Any, what: str, why: Callable[[], str] | None = None) -> None:
        """Until a line written so far satisfies ``condition`` (the file is flushed every 2 s);
        on a timeout, ``why()`` is added to the message."""
        def seen() -> bool:
            self.writer.flush()
            return any(condition(line) for line in read_lines(self.path))
        try:
            wait_for(seen, timeout=30, what=what)
        except AssertionError as exc:
            if why is None:
                raise
            raise AssertionError(f"{exc}: {why()}") from None


def _scheduling_state(control_plane: ControlPlane, namespace: str, name: str) -> str:
    """What the server says of a pod that was not bound in time, and how many pods wait."""
    pod = control_plane.api("GET", f"/api/v1/namespaces/{namespace}/pods/{name}")
    waiting = [p for p in control_plane.api("GET", "/api/v1/pods")["items"] if not p["spec"].get("nodeName")]
    conditions = [c for c in (pod.get("status") or {}).get("conditions") or [] if c.get("type") == "PodScheduled"]
    return f"{name} has nodeName={pod['spec'].get('nodeName')!r}, PodScheduled={conditions}; {len(waiting)} pods unbound"


def _name(line: dict[str, Any]) -> str:
    meta = (line.get("object") or {}).get("metadata") or {}
    return f"{meta.get('namespace', '')}/{meta.get('name', '')}".lstrip("/")


def _events_of(lines: list[dict[str, Any]], kind: str, name: str) -> list[str]:
    return [line["event"] for line in lines if line["type"] == "event"
            and line["object"].get("kind") == kind and _name(line) == name]


def test_record_holds_the_list_every_event_in_order_and_the_bindings(control_plane, namespace, kube_scheduler,
                                                                       tmp_path):
    """The initial list, then each create, update and delete as an event with its time, in the
    order received; kube-scheduler's bindings and FailedScheduling as decisions; no managedFields."""
    control_plane.create_ready_node("rec-a", cpu="2")
    trace = tmp_path / "trace.jsonl.gz"
    try:
        with Recording(control_plane, trace) as rec:
            control_plane.api("POST", f"/api/v1/namespaces/{namespace}/pods",  # rec-b joins while fits may queue
                                  pod_manifest("fits", namespace, nodeSelector={"kubernetes.io/hostname": "rec-a"}))
            control_plane.api("POST", f"/api/v1/namespaces/{namespace}/pods",
                              pod_manifest("too-big", namespace, cpu="64"))
            control_plane.api("PATCH", "/api/v1/nodes/rec-a", {"metadata": {"labels": {"tier": "gold"}}},
                              content_type="application/merge-patch+json")
            control_plane.create_ready_node("rec-b", cpu="2")
            rec.wait_until(lambda line: line.get("decision") == "Bound" and line["pod"] == f"{namespace}/fits",
                           "the binding of fits")
            rec.wait_until(lambda line: line.get("decision") == "FailedScheduling"
                           and line["pod"] == f"{namespace}/too-big", "FailedScheduling of too-big")
            control_plane.api("DELETE", f"/api/v1/namespaces/{namespace}/pods/fits?gracePeriodSeconds=0")
            control_plane.api("DELETE", "/api/v1/nodes/rec-b")
            rec.wait_until(lambda line: line.get("event") == "DELETED" and _name(line) == "rec-b",
                           "the deletion of rec-b")
    finally:
        for node in ("rec-a", "rec-b"):
            try:
                control_plane.api("DELETE", f"/api/v1/nodes/{node}")
            except Exception:
                pass
    lines = list(read_lines(trace))
    types = [line["type"] for line in lines]
    assert types[0] == "header" and types[-1] == "end" and types.count("synced") == 1
    synced = types.index("synced")
    assert "list" not in types[synced:]
    listed = {(line["object"]["kind"], _name(line)) for line in lines if line["type"] == "list"}
    assert {("Node", "rec-a"), ("Namespace", namespace)} <= listed
    times = [line["t"] for line in lines[1:]]
    assert times == sorted(times)
    assert _events_of(lines, "Node", "rec-a") == ["MODIFIED"]
    rec_b = _events_of(lines, "Node", "rec-b")  # created, its not-ready taint patched away, deleted
    assert rec_b[0] == "ADDED" and rec_b[-1] == "DELETED" and "DELETED" not in rec_b[:-1]
    fits = _events_of(lines, "Pod", f"{namespace}/fits")
    assert fits[0] == "ADDED" and fits[-1] == "DELETED" and "MODIFIED" in fits
    bound = [line for line in lines if line.get("decision") == "Bound" and line["pod"] == f"{namespace}/fits"]
    assert len(bound) == 1 and bound[0]["node"] == "rec-a" and bound[0]["scheduler"] == "default-scheduler"
    assert isinstance(bound[0]["at"], float)
    failed = [line for line in lines if line.get("decision") == "FailedScheduling"
              and line["pod"] == f"{namespace}/too-big"]
    assert failed and "Insufficient cpu" in failed[0]["message"]
    assert not any("managedFields" in (line.get("object") or {}).get("metadata", {}) for line in lines)
    assert lines[-1]["counts"]["decisions"] == sum(t == "decision" for t in types)
    snapshot = initial_objects(lines)
    assert any(o["kind"] == "Node" and o["metadata"]["name"] == "rec-a" for o in snapshot)
    assert not any(o["kind"] == "Node" and o["metadata"]["name"] == "rec-b" for o in snapshot)


def test_record_rides_out_an_api_server_restart(control_plane, namespace, tmp_path):
    """The API server stopped and started again mid-record: the informers watch (or relist)
    again and the changes after the restart are in the trace, none of those before lost."""
    trace = tmp_path / "trace.jsonl.gz"
    with Recording(control_plane, trace) as rec:
        control_plane.api("POST", f"/api/v1/namespaces/{namespace}/pods", pod_manifest("before", namespace))
        rec.wait_until(lambda line: line.get("event") == "ADDED" and _name(line) == f"{namespace}/before",
                       "the pod created before the restart")
        control_plane.restart_apiserver()
        control_plane.api("POST", f"/api/v1/namespaces/{namespace}/pods", pod_manifest("after", namespace))
        control_plane.api("DELETE", f"/api/v1/namespaces/{namespace}/pods/before?gracePeriodSeconds=0")
        rec.wait_until(lambda line: line.get("event") == "DELETED" and _name(line) == f"{namespace}/before",
                       "the deletion after the restart")
        rec.wait_until(lambda line: line.get("event") == "ADDED" and _name(line) == f"{namespace}/after",
                       "the pod created after the restart")
        pods = next(i for i in rec.recorder.informers if i.resource.kind == "Pod")
        assert pods.watches + pods.lists > 2  # it did watch or list again
    lines = list(read_lines(trace))
    before = _events_of(lines, "Pod", f"{namespace}/before")
    assert before[0] == "ADDED" and before[-1] == "DELETED" and "DELETED" not in before[:-1]
    assert _events_of(lines, "Pod", f"{namespace}/after") == ["ADDED"]
    assert lines[-1]["type"] == "end"


def _final_pods(lines: list[dict[str, Any]], namespace: str) -> dict[str, str]:
    """Each pod of ``namespace`` and its resourceVersion after every line of the trace."""
    pods: dict[str, str] = {}
    for line in lines:
        obj = line.get("object") or {}
        if line["type"] not in ("list", "event") or obj.get("kind") != "Pod" \
                or obj["metadata"].get("namespace") != namespace:
            continue
        if line.get("event") == "DELETED":
            pods.pop(obj["metadata"]["name"], None)
        else:
            pods[obj["metadata"]["name"]] = obj["metadata"]["resourceVersion"]
    return pods


def test_record_loses_nothing_when_its_watches_are_cut(control_plane, namespace, tmp_path):
    """Every connection of the recorder cut every 0.3 s while pods are created, updated and
    deleted: the trace, applied line by line, ends as the server is, every pod at its last
    resourceVersion."""
    from tests.kube.faults.harness import TcpProxy
    with TcpProxy(control_plane.port, drop_every=0.3) as flaky:
        kubeconfig = tmp_path / "flaky.kubeconfig"
        kubeconfig.write_text(control_plane.kubeconfig_text(control_plane.token, "admin").replace(
            control_plane.url, flaky.url))
        trace = tmp_path / "trace.jsonl.gz"
        client = KubeClient(load_connection(kubeconfig))
        writer = TraceWriter(trace)
        recorder = Recorder(client, writer.write, informer_options=FAST)
        recorder.start()
        try:
            assert wait_for(lambda: recorder.wait_for_sync(1.0), timeout=60, what="the first lists")
            drops = flaky.drops
            for i in range(12):
                control_plane.api("POST", f"/api/v1/namespaces/{namespace}/pods", pod_manifest(f"p{i}", namespace))
                time.sleep(0.1)  # the changes span several cuts
            for i in range(0, 12, 2):
                control_plane.api("PATCH", f"/api/v1/namespaces/{namespace}/pods/p{i}",
                                  {"metadata": {"labels": {"touched": "yes"}}},
                                  content_type="application/merge-patch+json")
                time.sleep(0.1)
            for i in range(0, 12, 3):
                control_plane.api("DELETE", f"/api/v1/namespaces/{namespace}/pods/p{i}?gracePeriodSeconds=0")
                time.sleep(0.1)
            assert flaky.drops - drops >= 3
            server = {p["metadata"]["name"]: p["metadata"]["resourceVersion"] for p in control_plane.api(
                "GET", f"/api/v1/namespaces/{namespace}/pods")["items"]}

            def caught_up() -> bool:
                writer.flush()
                return _final_pods(list(read_lines(trace)), namespace) == server
            wait_for(caught_up, timeout=60, what="the trace to reach the server's state")
        finally:
            recorder.stop()
            writer.close()
            client.close()
    lines = list(read_lines(trace))
    assert _final_pods(lines, namespace) == server and len(server) == 8
    times = [line["t"] for line in lines[1:]]
    assert times == sorted(times)


def test_simulate_kubeconfig_schedules_as_the_same_objects_written_as_manifests(control_plane, namespace,
                                                                              tmp_path, capsys):
    """`simulate --kubeconfig` takes the cluster as `record` lists it: its placements are those of
    `simulate` given the same nodes and pods as manifest files."""
    manifests: list[dict[str, Any]] = [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}}]
    # the shared server holds other tests' nodes and pending pods, which the live run lists too:
    # a taint keeps those pods off these nodes, a node selector keeps these pods on them
    fence = {"kschedfw.test/simulate": namespace}
    taint = {"key": "kschedfw.test/simulate", "value": namespace, "effect": "NoSchedule"}
    try:
        for name, cpu in (("sim-a", "1"), ("sim-b", "2")):
            node = control_plane.create_ready_node(name, cpu=cpu, labels={"zone": name, **fence}, taints=[taint])
            manifests.append({"apiVersion": "v1", "kind": "Node", "metadata": {
                "name": name, "labels": node["metadata"]["labels"]}, "spec": {"taints": [taint]},
                "status": node["status"]})
        for i, cpu in enumerate(("600m", "600m", "600m", "900m", "2")):
            pod = pod_manifest(f"p{i}", namespace, cpu=cpu, nodeSelector=fence,
                               tolerations=[{"key": taint["key"], "operator": "Equal", "value": namespace,
                                             "effect": "NoSchedule"}])
            control_plane.api("POST", f"/api/v1/namespaces/{namespace}/pods", pod)
            manifests.append(pod)
        files = tmp_path / "cluster.yaml"
        files.write_text(yaml.safe_dump_all(manifests))

        def placements(argv: list[str]) -> dict[str, Any]:
            main(["simulate", *argv, "-o", "json", "--ties", "name"])
            report = json.loads(capsys.readouterr().out)
            return {p["pod"]: (p["status"], p["node"]) for p in report["pods"] if p["pod"].startswith(namespace + "/")}

        from_files = placements([str(files)])
        live = placements(["--kubeconfig", str(control_plane.kubeconfig)])
    finally:
        for name in ("sim-a", "sim-b"):
            control_plane.api("DELETE", f"/api/v1/nodes/{name}")
    assert len(from_files) == 5 and live == from_files
    assert sum(status == "Pending" for status, _ in live.values()) >= 1


def test_record_cli_writes_a_whole_trace_and_refuses_a_bad_kubeconfig(control_plane, tmp_path, capsys):
    """`record --duration` ends by itself with a header, the list, synced and end; a kubeconfig
    that does not exist is exit status 2 with one line, no traceback."""
    trace = tmp_path / "cli.jsonl.gz"
    assert main(["record", "--kubeconfig", str(control_plane.kubeconfig), "-o", str(trace),
                 "--duration", "2s"]) == 0
    err = capsys.readouterr().err
    assert "objects listed" in err and "Traceback" not in err
    types = [line["type"] for line in read_lines(trace)]
    assert types[0] == "header" and "list" in types and "synced" in types and types[-1] == "end"
    assert main(["record", "--kubeconfig", str(tmp_path / "missing"), "-o", str(tmp_path / "x.gz")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("kschedfw record: ") and "Traceback" not in err
    assert main(["simulate", "--kubeconfig", str(tmp_path / "missing")]) == 2
    assert "Traceback" not in capsys.readouterr().err


def test_record_rbac_is_enough_and_read_only(control_plane, tmp_path, capsys):
    """deploy/record-rbac.yaml lets its service account record every kind (the trace gets its
    synced line) and simulate the live cluster, and write nothing."""
    from tests.kube.test_deploy import DEPLOY, apply
    apply(control_plane, DEPLOY / "record-rbac.yaml")
    token = control_plane.api("POST", "/api/v1/namespaces/kube-system/serviceaccounts/kschedfw-record/token",
                              {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
                               "spec": {"expirationSeconds": 3600}})["status"]["token"]
    kubeconfig = tmp_path / "record.kubeconfig"
    kubeconfig.write_text(control_plane.kubeconfig_text(token, "kschedfw-record"))
    trace = tmp_path / "rbac.jsonl.gz"
    assert main(["record", "--kubeconfig", str(kubeconfig), "-o", str(trace), "--duration", "3s"]) == 0, \
        capsys.readouterr().err
    assert "synced" in [line["type"] for line in read_lines(trace)]
    reader = KubeClient(load_connection(kubeconfig))
    try:
        with pytest.raises(ApiError) as denied:
            reader.request("POST", "/api/v1/namespaces/default/configmaps",
                           body={"metadata": {"name": "nope"}})
        assert denied.value.status == 403
    finally:
        reader.close()


def test_a_kind_served_after_the_first_list_is_recorded_as_events(control_plane, namespace, tmp_path):
    """A CRD installed mid-record: its kind is recorded once discovery finds it, its objects as
    ADDED events after the synced line (they were not part of the cluster the trace starts with)."""
    from kschedfw.cluster.kube.resources import BY_KIND
    from tests.kube.test_discovery import CRD
    crd = json.loads(json.dumps(CRD).replace("elasticquota", "podgroup").replace("ElasticQuota", "PodGroup"))
    trace = tmp_path / "late.jsonl.gz"
    client = KubeClient(load_connection(control_plane.kubeconfig))
    writer = TraceWriter(trace)
    recorder = Recorder(client, writer.write, resources=(BY_KIND["Node"], BY_KIND["PodGroup"]),
                        informer_options={"initial_backoff": 0.05, "max_backoff": 0.4})
    try:
        recorder.start()
        assert [r.kind for r in recorder.missing] == ["PodGroup"]
        assert recorder.wait_for_sync(30)
        control_plane.api("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd)
        wait_for(lambda: _try_create_podgroup(control_plane, namespace), timeout=30, what="the PodGroup API")

        def recorded() -> bool:
            writer.flush()
            return any(line.get("event") == "ADDED" and line["object"]["kind"] == "PodGroup"
                       for line in read_lines(trace))
        wait_for(recorded, timeout=30, what="the PodGroup in the trace")
    finally:
        recorder.stop()
        writer.close()
        client.close()
        control_plane.api("DELETE", f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{crd['metadata']['name']}")
    types = [line["type"] for line in read_lines(trace)]
    assert "list" not in types[types.index("synced"):]


def _try_create_podgroup(control_plane: ControlPlane, namespace: str) -> bool:
    from kschedfw.testing.controlplane import APIError
    try:
        control_plane.api("POST", f"/apis/scheduling.x-k8s.io/v1alpha1/namespaces/{namespace}/podgroups",
                          {"apiVersion": "scheduling.x-k8s.io/v1alpha1", "kind": "PodGroup",
                           "metadata": {"name": "gang", "namespace": namespace}, "spec": {"minMember": 2}})
        return True
    except APIError:
        return False


def test_record_holds_kube_schedulers_nomination_when_it_preempts(control_plane, namespace, kube_scheduler,
                                                                  tmp_path):
    """A high-priority pod that fits only by preempting: kube-scheduler nominates it to the
    victim's node, and the trace has that nomination as a decision with the node."""
    small = f"{namespace}-small"  # its own node: no other test's pod can be on it
    control_plane.create_ready_node(small, cpu="1")
    on_small = {"kubernetes.io/hostname": small}  # the shared server's other nodes must not take them
    high = f"{namespace}-high"
    control_plane.api("POST", "/apis/scheduling.k8s.io/v1/priorityclasses",
                      {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                       "metadata": {"name": high}, "value": 1000})
    trace = tmp_path / "preempt.jsonl.gz"
    try:
        with Recording(control_plane, trace) as rec:
            control_plane.api("POST", f"/api/v1/namespaces/{namespace}/pods",
                              pod_manifest("victim", namespace, cpu="800m", nodeSelector=on_small))
            rec.wait_until(lambda line: line.get("decision") == "Bound" and line["pod"] == f"{namespace}/victim",
                           "the victim's binding", why=lambda: _scheduling_state(control_plane, namespace, "victim"))
            control_plane.api("POST", f"/api/v1/namespaces/{namespace}/pods",
                              pod_manifest("preemptor", namespace, cpu="800m", priorityClassName=high,
                                           nodeSelector=on_small))
            rec.wait_until(lambda line: line.get("decision") == "Nominated"
                           and line["pod"] == f"{namespace}/preemptor", "the preemptor's nomination")
            # the victim's deletion may come after the nomination: record until it is in
            rec.wait_until(lambda line: line["type"] == "event" and _name(line) == f"{namespace}/victim"
                           and (line["event"] == "DELETED" or bool(line["object"]["metadata"].get("deletionTimestamp"))),
                           "the victim's deletion")
    finally:
        control_plane.api("DELETE", f"/api/v1/nodes/{small}")
        control_plane.api("DELETE", f"/apis/scheduling.k8s.io/v1/priorityclasses/{high}")
    lines = list(read_lines(trace))
    nominated = [line for line in lines if line.get("decision") == "Nominated"
                 and line["pod"] == f"{namespace}/preemptor"]
    assert nominated[0]["node"] == small
    victim = [line for line in lines if line["type"] == "event" and _name(line) == f"{namespace}/victim"]
    assert victim[0]["event"] == "ADDED"
    last = victim[-1]  # preempted: deleted, or terminating (no kubelet here to finish it)
    assert last["event"] == "DELETED" or last["object"]["metadata"].get("deletionTimestamp")


def test_record_stops_on_sigint_with_a_whole_trace(control_plane, tmp_path):
    """Ctrl-C is how a recording normally ends: exit status 0, the trace closed with its end line."""
    import os
    import signal
    import subprocess
    import sys
    trace = tmp_path / "sigint.jsonl.gz"
    root = Path(__file__).resolve().parents[2]
    proc = subprocess.Popen([sys.executable, "-m", "kschedfw.cli.main", "record", "--kubeconfig",
                             str(control_plane.kubeconfig), "-o", str(trace)], stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": str(root)})
    try:
        assert proc.stderr is not None
        for line in proc.stderr:
            if "recording events" in line:
                break
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=30) == 0
        assert "stopped: " in proc.stderr.read()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    types = [line["type"] for line in read_lines(trace)]
    assert types[0] == "header" and "synced" in types and types[-1] == "end"
