"""The installed package seen from the command line, as a user meets it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

DATA = Path(__file__).parent / "data"


def kschedfw(*args):
    return subprocess.run([sys.executable, "-m", "kschedfw.cli.main", *map(str, args)],
                          capture_output=True, text=True, timeout=120)


def test_found_through_its_entry_point():
    done = kschedfw("plugins", "--output", "json")
    assert done.returncode == 0, done.stderr
    row = next(r for r in json.loads(done.stdout) if r["name"] == "NodeLabelPreference")
    assert row["distribution"] == "kschedfw-example-plugin"
    assert row["status"] == "ok"
    assert set(row["extension_points"]) == {"filter", "score", "normalize_score", "events_to_register"}
    assert row["args"] == {"labelKey": "topology.kubernetes.io/zone", "preferredValues": [], "requireMatch": False}


def test_sample_configuration_is_valid():
    done = kschedfw("validate", DATA / "node-label-preference.yaml")
    assert done.returncode == 0, done.stdout + done.stderr


def test_bad_args_are_reported_with_file_line_and_field(tmp_path):
    cfg = tmp_path / "cfg.yaml"
    text = (DATA / "node-label-preference.yaml").read_text()
    cfg.write_text(text.replace("preferredValues: [zone-a, zone-b]", "preferredValues: [zone-a, zone-a]"))
    done = kschedfw("validate", cfg)
    assert done.returncode == 1
    assert 'cfg.yaml:15:' in done.stdout
    assert 'profiles[0].pluginConfig[0].args.preferredValues[1]: Duplicate value: "zone-a"' in done.stdout


def test_simulate_places_pods_by_preference():
    done = kschedfw("simulate", "--config", DATA / "node-label-preference.yaml", DATA / "zones-cluster.yaml",
                    "--output", "json")
    assert done.returncode == 0, done.stderr
    nodes = [p["node"] for p in json.loads(done.stdout)["pods"]]
    assert sorted(nodes) == ["node-a", "node-a", "node-b", "node-b", "node-c"]
