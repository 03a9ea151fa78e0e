"""`simulate --explain` for pods with ResourceClaims (issue #18): the devices each claim got
(driver/pool/device per request), and, on a node DynamicResources rejected with upstream's
``cannot allocate all claims``, the request and selector that node cannot satisfy, counted while
the cycle's state is the one Filter saw."""

from __future__ import annotations

import json

import yaml

from kschedfw.cli.main import main
from tests.cli.test_simulate_dra import DEVICE_CLASS, gpu_slice, node, pod, template

SELECTOR = 'device.capacity["gpu.example.com"].memory.compareTo(quantity("32Gi")) >= 0'


def explain(capsys, tmp_path, items, *keys, text=False):
    path = tmp_path / "cluster.yaml"
    path.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": items}))
    args = ["simulate", str(path)] + [a for k in keys for a in ("--explain", k)]
    assert main(args + ([] if text else ["-o", "json"])) == 0
    out = capsys.readouterr().out
    return out if text else {e["pod"]: e for e in json.loads(out)["explain"]}


def h100_template():
    body = template("h100", 1)
    body["spec"]["spec"]["devices"]["requests"][0]["exactly"]["selectors"] = [
        {"cel": {"expression": 'device.attributes["gpu.example.com"].model == "h100"'}}]
    return body


def test_allocated_devices_and_why_the_smaller_node_could_not(capsys, tmp_path):
    explained = explain(capsys, tmp_path, [node("n1"), node("n2"), gpu_slice("n1", 1), gpu_slice("n2", 2),
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


def test_a_selector_no_device_matches_is_named_and_the_claim_is_not_allocated(capsys, tmp_path):
    out = explain(capsys, tmp_path, [node("n1"), gpu_slice("n1", 2), DEVICE_CLASS, h100_template(),
                                     pod("b", "h100")], "default/b", text=True)
    lines = out.splitlines()
    claim_line = next(line for line in lines if line.startswith("  claim gpu ("))
    assert claim_line.endswith("): not allocated")
    rejected = lines.index("    n1    rejected by DynamicResources: cannot allocate all claims")
    assert lines[rejected + 1].startswith("      claim default/b-gpu-")
    assert lines[rejected + 1].endswith(', request gpus: wants 1 device(s) of class gpu matching '
                                        '`device.attributes["gpu.example.com"].model == "h100"`; the node has 2 '
                                        "device(s), 2 of the class, 0 matching, 0 free")


def test_taken_devices_are_counted_as_not_free(capsys, tmp_path):
    explained = explain(capsys, tmp_path, [node("n1"), gpu_slice("n1", 2), DEVICE_CLASS, template("two-gpus", 2),
                                           template("one-gpu", 1), pod("first", "two-gpus"), pod("second", "one-gpu")],
                        "default/second")
    second = explained["default/second"]
    assert second["status"] == "Pending" and second["claims"][0]["devices"] == []
    (detail,) = second["attempts"][0]["nodes"]["n1"]["details"]
    assert detail.endswith("the node has 2 device(s), 2 of the class, 2 matching, 0 free")
