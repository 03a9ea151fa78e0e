"""The installed distribution seen from the command line: listed, configured, simulated."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from cosched_testlib import DATA

SAMPLE = DATA / "coscheduling__scheduler-config.yaml"
#: The repository's profile, when the tests run from a checkout (they may run from an sdist too).
REPO_PROFILE = Path(__file__).resolve().parents[3] / "profiles" / "gang-scheduling.yaml"


def kschedfw(*args):
    return subprocess.run([sys.executable, "-m", "kschedfw.cli.main", *map(str, args)],
                          capture_output=True, text=True, timeout=120)


def test_listed_by_kschedfw_plugins():
    done = kschedfw("plugins", "--output", "json")
    assert done.returncode == 0, done.stderr
    row = next(r for r in json.loads(done.stdout) if r["name"] == "Coscheduling")
    assert row["distribution"] == "kschedfw-coscheduling"
    assert row["status"] == "ok"
    assert set(row["extension_points"]) >= {"less", "pre_filter", "post_filter", "reserve", "unreserve", "permit",
                                            "events_to_register"}
    assert row["args"] == {"permitWaitingTimeSeconds": 60, "podGroupBackoffSeconds": 0,
                           "podGroupRejectPercentage": 10}


def test_upstream_sample_configuration_is_valid():
    done = kschedfw("validate", SAMPLE)
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.skipif(not REPO_PROFILE.is_file(), reason="not running from a kschedfw checkout")
def test_gang_scheduling_profile_is_valid():
    done = kschedfw("validate", REPO_PROFILE)
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.parametrize("args, expected", [
    pytest.param("permitWaitingTimeSeconds: -1",
                 "profiles[0].pluginConfig[0].args.permitWaitingTimeSeconds: Invalid value: -1: must be greater than 0",
                 id="negative-timeout"),
    pytest.param("podGroupBackoffSeconds: -5",
                 "profiles[0].pluginConfig[0].args.podGroupBackoffSeconds: Invalid value: -5: must be greater than 0",
                 id="negative-backoff"),
    pytest.param("podGroupRejectPercentage: 101",
                 "profiles[0].pluginConfig[0].args.podGroupRejectPercentage: Invalid value: 101: "
                 "must be between 0 and 100", id="percentage"),
    pytest.param("permitWaitingTimeSecond: 10", "profiles[0].pluginConfig[0].args.permitWaitingTimeSecond",
                 id="unknown-field"),
])
def test_invalid_args_are_reported_at_their_field(tmp_path, args, expected):
    cfg = tmp_path / "cfg.yaml"
    cfg.write_text(textwrap.dedent("""\
        apiVersion: kubescheduler.config.k8s.io/v1
        kind: KubeSchedulerConfiguration
        profiles:
        - schedulerName: default-scheduler
          plugins:
            multiPoint:
              enabled:
              - name: Coscheduling
            queueSort:
              enabled:
              - name: Coscheduling
              disabled:
              - name: "*"
          pluginConfig:
          - name: Coscheduling
            args:
              {args}
        """).format(args=args))
    done = kschedfw("validate", cfg)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "cfg.yaml:17:" in done.stdout and expected in done.stdout


def simulate(*inputs):
    done = kschedfw("simulate", "--config", SAMPLE, *inputs, "--output", "json")
    assert done.returncode == 0, done.stderr
    return {p["pod"]: p for p in json.loads(done.stdout)["pods"]}


def test_simulate_scenario_binds_the_gang_once_a_node_arrives():
    pods = simulate(DATA / "gang-scenario.yaml")
    assert {k: p["status"] for k, p in pods.items()} == {k: "Bound" for k in pods}
    assert len([k for k in pods if k.startswith("default/trainer-")]) == 8


def test_simulate_without_room_binds_nobody_of_the_gang():
    pods = simulate(DATA / "gang-cluster.yaml")
    gang = {k: p for k, p in pods.items() if k.startswith("default/trainer-")}
    web = {k: p for k, p in pods.items() if k.startswith("default/web-")}
    assert len(gang) == 8 and {p["status"] for p in gang.values()} == {"Pending"}
    assert len(web) == 4 and {p["status"] for p in web.values()} == {"Bound"}
