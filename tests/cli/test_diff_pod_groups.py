"""`kschedfw diff` counts the PodGroups that became schedulable or unschedulable between two
setups: a group is scheduled on a side when kube-scheduler would have written its
PodGroupScheduled condition True there (submitPodGroupAlgorithmResult). Its pods that changed
say they went with their group, and each side's group line says how many pods fit where."""

from __future__ import annotations

from kschedfw.testing.cli import run_cli
from tests.explain.test_pod_group_explain import TAS, gang_cluster

#: without NodeResourcesFit nothing counts CPUs: the gang of 3 fits in one rack of 2 CPUs
NO_FIT = """\
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  plugins:
    multiPoint:
      disabled: [{name: NodeResourcesFit}]
"""


def files(tmp_path, text: str) -> tuple[str, str]:
    cluster, config = tmp_path / "cluster.yaml", tmp_path / "nofit.yaml"
    cluster.write_text(text)
    config.write_text(NO_FIT)
    return str(cluster), str(config)


def test_a_gang_that_fits_only_on_b_is_counted_as_became_schedulable(tmp_path):
    cluster, config = files(tmp_path, gang_cluster("1") + "---\n" + gang_cluster("250m", name="small", racks=()))
    result = run_cli("diff", cluster, "--feature-gates", TAS, "--config", "", "--config", config, "-o", "json")
    assert result.exit_code == 1, result.output
    groups = result.json["podGroups"]
    assert (groups["compared"], groups["scheduled"], groups["unscheduled"]) == (2, 1, 0)
    (change,) = groups["changes"]
    assert change["podGroup"] == "default/train" and change["change"] == "scheduled"
    assert change["a"].startswith("gang default/train: 2 of minCount 3 pods fit; placement rack=r1")
    assert change["b"] == "gang default/train: 3 of 3 pods bound (minCount 3); PodGroupScheduled"
    pods = {ch["pod"]: ch for ch in result.json["changes"]}
    assert pods["default/train-0"]["decidedBy"]["a"] == {"kind": "pod-group", "other": "default/train",
                                                         "message": change["a"]}


def test_the_reverse_is_counted_as_became_unschedulable_in_the_text_report(tmp_path):
    cluster, config = files(tmp_path, gang_cluster("1"))
    result = run_cli("diff", cluster, "--feature-gates", TAS, "--config", config, "--config", "")
    assert result.exit_code == 1, result.output
    assert "1 of 1 pod groups differ: 1 became unschedulable" in result.stdout
    assert "pod group default/train: scheduled -> unschedulable" in result.stdout
    assert "with its pod group: gang default/train" in result.stdout


def test_groups_that_end_the_same_are_no_difference(tmp_path):
    cluster, config = files(tmp_path, gang_cluster("250m"))
    result = run_cli("diff", cluster, "--feature-gates", TAS, "--config", "", "--config", config, "-o", "json")
    assert result.json["podGroups"] == {"compared": 1, "scheduled": 0, "unscheduled": 0, "changes": []}
    text = run_cli("diff", cluster, "--feature-gates", TAS)
    assert text.exit_code == 0 and "pod groups: all 1 end the same on both sides" in text.stdout
