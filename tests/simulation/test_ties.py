"""`Simulation(ties=...)`: how the cycle picks among the nodes with the best total score."""

from __future__ import annotations

import json

import pytest

from kschedfw.cli.main import main
from kschedfw.config.validate import default_config
from kschedfw.framework.registry import default_registry
from kschedfw.simulation import Simulation
from kschedfw.testing import make_node, make_pod

# identical nodes, not created in name order: the smallest name is neither first nor last
NAMES = ["n3", "n1", "n4", "n0", "n2", "n5"]


def chosen_node(seed, ties):
    registry = default_registry()
    objects = [make_node(name) for name in NAMES] + [make_pod("p", cpu="1")]
    result = Simulation(default_config(registry), registry, objects, seed=seed, ties=ties).run()
    (outcome,) = result.pods
    assert outcome.status == "Bound"
    return outcome.node


@pytest.mark.parametrize("seed", [0, 1, 2, 3, 7])
def test_ties_by_name_pick_the_smallest_name(seed):
    assert chosen_node(seed, "name") == "n0"


def test_default_ties_stay_random():
    assert len({chosen_node(seed, "random") for seed in range(10)}) > 1


def test_ties_by_name_follow_the_scores_first():
    """Ties only: the second pod goes to the emptiest node, the smallest name of the rest."""
    registry = default_registry()
    objects = [make_node(name) for name in NAMES] + [make_pod("a", cpu="1"), make_pod("b", cpu="1")]
    result = Simulation(default_config(registry), registry, objects, seed=5, ties="name").run()
    assert {p.key: p.node for p in result.pods} == {"default/a": "n0", "default/b": "n1"}


def test_unknown_ties_are_refused():
    registry = default_registry()
    with pytest.raises(ValueError, match="ties"):
        Simulation(default_config(registry), registry, [], ties="first")


def test_cli_ties(capsys, tmp_path):
    path = tmp_path / "cluster.yaml"
    nodes = "".join(f"- {{apiVersion: v1, kind: Node, metadata: {{name: {n}}}, "
                    f"status: {{allocatable: {{cpu: '4', memory: 8Gi, pods: '110'}}}}}}\n" for n in NAMES)
    path.write_text("apiVersion: v1\nkind: List\nitems:\n" + nodes +
                    "- {apiVersion: v1, kind: Pod, metadata: {name: p, namespace: default}, "
                    "spec: {containers: [{name: c, image: x}]}}\n")
    for seed in ("0", "4"):
        assert main(["simulate", str(path), "--ties", "name", "--seed", seed, "-o", "json"]) == 0
        (pod,) = json.loads(capsys.readouterr().out)["pods"]
        assert pod["node"] == "n0"
