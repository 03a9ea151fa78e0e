"""DeviceClasses, ResourceClaims, ResourceClaimTemplates and ResourceSlices are refused on create
as kube-apiserver v1.36 refuses them: unknown fields (strict decoding, as ``kubectl create`` asks),
CEL that does not compile, bad counts and allocation modes, too many requests, sub-requests,
selectors or devices, duplicates and invalid names. A claim naming a DeviceClass that does not
exist is accepted (the scheduler reports it).

Every expected text below was produced by a v1.36.2 API server (a POST with
``fieldValidation=Strict``; the status message)."""

from __future__ import annotations

import json

import pytest

from kschedfw.api import parse_object
from kschedfw.cluster.apiserver.admission import AdmissionError, validate_create
from kschedfw.plugins.dynamicresources.cel import compile_error
from kschedfw.testing.cli import run_cli

LABEL = ("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
         "and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', "
         "regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')")
SUBDOMAIN = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, "
             "'-' or '.', and must start and end with an alphanumeric character (e.g. "
             "'example.com', regex used for validation is "
             "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")
EOF_EXPECTING = ("Syntax error: mismatched input '<EOF>' expecting {'[', '{', '(', '.', '-', '!', 'true', "
                 "'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}")
REF = "must be the name of a request in the claim or the name of a request and a subrequest separated by '/'"
CLAIM = 'ResourceClaim.resource.k8s.io "c1" is invalid: '
REQ = "spec.devices.requests[0]"


def device_class(selectors, name="bad"):
    return parse_object({"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": name},
                         "spec": {"selectors": selectors}})


def claim(devices, name="c1"):
    return parse_object({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                         "metadata": {"name": name, "namespace": "default"}, "spec": {"devices": devices}})


def template(devices, name="t"):
    return parse_object({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
                         "metadata": {"name": name, "namespace": "default"}, "spec": {"spec": {"devices": devices}}})


def resource_slice(devices, name="s"):
    return parse_object({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": name},
                         "spec": {"driver": "gpu.example.com", "nodeName": "n",
                                  "pool": {"name": "n", "resourceSliceCount": 1}, "devices": devices}})


def ex(**fields):
    return {"deviceClassName": "gpu", **fields}


def one(request):
    return {"requests": [request]}


def refused(obj) -> str:
    with pytest.raises(AdmissionError) as info:
        validate_create(obj, None, compile_error)
    return str(info.value)


@pytest.mark.parametrize("obj, message", [
    pytest.param(device_class([{"cel": {"expression": "device.driver == "}}]),
                 'DeviceClass.resource.k8s.io "bad" is invalid: spec.selectors[0].cel.expression: Invalid value: '
                 f'"device.driver == ": compilation failed: ERROR: <input>:1:18: {EOF_EXPECTING}\n'
                 " | device.driver == \n | .................^", id="class CEL syntax error"),
    pytest.param(claim(one({"name": "gpu", "exactly": ex(selectors=[{}])})),
                 f"{CLAIM}{REQ}.exactly.selectors[0].cel: Required value", id="selector without cel"),
    pytest.param(claim(one({"name": "gpu", "exactly": ex(foo=1), "bar": 2})),
                 'ResourceClaim in version "v1" cannot be handled as a ResourceClaim: strict decoding error: '
                 f'unknown field "{REQ}.exactly.foo", unknown field "{REQ}.bar"', id="unknown fields"),
    pytest.param(template(one({"name": "gpu", "exactly": ex(countt=2)})),
                 'ResourceClaimTemplate in version "v1" cannot be handled as a ResourceClaimTemplate: strict '
                 'decoding error: unknown field "spec.spec.devices.requests[0].exactly.countt"',
                 id="template unknown field"),
    pytest.param(claim(one({"name": "gpu", "exactly": ex(allocationMode="ExactCount", count=-1)})),
                 f"{CLAIM}{REQ}.exactly.count: Invalid value: -1: must be greater than zero", id="count below 1"),
    pytest.param(claim(one({"name": "gpu", "exactly": ex(allocationMode="All", count=2)})),
                 f"{CLAIM}{REQ}.exactly.count: Invalid value: 2: must not be specified when allocationMode is 'All'",
                 id="All with a count"),
    pytest.param(claim(one({"name": "gpu", "exactly": ex(allocationMode="Some")})),
                 f'{CLAIM}{REQ}.exactly.allocationMode: Unsupported value: "Some": supported values: "All", '
                 '"ExactCount"', id="unknown allocation mode"),
    pytest.param(claim({"requests": [{"name": f"r{i}", "exactly": ex()} for i in range(33)]}),
                 f"{CLAIM}spec.devices.requests: Too many: 33: must have at most 32 items", id="33 requests"),
    pytest.param(claim(one({"name": "r", "firstAvailable": [{"name": f"s{i}", **ex()} for i in range(9)]})),
                 f"{CLAIM}{REQ}.firstAvailable: Too many: 9: must have at most 8 items", id="9 sub-requests"),
    pytest.param(claim(one({"name": "r", "exactly": ex(selectors=[{"cel": {"expression": "true"}}] * 33)})),
                 f"{CLAIM}{REQ}.exactly.selectors: Too many: 33: must have at most 32 items", id="33 selectors"),
    pytest.param(claim({"requests": [{"name": "r", "exactly": ex()}, {"name": "r", "exactly": ex()}]}),
                 f'{CLAIM}spec.devices.requests[1]: Duplicate value: "r"', id="duplicate request"),
    pytest.param(claim(one({"name": "Bad_Name", "exactly": ex()})),
                 f'{CLAIM}{REQ}.name: Invalid value: "Bad_Name": {LABEL}', id="bad request name"),
    pytest.param(claim(one({"exactly": ex()})), f'{CLAIM}{REQ}.name: Invalid value: "": {LABEL}',
                 id="no request name"),
    pytest.param(claim(one({"name": "r"})),
                 f"{CLAIM}{REQ}: Required value: exactly one of `exactly` or `firstAvailable` is required",
                 id="neither exactly nor firstAvailable"),
    pytest.param(claim(one({"name": "r", "exactly": ex(), "firstAvailable": [{"name": "a", **ex()}]})),
                 f"{CLAIM}{REQ}: Invalid value: null: exactly one of `exactly` or `firstAvailable` is required, "
                 "but multiple fields are set", id="both"),
    pytest.param(claim(one({"name": "r", "exactly": {}})), f"{CLAIM}{REQ}.exactly.deviceClassName: Required value",
                 id="no class"),
    pytest.param(claim(one({"name": "r", "exactly": {"deviceClassName": "Bad_Class"}})),
                 f'{CLAIM}{REQ}.exactly.deviceClassName: Invalid value: "Bad_Class": {SUBDOMAIN}',
                 id="bad class name"),
    pytest.param(claim(one({"name": "r", "exactly": ex()}), name="Bad_Claim"),
                 'ResourceClaim.resource.k8s.io "Bad_Claim" is invalid: metadata.name: Invalid value: "Bad_Claim": '
                 f"{SUBDOMAIN}", id="bad claim name"),
    pytest.param(claim({"requests": [{"name": "r", "exactly": ex()}],
                        "constraints": [{"requests": ["x"], "matchAttribute": "gpu.example.com/model"}]}),
                 f'{CLAIM}spec.devices.constraints[0].requests[0]: Invalid value: "x": {REF}',
                 id="constraint names no request"),
    pytest.param(claim({"requests": [{"name": "r", "exactly": ex()}], "constraints": [{"requests": ["r"]}]}),
                 f'{CLAIM}spec.devices.constraints[0]: Required value: exactly one of "matchAttribute" or '
                 '"distinctAttribute" is required, but multiple fields are set', id="constraint without attribute"),
    pytest.param(resource_slice([{"name": f"d{i}"} for i in range(129)]),
                 'ResourceSlice.resource.k8s.io "s" is invalid: spec.devices: Too many: 129: must have at most '
                 "128 items", id="129 devices"),
    pytest.param(resource_slice([{"name": "d"}, {"name": "d"}, {"name": "Bad_D"}]),
                 f'ResourceSlice.resource.k8s.io "s" is invalid: [spec.devices[2].name: Invalid value: "Bad_D": '
                 f'{LABEL}, spec.devices[1]: Duplicate value: "d"]', id="device names"),
    pytest.param(claim(one({"name": "r", "exactly": ex(allocationMode="All", count=2,
                                                        selectors=[{"cel": {"expression": "1 +"}}])})),
                 f'{CLAIM}[{REQ}.exactly.selectors[0].cel.expression: Invalid value: "1 +": compilation failed: '
                 f"ERROR: <input>:1:4: {EOF_EXPECTING}\n | 1 +\n | ...^, "
                 f"{REQ}.exactly.count: Invalid value: 2: must not be specified when allocationMode is 'All']",
                 id="two errors"),
])
def test_refused_with_upstreams_message(obj, message):
    assert refused(obj) == message


@pytest.mark.parametrize("obj", [
    claim(one({"name": "r", "exactly": ex(allocationMode="ExactCount", count=0)})),  # defaulted to 1
    claim(one({"name": "r", "exactly": {"deviceClassName": "nope"}})),
    claim({"requests": [{"name": "r", "firstAvailable": [{"name": "a", **ex()}, {"name": "b", **ex()}]}],
           "constraints": [{"requests": ["r/a"], "matchAttribute": "gpu.example.com/model"}]}),
    device_class([{"cel": {"expression": 'device.capacity["gpu.example.com"].memory.compareTo(quantity("1Gi")) >= 0'}}],
                 name="gpu"),
], ids=["count 0 is defaulted to 1", "missing DeviceClass is the scheduler's to report",
        "constraint on a sub-request", "class with a quantity selector"])
def test_accepted(obj):
    validate_create(obj, None, compile_error)


def test_without_a_compiler_expressions_are_not_compiled():
    validate_create(device_class([{"cel": {"expression": "device.driver == "}}]))


def test_simulate_lists_a_refused_claim_template_with_file_and_line(tmp_path):
    cluster = tmp_path / "cluster.yaml"
    cluster.write_text("""\
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu}
spec:
  selectors:
  - cel: {expression: device.driver == "gpu.example.com"}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: broken, namespace: default}
spec:
  spec:
    devices:
      requests:
      - name: gpu
        exactly: {deviceClassName: gpu, allocationMode: All, count: 2}
""")
    result = run_cli("simulate", str(cluster), "-o", "json")
    assert json.loads(result.stdout)["rejected"] == [{
        "object": "ResourceClaimTemplate default/broken", "source": f"{cluster}:8",
        "reason": 'ResourceClaimTemplate.resource.k8s.io "broken" is invalid: spec.spec.devices.requests[0].'
                  "exactly.count: Invalid value: 2: must not be specified when allocationMode is 'All'"}]
