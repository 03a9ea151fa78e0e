"""Pods and Nodes are refused on create as kube-apiserver v1.36 refuses them.

(A few problems, such as a container without a name or a taint without an effect, are already
refused when the manifest is read, with file and line; they are not repeated here.)

Every expected text below was produced by a v1.36.2 API server (``kubectl create
--dry-run=server``; the status message, which kubectl prefixes with "The").
"""

from __future__ import annotations

import pytest

from kschedfw.api import parse_object
from kschedfw.cluster.apiserver.admission import AdmissionError, validate_create
from kschedfw.fwk.features import FeatureGates
from kschedfw.testing.cli import run_cli

SUBDOMAIN = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, "
             "'-' or '.', and must start and end with an alphanumeric character (e.g. "
             "'example.com', regex used for validation is "
             "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")
LABEL = ("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
         "and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', "
         "regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')")
NAME_PART = ("name part must consist of alphanumeric characters, '-', '_' or '.', and must start "
             "and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or "
             "'123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')")


def pod(spec, name="ok"):
    return parse_object({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
                         "spec": spec})


def node(name="n1", spec=None, status=None):
    return parse_object({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name},
                         "spec": spec or {}, "status": status or {}})


def c(**fields):
    return {"name": "c", "image": "x", **fields}


def refused(obj, gates=None) -> str:
    with pytest.raises(AdmissionError) as info:
        validate_create(obj, gates)
    return str(info.value)


@pytest.mark.parametrize("obj, message", [
    (pod({}), 'Pod "ok" is invalid: spec.containers: Required value'),
    (pod({"containers": [c()]}, name="Bad_Name"),
     f'Pod "Bad_Name" is invalid: metadata.name: Invalid value: "Bad_Name": {SUBDOMAIN}'),
    (pod({}, name="Bad"),
     f'Pod "Bad" is invalid: [metadata.name: Invalid value: "Bad": {SUBDOMAIN}, '
     "spec.containers: Required value]"),
    (pod({"containers": [{"name": "c"}]}), 'Pod "ok" is invalid: spec.containers[0].image: Required value'),
    (pod({"containers": [c(name="C_1")]}),
     f'Pod "ok" is invalid: spec.containers[0].name: Invalid value: "C_1": {LABEL}'),
    (pod({"containers": [c(name="a.b")]}),
     'Pod "ok" is invalid: spec.containers[0].name: Invalid value: "a.b": must not contain dots'),
    (pod({"initContainers": [{"name": "i"}], "containers": [c()]}),
     'Pod "ok" is invalid: spec.initContainers[0].image: Required value'),
    (pod({"containers": [c(resources={"requests": {"cpu": "2"}, "limits": {"cpu": "1"}})]}),
     'Pod "ok" is invalid: spec.containers[0].resources.requests: Invalid value: "2": '
     "must be less than or equal to cpu limit of 1"),
    (pod({"containers": [c(resources={"requests": {"memory": "2Gi", "cpu": "3"},
                                      "limits": {"memory": "1Gi", "cpu": "1"}})]}),
     'Pod "ok" is invalid: [spec.containers[0].resources.requests: Invalid value: "3": must be '
     "less than or equal to cpu limit of 1, spec.containers[0].resources.requests: Invalid "
     'value: "2Gi": must be less than or equal to memory limit of 1Gi]'),
    (pod({"containers": [c(resources={"requests": {"cpu": "-1"}})]}),
     'Pod "ok" is invalid: spec.containers[0].resources.requests[cpu]: Invalid value: "-1": '
     "must be greater than or equal to 0"),
    (pod({"containers": [c(resources={"requests": {"example.com/gpu": "1"},
                                      "limits": {"example.com/gpu": "2"}})]}),
     'Pod "ok" is invalid: spec.containers[0].resources.requests: Invalid value: "1": '
     "must be equal to example.com/gpu limit of 2"),
    (pod({"containers": [c(resources={"requests": {"example.com/gpu": "1"}})]}),
     'Pod "ok" is invalid: spec.containers[0].resources.limits: Required value: '
     "Limit must be set for non overcommitable resources"),
    (pod({"containers": [c()], "tolerations": [{"key": "k", "operator": "Gt", "value": "1"}]}),
     'Pod "ok" is invalid: spec.tolerations[0].operator: Unsupported value: "Gt": '
     'supported values: "Equal", "Exists"'),
    (pod({"containers": [c()]}, name="a" * 254),
     f'Pod "{"a" * 254}" is invalid: metadata.name: Invalid value: "{"a" * 254}": '
     "must be no more than 253 characters"),
    (node("N_1"), f'Node "N_1" is invalid: metadata.name: Invalid value: "N_1": {SUBDOMAIN}'),
    (node(spec={"taints": [{"key": "bad key", "effect": "NoSchedule"}]}),
     f'Node "n1" is invalid: metadata.taints[0].key: Invalid value: "bad key": {NAME_PART}'),
    (node(spec={"taints": [{"key": "k", "effect": "NoSchedule"}, {"key": "k", "effect": "NoSchedule"}]}),
     'Node "n1" is invalid: metadata.taints[1]: Duplicate value: '
     '{"Key":"k","Value":"","Effect":"NoSchedule","TimeAdded":null}: '
     "taints must be unique by key and effect pair"),
    (node(status={"capacity": {"cpu": "-1"}, "allocatable": {"memory": "-1Gi"}}),
     'Node "n1" is invalid: [status.capacity.cpu: Invalid value: "-1": must be greater than or '
     'equal to 0, status.allocatable.memory: Invalid value: "-1Gi": must be greater than or equal to 0]'),
], ids=lambda x: x if isinstance(x, str) and len(x) < 30 else None)
def test_refused_with_upstreams_message(obj, message):
    assert refused(obj) == message


@pytest.mark.parametrize("obj", [
    pod({"containers": [c(resources={"requests": {"cpu": "500m"}, "limits": {"cpu": "1"}})]}),
    pod({"containers": [c(resources={"requests": {"example.com/gpu": "2"},
                                     "limits": {"example.com/gpu": "2"}})]}),
    node(spec={"taints": [{"key": "k", "effect": "NoSchedule"}, {"key": "k", "effect": "NoExecute"}]},
         status={"allocatable": {"cpu": "2"}, "capacity": {"cpu": "1"}}),  # upstream allows it
], ids=["requests within limits", "extended resource equal to its limit", "same key other effect"])
def test_accepted(obj):
    validate_create(obj)


def test_comparison_operators_follow_the_gate():
    gt = pod({"containers": [c()], "tolerations": [{"key": "k", "operator": "Gt", "value": "1"}]})
    validate_create(gt, FeatureGates.parse("TaintTolerationComparisonOperators=true"))


CLUSTER = """\
apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: "2", memory: 4Gi, pods: "110"}}
---
apiVersion: v1
kind: Pod
metadata: {name: empty, namespace: default}
spec: {}
---
apiVersion: v1
kind: Pod
metadata: {name: fine, namespace: default}
spec:
  containers: [{name: c, image: x}]
"""


def test_simulate_refuses_an_empty_spec_naming_file_and_line(tmp_path):
    # a Pod with `spec: {}` has no containers: refused by validation, never bound
    path = tmp_path / "c.yaml"
    path.write_text(CLUSTER)
    result = run_cli("simulate", str(path), "-o", "json")
    assert result.exit_code == 1  # the others are simulated; exit 1 as `kubectl create -f`
    assert result.json["rejected"] == [{"object": "Pod default/empty", "source": f"{path}:6",
                                        "reason": 'Pod "empty" is invalid: spec.containers: Required value'}]
    assert [p["pod"] for p in result.json["pods"]] == ["default/fine"]
    table = run_cli("simulate", str(path)).stdout
    assert (f'rejected Pod default/empty ({path}:6): Pod "empty" is invalid: '
            "spec.containers: Required value") in table


SCENARIO = """\
kind: Scenario
steps:
- create:
    apiVersion: v1
    kind: Node
    metadata: {name: n1}
    status: {allocatable: {cpu: "2", memory: 4Gi, pods: "110"}}
- at: 10s
  create:
  - {apiVersion: v1, kind: Pod, metadata: {name: later}, spec: {}}
  - {apiVersion: v1, kind: Pod, metadata: {name: fine}, spec: {containers: [{name: c, image: x}]}}
"""


def test_pods_created_by_scenario_steps_are_validated_too(tmp_path):
    path = tmp_path / "s.yaml"
    path.write_text(SCENARIO)
    result = run_cli("simulate", str(path), "-o", "json")
    assert result.exit_code == 1, result.stderr
    assert result.json["rejected"] == [{"object": "Pod default/later", "source": f"{path}:8",
                                        "reason": 'Pod "later" is invalid: spec.containers: Required value'}]
    assert [(p["pod"], p["node"]) for p in result.json["pods"]] == [("default/fine", "n1")]


def annotated(kind, annotations, name="big"):
    spec = {"containers": [c()]} if kind == "Pod" else {}
    return parse_object({"apiVersion": "v1", "kind": kind, "spec": spec,
                         "metadata": {"name": name, "annotations": annotations}})


@pytest.mark.parametrize("kind", ["Pod", "Node"])
@pytest.mark.parametrize("annotations", [
    pytest.param({"a": "x" * (256 * 1024)}, id="one byte over"),
    pytest.param({"a": "é" * (128 * 1024)}, id="counted in UTF-8 bytes"),
    pytest.param({f"k{i}": "x" * 1024 for i in range(256)}, id="keys and values together"),
])
def test_annotations_over_256_kib_are_refused(kind, annotations):
    assert refused(annotated(kind, annotations)) == (
        f'{kind} "big" is invalid: metadata.annotations: Too long: may not be more than 262144 bytes')


def test_annotations_of_exactly_256_kib_are_accepted():
    validate_create(annotated("Pod", {"a": "x" * (256 * 1024 - 1)}))


def test_annotation_keys_must_be_qualified_names():
    # the key's case does not matter, unlike a label key's
    validate_create(annotated("Pod", {"Example.COM/Key": "v"}))
    assert refused(annotated("Pod", {"Bad_Key/x/y": "v"}, name="badkey")) == (
        'Pod "badkey" is invalid: metadata.annotations: Invalid value: "Bad_Key/x/y": a valid '
        "label key must consist of alphanumeric characters, '-', '_' or '.', and must start and "
        "end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex "
        "used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS "
        "subdomain prefix and '/' (e.g. 'example.com/MyName')")


def test_simulate_rejects_a_pod_with_oversized_annotations(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text(CLUSTER.replace("metadata: {name: fine, namespace: default}",
                                    "metadata: {name: fine, namespace: default, annotations: "
                                    f"{{a: {'x' * 256 * 1024}}}}}"))
    result = run_cli("simulate", str(path), "-o", "json")
    assert result.exit_code == 1
    assert result.json["rejected"][-1] == {
        "object": "Pod default/fine", "source": f"{path}:11",
        "reason": 'Pod "fine" is invalid: metadata.annotations: Too long: may not be more than '
                  "262144 bytes"}
