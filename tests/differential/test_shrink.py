"""The shrinker, with cheap stand-ins for the real "kschedfw and kube-scheduler disagree" check."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable

import yaml

from tests.differential.generate import generate
from tests.differential.scenario import Scenario
from tests.differential.shrink import shrink


def pod(s: Scenario, name: str) -> dict[str, Any] | None:
    return next((p for p in s.pods if p["metadata"]["name"] == name), None)


def node(s: Scenario, name: str) -> dict[str, Any] | None:
    return next((o for o in s.objects if o["kind"] == "Node" and o["metadata"]["name"] == name), None)


class Recorder:
    """Wraps a predicate: counts calls, notes repeated candidates and candidates a real API
    server or kube-scheduler would refuse for what they refer to."""

    def __init__(self, predicate: Callable[[Scenario], bool]) -> None:
        self.predicate = predicate
        self.seen: list[str] = []
        self.broken: list[str] = []

    def __call__(self, s: Scenario) -> bool:
        self.seen.append(json.dumps([s.config, s.objects, s.pods], sort_keys=True))
        names = {o["metadata"]["name"] for o in s.objects}
        profiles = {p["schedulerName"] for p in s.config["profiles"]}
        for p in s.pods:
            spec = p["spec"]
            missing = [spec[f] for f in ("priorityClassName", "runtimeClassName", "nodeName")
                       if f in spec and spec[f] not in names]
            if missing or spec["schedulerName"] not in profiles or not spec["containers"]:
                self.broken.append(f"{p['metadata']['name']}: {missing} {spec['schedulerName']}")
            affinity = spec.get("affinity")
            required = (affinity or {}).get("nodeAffinity", {}).get("requiredDuringSchedulingIgnoredDuringExecution")
            if affinity == {} or required is not None and not required.get("nodeSelectorTerms"):
                self.broken.append(f"{p['metadata']['name']}: empty affinity {affinity}")
        return self.predicate(s)

    @property
    def calls(self) -> int:
        return len(self.seen)


def a_pod_with(s: Scenario, field: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
    return next(p for p in s.pods if not p["spec"].get("nodeName") and field(p["spec"]))


def test_one_pods_anti_affinity_on_one_tainted_node_shrinks_to_just_those() -> None:
    s = generate(4, "variants")  # 30 pods, 10 nodes
    target = a_pod_with(s, lambda spec: "podAntiAffinity" in spec.get("affinity", {}))
    tainted = next(o for o in s.objects if o["kind"] == "Node" and o["spec"].get("taints"))
    name, node_name, taint = target["metadata"]["name"], tainted["metadata"]["name"], tainted["spec"]["taints"][0]

    def differs(c: Scenario) -> bool:
        p, n = pod(c, name), node(c, node_name)
        return bool(p and n and "podAntiAffinity" in p["spec"].get("affinity", {})
                    and taint in n["spec"].get("taints", []))

    check = Recorder(differs)
    small = shrink(s, check, budget_s=60)
    assert differs(small)
    assert [p["metadata"]["name"] for p in small.pods] == [name]
    spec = small.pods[0]["spec"]
    assert set(spec) == {"schedulerName", "terminationGracePeriodSeconds", "containers", "affinity"}
    assert set(spec["affinity"]) == {"podAntiAffinity"} and len(spec["containers"]) == 1
    anti = spec["affinity"]["podAntiAffinity"]
    assert sum(len(terms) for terms in anti.values()) == 1  # one term of one kind is enough
    assert "resources" not in spec["containers"][0] and "labels" not in small.pods[0]["metadata"]
    assert small.config["profiles"] == [{"schedulerName": target["spec"]["schedulerName"]}]
    assert [o["metadata"] for o in small.objects] == [
        {"name": target["metadata"]["namespace"]}, {"name": node_name, "labels": {"kubernetes.io/hostname": node_name}}]
    assert node(small, node_name)["spec"] == {"taints": [taint]}  # type: ignore[index]
    assert check.broken == []
    assert len(set(check.seen)) == check.calls  # no candidate asked twice
    assert check.calls < 250, check.calls


def test_every_pod_a_difference_depends_on_is_kept() -> None:
    s = generate(5, "default")
    pending = [p["metadata"]["name"] for p in s.pods if not p["spec"].get("nodeName")]
    first, second = pending[1], pending[-2]
    check = Recorder(lambda c: pod(c, first) is not None and pod(c, second) is not None)
    small = shrink(s, check, budget_s=60)
    assert [p["metadata"]["name"] for p in small.pods] == [first, second]  # arrival order kept
    assert not any(o["kind"] == "Node" for o in small.objects)
    assert check.broken == []


def test_a_bound_pod_goes_with_its_node_and_stays_while_it_matters() -> None:
    s = generate(5, "default")
    bound = next(p for p in s.pods if p["spec"].get("nodeName"))
    name, node_name = bound["metadata"]["name"], bound["spec"]["nodeName"]
    check = Recorder(lambda c: pod(c, name) is not None)
    small = shrink(s, check, budget_s=60)
    assert [p["metadata"]["name"] for p in small.pods] == [name]
    assert [o["metadata"]["name"] for o in small.objects if o["kind"] == "Node"] == [node_name]
    assert check.broken == []


def test_config_fields_and_profiles_shrink_to_the_one_that_matters() -> None:
    s = next(c for c in (generate(seed, "variants") for seed in range(30)) if len(c.config["profiles"]) > 1
             and any(pc["name"] == "NodeResourcesFit"
                     and pc["args"]["scoringStrategy"]["type"] == "MostAllocated"
                     and len(pc["args"]["scoringStrategy"]["resources"]) > 1
                     for p in c.config["profiles"][1:] for pc in p["pluginConfig"]))

    def most_allocated(c: Scenario) -> bool:
        return any(pc["name"] == "NodeResourcesFit" and pc["args"]["scoringStrategy"]["type"] == "MostAllocated"
                   for p in c.config["profiles"] for pc in p.get("pluginConfig", []))

    check = Recorder(most_allocated)
    small = shrink(s, check, budget_s=60)
    assert small.pods == () and small.objects == ()
    [profile] = small.config["profiles"]
    [entry] = profile["pluginConfig"]
    assert entry["name"] == "NodeResourcesFit" and len(entry["args"]["scoringStrategy"]["resources"]) == 1
    assert set(profile) == {"schedulerName", "pluginConfig"}
    assert check.broken == []


def test_the_budget_bounds_the_time_spent() -> None:
    s = generate(3, "variants")

    def slow(c: Scenario) -> bool:
        time.sleep(0.05)
        return len(c.pods) >= 3

    started = time.monotonic()
    small = shrink(s, slow, budget_s=0.5)
    assert time.monotonic() - started < 0.5 + 0.5  # the last call may start just before the end
    assert len(small.pods) >= 3 and len(small.pods) < len(s.pods)  # some progress, still differs


def test_a_candidate_whose_check_fails_counts_as_not_differing() -> None:
    s = generate(4, "default")
    keep = s.pods[-1]["metadata"]["name"]

    def flaky(c: Scenario) -> bool:
        if len(c.pods) == 0:
            raise RuntimeError("the API server refused it")
        return pod(c, keep) is not None

    small = shrink(s, flaky, budget_s=60)
    assert [p["metadata"]["name"] for p in small.pods] == [keep]


def test_a_shrunk_scenario_still_simulates_without_rejections(tmp_path: Path) -> None:
    s = generate(1, "variants")
    names = [p["metadata"]["name"] for p in s.pods if p["spec"].get("affinity")][:2]
    small = shrink(s, lambda c: all(pod(c, n) is not None and pod(c, n)["spec"].get("affinity")  # type: ignore[index]
                                    for n in names), budget_s=60)
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(small.config))
    (tmp_path / "cluster.yaml").write_text(yaml.safe_dump(small.to_list()))
    run = subprocess.run([sys.executable, "-m", "kschedfw.cli.main", "simulate", "-o", "json", "--config",
                          str(tmp_path / "config.yaml"), str(tmp_path / "cluster.yaml")],
                         capture_output=True, text=True, cwd=Path(__file__).parents[2], timeout=60)
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout)["rejected"] == []
