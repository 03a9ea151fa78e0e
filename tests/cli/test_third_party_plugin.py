"""A plugin shipped as its own package: installed with pip, found through its entry point,
configured in a profile, its args checked by its own schema."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

PLUGIN_SOURCE = '''
from kschedfw import Status, hookimpl
from kschedfw.errors import FieldError, INVALID


class ZoneQuota:
    """Rejects nodes in zones listed in args.blockedZones."""

    name = "ZoneQuota"
    args_schema = {
        "type": "object",
        "properties": {
            "blockedZones": {"type": "array", "items": {"type": "string"}, "default": []},
            "weightPerPod": {"type": "integer", "minimum": 1, "default": 1},
        },
        "additionalProperties": False,
    }

    @staticmethod
    def validate_args(args):
        if "forbidden" in args.get("blockedZones", []):
            return [FieldError(("blockedZones",), INVALID, "zone name is reserved", "forbidden")]
        return []

    def __init__(self, args, handle):
        self.blocked = set(args["blockedZones"])

    @hookimpl
    def filter(self, state, pod, node_info):
        zone = node_info.node.labels.get("topology.kubernetes.io/zone", "")
        if zone in self.blocked:
            return Status.unresolvable("node(s) are in a blocked zone")

    @hookimpl
    def score(self, state, pod, node_info):
        return 50
'''

PYPROJECT = '''
[build-system]
requires = ["setuptools>=61"]
build-backend = "setuptools.build_meta"

[project]
name = "kschedfw-zone-quota-test"
version = "0.3.1"

[project.entry-points."kschedfw.plugins"]
ZoneQuota = "zone_quota_plugin:ZoneQuota"

[tool.setuptools]
py-modules = ["zone_quota_plugin"]
'''


def kschedfw(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "kschedfw.cli.main", *args], capture_output=True, text=True,
                          cwd=cwd, timeout=120)


@pytest.fixture(scope="module")
def installed_plugin(tmp_path_factory):
    src = tmp_path_factory.mktemp("zone-quota")
    (src / "pyproject.toml").write_text(PYPROJECT)
    (src / "zone_quota_plugin.py").write_text(PLUGIN_SOURCE)
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "--quiet"]
    done = subprocess.run([*pip, "install", "--no-build-isolation", "--no-deps", str(src)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    yield src
    subprocess.run([*pip, "uninstall", "--yes", "kschedfw-zone-quota-test"], capture_output=True, timeout=300)


def write_config(tmp_path, args_yaml):
    path = tmp_path / "cfg.yaml"
    path.write_text(textwrap.dedent(f"""\
        apiVersion: kubescheduler.config.k8s.io/v1
        kind: KubeSchedulerConfiguration
        profiles:
        - schedulerName: zoned
          plugins:
            multiPoint:
              enabled:
              - name: ZoneQuota
                weight: 3
          pluginConfig:
          - name: ZoneQuota
            args:
        {textwrap.indent(args_yaml, "      ")}
        """))
    return path


def test_listed_by_kschedfw_plugins(installed_plugin):
    done = kschedfw("plugins", "--output", "json")
    assert done.returncode == 0, done.stderr
    row = next(r for r in json.loads(done.stdout) if r["name"] == "ZoneQuota")
    assert row["distribution"] == "kschedfw-zone-quota-test"
    assert row["version"] == "0.3.1"
    assert row["extension_points"] == ["filter", "score"]
    assert row["args"] == {"blockedZones": [], "weightPerPod": 1}
    assert row["status"] == "ok"


def test_accepted_in_a_profile(installed_plugin, tmp_path):
    done = kschedfw("validate", str(write_config(tmp_path, "blockedZones: [zone-a]")))
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.parametrize("args_yaml, expected", [
    pytest.param("weightPerPod: 0", "cfg.yaml:13:21: profiles[0].pluginConfig[0].args.weightPerPod: Invalid value: 0",
                 id="schema-minimum"),
    pytest.param("blockedZonez: [a]", 'profiles[0].pluginConfig[0].args.blockedZonez', id="unknown-field"),
    pytest.param("blockedZones: [forbidden]",
                 'profiles[0].pluginConfig[0].args.blockedZones: Invalid value: "forbidden": zone name is reserved',
                 id="validate-args"),
])
def test_rejected_with_a_precise_message(installed_plugin, tmp_path, args_yaml, expected):
    done = kschedfw("validate", str(write_config(tmp_path, args_yaml)))
    assert done.returncode == 1, done.stdout + done.stderr
    assert expected in done.stdout
