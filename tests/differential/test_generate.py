"""The fuzzer's generator: deterministic per (seed, kind), covering each feature of
CONFIG_FEATURES and CLUSTER_FEATURES at least twice across seeds 0-29 of each kind, and making only
what kschedfw, kube-scheduler and a real API server accept."""

from __future__ import annotations

import collections
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from kschedfw.testing.controlplane import APIError, ControlPlane, find_assets
from tests.differential.generate import generate
from tests.differential.scenario import NAMESPACES, Scenario

SEEDS = range(30)

CONFIG_FEATURES = {
    "default": {"one default profile"},
    "variants": {"MostAllocated", "RequestedToCapacityRatio", "scoring extended resource", "score weights",
                 "score plugin disabled", "List default spreading", "addedAffinity", "hardPodAffinityWeight",
                 "BalancedAllocation resources", "several profiles"},
}
CLUSTER_FEATURES = {
    "node extended resource", "node ephemeral-storage", "zone label", "region label", "custom label",
    "taint NoSchedule", "taint PreferNoSchedule", "taint NoExecute", "node images", "unschedulable node",
    "allocatable below capacity",
    "several containers", "init container", "sidecar", "RuntimeClass overhead", "pod-level requests",
    "pod-level limits", "limits", "no requests", "extended resource request", "host port", "hostNetwork",
    "nodeSelector", "node affinity required", "node affinity preferred", "node affinity matchFields",
    "pod affinity required", "pod affinity preferred", "pod anti-affinity required",
    "pod anti-affinity preferred", "term namespaces", "term namespaceSelector", "term matchLabelKeys",
    "term mismatchLabelKeys", "spread DoNotSchedule", "spread ScheduleAnyway", "spread minDomains",
    "spread nodeAffinityPolicy", "spread nodeTaintsPolicy", "spread matchLabelKeys", "tolerations",
    "priority classes", "preemptionPolicy Never", "PDB", "ReplicaSet owner", "Service", "bound pod",
    "several namespaces",
}


def features(s: Scenario) -> set[str]:
    """What one scenario exercises, read off its objects."""
    found: set[str] = set()
    found |= config_features(s.config)
    by_kind = collections.defaultdict(list)
    for obj in s.objects:
        by_kind[obj["kind"]].append(obj)
    for node in by_kind["Node"]:
        labels, spec, status = node["metadata"]["labels"], node["spec"], node["status"]
        found |= {"node extended resource"} if "example.com/gpu" in status["capacity"] else set()
        found |= {"node ephemeral-storage"} if "ephemeral-storage" in status["allocatable"] else set()
        found |= {name for key, name in (("topology.kubernetes.io/zone", "zone label"),
                                         ("topology.kubernetes.io/region", "region label"),
                                         ("example.com/disk", "custom label")) if key in labels}
        found |= {f"taint {t['effect']}" for t in spec.get("taints", [])}
        found |= {"node images"} if status["images"] else set()
        found |= {"unschedulable node"} if spec.get("unschedulable") else set()
        found |= {"allocatable below capacity"} if status["allocatable"] != status["capacity"] else set()
    never = {pc["metadata"]["name"] for pc in by_kind["PriorityClass"] if pc.get("preemptionPolicy") == "Never"}
    found |= {"PDB"} if by_kind["PodDisruptionBudget"] else set()
    found |= {"Service"} if by_kind["Service"] else set()
    for pod in s.pods:
        found |= pod_features(pod, never)
    if len({p["metadata"]["namespace"] for p in s.pods}) > 1:
        found.add("several namespaces")
    return found


def config_features(config: dict[str, Any]) -> set[str]:
    found = set()
    profiles = config["profiles"]
    if profiles == [{"schedulerName": "default-scheduler"}]:
        found.add("one default profile")
    if len(profiles) > 1:
        found.add("several profiles")
    for profile in profiles:
        score = profile.get("plugins", {}).get("score", {})
        found |= {"score weights"} if score.get("enabled") else set()
        found |= {"score plugin disabled"} if score.get("disabled") else set()
        for pc in profile.get("pluginConfig", []):
            args = pc["args"]
            if pc["name"] == "NodeResourcesFit":
                strategy = args["scoringStrategy"]
                found.add(strategy["type"])
                if strategy["type"] != "LeastAllocated" and any(
                        r["name"] == "example.com/gpu" for r in strategy["resources"]):
                    found.add("scoring extended resource")
            found |= {"List default spreading"} if args.get("defaultingType") == "List" else set()
            found |= {"addedAffinity"} if "addedAffinity" in args else set()
            found |= {"hardPodAffinityWeight"} if "hardPodAffinityWeight" in args else set()
            found |= {"BalancedAllocation resources"} if pc["name"] == "NodeResourcesBalancedAllocation" else set()
    return found


def pod_features(pod: dict[str, Any], never_classes: set[str]) -> set[str]:
    found = set()
    meta, spec = pod["metadata"], pod["spec"]
    containers, inits = spec["containers"], spec.get("initContainers", [])
    every = [*containers, *inits]
    found |= {"several containers"} if len(containers) > 1 else set()
    found |= {"init container"} if any(c.get("restartPolicy") != "Always" for c in inits) else set()
    found |= {"sidecar"} if any(c.get("restartPolicy") == "Always" for c in inits) else set()
    found |= {"RuntimeClass overhead"} if spec.get("runtimeClassName") else set()
    found |= {"pod-level requests"} if spec.get("resources", {}).get("requests") else set()
    found |= {"pod-level limits"} if spec.get("resources", {}).get("limits") else set()
    found |= {"limits"} if any(c.get("resources", {}).get("limits") for c in every) else set()
    found |= {"no requests"} if any(not c.get("resources") for c in containers) else set()
    found |= {"extended resource request"} if any(
        "example.com/gpu" in c.get("resources", {}).get("requests", {}) for c in every) else set()
    found |= {"host port"} if any(p.get("hostPort") for c in containers for p in c.get("ports", [])) else set()
    found |= {"hostNetwork"} if spec.get("hostNetwork") else set()
    found |= {"nodeSelector"} if spec.get("nodeSelector") else set()
    affinity = spec.get("affinity", {})
    node = affinity.get("nodeAffinity", {})
    required = node.get("requiredDuringSchedulingIgnoredDuringExecution")
    found |= {"node affinity required"} if required else set()
    found |= {"node affinity preferred"} if node.get("preferredDuringSchedulingIgnoredDuringExecution") else set()
    if required and any("matchFields" in t for t in required["nodeSelectorTerms"]):
        found.add("node affinity matchFields")
    for key, name in (("podAffinity", "pod affinity"), ("podAntiAffinity", "pod anti-affinity")):
        terms = affinity.get(key, {})
        hard = terms.get("requiredDuringSchedulingIgnoredDuringExecution", [])
        soft = [t["podAffinityTerm"] for t in terms.get("preferredDuringSchedulingIgnoredDuringExecution", [])]
        found |= {f"{name} required"} if hard else set()
        found |= {f"{name} preferred"} if soft else set()
        for term in hard + soft:
            found |= {f"term {field}" for field in ("namespaces", "namespaceSelector", "matchLabelKeys",
                                                    "mismatchLabelKeys") if field in term}
    for c in spec.get("topologySpreadConstraints", []):
        found.add(f"spread {c['whenUnsatisfiable']}")
        found |= {f"spread {field}" for field in ("minDomains", "nodeAffinityPolicy", "nodeTaintsPolicy",
                                                  "matchLabelKeys") if field in c}
    found |= {"tolerations"} if spec.get("tolerations") else set()
    found |= {"priority classes"} if spec.get("priorityClassName") else set()
    found |= {"preemptionPolicy Never"} if spec.get("priorityClassName") in never_classes else set()
    found |= {"ReplicaSet owner"} if any(o["kind"] == "ReplicaSet" and o["uid"]
                                         for o in meta.get("ownerReferences", [])) else set()
    found |= {"bound pod"} if spec.get("nodeName") else set()
    return found


def test_a_seed_and_kind_always_make_the_same_scenario() -> None:
    assert generate(7, "variants") == generate(7, "variants")
    assert generate(7, "default") == generate(7, "default")
    assert generate(7, "variants") != generate(8, "variants")
    # no state shared between calls: another scenario in between changes nothing
    first = generate(3, "default")
    generate(4, "variants")
    assert generate(3, "default") == first


def test_a_seed_is_the_same_scenario_in_another_process() -> None:
    """No draw depends on the process (string hashing, dict order of sets, the clock)."""
    code = ("import json, sys; from tests.differential.generate import generate; "
            "print(json.dumps(generate(11, 'variants').to_list(), sort_keys=True))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={**os.environ, "PYTHONHASHSEED": "12345"}, cwd=Path(__file__).parents[2]).stdout
    assert json.loads(out) == generate(11, "variants").to_list()


@pytest.mark.parametrize("kind", ["default", "variants"])
def test_seeds_0_to_29_cover_every_listed_feature_twice(kind: str) -> None:
    counts: collections.Counter[str] = collections.Counter()
    sizes = []
    for seed in SEEDS:
        s = generate(seed, kind)  # type: ignore[arg-type]
        counts.update(features(s))
        nodes = [o for o in s.objects if o["kind"] == "Node"]
        sizes.append((len(nodes), len(s.pods)))
    wanted = CONFIG_FEATURES[kind] | CLUSTER_FEATURES
    print(kind, dict(sorted(counts.items())))
    assert {f: counts[f] for f in wanted if counts[f] < 2} == {}
    assert all(4 <= n <= 12 and 10 <= p <= 30 for n, p in sizes), sizes
    assert len(set(sizes)) > 10  # sizes vary with the seed


@pytest.mark.parametrize("kind", ["default", "variants", "dra", "gang"])
def test_every_pod_is_uniquely_named_in_a_fuzz_namespace_and_stops_at_once(kind: str) -> None:
    for seed in SEEDS:
        s = generate(seed, kind)  # type: ignore[arg-type]
        names = [p["metadata"]["name"] for p in s.pods]
        assert len(names) == len(set(names))
        schedulers = {p["schedulerName"] for p in s.config["profiles"]}
        for pod in s.pods:
            assert pod["metadata"]["namespace"] in NAMESPACES
            assert pod["spec"]["terminationGracePeriodSeconds"] == 0
            assert pod["spec"]["schedulerName"] in schedulers
            assert "overhead" not in pod["spec"] and "priority" not in pod["spec"]
        namespaced = [o for o in s.objects if "namespace" in o["metadata"]]
        assert {o["metadata"]["namespace"] for o in namespaced} <= set(NAMESPACES)


def write_scenario(s: Scenario, folder: Path) -> tuple[Path, Path]:
    config, cluster = folder / f"{s.kind}-{s.seed}-config.yaml", folder / f"{s.kind}-{s.seed}-cluster.yaml"
    config.write_text(yaml.safe_dump(s.config))
    cluster.write_text(yaml.safe_dump(s.to_list()))
    return config, cluster


def kschedfw_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "kschedfw.cli.main", *args], capture_output=True, text=True,
                          cwd=Path(__file__).parents[2], timeout=120)


@pytest.mark.parametrize("kind,seeds", [("default", (0, 1, 2)), ("variants", (0, 1, 2, 3)), ("dra", (0, 1, 2))])
def test_kschedfw_simulates_generated_scenarios_without_rejecting_anything(kind: str, seeds: tuple[int, ...],
                                                                           tmp_path: Path) -> None:
    statuses: collections.Counter[str] = collections.Counter()
    for seed in seeds:
        s = generate(seed, kind)  # type: ignore[arg-type]
        config, cluster = write_scenario(s, tmp_path)
        run = kschedfw_cli("simulate", "-o", "json", "--config", str(config), str(cluster))
        assert run.returncode == 0, run.stderr
        result = json.loads(run.stdout)
        assert result["rejected"] == []
        generated = {f"{p['metadata']['namespace']}/{p['metadata']['name']}" for p in s.pods}
        simulated = {p["pod"] for p in result["pods"]}
        assert simulated <= generated
        statuses.update(p["status"] for p in result["pods"])
        statuses["Preempted"] += len(generated - simulated)  # victims are deleted
    assert statuses["Bound"] and statuses["Pending"], statuses  # pods compete: some wait
    if kind == "variants":
        assert statuses["Preempted"], statuses  # seed 0 preempts one pod


def test_kschedfw_validate_accepts_every_generated_configuration(tmp_path: Path) -> None:
    paths = [write_scenario(generate(seed, kind), tmp_path)[0]  # type: ignore[arg-type]
             for kind in ("default", "variants") for seed in SEEDS]
    run = kschedfw_cli("validate", *map(str, paths))
    assert run.returncode == 0, run.stdout + run.stderr


# ---------------------------------------------------------------------- against the real binaries
@pytest.fixture(scope="module")
def api_server(control_plane: ControlPlane) -> ControlPlane:
    """The session's API server, with the generated scenarios' namespaces."""
    for ns in NAMESPACES:
        control_plane.api("POST", "/api/v1/namespaces", {"metadata": {"name": ns}})
    return control_plane


COLLECTIONS = {
    "PriorityClass": "/apis/scheduling.k8s.io/v1/priorityclasses",
    "RuntimeClass": "/apis/node.k8s.io/v1/runtimeclasses",
    "Node": "/api/v1/nodes",
    "PodDisruptionBudget": "/apis/policy/v1/namespaces/{ns}/poddisruptionbudgets",
    "ReplicaSet": "/apis/apps/v1/namespaces/{ns}/replicasets",
    "Service": "/api/v1/namespaces/{ns}/services",
    "Pod": "/api/v1/namespaces/{ns}/pods",
    "DeviceClass": "/apis/resource.k8s.io/v1/deviceclasses",
    "ResourceSlice": "/apis/resource.k8s.io/v1/resourceslices",
    "ResourceClaimTemplate": "/apis/resource.k8s.io/v1/namespaces/{ns}/resourceclaimtemplates",
    "ResourceClaim": "/apis/resource.k8s.io/v1/namespaces/{ns}/resourceclaims",
}


def create_all(cp: ControlPlane, s: Scenario) -> tuple[list[str], list[str], list[dict[str, Any]]]:
    """Create every object of ``s`` (a Namespace: set its labels); the API server's refusals,
    the paths created (to delete afterwards) and the pods as the server stored them."""
    refused, created, pods = [], [], []
    for obj in [*s.objects, *s.pods]:
        meta = obj["metadata"]
        try:
            if obj["kind"] == "Namespace":
                cp.api("PATCH", f"/api/v1/namespaces/{meta['name']}", {"metadata": {"labels": meta["labels"]}},
                       content_type="application/merge-patch+json")
                continue
            collection = COLLECTIONS[obj["kind"]].format(ns=meta.get("namespace"))
            stored = cp.api("POST", collection, obj)
            created.append(f"{collection}/{meta['name']}")
            if obj["kind"] == "PodDisruptionBudget":  # status is only written through its subresource
                cp.api("PATCH", f"{collection}/{meta['name']}/status", {"status": obj["status"]},
                       content_type="application/merge-patch+json")
            if obj["kind"] == "Pod":
                pods.append(stored)
        except APIError as exc:
            refused.append(f"{obj['kind']} {meta['name']}: {exc}")
    return refused, created, pods


@pytest.mark.parametrize("kind,seed", [("default", 0), ("default", 5), ("variants", 0), ("variants", 5),
                                       ("variants", 9), ("dra", 0), ("dra", 5)])
def test_a_real_api_server_accepts_every_generated_object(api_server: ControlPlane, kind: str, seed: int) -> None:
    s = generate(seed, kind)  # type: ignore[arg-type]
    refused, created, pods = create_all(api_server, s)
    try:
        assert refused == []
        classes = {o["metadata"]["name"]: o for o in s.objects if o["kind"] == "PriorityClass"}
        for pod in pods:  # admission filled priority and overhead from the classes named
            spec = pod["spec"]
            if spec.get("priorityClassName"):
                assert spec["priority"] == classes[spec["priorityClassName"]]["value"]
            assert bool(spec.get("overhead")) == bool(spec.get("runtimeClassName"))
    finally:
        for path in reversed(created):
            api_server.api("DELETE", path + ("?gracePeriodSeconds=0" if "/pods/" in path else ""))


def test_kube_scheduler_accepts_every_generated_configuration(tmp_path: Path) -> None:
    """``kube-scheduler --write-config-to`` builds every profile's plugins (so checks their
    args) and exits before it talks to a server; a dummy kubeconfig satisfies its client setup."""
    assets = find_assets()
    if assets is None or not os.access(assets / "kube-scheduler", os.X_OK):
        pytest.skip("no kube-scheduler binary")
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(json.dumps({
        "apiVersion": "v1", "kind": "Config", "current-context": "c",
        "clusters": [{"name": "c", "cluster": {"server": "https://127.0.0.1:1"}}],
        "users": [{"name": "u", "user": {"token": "unused"}}],
        "contexts": [{"name": "c", "context": {"cluster": "c", "user": "u"}}]}))
    configs = {json.dumps(generate(seed, kind).config, sort_keys=True): f"{kind} {seed}"  # type: ignore[arg-type]
               for kind in ("default", "variants") for seed in SEEDS}
    failures = []
    for text, which in configs.items():
        path = tmp_path / "config.yaml"
        path.write_text(yaml.safe_dump({**json.loads(text), "clientConnection": {"kubeconfig": str(kubeconfig)}}))
        run = subprocess.run([str(assets / "kube-scheduler"), "--config", str(path),
                              "--write-config-to", str(tmp_path / "out.yaml")],
                             capture_output=True, text=True, timeout=60)
        if run.returncode != 0:
            failures.append(f"{which}: {run.stderr.strip().splitlines()[-1]}")
    assert len(configs) > 30 and failures == []


DEVICE_FEATURES = {
    "DeviceClass selector", "per-node slice", "empty slice", "all-node slice", "nodeSelector slice",
    "device capacity", "ResourceClaimTemplate", "ResourceClaim", "exactly count 2", "allocationMode All",
    "firstAvailable", "CEL selector on attributes", "CEL selector on capacity", "matchAttribute",
    "pod with template claim", "pod with named claim", "pod with two claims", "pod without claims",
}


def device_features(s: Scenario) -> set[str]:
    found: set[str] = set()
    for o in s.objects:
        spec = o.get("spec") or {}
        if o["kind"] == "DeviceClass" and len(spec["selectors"]) > 1:
            found.add("DeviceClass selector")
        if o["kind"] == "ResourceSlice":
            found |= {"per-node slice" if "nodeName" in spec else
                      "all-node slice" if spec.get("allNodes") else "nodeSelector slice"}
            found |= {"empty slice"} if not spec["devices"] else set()
            found |= {"device capacity"} if any("capacity" in d for d in spec["devices"]) else set()
        if o["kind"] in ("ResourceClaimTemplate", "ResourceClaim"):
            found.add(o["kind"])
            devices = (spec.get("spec") or spec)["devices"]
            found |= {"matchAttribute"} if devices.get("constraints") else set()
            for r in devices["requests"]:
                exactly = r.get("exactly") or {}
                found |= {"firstAvailable"} if "firstAvailable" in r else set()
                found |= {"exactly count 2"} if exactly.get("count") == 2 else set()
                found |= {"allocationMode All"} if exactly.get("allocationMode") == "All" else set()
                for sel in [*exactly.get("selectors", []), *(x for sub in r.get("firstAvailable", [])
                                                             for x in sub.get("selectors", []))]:
                    text = sel["cel"]["expression"]
                    found.add("CEL selector on capacity" if "capacity" in text else "CEL selector on attributes")
    for pod in s.pods:
        claims = pod["spec"].get("resourceClaims") or []
        found |= {"pod without claims"} if not claims else set()
        found |= {"pod with two claims"} if len(claims) > 1 else set()
        found |= {"pod with template claim" for c in claims if "resourceClaimTemplateName" in c}
        found |= {"pod with named claim" for c in claims if "resourceClaimName" in c}
    return found


def test_dra_seeds_0_to_29_cover_every_device_feature_and_keep_the_cluster_features() -> None:
    counts: collections.Counter[str] = collections.Counter()
    for seed in SEEDS:
        s = generate(seed, "dra")
        counts.update(device_features(s) | features(s))
        for pod in s.pods:  # a pod with claims never preempts (no victim's devices to free first)
            assert not (pod["spec"].get("resourceClaims") and pod["spec"].get("priorityClassName"))
            assert not (pod["spec"].get("resourceClaims") and pod["spec"].get("nodeName"))
    print("dra", dict(sorted(counts.items())))
    assert {f: counts[f] for f in DEVICE_FEATURES | CLUSTER_FEATURES if counts[f] < 2} == {}
