"""A configuration file with several YAML documents, everywhere as kube-scheduler v1.36 reads it.

Upstream's loadConfig decodes the file as one object and reads only its first document: the
v1.36.2 binary starts with the first document's configuration even when the second one has
``parallelism: -1``, an unknown field or broken YAML, and fails when the first one is invalid.
"""

from __future__ import annotations

import yaml

from kschedfw.testing.cli import run_cli
from tests.manifests import one_node_one_pod

HEAD = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
TWO_DOCS = (HEAD + "profiles:\n- schedulerName: first\n---\n"
            + HEAD + "parallelism: -1\nprofiles:\n- schedulerName: second\n")
CLUSTER = one_node_one_pod(scheduler_name="first")
IGNORED = ("cfg.yaml:6:1: warning: document 2: Ignored document: kube-scheduler reads only the "
           "first document of a configuration file")
DOC2 = ("cfg.yaml:8:14: warning: document 2: parallelism: Invalid value: -1: should be an "
        "integer value greater than zero")


def _write(tmp_path, text: str = TWO_DOCS) -> str:
    path = tmp_path / "cfg.yaml"
    path.write_text(text)
    return str(path)


def test_validate_checks_the_first_document_and_warns_about_the_rest(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    _write(tmp_path)
    result = run_cli("validate", "cfg.yaml").assert_ok()
    assert result.stdout.splitlines() == [
        IGNORED, DOC2, "1 file checked: 1 valid, 0 invalid (0 errors, 2 warnings)"]
    payload = run_cli("validate", "cfg.yaml", "-o", "json").json
    assert [d["document"] for d in payload["diagnostics"]] == [2, 2]


def test_show_defaults_is_the_first_document(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    _write(tmp_path)
    result = run_cli("validate", "cfg.yaml", "--show-defaults").assert_ok()
    [document] = list(yaml.safe_load_all(result.stdout))
    assert [p["schedulerName"] for p in document["profiles"]] == ["first"]
    assert document["parallelism"] == 16
    assert IGNORED in result.stderr


def test_simulate_runs_the_first_document_and_warns(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    _write(tmp_path)
    (tmp_path / "cluster.yaml").write_text(CLUSTER)
    result = run_cli("simulate", "--config", "cfg.yaml", "cluster.yaml", "-o", "json")
    assert result.exit_code == 0, result.stderr
    assert result.json["pods"][0]["node"] == "n1"
    assert IGNORED in result.stderr and DOC2 in result.stderr


def test_an_invalid_first_document_fails_everywhere(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    _write(tmp_path, HEAD + "parallelism: -1\n---\n" + HEAD)
    (tmp_path / "cluster.yaml").write_text(CLUSTER)
    error = "cfg.yaml:3:14: parallelism: Invalid value: -1: should be an integer value greater than zero"
    assert error in run_cli("validate", "cfg.yaml").assert_invalid().stdout
    result = run_cli("simulate", "--config", "cfg.yaml", "cluster.yaml")
    assert result.exit_code == 1 and error in result.stderr
