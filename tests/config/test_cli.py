"""`kschedfw validate` and `kschedfw schema`: output formats and exit codes (0 valid, 1 invalid,
2 could not run)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml


from .fakes import FakeRegistry

FIXTURES = Path(__file__).parent / "fixtures"
HEAD = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"


@pytest.fixture(autouse=True)
def fake_registry(monkeypatch):
    fake = FakeRegistry().with_out_of_tree()
    import kschedfw.framework.registry as registry
    monkeypatch.setattr(registry, "default_registry", lambda: fake)
    return fake


def cli(*argv):
    from kschedfw.cli.main import main
    return main(list(argv))


@pytest.fixture
def files(tmp_path):
    good = tmp_path / "good.yaml"
    good.write_text(HEAD + "parallelism: 4\n")
    bad = tmp_path / "bad.yaml"
    bad.write_text(HEAD + "parallelism: 0\nprofiles:\n- plugins:\n    score:\n      enabled:\n"
                          "      - name: NodeResourceFit\n")
    broken = tmp_path / "broken.yaml"
    broken.write_text(HEAD + "profiles: [\n")
    return good, bad, broken


def test_valid_file_exit_0(files, capsys):
    good, _, _ = files
    assert cli("validate", str(good)) == 0
    assert capsys.readouterr().out == "1 file checked: 1 valid, 0 invalid (0 errors)\n"


def test_invalid_and_valid_files_exit_1(files, capsys):
    good, bad, _ = files
    assert cli("validate", str(bad), str(good)) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[0] == f"{bad}:3:14: parallelism: Invalid value: 0: should be an integer value " \
                     "greater than zero"
    assert out[1].startswith(f'{bad}:8:15: profiles[0].plugins.score.enabled[0].name: '
                             'Unsupported value: "NodeResourceFit": ScorePlugin "NodeResourceFit" '
                             'does not exist; installed plugins, closest first: NodeResourcesFit')
    assert out[1].endswith('(did you mean "NodeResourcesFit"?)')
    assert out[2] == "2 files checked: 1 valid, 1 invalid (2 errors)"


def test_yaml_syntax_error_is_invalid(files, capsys):
    _, _, broken = files
    assert cli("validate", str(broken)) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith(f"{broken}:4:1: YAML syntax error: ")


def test_missing_file_exit_2_message_on_stderr(files, capsys, tmp_path):
    good, _, _ = files
    assert cli("validate", str(good), str(tmp_path / "nope.yaml")) == 2
    captured = capsys.readouterr()
    assert "nope.yaml: cannot read file: No such file or directory" in captured.err
    assert "Traceback" not in captured.err + captured.out
    assert captured.out.endswith("2 files checked: 1 valid, 0 invalid (0 errors); 1 could not be "
                                 "checked\n")


def test_json_output(files, capsys):
    good, bad, _ = files
    assert cli("validate", "--output", "json", str(good), str(bad)) == 1
    payload = json.loads(capsys.readouterr().out)
    assert payload["status"] == "invalid"
    assert [(f["file"], f["status"], f["errors"]) for f in payload["files"]] == [
        (str(good), "valid", 0), (str(bad), "invalid", 2)]
    assert payload["summary"] == {"files": 2, "valid": 1, "invalid": 1, "error": 0, "errors": 2,
                                  "warnings": 0}
    first = payload["diagnostics"][0]
    assert {k: first[k] for k in ("file", "line", "column", "path", "kind", "severity")} == {
        "file": str(bad), "line": 3, "column": 14, "path": "parallelism", "kind": "Invalid value",
        "severity": "error"}


def test_json_output_ok_and_error_status(files, capsys, tmp_path):
    good, _, _ = files
    assert cli("validate", "-o", "json", str(good)) == 0
    assert json.loads(capsys.readouterr().out)["status"] == "ok"
    assert cli("validate", "-o", "json", str(tmp_path / "nope.yaml")) == 2
    payload = json.loads(capsys.readouterr().out)
    assert payload["status"] == "error" and payload["files"][0]["status"] == "error"


def test_show_defaults_prints_the_defaulted_config(files, capsys):
    good, _, _ = files
    assert cli("validate", "--show-defaults", str(good)) == 0
    captured = capsys.readouterr()
    doc = yaml.safe_load(captured.out)
    assert doc["parallelism"] == 4
    assert doc["profiles"][0]["schedulerName"] == "default-scheduler"
    assert doc["profiles"][0]["plugins"]["multiPoint"]["enabled"][0] == {"name": "SchedulingGates"}
    assert captured.err == "1 file checked: 1 valid, 0 invalid (0 errors)\n"


def test_show_defaults_in_json(files, capsys):
    good, _, _ = files
    assert cli("validate", "-o", "json", "--show-defaults", str(good)) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["files"][0]["defaults"]["podMaxBackoffSeconds"] == 10


def test_plugin_that_cannot_be_loaded_exit_2(files, capsys, monkeypatch, fake_registry):
    good, _, _ = files
    monkeypatch.setattr(fake_registry, "extension_points",
                        lambda name: None if name == "ImageLocality"
                        else FakeRegistry.extension_points(fake_registry, name))
    assert cli("validate", str(good)) == 2
    assert "Plugin load error" in capsys.readouterr().out


def test_internal_error_exit_2_without_traceback(files, capsys, monkeypatch):
    good, _, _ = files
    import kschedfw.config.validate as v
    monkeypatch.setattr(v, "load_config_text", lambda *a: 1 / 0)
    assert cli("validate", str(good)) == 2
    err = capsys.readouterr().err
    assert err == "kschedfw validate: internal error: ZeroDivisionError: division by zero\n"


def test_stdin(monkeypatch, capsys):
    import io
    monkeypatch.setattr(sys, "stdin", io.StringIO(HEAD))
    assert cli("validate", "-") == 0
    assert capsys.readouterr().out.startswith("1 file checked: 1 valid")


def test_scheduler_plugins_samples_from_the_command_line(capsys):
    samples = sorted(str(p) for p in FIXTURES.glob("*.yaml"))
    assert cli("validate", *samples) == 1
    last = capsys.readouterr().out.splitlines()[-1]
    assert last.startswith("10 files checked: 3 valid, 7 invalid")


def test_schema_command_prints_the_schema_with_plugin_args(capsys):
    assert cli("schema") == 0
    schema = json.loads(capsys.readouterr().out)
    rules = schema["properties"]["profiles"]["items"]["properties"]["pluginConfig"]["items"]["allOf"]
    names = [r["if"]["properties"]["name"]["const"] for r in rules]
    assert "Coscheduling" in names and "NodeResourcesFit" in names and "PrioritySort" not in names


def test_schema_command_without_plugins(capsys):
    assert cli("schema", "--no-plugins") == 0
    assert "allOf" not in capsys.readouterr().out


def test_validate_does_not_import_jsonschema_for_simple_schemas(tmp_path):
    """Speed: the common path uses the built-in checker; jsonschema is imported only on demand."""
    code = ("import sys\n"
            "sys.path.insert(0, %r)\n"
            "from tests.config.fakes import FakeRegistry\n"
            "from kschedfw.config.validate import load_config_text\n"
            "cfg, d = load_config_text(%r, 'f', FakeRegistry())\n"
            "assert cfg is not None, d\n"
            "print('jsonschema' in sys.modules)\n") % (str(Path(__file__).parents[2]),
                                                       HEAD + "profiles:\n- pluginConfig:\n"
                                                              "  - name: NodeResourcesFit\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=tmp_path, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False"


def test_negative_score_weight_kube_scheduler_refuses_is_an_error(tmp_path, capsys):
    # kube-scheduler v1.36.2 exits: initializing profiles: creating profile for scheduler name
    # default-scheduler: score plugins: total score of Score plugins could overflow
    path = tmp_path / "negative.yaml"
    path.write_text(HEAD + "profiles:\n- plugins:\n    score:\n      enabled:\n"
                           "      - {name: ImageLocality, weight: -1}\n")
    assert cli("validate", str(path)) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith(f"{path}:7:39: profiles[0].plugins.score.enabled[0].weight: Invalid "
                             "value: -1: total score of Score plugins could overflow (kube-scheduler "
                             "refuses to start")
    assert out[1] == "1 file checked: 0 valid, 1 invalid (1 error)"


def test_ignored_extender_resource_needs_node_resources_fit_in_every_profile(tmp_path, capsys):
    # kube-scheduler v1.36.2 exits: couldn't build extenders: can't find NodeResourcesFitArgs in
    # plugin config
    path = tmp_path / "extender.yaml"
    path.write_text(HEAD + "extenders:\n- urlPrefix: http://127.0.0.1:1/x\n  filterVerb: filter\n"
                           "  managedResources: [{name: example.com/foo, ignoredByScheduler: true}]\n"
                           "profiles:\n- schedulerName: a\n- schedulerName: b\n  plugins:\n"
                           "    multiPoint:\n      disabled: [{name: NodeResourcesFit}]\n")
    assert cli("validate", str(path)) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith(f"{path}:9:3: profiles[1].pluginConfig: Invalid value: can't find "
                             "NodeResourcesFitArgs in plugin config (kube-scheduler refuses to "
                             "start (couldn't build extenders): extenders[0].managedResources[0]")
    assert out[1] == "1 file checked: 0 valid, 1 invalid (1 error)"
