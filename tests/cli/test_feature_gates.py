"""One FeatureGates value from the command line reaches config loading, validation and the Handle.

Upstream: VolumeBindingArgs.shape is only allowed with the alpha gate StorageCapacityScoring
(ValidateVolumeBindingArgs), and SetDefaults_VolumeBindingArgs fills the default shape when the
gate is on. kube-scheduler reads the gates from ``--feature-gates`` before it loads its config.
"""

from __future__ import annotations

from pathlib import Path

from kschedfw.config.validate import load_config_text
from kschedfw.fwk.features import FeatureGates
from kschedfw.framework.registry import default_registry
from kschedfw.testing.cli import run_cli
from tests.manifests import one_node_one_pod

SHAPE_CONFIG = """\
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  pluginConfig:
  - name: VolumeBinding
    args:
      shape:
      - {utilization: 0, score: 0}
      - {utilization: 100, score: 10}
"""

CLUSTER = one_node_one_pod()

GATE_OFF_MESSAGE = "unexpected field `shape`, remove it or turn on the feature gate StorageCapacityScoring"


def _files(tmp_path: Path) -> tuple[str, str]:
    cfg, cluster = tmp_path / "cfg.yaml", tmp_path / "cluster.yaml"
    cfg.write_text(SHAPE_CONFIG)
    cluster.write_text(CLUSTER)
    return str(cfg), str(cluster)


def test_simulate_passes_the_gates_to_config_validation(tmp_path):
    cfg, cluster = _files(tmp_path)
    result = run_cli("simulate", "--config", cfg, cluster, "-o", "json",
                     "--feature-gates", "StorageCapacityScoring=true")
    assert result.exit_code == 0, result.stderr
    assert result.json["pods"][0]["node"] == "n1"
    off = run_cli("simulate", "--config", cfg, cluster)
    assert off.exit_code == 1 and GATE_OFF_MESSAGE in off.stderr


def test_validate_takes_feature_gates(tmp_path):
    cfg, _ = _files(tmp_path)
    run_cli("validate", cfg, "--feature-gates", "StorageCapacityScoring=true").assert_ok()
    run_cli("validate", cfg).assert_invalid(GATE_OFF_MESSAGE)


def test_validate_rejects_bad_gates_as_simulate_does(tmp_path):
    cfg, cluster = _files(tmp_path)
    for command in (("validate", cfg), ("simulate", cluster)):
        result = run_cli(*command, "--feature-gates", "NoSuchGate=true")
        assert result.exit_code == 2
        assert f"kschedfw {command[0]}: --feature-gates: unrecognized feature gate: NoSuchGate" \
            in result.stderr
        result = run_cli(*command, "--feature-gates", "StorageCapacityScoring")
        assert result.exit_code == 2 and "expected NAME=true|false" in result.stderr


def test_gates_are_a_value_not_state():
    # loading with the gate on must not leak into a later load without it
    registry = default_registry()
    on = FeatureGates.parse("StorageCapacityScoring=true")
    config, _ = load_config_text(SHAPE_CONFIG, "cfg.yaml", registry, on)
    assert config is not None
    config, diags = load_config_text(SHAPE_CONFIG, "cfg.yaml", registry)
    assert config is None and any(GATE_OFF_MESSAGE in d.message for d in diags)


def test_gate_on_defaults_the_shape():
    # SetDefaults_VolumeBindingArgs: the default shape when the gate is on, none otherwise
    text = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
    on = FeatureGates.parse("StorageCapacityScoring=true")
    config, _ = load_config_text(text, "cfg.yaml", default_registry(), on)
    assert config.profiles[0].plugin_args["VolumeBinding"]["shape"] == [
        {"utilization": 0, "score": 10}, {"utilization": 100, "score": 0}]
    config, _ = load_config_text(text, "cfg.yaml", default_registry())
    assert "shape" not in config.profiles[0].plugin_args["VolumeBinding"]


def test_the_handle_sees_the_command_line_gates(tmp_path, monkeypatch):
    from kschedfw import simulation

    seen = []
    real = simulation.Simulation.__init__

    def spy(self, *args, **kwargs):
        real(self, *args, **kwargs)
        seen.append(self.scheduler)

    monkeypatch.setattr(simulation.Simulation, "__init__", spy)
    cfg, cluster = _files(tmp_path)
    run_cli("simulate", "--config", cfg, cluster,
            "--feature-gates", "StorageCapacityScoring=true").assert_ok()
    framework = seen[0].frameworks["default-scheduler"]
    assert framework.handle.feature_gates["StorageCapacityScoring"] is True
    assert framework.plugins["VolumeBinding"].enable_storage_capacity_scoring


def test_show_defaults_applies_the_gates(tmp_path):
    cfg = tmp_path / "cfg.yaml"
    cfg.write_text("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n")

    def volume_binding_args(*gates: str) -> dict:
        import yaml
        out = run_cli("validate", str(cfg), "--show-defaults", *gates).assert_ok().stdout
        [profile] = yaml.safe_load(out)["profiles"]
        return next(c["args"] for c in profile["pluginConfig"] if c["name"] == "VolumeBinding")

    assert volume_binding_args("--feature-gates", "StorageCapacityScoring=true")["shape"] == [
        {"utilization": 0, "score": 10}, {"utilization": 100, "score": 0}]
    assert "shape" not in volume_binding_args()


def test_run_passes_the_gates_to_config_validation(tmp_path):
    # kschedfw run reads its config as kube-scheduler does: after the gates. Without a gate the
    # config is refused (exit 1) before any API server is asked; with it, loading goes on to the
    # credentials, which are missing here (exit 2).
    cfg, _ = _files(tmp_path)
    off = run_cli("run", "--config", cfg, "--kubeconfig", str(tmp_path / "absent"))
    assert off.exit_code == 1 and GATE_OFF_MESSAGE in off.stderr
    on = run_cli("run", "--config", cfg, "--kubeconfig", str(tmp_path / "absent"),
                 "--feature-gates", "StorageCapacityScoring=true")
    assert on.exit_code == 2 and GATE_OFF_MESSAGE not in on.stderr and "absent" in on.stderr
