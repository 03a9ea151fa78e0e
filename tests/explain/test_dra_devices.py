"""`simulate --explain` for pods with ResourceClaims: the devices each claim got
(driver/pool/device per request), and, on a node DynamicResources rejected with upstream's
``cannot allocate all claims``, the request and selector that node cannot satisfy, counted while
the cycle's state is the one Filter saw."""

from __future__ import annotations

import json

import yaml

from kschedfw.cli.main import main
from kschedfw.explain import render
from kschedfw.testing import run_cli
from tests.cli.test_simulate_dra import DEVICE_CLASS, gpu_slice, node, pod, template

SELECTOR = 'device.capacity["gpu.example.com"].memory.compareTo(quantity("32Gi")) >= 0'


def explain(tmp_path, items, *keys, text=False):
    path = tmp_path / "cluster.yaml"
    path.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": items}))
    args = ["simulate", str(path)] + [a for k in keys for a in ("--explain", k)]
    run = run_cli(*args, *([] if text else ["-o", "json"])).assert_ok()
    return run.stdout if text else {e["pod"]: e for e in run.json["explain"]}


def h100_template():
    body = template("h100", 1)
    body["spec"]["spec"]["devices"]["requests"][0]["exactly"]["selectors"] = [
        {"cel": {"expression": 'device.attributes["gpu.example.com"].model == "h100"'}}]
    return body


def test_allocated_devices_and_why_the_smaller_node_could_not(tmp_path):
    explained = explain(tmp_path, [node("n1"), node("n2"), gpu_slice("n1", 1), gpu_slice("n2", 2),
                                           DEVICE_CLASS, template("two-gpus", 2), pod("a", "two-gpus")], "default/a")
    a = explained["default/a"]
    assert a["node"] == "n2"
    (claim,) = a["claims"]
    assert claim["name"] == "gpu" and claim["claim"].startswith("default/a-gpu-")
    assert claim["devices"] == [{"request": "gpus", "driver": "gpu.example.com", "pool": "n2", "device": f"gpu-{i}"}
                                for i in range(2)]
    n1 = a["attempts"][0]["nodes"]["n1"]
    assert (n1["plugin"], n1["reason"]) == ("DynamicResources", "cannot allocate all claims")
    assert n1["details"] == [f"claim {claim['claim']}, request gpus: wants 2 device(s) of class gpu matching "
                             f"`{SELECTOR}`; the node has 1 device(s), 1 of the class, 1 matching, 1 free"]
    assert "details" not in a["attempts"][0]["nodes"]["n2"]


def test_a_selector_no_device_matches_is_named_and_the_claim_is_not_allocated(tmp_path):
    out = explain(tmp_path, [node("n1"), gpu_slice("n1", 2), DEVICE_CLASS, h100_template(),
                                     pod("b", "h100")], "default/b", text=True)
    lines = out.splitlines()
    claim_line = next(line for line in lines if line.startswith("  claim gpu ("))
    assert claim_line.endswith("): not allocated")
    rejected = lines.index("    n1    rejected by DynamicResources: cannot allocate all claims")
    assert lines[rejected + 1].startswith("      claim default/b-gpu-")
    assert lines[rejected + 1].endswith(', request gpus: wants 1 device(s) of class gpu matching '
                                        '`device.attributes["gpu.example.com"].model == "h100"`; the node has 2 '
                                        "device(s), 2 of the class, 0 matching, 0 free")


def test_taken_devices_are_counted_as_not_free(tmp_path):
    explained = explain(tmp_path, [node("n1"), gpu_slice("n1", 2), DEVICE_CLASS, template("two-gpus", 2),
                                           template("one-gpu", 1), pod("first", "two-gpus"), pod("second", "one-gpu")],
                        "default/second")
    second = explained["default/second"]
    assert second["status"] == "Pending" and second["claims"][0]["devices"] == []
    (detail,) = second["attempts"][0]["nodes"]["n1"]["details"]
    assert detail.endswith("the node has 2 device(s), 2 of the class, 2 matching, 0 free")


def model_slice(node_name, models):
    body = gpu_slice(node_name, len(models))
    for device, model in zip(body["spec"]["devices"], models):
        device["attributes"] = {"model": {"string": model}}
    return body


def same_model_template(name, requests):
    """Requests ``(name, exactly)`` whose devices must all have the same model (matchAttribute)."""
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"spec": {"devices": {
                "requests": [{"name": r, "exactly": {"deviceClassName": "gpu", **exactly}} for r, exactly in requests],
                "constraints": [{"requests": [r for r, _ in requests], "matchAttribute": "gpu.example.com/model"}]}}}}


def test_a_match_attribute_constraint_that_cannot_hold_is_named_with_its_requests_and_attribute(tmp_path):
    # upstream allocator: matchAttribute makes every device of the named requests share the
    # attribute's value; one a100 and one h100 cannot serve two requests under it, so the node
    # is rejected ("cannot allocate all claims"). The explanation names the constraint, its
    # requests and attribute, in the allocator's words, with the values the devices have.
    items = [node("n1"), model_slice("n1", ["a100", "h100"]), DEVICE_CLASS,
             same_model_template("pair", [("a", {"count": 1}), ("b", {"count": 1})]), pod("p", "pair")]
    explained = explain(tmp_path, items, "default/p")
    n1 = explained["default/p"]["attempts"][0]["nodes"]["n1"]
    claim = explained["default/p"]["claims"][0]["claim"]
    assert n1["reason"] == "cannot allocate all claims"
    assert n1["details"] == [f"claim {claim}, constraint #0 (matchAttribute gpu.example.com/model, requests a, b): "
                             "a claim constraint would not be satisfied; the free devices these requests select "
                             'have values string "a100" (gpu-0), string "h100" (gpu-1)']


def test_a_device_without_the_attribute_is_named(tmp_path):
    # upstream matchAttributeConstraint: a device that lacks the attribute cannot join the set
    # ("attribute not set")
    gpus = model_slice("n1", ["a100", "a100"])
    del gpus["spec"]["devices"][1]["attributes"]
    items = [node("n1"), gpus, DEVICE_CLASS, same_model_template("pair", [("a", {"count": 1}), ("b", {"count": 1})]),
             pod("p", "pair")]
    (detail,) = explain(tmp_path, items, "default/p")["default/p"]["attempts"][0]["nodes"]["n1"]["details"]
    assert detail.endswith('have values string "a100" (gpu-0); attribute not set on gpu-1')


def test_an_allocator_error_from_a_constraint_names_the_constraint(capsys, tmp_path):
    # upstream allocator: with allocationMode All every selected device must be taken; a
    # constraint that one of them breaks is an error ("cannot add device ... because a claim
    # constraint would not be satisfied"), which ends the cycle in Filter (SchedulerError)
    items = [node("n1"), model_slice("n1", ["a100", "h100"]), DEVICE_CLASS,
             same_model_template("all", [("a", {"allocationMode": "All"})]), pod("p", "all")]
    path = tmp_path / "cluster.yaml"
    path.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": items}))
    main(["simulate", str(path), "-o", "json", "--explain", "default/p"])  # its exit status is not the point
    (explained,) = json.loads(capsys.readouterr().out)["explain"]
    first = explained["attempts"][0]
    assert first["result"] == "SchedulerError"
    assert first["message"].endswith("because a claim constraint would not be satisfied")
    assert not any(v["fits"] for v in first["nodes"].values())
    claim = explained["claims"][0]["claim"]
    assert first["errorDetails"] == [f"on node n1: claim {claim}, constraint #0 (matchAttribute "
                                     "gpu.example.com/model, requests a): a claim constraint would not be satisfied; "
                                     'the free devices these requests select have values string "a100" (gpu-0), '
                                     'string "h100" (gpu-1)']


def test_a_pod_whose_claim_template_is_missing_or_refused_names_the_template_and_why(capsys, tmp_path):
    # upstream resourceclaim controller: a claim cannot be created from a template that is not
    # there; it records FailedResourceClaimCreation ("PodResourceClaim gpu: resource claim
    # template ...: ... not found") and DynamicResources' PreEnqueue keeps the pod out of the
    # active queue ("ResourceClaim not created yet"). A template the API server refused is as
    # missing; simulate also says why it was refused.
    refused = template("bad", 1)
    refused["spec"]["spec"]["devices"]["requests"][0]["exactly"]["count"] = -3
    path = tmp_path / "cluster.yaml"
    path.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": [
        node("n1"), gpu_slice("n1", 2), DEVICE_CLASS, refused, pod("refused", "bad"), pod("missing", "nope")]}))
    assert main(["simulate", str(path), "-o", "json", "--explain", "default/missing"]) == 1  # one object refused
    payload = json.loads(capsys.readouterr().out)
    messages = {p["pod"]: (p["status"], p["message"]) for p in payload["pods"]}
    assert messages["default/missing"] == (
        "Gated", 'gated by DynamicResources: pod "default/missing": ResourceClaim not created yet; PodResourceClaim '
                 'gpu: resource claim template "nope": resourceclaimtemplate.resource.k8s.io "nope" not found')
    status, message = messages["default/refused"]
    assert status == "Gated" and message.endswith(
        'resource claim template "bad": resourceclaimtemplate.resource.k8s.io "bad" not found (the template was '
        'refused: ResourceClaimTemplate.resource.k8s.io "bad" is invalid: spec.spec.devices.requests[0].exactly.count: '
        "Invalid value: -3: must be greater than zero)")
    (explained,) = payload["explain"]
    assert render(explained).splitlines()[1] == f"  no scheduling attempt: {messages['default/missing'][1]}"
    # the table says the same
    main(["simulate", str(path)])
    table = capsys.readouterr().out
    assert f"Gated         {messages['default/missing'][1]}" in table


def test_the_claim_is_created_once_the_template_exists(capsys, tmp_path):
    # the resourceclaim controller syncs the pod again when its template appears (after the
    # failed first sync): the claim is created, PreEnqueue lets the pod in, and it is scheduled
    (tmp_path / "cluster.yaml").write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": [
        node("n1"), gpu_slice("n1", 2), DEVICE_CLASS, pod("late", "later")]}))
    scenario = tmp_path / "scenario.yaml"
    scenario.write_text(yaml.safe_dump({"kind": "Scenario", "cluster": ["cluster.yaml"], "steps": [
        {"at": "10s", "create": template("later", 1)}, {"advance": "1m"}]}))
    assert main(["simulate", str(scenario), "-o", "json"]) == 0
    (late,) = json.loads(capsys.readouterr().out)["pods"]
    assert (late["status"], late["message"]) == ("Bound", "")
