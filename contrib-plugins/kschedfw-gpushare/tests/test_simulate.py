"""The installed package through kschedfw: entry points, `kschedfw validate` on the profiles
and their args, `kschedfw simulate` with each policy (the devices PreBind writes on the pods),
and the device state after a deletion."""

from __future__ import annotations

import json
from importlib.metadata import entry_points
from pathlib import Path

import pytest
import yaml

from kschedfw.testing import contract_problems, run_cli

import kschedfw_gpushare
from kschedfw_gpushare.resources import GPU_INDEX, pod_gpu_milli_total

DATA = Path(__file__).parent / "data"
CLUSTER = DATA / "cluster.yaml"
FGD_PROFILE = DATA / "fgd-profile.yaml"
TYPICAL = [{"cpuMilli": 4000, "gpuMilli": 500, "gpuNumber": 1, "gpuType": "", "probability": 0.6},
           {"cpuMilli": 16000, "gpuMilli": 1000, "gpuNumber": 2, "gpuType": "", "probability": 0.4}]
# policy plugin -> (Open-Gpu-Share's gpuSelMethod, the policy's args), as the paper's runs set them
POLICIES = {
    "RandomScore": ("random", {"seed": 1}),
    "DotProductScore": ("best", {"dimExtMethod": "merge", "normMethod": "max"}),
    "GpuClusteringScore": ("best", {}),
    "GpuPackingScore": ("best", {}),
    "BestFitScore": ("best", {}),
    "FGDScore": ("FGDScore", {"typicalPods": TYPICAL}),
}
PLUGINS = ["Open-Gpu-Share", *POLICIES]


def profile(policy: str) -> dict:
    method, args = POLICIES[policy]
    return {
        "apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
        "percentageOfNodesToScore": 100,
        "profiles": [{
            "schedulerName": "default-scheduler",
            "plugins": {"multiPoint": {"enabled": [{"name": "Open-Gpu-Share"}]},
                        "preScore": {"enabled": [{"name": policy}] if policy == "RandomScore" else []},
                        "score": {"disabled": [{"name": "*"}], "enabled": [{"name": policy, "weight": 1000}]}},
            "pluginConfig": [{"name": "Open-Gpu-Share", "args": {"gpuSelMethod": method, "seed": 7,
                                                                  "typicalPods": TYPICAL}},
                             {"name": policy, "args": args}]}]}


def write(tmp_path: Path, name: str, document: dict) -> Path:
    path = tmp_path / name
    path.write_text(yaml.safe_dump(document))
    return path


def test_entry_points():
    found = {ep.name: ep for ep in entry_points(group="kschedfw.plugins") if ep.dist.name == "kschedfw-gpushare"}
    assert sorted(found) == sorted(PLUGINS)
    for name, ep in found.items():
        assert ep.load().name == name


def test_plugins_keep_the_contract():
    for cls in (kschedfw_gpushare.RandomScore, kschedfw_gpushare.DotProductScore, kschedfw_gpushare.GpuClusteringScore,
                kschedfw_gpushare.GpuPackingScore, kschedfw_gpushare.BestFitScore):
        assert contract_problems(cls) == [], cls.name
    assert contract_problems(kschedfw_gpushare.FGDScore, args={"typicalPods": TYPICAL}) == []
    # the simulator's name, kept so its configurations read as they are
    assert contract_problems(kschedfw_gpushare.OpenGpuShare) == [
        "name 'Open-Gpu-Share' should be CamelCase, as upstream plugin names are"]


def test_the_sample_profile_validates(capsys):
    code, out = run_cli("validate", str(FGD_PROFILE)).outcome
    assert code == 0, out


@pytest.mark.parametrize("plugin, args, expected", [
    ("Open-Gpu-Share", {"gpuSelMethod": "first"},
     'args.gpuSelMethod: Unsupported value: "first": supported values: "best", "worst", "random", "FGDScore"'),
    ("Open-Gpu-Share", {"gpuSelMethod": "FGDScore"}, "args.typicalPods: Required value"),
    ("FGDScore", {}, "args.typicalPods: Required value"),
    ("FGDScore", {"typicalPods": [dict(TYPICAL[0], probability=0.5)]},
     "args.typicalPods: Invalid value: \"1 pods\": probabilities must sum to 1, they sum to 0.5"),
    ("DotProductScore", {"dimExtMethod": "extend"}, 'args.dimExtMethod: Unsupported value: "extend"'),
    ("RandomScore", {"seed": "x"}, 'args.seed: Invalid value: "x": expected integer'),
])
def test_invalid_args_are_reported(tmp_path, capsys, plugin, args, expected):
    document = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
                "profiles": [{"schedulerName": "default-scheduler",
                              "plugins": {"multiPoint": {"enabled": [{"name": plugin}]}},
                              "pluginConfig": [{"name": plugin, "args": args}]}]}
    code, out = run_cli("validate", str(write(tmp_path, "cfg.yaml", document))).outcome
    assert code == 1, out
    assert expected in out


def simulate(tmp_path: Path, config: Path, *inputs: Path) -> tuple[dict, dict]:
    written = tmp_path / "out.yaml"
    code, out = run_cli("simulate", "--config", str(config), "--output", "json", "--write-out", str(written),
                        *map(str, inputs)).outcome
    assert code == 0, out
    outcomes = {p["pod"].split("/")[1]: (p["status"], p["node"]) for p in json.loads(out)["pods"]}
    objects = {o["metadata"]["name"]: o for o in yaml.safe_load(written.read_text())["items"]}
    return outcomes, objects


def devices_in_use(objects: dict) -> dict[tuple[str, int], int]:
    """(node, device) -> milli of the bound pods, from the gpu-index PreBind wrote."""
    used: dict[tuple[str, int], int] = {}
    for obj in objects.values():
        if obj["kind"] != "Pod" or not obj["spec"].get("nodeName"):
            continue
        annotations = obj["metadata"].get("annotations") or {}
        total = pod_gpu_milli_total(obj)
        if total == 0:
            assert GPU_INDEX not in annotations
            continue
        index = [int(d) for d in annotations[GPU_INDEX].split("-")]
        assert len(index) == int(annotations["alibabacloud.com/gpu-count"])
        for d in index:
            key = (obj["spec"]["nodeName"], d)
            used[key] = used.get(key, 0) + total // len(index)
    return used


@pytest.mark.parametrize("policy", POLICIES)
def test_simulate_with_each_policy(tmp_path, capsys, policy):
    outcomes, objects = simulate(tmp_path, write(tmp_path, "cfg.yaml", profile(policy)), CLUSTER)
    bound = {name for name, (status, _) in outcomes.items() if status == "Bound"}
    assert {"cpu-only", "share-a", "share-b", "whole-2"} <= bound
    assert outcomes["too-big"][0] == "Pending"
    gpus = {"g2-8": 8, "t4-2": 2}
    used = devices_in_use(objects)
    assert all(0 <= d < gpus[node] and milli <= 1000 for (node, d), milli in used.items()), used
    assert sum(used.values()) == sum(pod_gpu_milli_total(objects[name]) for name in bound)


def test_fgd_profile_places_and_records_devices(tmp_path, capsys):
    outcomes, objects = simulate(tmp_path, FGD_PROFILE, CLUSTER)
    assert outcomes["share-a"] == ("Bound", "g2-8") and outcomes["share-b"] == ("Bound", "g2-8")
    notes = {name: (objects[name]["metadata"].get("annotations") or {}).get(GPU_INDEX) for name in objects}
    assert notes["share-a"] == notes["share-b"] == "0"  # FGD packs the two shares on one device
    assert outcomes["whole-2"] == ("Bound", "t4-2") and notes["whole-2"] == "0-1"


def test_a_deleted_pod_frees_its_device(tmp_path, capsys):
    outcomes, objects = simulate(tmp_path, write(tmp_path, "cfg.yaml", profile("BestFitScore")),
                                 DATA / "delete-scenario.yaml")
    assert (outcomes["b"], outcomes["c"]) == (("Bound", "a10-1"), ("Bound", "a10-1"))
    assert "a" not in objects
    assert objects["c"]["metadata"]["annotations"][GPU_INDEX] == "0"
    assert devices_in_use(objects) == {("a10-1", 0): 800}


def test_one_feasible_node_is_not_scored(tmp_path):
    """As upstream (and the simulator), a single feasible node is taken without scoring, so
    RandomScore draws nothing for it; with two, it draws once."""
    import random

    from kschedfw.plugins.defaultbinder import DefaultBinder
    from kschedfw.plugins.noderesources.fit import NodeResourcesFit
    from kschedfw.plugins.queuesort import PrioritySort
    from kschedfw.testing import simulate_with

    from gpukit import gpu_node, gpu_pod

    classes = [PrioritySort, NodeResourcesFit, kschedfw_gpushare.OpenGpuShare, kschedfw_gpushare.RandomScore,
               DefaultBinder]
    only_t4 = [gpu_node("g2", 8), gpu_node("t4", 2, "T4"), gpu_pod("p", 1000, model="T4")]
    result = simulate_with(classes, only_t4, args={"RandomScore": {"seed": 9}})
    assert [(o.status, o.node) for o in result.pods] == [("Bound", "t4")]
    plugin = result.scheduler.frameworks["default-scheduler"].plugins["RandomScore"]
    assert plugin.rng.getstate() == random.Random(9).getstate()
    either = [gpu_node("g2", 8), gpu_node("t4", 2, "T4"), gpu_pod("p", 1000)]
    result = simulate_with(classes, either, args={"RandomScore": {"seed": 9}})
    plugin = result.scheduler.frameworks["default-scheduler"].plugins["RandomScore"]
    drawn = random.Random(9)
    drawn.randrange(2)
    assert plugin.rng.getstate() == drawn.getstate()
