"""Every input pod is in every report, the pods preempted or deleted during the run too:
`simulate`'s table, summary, `-o json`, `--report`, `--explain` and `--write-out`, `diff` and
`sweep`.

The fixture: three web pods fill n1 under a PodDisruptionBudget that allows no disruption
(minAvailable 3); ``urgent`` (priority 1000) fits only by preempting one of them, which
upstream's DefaultPreemption does in spite of the budget when no other victim makes room. A
scenario step deletes ``batch`` at 60s. Upstream leaves a preempted victim terminating
(deletionTimestamp, DisruptionTarget=True with reason PreemptionByScheduler) for its grace
period (30s by default), then it is gone; the disruption controller then counts two healthy
pods of the three desired.
"""

from __future__ import annotations

import csv
import html
import pathlib

import pytest
import yaml

from kschedfw.testing.cli import run_cli

FIXTURES = pathlib.Path(__file__).parent / "fixtures"
CLUSTER = str(FIXTURES / "preemption-pdb.yaml")
SCENARIO = str(FIXTURES / "preemption-pdb-scenario.yaml")
INPUT_PODS = {"default/web-0", "default/web-1", "default/web-2", "default/batch", "default/urgent"}
BROKEN = "PodDisruptionBudget default/web-pdb (minAvailable 3, 0 disruptions allowed)"


@pytest.fixture(scope="module")
def report():
    result = run_cli("simulate", SCENARIO, "-o", "json").assert_ok()
    return result.json


@pytest.fixture(scope="module")
def victim(report):
    [victim] = [p for p in report["pods"] if p["status"] == "Preempted"]
    return victim


def test_json_has_every_input_pod_with_the_victims_fate(report, victim):
    assert {p["pod"] for p in report["pods"]} == INPUT_PODS
    assert (victim["deletedBy"], victim["deletedAt"], victim["goneAt"], victim["node"]) == (
        "default/urgent", 0.0, 30.0, "n1")
    assert victim["reason"] == "PreemptionByScheduler"
    assert victim["message"] == f"preempted by default/urgent at 0s on n1; evicted despite {BROKEN}"
    assert victim["pdbViolations"] == ["default/web-pdb"]
    batch = {p["pod"]: p for p in report["pods"]}["default/batch"]
    assert (batch["status"], batch["deletedBy"], batch["deletedAt"], batch["node"]) == (
        "Deleted", "scenario step at 60s", 60.0, "n2")
    assert report["summary"]["total"] == {"Preempted": 1, "Deleted": 1, "Running": 2, "Bound": 1}
    assert report["pdbViolations"] == [{"pdb": "default/web-pdb", "rule": "minAvailable 3", "disruptionsAllowed": 0,
                                        "description": BROKEN, "evicted": [victim["pod"]]}]


def test_the_table_has_every_pod_the_summary_counts_them_the_footer_names_the_budget(victim):
    result = run_cli("simulate", SCENARIO).assert_ok()
    rows = {line.split()[0]: line.split()[2] for line in result.stdout.splitlines()[1:6]}
    assert set(rows) == INPUT_PODS
    assert (rows[victim["pod"]], rows["default/batch"]) == ("Preempted", "Deleted")
    assert "total: 1 bound, 1 deleted, 1 preempted, 2 running" in result.stdout
    assert f"preemption evicted {victim['pod']} despite {BROKEN}" in result.stdout


def test_explain_names_the_preemptor_profile_and_node(victim):
    result = run_cli("simulate", SCENARIO, "--explain", victim["pod"], "--explain", "default/batch").assert_ok()
    text = result.stdout
    assert f"pod {victim['pod']} (profile default-scheduler): Preempted on n1\n" \
           f"  preempted by default/urgent at 0s on n1; evicted despite {BROKEN}" in text
    assert "pod default/batch (profile default-scheduler): Deleted on n2\n  deleted by scenario step at 60s" in text
    assert "no scheduling attempt" not in text.split(f"pod {victim['pod']}")[1]


def test_the_html_report_lists_the_preempted_and_deleted_pods(tmp_path, victim):
    page = tmp_path / "report.html"
    run_cli("simulate", SCENARIO, "--report", str(page)).assert_ok()
    text = page.read_text()
    assert 'data-status="Preempted">1 preempted</span>' in text
    assert 'data-status="Deleted">1 deleted</span>' in text
    deleted = text.split('<table id="deleted">')[1].split("</table>")[0]
    assert f'data-pod="{victim["pod"]}"' in deleted and 'data-pod="default/batch"' in deleted
    assert "scenario step at 60s" in deleted
    assert f"despite {html.escape(BROKEN)}</p>" in text
    explanation = text.split(f'<details class="explain" id="explain-{victim["pod"]}"')[1].split("</details>")[0]
    assert "preempted by default/urgent" in explanation


def test_write_out_leaves_the_cluster_as_upstream_does_at_the_end(tmp_path, victim):
    out = tmp_path / "after.yaml"
    run_cli("simulate", SCENARIO, "--write-out", str(out)).assert_ok()
    items = yaml.safe_load(out.read_text())["items"]
    pods = {f"{i['metadata']['namespace']}/{i['metadata']['name']}" for i in items if i["kind"] == "Pod"}
    # the victim's grace period (30s) and batch's (30s from 60s) ended: both are gone
    assert pods == INPUT_PODS - {victim["pod"], "default/batch"}
    [pdb] = [i for i in items if i["kind"] == "PodDisruptionBudget"]
    status = pdb["status"]
    assert (status["currentHealthy"], status["desiredHealthy"], status["expectedPods"],
            status["disruptionsAllowed"]) == (2, 3, 2, 0)
    assert [(c["type"], c["status"], c["reason"]) for c in status["conditions"]] == [
        ("DisruptionAllowed", "False", "InsufficientPods")]


def test_diff_counts_the_preempted_and_deleted_pods():
    result = run_cli("diff", SCENARIO, "--config", "", "--config", "")
    assert result.exit_code == 0, result.output
    assert "no differences: all 5 pods end the same on both sides" in result.stdout


NO_PREEMPTION = """\
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  plugins: {postFilter: {disabled: [{name: DefaultPreemption}]}}
"""


def test_diff_tells_a_pod_preempted_on_one_side_only(tmp_path, victim):
    config = tmp_path / "no-preemption.yaml"
    config.write_text(NO_PREEMPTION)
    result = run_cli("diff", SCENARIO, "--config", "", "--config", str(config), "-o", "json")
    assert result.exit_code == 1, result.output
    assert result.json["pods"] == 5
    changes = {c["pod"]: c for c in result.json["changes"]}
    gone = changes[victim["pod"]]
    assert (gone["change"], gone["a"]["status"], gone["a"]["node"], gone["b"]["status"]) == (
        "deleted", "Preempted", "n1", "Running")
    assert gone["decidedBy"]["a"] == {"kind": "preempted", "chosen": "n1", "other": "default/urgent"}
    text = run_cli("diff", SCENARIO, "--config", "", "--config", str(config)).stdout
    assert "2 of 5 pods differ: 1 no longer scheduled, 1 preempted or deleted on one side" in text
    assert f"{victim['pod']}: Preempted on n1 -> n1" in text


def test_a_sweep_row_counts_them(tmp_path):
    out = tmp_path / "results.csv"
    result = run_cli("sweep", "--progress", "never", "--cluster", SCENARIO, "--workers", "1", "-o", str(out))
    assert result.exit_code == 0, result.output
    with open(out, newline="") as fh:
        [row] = list(csv.DictReader(fh))
    assert (row["Preempted"], row["Deleted"], row["Running"], row["Bound"]) == ("1", "1", "2", "1")


def test_without_the_scenario_the_victim_is_still_reported():
    result = run_cli("simulate", CLUSTER, "-o", "json").assert_ok()
    assert {p["pod"] for p in result.json["pods"]} == INPUT_PODS
