"""The simulator's seeded procedure: shuffle after one hidden Int(), the inflation to 130% (stop
rule on per-GPU milli, tuned names, appended at the end), the deflation, the node prefixes."""

from kschedfw_gpushare.experiment import procedure
from kschedfw_gpushare.experiment.gorand import GoRand


def pod(name, milli=0, count=0):
    meta = {"name": name, "namespace": "paib-gpu"}
    if count:
        meta["annotations"] = {"alibabacloud.com/gpu-milli": str(milli), "alibabacloud.com/gpu-count": str(count)}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": {"containers": [{"name": "main"}]}}


def node(name, gpus):
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name},
            "status": {"capacity": {"alibabacloud.com/gpu-count": str(gpus),
                                    "alibabacloud.com/gpu-milli": str(1000 * gpus)}}}


def names(pods):
    return [p["metadata"]["name"] for p in pods]


def test_tune_up_appends_clones_until_the_per_gpu_milli_would_pass_the_target():
    originals = [pod("a", 1000, 8), pod("b", 500, 1), pod("c")]
    rng = GoRand(5)
    tuned = procedure.tune(list(originals), originals, capacity_milli=10_000, rng=rng, ratio=1.3)
    # replay: the total starts at 8500; the target is 13000
    replay, total, expected, i = GoRand(5), 8500, [], 0
    while True:
        drawn = originals[replay.intn(3)]
        milli, count = procedure.gpu_ask(drawn)
        if total + milli > 13000:
            break
        total += milli * count
        expected.append(f"{drawn['metadata']['name']}-tuned-{i}")
        i += 1
    assert names(tuned) == ["a", "b", "c", *expected]
    assert len(expected) > 0
    assert rng.int63() == replay.int63()  # the rejected draw was consumed, as in Go


def test_tune_up_lets_a_multi_gpu_pod_overshoot_the_target():
    originals = [pod("big", 1000, 8)]
    tuned = procedure.tune([], originals, capacity_milli=10_000, rng=GoRand(1), ratio=1.3)
    # 0 + 1000 <= 13000 ... 8000 + 1000 <= 13000: appended twice, total 16000 > 13000
    assert names(tuned) == ["big-tuned-0", "big-tuned-1"]


def test_cpu_only_pods_always_pass_the_stop_rule():
    originals = [pod("cpu"), pod("gpu", 1000, 1)]
    tuned = procedure.tune([], originals, capacity_milli=2000, rng=GoRand(3), ratio=1.0)
    gpu = [n for n in names(tuned) if n.startswith("gpu")]
    assert len(gpu) == 2  # exactly 2000 milli: a third would pass the target
    assert any(n.startswith("cpu-tuned-") for n in names(tuned))


def test_tune_down_removes_pods_at_random_positions_keeping_the_order():
    pods = [pod(f"p{i}", 1000, 1) for i in range(10)]
    rng = GoRand(9)
    kept = procedure.tune(list(pods), pods, capacity_milli=5000, rng=rng, ratio=1.0)
    replay, expected = GoRand(9), names(pods)
    while len(expected) > 5:
        expected.pop(replay.intn(len(expected)))
    assert names(kept) == expected


def test_arrivals_shuffle_after_one_hidden_int_then_tune_then_prefix_nodes():
    pods = [pod(f"openb-pod-{i:04d}", 500, 1) for i in (3, 1, 0, 2)]
    nodes = [node("n-b", 1), node("n-a", 2)]
    arrived = procedure.arrivals(pods, nodes, seed=42, ratio=1.3)
    rng = GoRand(42)
    rng.int_()
    shuffled = rng.shuffled(sorted(names(pods)))
    assert names(arrived.pods)[:4] == shuffled
    assert all("-tuned-" in n for n in names(arrived.pods)[4:])
    asked = sum(procedure.total_gpu_milli(p) for p in arrived.pods)
    assert asked <= 1.3 * 3000 < asked + 500
    # the same stream continues: the tune draws, then Perm over the name-sorted nodes
    for _ in range(len(arrived.pods) - 4 + 1):
        rng.intn(4)
    perm = rng.perm(2)
    assert names(arrived.nodes) == ["%04d-n-a" % perm[0], "%04d-n-b" % perm[1]]


def test_tie_draws_change_only_the_node_prefixes():
    """Dropped draws before Perm stand in for the simulator's informers: the same arrivals, the
    node tie order of a stream k values further on."""
    pods = [pod(f"openb-pod-{i:04d}", 500, 1) for i in range(6)]
    nodes = [node(f"n-{i}", 1) for i in range(40)]
    plain = procedure.arrivals(pods, nodes, seed=7)
    skipped = procedure.arrivals(pods, nodes, seed=7, tie_draws=3)
    assert names(skipped.pods) == names(plain.pods)
    assert names(skipped.nodes) != names(plain.nodes)
    assert sorted(n.split("-", 1)[1] for n in names(skipped.nodes)) == sorted(n.split("-", 1)[1] for n in names(plain.nodes))
    rng = GoRand(7)
    rng.int_()
    rng.shuffled(sorted(names(pods)))
    for _ in range(len(plain.pods) - 6 + 1):
        rng.intn(6)
    for _ in range(3):
        rng.int63()
    perm = rng.perm(40)
    assert names(skipped.nodes) == ["%04d-n-%d" % (perm[i], int(name)) for i, name in
                                    enumerate(sorted(str(j) for j in range(40)))]


def test_arrivals_do_not_change_the_callers_manifests():
    pods = [pod("x", 500, 1)]
    nodes = [node("n", 1)]
    procedure.arrivals(pods, nodes, seed=1)
    assert names(pods) == ["x"] and nodes[0]["metadata"]["name"] == "n"


def test_config_has_one_policy_at_weight_1000_and_every_default_score_off():
    cfg = procedure.scheduler_config(procedure.policy_named("FGD"), 42, typical_pods=[{"p": 1}])
    profile = cfg["profiles"][0]
    assert cfg["percentageOfNodesToScore"] == 100
    assert profile["plugins"]["score"] == {"disabled": [{"name": "*"}],
                                           "enabled": [{"name": "FGDScore", "weight": 1000}]}
    assert profile["plugins"]["multiPoint"]["enabled"] == [{"name": "Open-Gpu-Share"}]
    args = {c["name"]: c["args"] for c in profile["pluginConfig"]}
    assert args["Open-Gpu-Share"] == {"gpuSelMethod": "FGDScore", "typicalPods": [{"p": 1}]}
    assert args["FGDScore"]["typicalPods"] == [{"p": 1}]
    random = procedure.scheduler_config(procedure.policy_named("01-Random"), 7)["profiles"][0]
    assert random["plugins"]["preScore"]["enabled"] == [{"name": "RandomScore"}]
    assert {c["name"]: c["args"] for c in random["pluginConfig"]} == {
        "Open-Gpu-Share": {"gpuSelMethod": "random", "seed": 7}, "RandomScore": {"seed": 7}}


def test_only_policies_with_a_pre_score_get_it_enabled():
    classes = {cls.name: cls for cls in procedure.plugin_classes()}
    for policy in procedure.POLICIES.values():
        assert policy.pre_score == hasattr(classes[policy.plugin], "pre_score"), policy.label


def test_every_policy_loads_as_a_valid_configuration():
    reg = procedure.registry()
    for policy in procedure.POLICIES.values():
        typical = [{"cpuMilli": 1000, "gpuMilli": 500, "gpuNumber": 1, "gpuType": "", "probability": 1.0}]
        plugins = procedure.load_scheduler_config(procedure.scheduler_config(policy, 42, typical), reg).profiles[0].plugins
        assert [(e.name, e.weight) for e in plugins["score"]] == [(policy.plugin, 1000)]
        assert [e.name for e in plugins["pre_score"]] == ([policy.plugin] if policy.pre_score else [])
        for point in ("reserve", "pre_bind"):
            assert "Open-Gpu-Share" in [e.name for e in plugins[point]]
        filters = [e.name for e in plugins["filter"]]
        assert filters[0] == "Open-Gpu-Share"  # first: it rejects the most nodes
        assert "NodeResourcesFit" in filters  # memory is enforced
        assert "DefaultPreemption" not in [e.name for e in plugins["post_filter"]]
