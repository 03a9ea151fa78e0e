"""`kschedfw simulate` admits pods against the RuntimeClasses it is given, as an API server does:
the class's overhead counts in the pod's requests, its node selector confines the pod, and a
pod naming a missing class is refused (upstream ``plugin/pkg/admission/runtimeclass``)."""

from __future__ import annotations


import yaml

from kschedfw.testing.cli import run_cli

CLUSTER = """\
apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Pod
  metadata: {name: web, namespace: default}
  spec:
    runtimeClassName: kata
    containers: [{name: c, image: busybox, resources: {requests: {cpu: 900m}}}]
- apiVersion: node.k8s.io/v1
  kind: RuntimeClass
  metadata: {name: kata}
  handler: kata
  overhead: {podFixed: {cpu: 250m}}
- apiVersion: v1
  kind: Node
  metadata: {name: n1, labels: {kubernetes.io/hostname: n1}}
  status: {allocatable: {cpu: "1", memory: 4Gi, pods: "110"}}
"""

ZONED = """\
apiVersion: v1
kind: List
items:
- apiVersion: node.k8s.io/v1
  kind: RuntimeClass
  metadata: {name: gvisor}
  handler: runsc
  scheduling:
    nodeSelector: {sandbox: gvisor}
    tolerations: [{key: sandbox, operator: Exists, effect: NoSchedule}]
- apiVersion: v1
  kind: Node
  metadata: {name: small, labels: {kubernetes.io/hostname: small, sandbox: gvisor}}
  spec:
    taints: [{key: sandbox, value: gvisor, effect: NoSchedule}]
  status: {allocatable: {cpu: "2", memory: 4Gi, pods: "110"}}
- apiVersion: v1
  kind: Node
  metadata: {name: big, labels: {kubernetes.io/hostname: big}}
  status: {allocatable: {cpu: "16", memory: 32Gi, pods: "110"}}
- apiVersion: v1
  kind: Pod
  metadata: {name: sandboxed-1, namespace: default}
  spec:
    runtimeClassName: gvisor
    containers: [{name: c, image: busybox, resources: {requests: {cpu: 100m}}}]
- apiVersion: v1
  kind: Pod
  metadata: {name: sandboxed-2, namespace: default}
  spec:
    runtimeClassName: gvisor
    containers: [{name: c, image: busybox, resources: {requests: {cpu: 100m}}}]
- apiVersion: v1
  kind: Pod
  metadata: {name: plain, namespace: default}
  spec:
    containers: [{name: c, image: busybox, resources: {requests: {cpu: 100m}}}]
"""


def simulate(tmp_path, text, *args):
    cluster = tmp_path / "cluster.yaml"
    cluster.write_text(text)
    result = run_cli("simulate", str(cluster), "--output", "json", *args)
    return result, result.json


def test_overhead_keeps_a_pod_that_fits_without_it_pending(tmp_path):
    result, payload = simulate(tmp_path, CLUSTER)
    assert result.exit_code == 0, result.stderr
    assert "RuntimeClass" not in result.stderr  # read, not ignored
    [web] = payload["pods"]
    assert web["status"] == "Pending"
    assert web["message"] == (
        "0/1 nodes are available: 1 Insufficient cpu. no new claims to deallocate, "
        "preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.")


def test_the_classes_node_selector_and_tolerations_place_the_pods(tmp_path):
    result, payload = simulate(tmp_path, ZONED)
    assert result.exit_code == 0, result.stderr
    placed = {p["pod"]: p["node"] for p in payload["pods"]}
    assert placed == {"default/sandboxed-1": "small", "default/sandboxed-2": "small", "default/plain": "big"}


def test_write_out_keeps_the_classes_and_the_admitted_pods(tmp_path):
    after = tmp_path / "after.yaml"
    result, _ = simulate(tmp_path, ZONED, "--write-out", str(after))
    assert result.exit_code == 0, result.stderr
    items = yaml.safe_load(after.read_text())["items"]
    [rc] = [o for o in items if o["kind"] == "RuntimeClass"]
    assert rc["handler"] == "runsc"
    pod = next(o for o in items if o["metadata"]["name"] == "sandboxed-1")
    assert pod["spec"]["nodeSelector"] == {"sandbox": "gvisor"}
    # DefaultTolerationSeconds runs before RuntimeClass: its tolerations come first
    assert pod["spec"]["tolerations"] == [
        {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
        {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
        {"key": "sandbox", "operator": "Exists", "effect": "NoSchedule"}]
    again = run_cli("simulate", str(after), "--output", "json")
    assert again.exit_code == 0, again.stderr  # admitted again as written: nothing refused
    assert {p["pod"]: p["node"] for p in again.json["pods"]} == {
        "default/sandboxed-1": "small", "default/sandboxed-2": "small", "default/plain": "big"}


def test_refusals_name_where_the_object_is(tmp_path):
    text = CLUSTER.replace("runtimeClassName: kata", "runtimeClassName: nope").replace(
        "handler: kata", "handler: a.b")
    result, payload = simulate(tmp_path, text)
    assert result.exit_code == 1
    where = str(tmp_path / "cluster.yaml")
    assert payload["rejected"] == [
        {"object": "RuntimeClass kata", "source": f"{where}:10",
         "reason": 'RuntimeClass.node.k8s.io "kata" is invalid: handler: Invalid value: "a.b": '
                   "must not contain dots"},
        {"object": "Pod default/web", "source": f"{where}:4",
         "reason": 'pods "web" is forbidden: pod rejected: RuntimeClass "nope" not found'},
    ]


def test_a_class_that_cannot_be_read_is_refused_with_its_field(tmp_path):
    text = CLUSTER.replace("overhead: {podFixed: {cpu: 250m}}", "overhead: {podFixed: {cpu: lots}}")
    result, payload = simulate(tmp_path, text)
    assert result.exit_code == 1
    [refused] = [r for r in payload["rejected"] if r["object"] == "RuntimeClass kata"]
    assert refused["source"] == f"{tmp_path / 'cluster.yaml'}:10"
    assert refused["reason"].startswith("overhead.podFixed.cpu: invalid quantity 'lots'")
