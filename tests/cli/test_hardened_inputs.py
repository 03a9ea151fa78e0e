"""Cluster input that cannot be trusted: alias bombs, kinds the scheduler never reads, nothing at
all, the same object twice. Each is reported with file and line, never silently."""

from __future__ import annotations

import resource
import time

import pytest

from kschedfw.api.load import UnusableInput, load_manifests
from kschedfw.api.yamlinput import MAX_ALIAS_VALUES
from kschedfw.testing.cli import run_cli

NODE = """\
apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: "2", memory: 4Gi, pods: "110"}}
"""
POD = """\
apiVersion: v1
kind: Pod
metadata: {name: web, namespace: default}
spec:
  containers: [{name: c, image: x}]
"""
DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: web-%d}
spec: {}
"""

# 387 bytes that expand to ~490 million values
BOMB = POD + "\n".join(
    [f'a: &a [{",".join(["lol"] * 9)}]']
    + [f"{c}: &{c} [{','.join([f'*{p}'] * 9)}]" for p, c in zip("abcdefgh", "bcdefghi")]) + "\n"


def _write(tmp_path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def test_alias_bomb_fails_fast_with_exit_2(tmp_path):
    path = _write(tmp_path, "bomb.yaml", BOMB)
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    started = time.process_time()
    result = run_cli("simulate", path)
    assert result.exit_code == 2
    assert result.stderr.startswith(f"error: {path}:1: invalid YAML: aliases expand this document by ")
    assert f"more than the {MAX_ALIAS_VALUES} allowed" in result.stderr
    # bounded: no expansion happened (a generous bound, not a timing test)
    assert time.process_time() - started < 30
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss_before < 200_000  # KiB


def test_recursive_alias_is_refused(tmp_path):
    path = _write(tmp_path, "rec.yaml", POD + "extra: &x [*x]\n")
    with pytest.raises(UnusableInput, match="recursive alias"):
        load_manifests(path)


def test_a_few_aliases_are_fine(tmp_path):
    text = ("apiVersion: v1\nkind: List\nitems:\n"
            "- {kind: Node, metadata: {name: n1, labels: &l {zone: a}}}\n"
            "- {kind: Node, metadata: {name: n2, labels: *l}}\n")
    assert [n.labels for n in load_manifests(_write(tmp_path, "n.yaml", text))] == [
        {"zone": "a"}, {"zone": "a"}]


def test_scenario_reader_is_bounded_too(tmp_path):
    text = "kind: Scenario\n" + "\n".join(BOMB.splitlines()[5:]) + "\n"
    result = run_cli("simulate", _write(tmp_path, "scenario.yaml", text))
    assert result.exit_code == 2 and "aliases expand this document" in result.stderr


def test_unknown_kinds_are_warned_once_per_kind_with_a_count(tmp_path):
    text = "---\n".join([NODE, POD, DEPLOYMENT % 1, DEPLOYMENT % 2,
                         "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n",
                         "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\n"])
    path = _write(tmp_path, "c.yaml", text)
    result = run_cli("simulate", path)
    assert result.exit_code == 0
    warnings = [line for line in result.stderr.splitlines() if "warning" in line]
    assert warnings == [
        f"{path}:12: warning: kind Deployment (apps/v1) is not read by the scheduler: "
        "2 objects ignored (the first is here)",
        f"{path}:22: warning: kind ConfigMap (v1) is not read by the scheduler: 1 object ignored",
        f"{path}:26: warning: kind Widget (example.com/v1) is not read by the scheduler: "
        "1 object ignored",
    ]


def test_custom_resources_the_scheduler_reads_are_not_warned_about(tmp_path):
    text = "---\n".join([NODE, POD, "apiVersion: scheduling.x-k8s.io/v1alpha1\nkind: PodGroup\n"
                                    "metadata: {name: g, namespace: default}\nspec: {minMember: 1}\n"])
    result = run_cli("simulate", _write(tmp_path, "c.yaml", text))
    assert result.exit_code == 0
    assert "warning" not in result.stderr


@pytest.mark.parametrize("make, message", [
    (lambda p: _write(p, "empty.yaml", ""), "empty file (0 bytes)"),
    (lambda p: str(p), "folder holds no manifests (.yaml, .yml, .json files)"),
    (lambda p: _write(p, "comments.yaml", "# nothing here\n---\n"), "no Kubernetes objects found"),
    (lambda p: _write(p, "list.yaml", "apiVersion: v1\nkind: List\nitems: []\n"),
     "no Kubernetes objects found"),
], ids=["0-byte file", "empty folder", "only comments", "empty List"])
def test_nothing_to_simulate_is_exit_2(tmp_path, make, message):
    target = make(tmp_path)
    result = run_cli("simulate", target)
    assert result.exit_code == 2
    assert result.stderr == f"error: {target}: {message}" + (
        " (expected Nodes, Pods, ...: manifests, `kubectl get -o yaml` Lists or a Scenario)\n"
        if message.startswith("no Kubernetes") else "\n")
    assert result.stdout == ""


def test_duplicate_objects_name_both_places(tmp_path):
    first = _write(tmp_path, "a.yaml", NODE + "---\n" + POD)
    second = _write(tmp_path, "b.yaml", "# again\n" + POD)
    result = run_cli("simulate", first, second, "-o", "json")
    assert result.exit_code == 1  # as `kubectl create -f` when one object already exists
    assert result.json["rejected"] == [{
        "object": "Pod default/web", "source": f"{second}:2",
        "reason": f'Pod "web" already exists (first defined at {first}:6)'}]
    table = run_cli("simulate", first, second).stdout
    assert (f'rejected Pod default/web ({second}:2): Pod "web" already exists '
            f"(first defined at {first}:6)") in table


def test_deep_nesting_fails_cleanly_instead_of_crashing(tmp_path):
    # 100 000 nested lists crash libyaml's recursive composer (a segfault) if parsed
    path = _write(tmp_path, "deep.yaml", "[" * 100_000 + "]" * 100_000 + "\n")
    result = run_cli("simulate", path)
    assert result.exit_code == 2
    assert result.stderr == f"error: {path}:1: invalid YAML: nested more than 200 levels deep\n"
    config = run_cli("validate", path)
    assert config.exit_code == 2  # one depth cap for every YAML input, and the same exit status
    assert config.findings() == [f"{path}:1:201: Unusable input: nested more than 200 levels deep"]


def test_every_malformed_object_is_rejected_in_one_run_and_the_others_simulated(tmp_path):
    bad_node = NODE.replace('cpu: "2"', "cpu: [1]").replace("n1", "n0")
    bad_pod = POD.replace("name: web", "name: typo").replace(
        "image: x}", "image: x, resources: {requests: {cpu: [1]}}}")
    bad_priority = POD.replace("name: web", "name: prio") + "  priority: high\n"
    path = _write(tmp_path, "c.yaml", "---\n".join([bad_node, NODE, bad_pod, POD, bad_priority]))
    result = run_cli("simulate", path, "-o", "json")
    assert result.exit_code == 1
    quantity = "invalid quantity [1]: expected a number with an optional suffix"
    assert [(r["object"], r["source"], r["reason"].split(": expected")[0])
            for r in result.json["rejected"]] == [
        ("Node n0", f"{path}:1", "status.allocatable.cpu: invalid quantity [1]"),
        ("Pod default/typo", f"{path}:11", "spec.containers[0].resources.requests.cpu: "
                                          "invalid quantity [1]"),
        ("Pod default/prio", f"{path}:23", "spec.priority"),
    ]
    assert quantity in result.json["rejected"][0]["reason"]
    assert [(p["pod"], p["node"]) for p in result.json["pods"]] == [("default/web", "n1")]
    assert result.stderr == ("kschedfw simulate: 3 objects rejected; exit status 1, as "
                             "`kubectl create -f` exits when the API server refuses an object\n")
    table = run_cli("simulate", path)
    assert table.exit_code == 1
    assert f"rejected Pod default/prio ({path}:23): spec.priority: " in table.stdout


def test_only_malformed_objects_is_still_a_report(tmp_path):
    path = _write(tmp_path, "c.yaml", NODE.replace('cpu: "2"', "cpu: [1]"))
    result = run_cli("simulate", path)
    assert result.exit_code == 1
    assert f"rejected Node n1 ({path}:1): status.allocatable.cpu: invalid quantity" in result.stdout
