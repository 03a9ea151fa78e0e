"""PlacementLabelPreference: its hooks on their own, and, installed, in a profile's
``plugins.placementScore`` choosing a pod group's placement in a simulation with the
workload-aware gates on."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from kschedfw_example_plugin import PlacementLabelPreference

from kschedfw import PlacementScore
from kschedfw.fwk.podgroup import Placement, PodGroupAssignments
from kschedfw.fwk.types import NodeInfo
from kschedfw.testing import contract_problems, make_node

DATA = Path(__file__).parent / "data"
GATES = "GenericWorkload=true,GangScheduling=true,TopologyAwareWorkloadScheduling=true"


def kschedfw(*args):
    return subprocess.run([sys.executable, "-m", "kschedfw.cli.main", *map(str, args)],
                          check=False, capture_output=True, text=True, timeout=120)


def placement(name, *racks):
    return PodGroupAssignments(Placement(name, [NodeInfo(node=make_node(f"{name}-{i}", labels={"rack": rack}))
                                                for i, rack in enumerate(racks)]))


def test_keeps_the_plugin_contract():
    assert contract_problems(PlacementLabelPreference) == []


def test_a_placement_scores_the_rank_of_the_value_all_its_nodes_share():
    plugin = PlacementLabelPreference({"labelKey": "rack", "preferredValues": ["r2", "r1"]}, None)
    assert plugin.score_placement(placement("p", "r2", "r2")) == 2
    assert plugin.score_placement(placement("p", "r1")) == 1
    assert plugin.score_placement(placement("p", "r3")) == 0
    assert plugin.score_placement(placement("p", "r1", "r2")) == 0  # no one shared value


def test_normalizing_gives_the_most_preferred_placement_present_the_max_score():
    plugin = PlacementLabelPreference({"labelKey": "rack", "preferredValues": ["r2", "r1"]}, None)
    scores = [PlacementScore(score=1), PlacementScore(score=0)]
    plugin.normalize_placement_score(scores)
    assert [s.score for s in scores] == [100, 0]
    nothing = [PlacementScore(score=0)]
    plugin.normalize_placement_score(nothing)
    assert [s.score for s in nothing] == [0]


def test_found_through_its_entry_point_as_a_placement_score_plugin():
    done = kschedfw("plugins", "--output", "json")
    assert done.returncode == 0, done.stderr
    row = next(r for r in json.loads(done.stdout) if r["name"] == "PlacementLabelPreference")
    assert row["distribution"] == "kschedfw-example-plugin"
    assert row["status"] == "ok"
    assert set(row["extension_points"]) == {"score_placement", "normalize_placement_score"}


def placements(*config):
    done = kschedfw("simulate", *config, DATA / "racks-gang.yaml", "--feature-gates", GATES, "--output", "json")
    assert done.returncode == 0, done.stdout + done.stderr
    return sorted(p["node"] for p in json.loads(done.stdout)["pods"])


def test_enabled_in_placement_score_it_moves_the_gang_to_the_preferred_rack():
    """Both racks hold the gang of 4. The default placement scorers choose rack-1, whose nodes
    the gang fills (NodeResourcesFit's MostAllocated; PodGroupPodsCount ties); with
    PlacementLabelPreference at weight 10 preferring rack-2, the gang goes to rack-2."""
    assert placements() == ["r1-a", "r1-a", "r1-b", "r1-b"]
    assert placements("--config", DATA / "placement-label-preference.yaml") == ["r2-a", "r2-a", "r2-b", "r2-b"]


def test_its_profile_is_valid():
    done = kschedfw("validate", DATA / "placement-label-preference.yaml")
    assert done.returncode == 0, done.stdout + done.stderr
