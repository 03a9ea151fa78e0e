"""A plugin shipped as its own package: installed with pip, found through its entry point,
configured in a profile, its args checked by its own schema.

Hermetic: pip installs the package into a temporary target directory (never into the running
interpreter), and the CLI runs in a subprocess with that directory on its path.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

PLUGIN_SOURCE = '''
from kschedfw import Status, hookimpl
from kschedfw.api.field import FieldError, INVALID


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


def kschedfw(*args, site):
    """``kschedfw ARGS`` in a subprocess that sees the packages installed in ``site``."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(ROOT), os.environ.get("PYTHONPATH", "")])}
    return subprocess.run([sys.executable, "-m", "kschedfw.cli.main", *args], capture_output=True, text=True,
                          env=env, timeout=120)


@pytest.fixture(scope="module")
def installed_plugin(tmp_path_factory):
    """The site directory the package was pip-installed into."""
    src = tmp_path_factory.mktemp("zone-quota")
    site = tmp_path_factory.mktemp("site")
    (src / "pyproject.toml").write_text(PYPROJECT)
    (src / "zone_quota_plugin.py").write_text(PLUGIN_SOURCE)
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "--quiet", "--no-cache-dir"]
    done = subprocess.run([*pip, "install", "--target", str(site), "--no-build-isolation", "--no-deps", str(src)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    yield site
    shutil.rmtree(site)
    shutil.rmtree(src)


def test_install_left_the_running_interpreter_alone(installed_plugin):
    from importlib.metadata import PackageNotFoundError, distribution
    with pytest.raises(PackageNotFoundError):
        distribution("kschedfw-zone-quota-test")
    assert (installed_plugin / "zone_quota_plugin.py").exists()


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
    done = kschedfw("plugins", "--output", "json", site=installed_plugin)
    assert done.returncode == 0, done.stderr
    row = next(r for r in json.loads(done.stdout) if r["name"] == "ZoneQuota")
    assert row["distribution"] == "kschedfw-zone-quota-test"
    assert row["version"] == "0.3.1"
    assert row["extension_points"] == ["filter", "score"]
    assert row["args"] == {"blockedZones": [], "weightPerPod": 1}
    assert row["status"] == "ok"


def test_accepted_in_a_profile(installed_plugin, tmp_path):
    done = kschedfw("validate", str(write_config(tmp_path, "blockedZones: [zone-a]")), site=installed_plugin)
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
    done = kschedfw("validate", str(write_config(tmp_path, args_yaml)), site=installed_plugin)
    assert done.returncode == 1, done.stdout + done.stderr
    assert expected in done.stdout
