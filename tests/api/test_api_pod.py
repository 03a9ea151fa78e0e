import datetime as dt

import attrs
import pytest

from kschedfw.api import ContainerPort, Pod, Taint, Toleration, parse_object
from kschedfw.api.field import ManifestError

MI = 2**20
GI = 2**30
DEFAULT_MEM = 200 * MI


def ctr(name="c", requests=None, limits=None, restart_policy=None, ports=None, image="img"):
    d = {"name": name, "image": image}
    res = {}
    if requests is not None:
        res["requests"] = requests
    if limits is not None:
        res["limits"] = limits
    if res:
        d["resources"] = res
    if restart_policy:
        d["restartPolicy"] = restart_policy
    if ports:
        d["ports"] = ports
    return d


def pod(containers=(), init=(), overhead=None, name="p", **spec):
    s = {"containers": list(containers), **spec}
    if init:
        s["initContainers"] = list(init)
    if overhead:
        s["overhead"] = overhead
    return parse_object({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": s})


SIDECAR = "Always"


@pytest.mark.parametrize("p, expected, expected_non_zero", [
    pytest.param(pod([ctr(requests={"cpu": "100m", "memory": "1Gi"}),
                      ctr("d", requests={"cpu": "1", "memory": "512Mi"})]),
                 {"cpu": 1100, "memory": GI + 512 * MI}, {"cpu": 1100, "memory": GI + 512 * MI},
                 id="containers-add-up"),
    pytest.param(pod([ctr()]), {}, {"cpu": 100, "memory": DEFAULT_MEM}, id="no-requests"),
    pytest.param(pod([ctr(requests={"cpu": "0"})]), {"cpu": 0}, {"cpu": 0, "memory": DEFAULT_MEM},
                 id="explicit-zero-stays-zero"),
    pytest.param(pod([ctr(requests={"memory": "1Gi"}), ctr("d")]),
                 {"memory": GI}, {"cpu": 200, "memory": GI + DEFAULT_MEM},
                 id="defaults-per-container"),
    pytest.param(pod([ctr(limits={"cpu": "2", "memory": "1Gi"})]),
                 {"cpu": 2000, "memory": GI}, {"cpu": 2000, "memory": GI},
                 id="requests-default-to-limits"),
    pytest.param(pod([ctr(requests={"cpu": "1"}, limits={"cpu": "2", "example.com/gpu": 1})]),
                 {"cpu": 1000, "example.com/gpu": 1}, {"cpu": 1000, "memory": DEFAULT_MEM,
                                                       "example.com/gpu": 1},
                 id="limit-only-for-some-resources"),
    pytest.param(pod([ctr(requests={"cpu": "1"})], init=[ctr("i", requests={"cpu": "3", "memory": "1Gi"})]),
                 {"cpu": 3000, "memory": GI}, {"cpu": 3000, "memory": GI},
                 id="init-container-peak"),
    pytest.param(pod([ctr(requests={"cpu": "2"})], init=[ctr("i", requests={"cpu": "1"}),
                                                         ctr("j", requests={"cpu": "1500m"})]),
                 {"cpu": 2000}, {"cpu": 2000, "memory": DEFAULT_MEM}, id="init-smaller-than-main"),
    pytest.param(pod([ctr(requests={"cpu": "1"})],
                     init=[ctr("s", requests={"cpu": "1"}, restart_policy=SIDECAR),
                           ctr("i", requests={"cpu": "2"})]),
                 {"cpu": 3000}, {"cpu": 3000, "memory": 2 * DEFAULT_MEM},
                 id="init-after-sidecar-runs-next-to-it"),
    pytest.param(pod([ctr(requests={"cpu": "1"})],
                     init=[ctr("i", requests={"cpu": "5"}),
                           ctr("s", requests={"cpu": "1"}, restart_policy=SIDECAR)]),
                 {"cpu": 5000}, {"cpu": 5000, "memory": 2 * DEFAULT_MEM},
                 id="init-before-sidecar-runs-alone"),
    pytest.param(pod([ctr(requests={"cpu": "1", "memory": "1Gi"})],
                     init=[ctr("s1", requests={"cpu": "500m", "memory": "100Mi"}, restart_policy=SIDECAR),
                           ctr("s2", requests={"cpu": "500m"}, restart_policy=SIDECAR)]),
                 {"cpu": 2000, "memory": GI + 100 * MI},
                 {"cpu": 2000, "memory": GI + 100 * MI + DEFAULT_MEM},
                 id="sidecars-add-to-containers"),
    pytest.param(pod([ctr(requests={"cpu": "1"})],
                     init=[ctr("s1", requests={"cpu": "1"}, restart_policy=SIDECAR),
                           ctr("i", requests={"cpu": "1500m"}),
                           ctr("s2", requests={"cpu": "2"}, restart_policy=SIDECAR),
                           ctr("j", requests={"cpu": "2"})]),
                 {"cpu": 5000}, {"cpu": 5000, "memory": 3 * DEFAULT_MEM},
                 id="sidecars-accumulate"),
    pytest.param(pod([ctr(requests={"cpu": "1"})],
                     init=[ctr("s1", requests={"cpu": "1"}, restart_policy=SIDECAR),
                           ctr("i", requests={"cpu": "10"})]),
                 {"cpu": 11000}, {"cpu": 11000, "memory": 2 * DEFAULT_MEM},
                 id="big-init-plus-sidecar"),
    pytest.param(pod([ctr(requests={"cpu": "1"})], overhead={"cpu": "250m", "memory": "120Mi"}),
                 {"cpu": 1250, "memory": 120 * MI}, {"cpu": 1250, "memory": 120 * MI + DEFAULT_MEM},
                 id="overhead"),
    pytest.param(pod([ctr(requests={"cpu": "1"})], init=[ctr("i", requests={"cpu": "2"})],
                     overhead={"cpu": "100m"}),
                 {"cpu": 2100}, {"cpu": 2100, "memory": DEFAULT_MEM}, id="overhead-after-init-peak"),
    pytest.param(pod([ctr(requests={"cpu": "1"}), ctr("d", requests={"cpu": "1"})],
                     resources={"requests": {"cpu": "3"}}),
                 {"cpu": 3000}, {"cpu": 3000, "memory": 2 * DEFAULT_MEM}, id="pod-level-requests"),
    pytest.param(pod([]), {}, {}, id="no-containers"),
])
def test_pod_request(p, expected, expected_non_zero):
    assert p.request() == expected
    assert p.request(non_zero=True) == expected_non_zero
    assert p.request() is p.request()  # cached


TAINT = Taint("dedicated", "gpu", "NoSchedule")


@pytest.mark.parametrize("toleration, taint, expected", [
    pytest.param(Toleration("dedicated", "Equal", "gpu", "NoSchedule"), TAINT, True, id="exact"),
    pytest.param(Toleration("dedicated", "Equal", "gpu"), TAINT, True, id="empty-effect-any-effect"),
    pytest.param(Toleration("dedicated", "Equal", "cpu", "NoSchedule"), TAINT, False,
                 id="value-differs"),
    pytest.param(Toleration("dedicated", "Equal", "gpu", "NoExecute"), TAINT, False,
                 id="effect-differs"),
    pytest.param(Toleration("dedicated", "Exists", "", "NoSchedule"), TAINT, True,
                 id="exists-ignores-value"),
    pytest.param(Toleration("other", "Exists"), TAINT, False, id="key-differs"),
    pytest.param(Toleration("", "Exists"), TAINT, True, id="empty-key-exists-matches-all"),
    pytest.param(Toleration("", "Exists", "", "NoExecute"), TAINT, False,
                 id="empty-key-exists-but-effect-differs"),
    pytest.param(Toleration("dedicated", "Equal", ""), Taint("dedicated", "", "NoSchedule"), True,
                 id="empty-values-equal"),
    pytest.param(Toleration("dedicated", "Equal", ""), TAINT, False, id="empty-value-vs-value"),
    pytest.param(Toleration("sla", "Gt", "900"), Taint("sla", "950", "NoSchedule"), True,
                 id="Gt-tolerates-larger-taint-value"),
    pytest.param(Toleration("sla", "Gt", "950"), Taint("sla", "950", "NoSchedule"), False,
                 id="Gt-equal"),
    pytest.param(Toleration("sla", "Lt", "100"), Taint("sla", "50", "NoSchedule"), True, id="Lt"),
    pytest.param(Toleration("sla", "Lt", "100"), Taint("sla", "high", "NoSchedule"), False,
                 id="Lt-taint-not-integer"),
    pytest.param(Toleration("dedicated", "Bogus", "gpu"), TAINT, False, id="unknown-operator"),
])
def test_toleration_tolerates(toleration, taint, expected):
    assert toleration.tolerates(taint) is expected


@pytest.mark.parametrize("tol, field, fragment", [
    pytest.param({"key": "a", "operator": "Equals"}, "spec.tolerations[0].operator", "Unsupported",
                 id="bad-operator"),
    pytest.param({"key": "a", "operator": "Exists", "value": "x"}, "spec.tolerations[0].value",
                 "must be empty", id="exists-with-value"),
    pytest.param({"value": "x"}, "spec.tolerations[0].operator", "key is empty",
                 id="empty-key-needs-exists"),
    pytest.param({"key": "a", "effect": "NoRun"}, "spec.tolerations[0].effect", "Unsupported",
                 id="bad-effect"),
])
def test_toleration_errors(tol, field, fragment):
    with pytest.raises(ManifestError) as err:
        pod([ctr()], tolerations=[tol])
    assert err.value.field == field and fragment in str(err.value)
    assert err.value.obj == "Pod default/p"


def test_toleration_defaults():
    p = pod([ctr()], tolerations=[{"key": "a", "value": "b"}, {"operator": "Exists"}])
    assert p.tolerations == (Toleration("a", "Equal", "b"), Toleration("", "Exists"))


def test_pod_defaults_and_identity():
    p = pod([ctr()])
    assert (p.namespace, p.scheduler_name, p.node_name, p.phase) == ("default", "default-scheduler",
                                                                    "", "Pending")
    assert p.priority is None and p.effective_priority == 0
    assert p.termination_grace_period_seconds == 30
    assert p.key == "default/p"
    assert p.uid and p.uid == pod([ctr()]).uid and p.uid != pod([ctr()], name="q").uid
    assert not p.is_assigned and not p.is_terminated and not p.is_terminating
    assert hash(p) == hash(p.uid) and p == pod([ctr()])
    assert len({p, pod([ctr()])}) == 1


def test_pod_fields_from_snapshot(snapshot_objects):
    pods = {o.name: o for o in snapshot_objects if isinstance(o, Pod)}
    victim = pods["victim-bound"]
    assert victim.is_assigned and victim.node_name == "node-1"
    assert victim.priority == 1000 and victim.preemption_policy == "Never"
    assert victim.deletion_timestamp == dt.datetime(2026, 11, 21, 23, 58, 37, tzinfo=dt.timezone.utc)
    assert victim.deletion_grace_period_seconds == 30
    cond = victim.condition("DisruptionTarget")
    assert cond.status == "True" and cond.reason == "PreemptionByScheduler"
    assert victim.request() == {"cpu": 1000, "memory": 128 * MI}
    assert pods["done-1"].is_terminated and pods["failed-1"].is_terminated
    gpu = pods["gpu-batch-1"]
    assert gpu.request() == {"cpu": 2000, "memory": 4 * GI, "nvidia.com/gpu": 1}
    assert gpu.affinity.node_affinity.required.matches({"topology.kubernetes.io/zone": "zone-b"}, "x")
    assert gpu.tolerations[0].tolerates(Taint("dedicated", "gpu", "NoSchedule"))
    web = pods["web-1"]
    anti = web.affinity.pod_anti_affinity
    assert anti.required == () and anti.preferred[0].weight == 100
    assert anti.preferred[0].term.topology_key == "kubernetes.io/hostname"
    assert web.affinity.pod_affinity is None and web.affinity.node_affinity is None
    tsc = web.topology_spread_constraints[0]
    assert (tsc.max_skew, tsc.when_unsatisfiable) == (1, "ScheduleAnyway")
    assert tsc.label_selector.matches({"app": "web"})
    assert web.creation_timestamp.tzinfo is not None
    assert web.uid == "8f0db072-6ce2-40a8-bf99-99235c4645cc" and web.resource_version == "216"


def test_template_pod_with_case_insensitive_spread_fields(fixtures):
    from kschedfw.api import load_manifests
    (p,) = load_manifests(fixtures / "templates" / "pod-with-node-inclusion-policy.yaml")
    assert p.name == "" and p.generate_name == "spreading-pod-with-node-inclusion-policy-"
    tsc = p.topology_spread_constraints[0]
    assert tsc.node_affinity_policy == "Honor" and tsc.node_taints_policy == "Honor"
    (d,) = load_manifests(fixtures / "templates" / "daemonset-pod.yaml")
    term = d.affinity.node_affinity.required.terms[0]
    assert term.matches({}, "scheduler-perf-node") and not term.matches({}, "other")
    (a,) = load_manifests(fixtures / "templates" / "pod-with-pod-affinity.yaml")
    assert a.affinity.pod_affinity.required[0].namespaces == ("sched-1", "sched-0")


def test_host_ports_and_images():
    p = pod([ctr(ports=[{"containerPort": 80}, {"containerPort": 443, "hostPort": 8443,
                                                 "protocol": "UDP", "hostIP": "10.0.0.1"}])],
            init=[ctr("i", ports=[{"containerPort": 53, "hostPort": 53}], image="init-img")])
    # upstream counts host ports of regular init containers as free once they finished
    assert p.host_ports() == (ContainerPort(443, 8443, "UDP", "10.0.0.1"),)
    sidecar = pod([ctr()], init=[ctr("s", ports=[{"containerPort": 53, "hostPort": 53}], restart_policy="Always")])
    assert sidecar.host_ports() == (ContainerPort(53, 53, "TCP", ""),)
    assert p.containers[0].ports[0] == ContainerPort(80, 0, "TCP", "")
    assert p.image_names() == ("img", "init-img")
    hn = pod([ctr(ports=[{"containerPort": 9100}])], hostNetwork=True)
    assert hn.host_network and hn.host_ports() == (ContainerPort(9100, 9100),)


def test_volumes_and_claims():
    p = pod([ctr()], volumes=[
        {"name": "data", "persistentVolumeClaim": {"claimName": "pvc-1", "readOnly": True}},
        {"name": "scratch", "ephemeral": {"volumeClaimTemplate": {"spec": {}}}},
        {"name": "cache", "emptyDir": {}},
        {"name": "secret", "secret": {"secretName": "s"}},
    ])
    data, scratch, cache, secret = p.volumes
    assert (data.source, data.claim_name, data.read_only) == ("persistentVolumeClaim", "pvc-1", True)
    assert scratch.source == "ephemeral" and scratch.claim_name is None
    assert cache.source == "emptyDir" and cache.details == {}
    assert secret.details == {"secretName": "s"}
    assert p.claim_names() == ("pvc-1", "p-scratch")


def test_with_node_and_nominated_node():
    p = pod([ctr(requests={"cpu": "1"})])
    req = p.request()
    bound = p.with_node("n1")
    assert bound.node_name == "n1" and bound.is_assigned
    assert bound.raw["spec"]["nodeName"] == "n1" and "nodeName" not in p.raw["spec"]
    assert bound.request() is req
    nom = p.with_nominated_node("n2")
    assert nom.nominated_node_name == "n2" and nom.raw["status"]["nominatedNodeName"] == "n2"
    assert nom.with_nominated_node("").nominated_node_name == ""
    evolved = attrs.evolve(p, priority=5)
    assert evolved.effective_priority == 5 and evolved.request() == req


def test_scheduling_gates_priority_and_misc():
    p = parse_object({
        "kind": "Pod",
        "metadata": {"name": "g", "namespace": "ns", "uid": "u-1", "labels": {"a": "b"},
                     "ownerReferences": [{"kind": "ReplicaSet", "name": "rs"}],
                     "finalizers": ["x/y"]},
        "spec": {"containers": [ctr()], "schedulingGates": [{"name": "g1"}, {"name": "g2"}],
                 "priority": 7, "priorityClassName": "high", "preemptionPolicy": "Never",
                 "schedulerName": "mine", "nodeSelector": {"disk": "ssd"},
                 "terminationGracePeriodSeconds": 0,
                 "resourceClaims": [{"name": "gpu", "resourceClaimName": "c"}]},
        "status": {"phase": "Running", "startTime": "2024-01-01T00:00:00Z",
                   "nominatedNodeName": "n3"},
    })
    assert p.scheduling_gates == ("g1", "g2")
    assert (p.priority, p.priority_class_name, p.preemption_policy) == (7, "high", "Never")
    assert p.scheduler_name == "mine" and p.node_selector == {"disk": "ssd"}
    assert p.termination_grace_period_seconds == 0 and p.uid == "u-1" and p.key == "ns/g"
    assert p.owner_references[0]["kind"] == "ReplicaSet" and p.finalizers == ("x/y",)
    assert p.resource_claims == ({"name": "gpu", "resourceClaimName": "c"},)
    assert p.start_time == dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc)
    assert p.nominated_node_name == "n3" and p.phase == "Running"


def test_sidecar_flag():
    p = pod([ctr()], init=[ctr("s", restart_policy="Always"), ctr("i")])
    assert [c.is_sidecar for c in p.init_containers] == [True, False]


@pytest.mark.parametrize("affinity, kept", [
    pytest.param({}, (False, False, False), id="empty affinity is none"),
    pytest.param({"podAffinity": {}}, (False, True, False), id="empty podAffinity kept"),
    pytest.param({"podAntiAffinity": {}}, (False, False, True), id="empty podAntiAffinity kept"),
    pytest.param({"nodeAffinity": {}}, (True, False, False), id="empty nodeAffinity kept"),
    pytest.param({"podAffinity": None, "nodeAffinity": None}, (False, False, False), id="null parts absent"),
])
def test_empty_affinity_parts_are_kept_as_upstream_keeps_non_nil_structs(affinity, kept):
    """Upstream's API server keeps ``podAffinity: {}`` as a non-nil empty struct, and the
    scheduler looks at non-nil-ness (signing, NodeInfo's pods with affinity)."""
    from kschedfw.fwk.types import NodeInfo
    p = pod([ctr()], affinity=affinity)
    a = p.affinity
    assert (a is not None and a.node_affinity is not None, a is not None and a.pod_affinity is not None,
            a is not None and a.pod_anti_affinity is not None) == kept
    if a is not None and a.pod_affinity is not None:
        assert a.pod_affinity.required == () and a.pod_affinity.preferred == ()
    info = NodeInfo()
    info.add_pod(attrs.evolve(p, node_name="n"))
    # upstream podWithAffinity: PodAffinity != nil || PodAntiAffinity != nil; required anti-affinity needs terms
    assert (len(info.pods_with_affinity), len(info.pods_with_required_anti_affinity)) == (int(kept[1] or kept[2]), 0)
