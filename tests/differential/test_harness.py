"""The harness on hand-written scenarios against the real binaries: each compares one feature
(scores, a single feasible node, preemption, FitError messages, other profiles), and the counts
show the comparison really happened; known mismatch classes are detected. (They stay out of the
session's counts, which are the campaign's.)"""

from __future__ import annotations

from tests.differential.manifests import (claim, claim_template, config, device_class, gpu_slice, member, namespace,
                                          node, pod, pod_group, priority_class, scenario, with_claims)

ZONE = "topology.kubernetes.io/zone"


def test_scores_taints_affinity_and_spreading(harness):
    objects = [namespace("fuzz-a", team="blue"),
               node("n1", "4", "8Gi", labels={ZONE: "a"}),
               node("n2", "8", "16Gi", labels={ZONE: "b"}),
               node("n3", "2", "4Gi", labels={ZONE: "b"},
                    taints=[{"key": "dedicated", "value": "x", "effect": "PreferNoSchedule"}])]
    spread = {"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "ScheduleAnyway",
              "labelSelector": {"matchLabels": {"app": "web"}}}
    prefer_a = {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": 40, "preference": {"matchExpressions": [{"key": ZONE, "operator": "In", "values": ["a"]}]}}]}}
    near_web = {"podAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": 10, "podAffinityTerm": {"labelSelector": {"matchLabels": {"app": "web"}},
                                           "topologyKey": ZONE}}]}}
    pods = [pod(f"web-{i}", "500m", "1Gi", labels={"app": "web"}, topologySpreadConstraints=[spread])
            for i in range(3)]
    pods += [pod("affine", "1", "1Gi", affinity=prefer_a), pod("near", "200m", affinity=near_web)]
    result = harness.play(scenario(objects, pods))
    assert result.diffs == []
    assert (result.pods, result.score_tables, result.outcomes) == (5, 5, 5)


def test_one_feasible_node_is_not_scored(harness):
    objects = [node("n1", "2"), node("n2", "2", taints=[{"key": "k", "value": "v", "effect": "NoSchedule"}])]
    result = harness.play(scenario(objects, [pod("only", "1")]))
    assert result.diffs == []
    assert (result.pods, result.score_tables, result.outcomes) == (1, 0, 1)


def test_preemption_nomination_victims_and_retry(harness):
    objects = [priority_class("fuzz-low", 10), priority_class("fuzz-high", 1000),
               node("n1", "2"), node("n2", "2"), node("n3", "4")]
    low = [pod(f"low-{i}", "1500m", priorityClassName="fuzz-low") for i in range(3)]
    result = harness.play(scenario(objects, [*low, pod("high", "3", priorityClassName="fuzz-high")]))
    assert result.diffs == []
    # three low pods once each; the high one twice: nominated with victims, then bound
    assert (result.pods, result.outcomes) == (4, 5)


def test_fit_error_messages(harness):
    objects = [node("n1", "1", labels={ZONE: "a"}),
               node("n2", "2", taints=[{"key": "gpu", "value": "yes", "effect": "NoSchedule"}])]
    pods = [pod("huge", "64"), pod("nowhere", nodeSelector={ZONE: "c"}),
            pod("ports", containers=[{"name": "c", "image": "x", "ports": [{"containerPort": 80, "hostPort": 80}]}]),
            pod("ports-again", containers=[{"name": "c", "image": "x", "ports": [{"containerPort": 80, "hostPort": 80}]}])]
    result = harness.play(scenario(objects, pods))
    assert result.diffs == []
    assert result.outcomes == 4


def test_two_profiles_most_allocated_and_changed_weights(harness):
    most = {"schedulerName": "packer", "pluginConfig": [{"name": "NodeResourcesFit", "args": {
        "scoringStrategy": {"type": "MostAllocated", "resources": [{"name": "cpu", "weight": 3},
                                                                   {"name": "memory", "weight": 1}]}}}],
            "plugins": {"score": {"enabled": [{"name": "NodeResourcesFit", "weight": 5}]}}}
    cfg = config({"schedulerName": "default-scheduler"}, most)
    objects = [node("n1", "4", "8Gi"), node("n2", "8", "8Gi"), node("n3", "8", "32Gi")]
    pods = [pod("packed-1", "1", "1Gi", schedulerName="packer"), pod("spread-1", "1", "1Gi"),
            pod("packed-2", "2", "4Gi", schedulerName="packer")]
    result = harness.play(scenario(objects, pods, cfg, kind="variants"))
    assert result.diffs == []
    assert (result.pods, result.score_tables) == (3, 3)


def test_fit_scores_container_requests_of_a_pod_with_pod_level_requests(harness):
    incoming = pod("plr", "1", "1Gi")
    incoming["spec"]["resources"] = {"requests": {"cpu": "3", "memory": "2Gi"}}
    result = harness.play(scenario([node("n1", "4", "8Gi"), node("n2", "8", "16Gi")], [incoming]))
    assert result.score_tables == 1
    assert result.diffs == []


def test_non_zero_placeholder_of_a_pod_with_pod_level_requests(harness):
    x = pod("x", "500m", nodeName="n1")
    x["spec"]["resources"] = {"requests": {"memory": "2Gi"}}
    x["spec"]["containers"] = [{"name": "a", "image": "x", "resources": {"requests": {"cpu": "500m"}}},
                               {"name": "b", "image": "x"}]
    result = harness.play(scenario([node("n1", "4", "8Gi"), node("n2", "4", "8Gi")],
                                           [x, pod("new", "1", "1Gi")]))
    assert result.score_tables == 1
    assert result.diffs == []


def test_placed_gated_and_foreign_pods_are_state_only(harness):
    objects = [node("n1", "2"), node("n2", "4")]
    pods = [pod("placed", "1", nodeName="n2"), pod("gated", "1", schedulingGates=[{"name": "example.com/wait"}]),
            pod("foreign", "1", schedulerName="someone-else"), pod("decided", "1")]
    result = harness.play(scenario(objects, pods))
    assert result.diffs == []
    assert (result.pods, result.score_tables) == (1, 1)


def test_batching_hints_compare_placements_only(harness):
    """Identical pods that each fill a node, with no default spreading: kube-scheduler hands each
    cycle after the first the previous cycle's next-best node (OpportunisticBatching, on in
    v1.36) and scores nothing; kschedfw's fresh cycle must pick that same node."""
    cfg = config({"schedulerName": "default-scheduler",
                  "pluginConfig": [{"name": "PodTopologySpread", "args": {"defaultingType": "List"}}]})
    nodes = [node(f"n{i}", "4", f"{3000 + 200 * i}Mi") for i in range(4)]
    result = harness.play(scenario(nodes, [pod(f"p{i}", "3", "3000Mi") for i in range(4)], cfg))
    assert result.diffs == []
    assert (result.pods, result.score_tables, result.outcomes) == (4, 4 - result.hinted, 4)


def test_image_size_is_the_first_reporting_nodes(harness):
    """One image name, two sizes: kube-scheduler's cache keeps the size of the first node that
    reported the name for every node (pkg/scheduler/backend/cache/cache.go, addNodeImageStates:
    a cacheImageState's size is set when the name is first seen and never updated); kschedfw's
    cache keeps the same (kschedfw/cache/image_states.py)."""
    nodes = [node("n1", "4"), node("n2", "4"), node("n3", "4")]
    for n, size in zip(nodes, (900_000_000, 300_000_000)):
        n["status"]["images"] = [{"names": ["registry.k8s.io/pause:3.10"], "sizeBytes": size}]
    result = harness.play(scenario(nodes, [pod("p")]))
    assert result.score_tables == 1
    assert result.diffs == []


def test_a_kschedfw_exception_is_a_mismatch_and_the_scenario_goes_on(harness, monkeypatch):
    from tests.differential import ours

    calls = []

    def broken(config, registry, gates, state, pod, horizon=None):
        calls.append(pod.key)
        if len(calls) == 1:
            raise RuntimeError("boom")
        return real(config, registry, gates, state, pod, horizon=horizon)

    real = ours.attempts
    monkeypatch.setattr(ours, "attempts", broken)
    result = harness.play(scenario([node("n1", "2")], [pod("first"), pod("second")]))
    assert calls == ["fuzz-a/first", "fuzz-a/second"]
    assert len(result.diffs) == 1 and "kschedfw raised RuntimeError: boom" in result.diffs[0]
    assert (result.pods, result.outcomes_identical) == (2, 1)


GPU_DRIVER = "gpu.example.com"


def _exactly(name: str, count: int = 1, cls: str = "gpu", **more: object) -> dict[str, object]:
    return {"name": name, "exactly": {"deviceClassName": cls, "allocationMode": "ExactCount", "count": count, **more}}


def test_devices_from_templates_and_shared_claims_are_allocated_alike(harness):
    """Pods with claims from a template (generated by the harness, as the resourceclaim controller
    would) and with a shared claim: the same nodes and the same devices on both sides; a pod that
    finds no free device is deleted and its generated claim with it."""
    h100 = {"cel": {"expression": f'device.attributes["{GPU_DRIVER}"].model == "h100"'}}
    objects = [node("n1", "8", "16Gi"), node("n2", "8", "16Gi"), node("n3", "8", "16Gi"),
               device_class("gpu", GPU_DRIVER),
               gpu_slice("n1", GPU_DRIVER, "a100", "a100"), gpu_slice("n2", GPU_DRIVER, "h100"),
               claim_template("one", _exactly("gpu")),
               claim_template("prefer-h100", {"name": "gpu", "firstAvailable": [
                   {"name": "h100", "deviceClassName": "gpu", "allocationMode": "ExactCount", "count": 1,
                    "selectors": [h100]},
                   {"name": "any", "deviceClassName": "gpu", "allocationMode": "ExactCount", "count": 1}]}),
               claim("shared", _exactly("gpu"))]
    pods = [with_claims(pod("h"), gpu="template:prefer-h100"),
            with_claims(pod("s1"), gpu="claim:shared"), with_claims(pod("s2"), gpu="claim:shared"),
            with_claims(pod("o"), gpu="template:one"), with_claims(pod("none-left"), gpu="template:one"),
            pod("plain")]
    result = harness.play(scenario(objects, pods))
    assert result.diffs == []
    # h, s1, s2 and o are bound with devices (s2 shares s1's); none-left finds no free device
    assert (result.pods, result.outcomes, result.allocations) == (6, 6, 4)


def test_a_victims_devices_are_freed_for_the_next_pod(harness):
    """A low-priority pod holding the only GPU is preempted by a pod that needs its cpu; the
    harness then does the resourceclaim controller's part (deallocate the victim's generated
    claim, delete it), so the next pod that asks for a GPU gets it on both sides."""
    objects = [priority_class("fuzz-low", 10), priority_class("fuzz-high", 1000),
               node("n1", "2"), device_class("gpu", GPU_DRIVER), gpu_slice("n1", GPU_DRIVER, "a100"),
               claim_template("one", _exactly("gpu"))]
    pods = [with_claims(pod("holder", "1500m", priorityClassName="fuzz-low"), gpu="template:one"),
            pod("preemptor", "1500m", priorityClassName="fuzz-high"),
            with_claims(pod("next", "100m"), gpu="template:one")]
    result = harness.play(scenario(objects, pods))
    assert result.diffs == []
    # holder bound with the GPU; preemptor nominated, then bound; next bound with the freed GPU
    assert (result.pods, result.outcomes, result.allocations) == (3, 4, 2)


def test_claim_errors_and_all_devices_of_a_pool(harness):
    """A selector that fails at run time (an attribute no device has), a claim naming no existing
    DeviceClass, and a shared claim asking for All devices where one pool is empty: the same
    messages, nodes and devices on both sides."""
    missing = {"cel": {"expression": f'device.attributes["{GPU_DRIVER}"].speed > 1'}}
    objects = [node("n1"), node("n2"), device_class("gpu", GPU_DRIVER), gpu_slice("n1", GPU_DRIVER),
               gpu_slice("n2", GPU_DRIVER, "a100", "l4"),
               claim_template("bad-selector", _exactly("gpu", selectors=[missing])),
               claim("no-class", _exactly("gpu", cls="nope")),
               claim("all", {"name": "all", "exactly": {"deviceClassName": "gpu", "allocationMode": "All"}})]
    pods = [with_claims(pod("bad"), gpu="template:bad-selector"), with_claims(pod("unknown"), gpu="claim:no-class"),
            with_claims(pod("all-1"), gpu="claim:all"), with_claims(pod("all-2"), gpu="claim:all")]
    result = harness.play(scenario(objects, pods))
    assert result.diffs == []
    assert (result.pods, result.outcomes, result.allocations) == (4, 4, 2)


def test_groups_are_played_as_units_gang_all_or_nothing_and_basic_what_fits(harness):
    """Two nodes of 2 CPUs: a gang of 4 (minCount 4) of 1.5 CPUs fits 2 pods and binds none,
    marked Unschedulable; a basic group of 3 binds the 2 that fit, marked Scheduled; a plain pod
    between them is compared as usual."""
    objects = [node("n1", "2"), node("n2", "2"), *pod_group("gang", {"gang": {"minCount": 4}}),
               *pod_group("basic", {"basic": {}})]
    pods = [*(member("gang", f"gang-{i}", "1500m") for i in range(4)), pod("plain", "200m"),
            *(member("basic", f"basic-{i}", "1500m") for i in range(3))]
    result = harness.play(scenario(objects, pods, kind="gang"))
    assert result.diffs == []
    assert (result.groups, result.groups_identical, result.pods, result.outcomes) == (2, 2, 8, 1)


def test_placements_are_scored_without_the_pods_of_the_last_placement_tried(harness):
    """The PodGroupPodsCount class: rack r1 holds all 3 pods, r2 two, and NodeResourcesFit's
    placement score prefers r2 by less than the pod count's 34 points; upstream binds all 3 in r1."""
    objects = [node("a1", "4", "16Gi", labels={"rack": "r1"}), node("b1", "2", "4Gi", labels={"rack": "r2"}),
               *pod_group("train", {"basic": {}}, topology_key="rack")]
    pods = [member("train", f"m-{i}", "1", "1Gi") for i in range(3)]
    result = harness.play(scenario(objects, pods, kind="gang"))
    assert result.diffs == []
    assert (result.groups, result.groups_identical) == (1, 1)
