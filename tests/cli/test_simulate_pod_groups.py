"""`kschedfw simulate` reports PodGroups (gate GenericWorkload): `-o json` carries each group
(policy, minCount, pods, how many are bound, its PodGroupScheduled condition), the table ends
with one line per group, and `--write-out` writes the Workloads as they were and the PodGroups
with the status kube-scheduler v1.36 writes (submitPodGroupAlgorithmResult: PodGroupScheduled
True/Scheduled, or False with reason Unschedulable or SchedulerError and the status message)."""

from __future__ import annotations

import json

import yaml

from kschedfw.cli.main import main
from tests.explain.test_pod_group_explain import TAS, gang_cluster


def simulate(capsys, tmp_path, text: str, *args: str) -> tuple[int, str]:
    cluster = tmp_path / "cluster.yaml"
    cluster.write_text(text)
    code = main(["simulate", str(cluster), "--feature-gates", TAS, *args])
    return code, capsys.readouterr().out


def test_json_carries_each_group_with_its_condition_and_why_it_is_pending(capsys, tmp_path):
    text = gang_cluster("1") + "---\n" + gang_cluster("250m", name="small", racks=())
    code, out = simulate(capsys, tmp_path, text, "-o", "json")
    assert code == 0
    groups = {g["podGroup"]: g for g in json.loads(out)["podGroups"]}
    train, small = groups["default/train"], groups["default/small"]
    message = "0/2 placements are available, first placement status: pod group is unschedulable"
    assert train["policy"] == "gang" and train["minCount"] == 3 and train["bound"] == 0
    assert train["pods"] == ["default/train-0", "default/train-1", "default/train-2"]
    assert train["condition"] == {"type": "PodGroupScheduled", "status": "False", "reason": "Unschedulable",
                                  "message": message}
    assert train["pendingReason"] == {"type": "PodGroup", "podGroup": "default/train", "policy": "gang",
                                      "minCount": 3, "pods": 3, "state": "Unschedulable", "tried": 3, "fit": 2,
                                      "placements": 2, "placement": "rack=r1", "message": message}
    assert small["bound"] == 3 and "pendingReason" not in small
    assert small["condition"] == {"type": "PodGroupScheduled", "status": "True", "reason": "Scheduled",
                                  "message": ""}


def test_the_table_ends_with_one_line_per_group(capsys, tmp_path):
    code, out = simulate(capsys, tmp_path, gang_cluster("1"))
    assert code == 0
    assert out.splitlines()[-1] == (
        "gang default/train: 2 of minCount 3 pods fit; placement rack=r1 fits the most (of 2); "
        "0/2 placements are available, first placement status: pod group is unschedulable")


def test_no_groups_no_group_report(capsys, tmp_path):
    code, out = simulate(capsys, tmp_path, gang_cluster("1").split("---\napiVersion: scheduling.k8s.io")[0], "-o",
                         "json")
    assert code == 0 and "podGroups" not in json.loads(out)


def test_write_out_has_the_workload_unchanged_and_the_pod_groups_status(capsys, tmp_path):
    out_file = tmp_path / "out.yaml"
    text = gang_cluster("1") + "---\n" + gang_cluster("250m", name="small", racks=())
    code, _ = simulate(capsys, tmp_path, text, "--write-out", str(out_file))
    assert code == 0
    items = yaml.safe_load(out_file.read_text())["items"]
    by_kind = {(o["kind"], o["metadata"]["name"]): o for o in items}
    workload = by_kind[("Workload", "train")]
    assert workload["spec"] == {"podGroupTemplates": [{"name": "workers", "schedulingPolicy": {"gang": {"minCount": 3}}}]}
    assert "status" not in workload

    def condition(name: str) -> dict:
        (cond,) = by_kind[("PodGroup", name)]["status"]["conditions"]
        return {k: cond[k] for k in ("type", "status", "reason", "message")}

    assert condition("train") == {"type": "PodGroupScheduled", "status": "False", "reason": "Unschedulable",
                                  "message": "0/2 placements are available, first placement status: pod group "
                                             "is unschedulable"}
    assert condition("small") == {"type": "PodGroupScheduled", "status": "True", "reason": "Scheduled",
                                  "message": ""}
