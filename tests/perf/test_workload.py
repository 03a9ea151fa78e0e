"""scheduler_perf workloads: parsing test cases and ops, templates and names, and small runs end to
end on the embedded cluster (fixtures copied from upstream's scheduler_perf, see fixtures/)."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks.perf.runner import (RunOptions, WorkloadRunner, build_config,
                                  upstream_sampled_average)
from benchmarks.perf.workload import (Barrier, CreateNamespaces, CreateNodes, CreatePods, DeletePods,
                                    NameGenerator, TemplateError, WorkloadError, default_workload,
                                    find_test_case, load_test_cases, parse_go_duration,
                                    render_template, unroll)

FIXTURES = Path(__file__).parent / "fixtures"
ALPHABET = set("bcdfghjklmnpqrstvwxz2456789")


@pytest.fixture(scope="module")
def cases():
    return load_test_cases(FIXTURES)


@pytest.fixture(scope="module")
def registry():
    from kschedfw.framework.registry import default_registry
    return default_registry()


@pytest.fixture(scope="module")
def default_profile(registry):
    config, note = build_config(registry)
    return config


def run(tc, workload, registry, config, **opts):
    options = RunOptions(pace="instant", **opts)
    return WorkloadRunner(unroll(tc, workload), config, registry, options).run()


# --------------------------------------------------------------------------- loading and unrolling

def test_load_folder_of_configs_and_single_file(cases):
    names = [tc.name for tc in cases]
    assert names == ["SchedulingPodAffinity", "SchedulingRequiredPodAntiAffinityWithNSSelector",
                     "SchedulingBasic", "SchedulingWhileGated", "SchedulingWithExtendedResource"]
    one = load_test_cases(FIXTURES / "misc")
    assert [tc.name for tc in one] == ["SchedulingBasic", "SchedulingWhileGated",
                                       "SchedulingWithExtendedResource"]
    assert [tc.name for tc in load_test_cases(FIXTURES / "misc" / "performance-config.yaml")] == \
        [tc.name for tc in one]
    with pytest.raises(WorkloadError, match="no performance-config.yaml"):
        load_test_cases(FIXTURES / "templates")


def test_workload_metadata_and_default_choice(cases):
    basic = find_test_case(cases, "SchedulingBasic")
    w = basic.workload("5000Nodes_10000Pods")
    assert w.threshold_value == 270
    assert w.labels == ("performance",)
    assert w.feature_gates == {"SchedulerQueueingHints": False}
    assert default_workload(basic).name == "500Nodes"
    gated = find_test_case(cases, "SchedulingWhileGated")
    assert default_workload(gated).name == "1Node_10GatedPods"
    ext = find_test_case(cases, "SchedulingWithExtendedResource")
    assert ext.workload("fast").feature_gates == {"DynamicResourceAllocation": True, "DRAExtendedResource": False}
    assert default_workload(ext).name == "500pods_500nodes"
    with pytest.raises(WorkloadError, match="no workload 'nope'"):
        basic.workload("nope")


def test_unroll_substitutes_params_and_names_namespaces(cases):
    tc = find_test_case(cases, "SchedulingBasic")
    u = unroll(tc, "500Nodes")
    assert not u.warnings and not u.unsupported
    nodes, init, measured = u.ops
    assert isinstance(nodes, CreateNodes) and nodes.count == 500 and nodes.template is None
    assert isinstance(init, CreatePods) and init.count == 500 and init.namespace == "namespace-1"
    assert not init.collect_metrics
    assert isinstance(measured, CreatePods) and measured.count == 1000 and measured.collect_metrics
    assert measured.namespace == "namespace-2"
    assert measured.template.path == (FIXTURES / "templates" / "pod-default.yaml").resolve()


def test_unroll_create_pod_sets_and_op_indices(cases):
    tc = find_test_case(cases, "SchedulingRequiredPodAntiAffinityWithNSSelector")
    u = unroll(tc, "10Nodes")
    kinds = [type(o).__name__ for o in u.ops]
    assert kinds == ["CreateNodes", "CreateNamespaces", "CreateNamespaces", "CreatePods", "CreatePods",
                     "CreatePods"]
    assert [o.index for o in u.ops] == list(range(6))
    init_ns = u.ops[1]
    assert isinstance(init_ns, CreateNamespaces) and init_ns.names == ["init-ns-0", "init-ns-1"]
    assert [(o.namespace, o.count) for o in u.ops[3:5]] == [("init-ns-0", 2), ("init-ns-1", 2)]
    assert (u.ops[5].namespace, u.ops[5].count, u.ops[5].collect_metrics) == ("measure-ns-0", 6, True)
    ns = init_ns.build(NameGenerator())
    assert [n.labels for n in ns] == [{"team": "devops"}, {"team": "devops"}]


def test_unroll_background_ops(cases):
    tc = find_test_case(cases, "SchedulingWhileGated")
    u = unroll(tc, "1Node_10GatedPods")
    assert [o.describe().split()[0] for o in u.ops] == [
        "createNodes", "createPods", "barrier", "createPods", "deletePods", "createPods"]
    gated, barrier, deleting, delete = u.ops[1], u.ops[2], u.ops[3], u.ops[4]
    assert gated.skip_wait and gated.template.path.name == "gated-pod.yaml"
    assert isinstance(barrier, Barrier) and barrier.stage == "Attempted"
    assert deleting.namespace == "namespace-3" and deleting.template.path.name == "light-pod.yaml"
    assert isinstance(delete, DeletePods) and delete.namespace == "namespace-3"
    assert delete.per_second == 50 and delete.skip_wait


def test_param_errors(cases):
    tc = find_test_case(cases, "SchedulingBasic")
    w = tc.workload("5Nodes")
    broken = type(w)(name="broken", params={"initNodes": 5, "initPods": 1})
    with pytest.raises(WorkloadError, match="parameter measurePods is undefined"):
        unroll(tc, broken)
    extra = type(w)(name="extra", params={"initNodes": 5, "initPods": 1, "measurePods": 2, "typo": 3})
    assert any("['typo']" in warning for warning in unroll(tc, extra).warnings)
    wrong = type(w)(name="wrong", params={"initNodes": "5", "initPods": 1, "measurePods": 2})
    with pytest.raises(WorkloadError, match="wrong type"):
        unroll(tc, wrong)


def test_go_durations():
    assert parse_go_duration("1m30s") == 90
    assert parse_go_duration("500ms") == 0.5
    assert parse_go_duration("2h") == 7200
    with pytest.raises(WorkloadError):
        parse_go_duration("ten seconds")


# --------------------------------------------------------------------------- templates and names

def test_render_template():
    env = {"Index": 7, "Count": 10}
    assert render_template("name: x-{{.Index}}-of-{{ .Count }}", env) == "name: x-7-of-10"
    assert render_template("{{AddInt .Index 1}} {{Mod .Index 3}} {{DivideInt .Index 2}}", env) == "8 1 3"
    assert render_template("{{MultiplyInt (AddInt .Index 1) 2}}", env) == "16"
    assert render_template("{{DivideFloat .Index 2}}", env) == "3.5"
    assert render_template("a  {{- .Index -}}  b", env) == "a7b"
    assert render_template("no actions", env) == "no actions"
    with pytest.raises(TemplateError, match="not supported"):
        render_template("{{if .Index}}x{{end}}", env)
    with pytest.raises(TemplateError, match="unknown field"):
        render_template("{{.Nope}}", env)


def test_generate_name_is_unique_and_reproducible(cases):
    tc = find_test_case(cases, "SchedulingBasic")
    op = unroll(tc, "5Nodes").ops[2]
    pods = op.build(NameGenerator(seed=1))
    assert len({p.name for p in pods}) == 10 and len({p.uid for p in pods}) == 10
    for p in pods:
        assert p.name.startswith("pod-") and len(p.name) == 9 and set(p.name[4:]) <= ALPHABET
        assert p.namespace == "namespace-2"
        assert p.raw["metadata"]["name"] == p.name and p.raw["metadata"]["namespace"] == p.namespace
        assert p.request()["cpu"] == 100
    assert [p.name for p in op.build(NameGenerator(seed=1))] == [p.name for p in pods]
    assert [p.name for p in op.build(NameGenerator(seed=2))] != [p.name for p in pods]


def test_nodes_from_templates(cases):
    tc = find_test_case(cases, "SchedulingBasic")
    base = unroll(tc, "5Nodes").ops[0].build(NameGenerator())
    assert all(n.name.startswith("node-0-") for n in base)
    assert all(n.labels["kubernetes.io/hostname"] == n.name for n in base)
    assert base[0].allocatable["cpu"] == 4000 and base[0].allocatable["pods"] == 110

    ext = find_test_case(cases, "SchedulingWithExtendedResource")
    u = unroll(ext, "fast")
    plain, extended = u.ops[0], u.ops[1]
    assert plain.count == 1 and extended.count == 10
    nodes = extended.build(NameGenerator())
    assert [n.capacity.get(f"foo.com/bar-{i}") for i, n in enumerate(nodes)] == [1] * 10
    assert all(n.name.startswith("scheduler-perf-extended-resource-") for n in nodes)
    assert nodes[3].labels["node-with-extended-resource"] == "true"
    pods = u.ops[2].build(NameGenerator())
    assert [p.name for p in pods[:2]] == ["test-extended-resource-0", "test-extended-resource-1"]
    assert pods[1].namespace == "test" and pods[1].request()["foo.com/bar-1"] == 1

    gated = find_test_case(cases, "SchedulingWhileGated")
    named = unroll(gated, "1Node_10GatedPods").ops[0]
    assert [n.name for n in named.build(NameGenerator())] == ["scheduler-perf-node"]
    twice = type(named)(index=0, opcode="createNodes", count=2, template=named.template)
    with pytest.raises(WorkloadError, match="already exists"):
        twice.build(NameGenerator())


def test_upstream_sampled_average():
    # 10 pods/s for 5 s starting at t=0.5: samples at 1..5 s, the first is skipped
    times = [0.5 + i * 0.1 for i in range(50)]
    assert upstream_sampled_average(times, 0.0, 5.6) == pytest.approx(10.0, rel=0.05)
    assert upstream_sampled_average(times[:3], 0.0, 0.9) is None
    assert upstream_sampled_average([], 0.0, 10.0) is None


# --------------------------------------------------------------------------- end to end

def test_scheduling_basic_5nodes_end_to_end(cases, registry, default_profile):
    tc = find_test_case(cases, "SchedulingBasic")
    result = run(tc, "5Nodes", registry, default_profile)
    assert result.status == "ok", result.error
    assert result.nodes == 5 and result.pods == 15
    assert result.total_bound == 15
    assert result.pending_total == 0
    m = result.measured
    assert m is not None and m.bound_pods == 10 and m.expected_pods == 10
    assert m.throughput is not None and m.throughput > 0
    assert [o.index for o in result.ops] == [0, 1, 2]
    # what the init ops built was frozen out of cycle collection for the measured op only
    # (as simulate does with a loaded cluster): every object is the collector's again after
    import gc
    assert gc.get_freeze_count() == 0


def test_node_label_strategy_and_required_affinity(cases, registry, default_profile):
    tc = find_test_case(cases, "SchedulingPodAffinity")
    runner = WorkloadRunner(unroll(tc, "5Nodes"), default_profile, registry, RunOptions(pace="instant"))
    result = runner.run()
    assert result.status == "ok", result.error
    nodes = runner.cluster.list("Node")
    assert {n.labels["topology.kubernetes.io/zone"] for n in nodes} == {"zone1"}
    assert result.total_bound == 15 and result.measured.bound_pods == 10


def test_gated_barrier_and_rate_limited_deletes(cases, registry, default_profile):
    tc = find_test_case(cases, "SchedulingWhileGated")
    runner = WorkloadRunner(unroll(tc, "1Node_10GatedPods"), default_profile, registry,
                            RunOptions(pace="instant"))
    result = runner.run()
    assert result.status == "ok", result.error
    assert result.pending_end["gated"] == 10
    assert result.measured.bound_pods == 10
    assert result.total_bound == 20
    assert [o.note for o in result.ops if o.description.startswith("deletePods")] == ["10 pods"]


def test_waiting_rate_limited_deletes(tmp_path, registry, default_profile):
    config = tmp_path / "performance-config.yaml"
    templates = (FIXTURES / "templates").as_posix()
    config.write_text(f"""
- name: DeleteThenSchedule
  defaultPodTemplatePath: {templates}/light-pod.yaml
  workloadTemplate:
  - opcode: createNodes
    count: 1
    nodeTemplatePath: {templates}/node-with-name.yaml
  - opcode: createPods
    countParam: $pods
  - opcode: deletePods
    namespace: namespace-1
    deletePodsPerSecond: 50
  - opcode: createPods
    count: 5
    collectMetrics: true
  workloads:
  - name: small
    params: {{pods: 10}}
""")
    (tc,) = load_test_cases(config)
    runner = WorkloadRunner(unroll(tc, "small"), default_profile, registry, RunOptions(pace="instant"))
    result = runner.run()
    assert result.status == "ok", result.error
    assert runner.cluster.list("Pod", "namespace-1") == []
    assert result.simulated_seconds == pytest.approx(0.2)
    assert result.measured.bound_pods == 5 and result.total_bound == 15


def test_unschedulable_pods_are_reported_not_raised(cases, registry, default_profile):
    tc = find_test_case(cases, "SchedulingBasic")
    w = tc.workload("5Nodes")
    # 5 nodes x 4 cpu hold 200 pods of 100m
    too_many = type(w)(name="tooMany", params={"initNodes": 5, "initPods": 0, "measurePods": 210})
    result = run(tc, too_many, registry, default_profile, stall_timeout=30)
    assert result.status == "failed"
    assert "waiting for 210 pods in namespace-2 to be scheduled (200 bound)" in result.error
    assert "NodeResourcesFit" in result.error
    assert result.measured.bound_pods == 200 and result.pending_total == 10


def test_steady_state(tmp_path, registry, default_profile):
    config = tmp_path / "performance-config.yaml"
    templates = (FIXTURES / "templates").as_posix()
    config.write_text(f"""
- name: Steady
  defaultPodTemplatePath: {templates}/light-pod.yaml
  workloadTemplate:
  - opcode: createNodes
    count: 2
  - opcode: createPods
    count: 5
    steadyState: true
    durationParam: $duration
    collectMetrics: true
  workloads:
  - name: short
    params: {{duration: 300ms}}
""")
    (tc,) = load_test_cases(config)
    u = unroll(tc, "short")
    assert u.ops[1].steady_state and u.ops[1].duration == pytest.approx(0.3)
    result = WorkloadRunner(u, default_profile, registry, RunOptions(pace="wall")).run()
    assert result.status == "ok", result.error
    assert result.measured.bound_pods >= 10  # at least two batches went through
    assert result.simulated_seconds >= 0.3
    instant = WorkloadRunner(u, default_profile, registry, RunOptions(pace="instant")).run()
    assert instant.status == "error" and "pace='wall'" in instant.error
