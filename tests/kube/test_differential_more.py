"""More differential scenarios: areas test_differential.py leaves out (ImageLocality, PreferNoSchedule
scoring, matchFields with preferred weights, extended resources, ephemeral storage, host ports, pod
overhead, sidecar resource math, topology spread's minDomains / policies / matchLabelKeys, and
NodeResourcesFit's MostAllocated and RequestedToCapacityRatio strategies). Each placement is forced
by filters or by a clear score margin (nodes of distinct sizes), so kube-scheduler decides it alone;
kschedfw must decide the same, and write the same message on a pod neither can place."""

from __future__ import annotations

from typing import Any

import pytest

from kschedfw.testing.controlplane import ControlPlane
from tests.kube.helpers import pod_manifest
from tests.kube.test_differential import (BATCH_NODES, NO_DEFAULT_SPREAD, batch_cluster,  # noqa: F401
                                          both, one_pod_per_node_waves)

ZONE = "topology.kubernetes.io/zone"
BIG_IMAGE = "example.com/big:1"
MB = 1024 * 1024


def make_nodes(cp: ControlPlane, nodes: dict[str, dict[str, Any]]) -> None:
    """Nodes as a kubelet would report them; ``images`` lands in status.images."""
    for name, spec in nodes.items():
        cp.create_ready_node(name, cpu=spec["cpu"], memory=spec.get("memory", "8Gi"),
                             labels=spec.get("labels"), taints=spec.get("taints"),
                             extra_allocatable=spec.get("extra"))
        if spec.get("images"):
            cp.api("PATCH", f"/api/v1/nodes/{name}/status", {"status": {"images": spec["images"]}},
                   content_type="application/merge-patch+json")


def drop_nodes(cp: ControlPlane, names) -> None:
    for name in names:
        cp.api("DELETE", f"/api/v1/nodes/{name}")


def pod(ns: str, scheduler: str, name: str, *, labels: dict | None = None, image: str | None = None,
        requests: dict | None = None, ports: list | None = None, **spec: Any) -> dict:
    manifest = pod_manifest(name, ns, scheduler=scheduler, **spec)
    manifest["metadata"]["labels"] = labels or {}
    container = manifest["spec"]["containers"][0]
    if image:
        container["image"] = image
    if requests:
        container["resources"]["requests"].update(requests)
        extended = {k: v for k, v in requests.items() if "/" in k}  # must be limited as much
        if extended:
            container["resources"]["limits"] = extended
    if ports:
        container["ports"] = ports
    return manifest


def names_in(ns: str, *names: str) -> dict:
    """Required node affinity to these nodes: one matchFields term each (the API allows one value)."""
    return {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [f"{ns}-{n}"]}]} for n in names]}}


# ---------------------------------------------------------------------- filters and scores
def plugin_nodes(ns: str) -> dict[str, dict[str, Any]]:
    """a: small, holds a 900 MB image; b: PreferNoSchedule-tainted, ssd; c: gpus, NoSchedule
    taint, little ephemeral storage; d: the biggest."""
    storage = {"ephemeral-storage": "10Gi"}
    return {
        f"{ns}-a": {"cpu": "3", "labels": {ZONE: "a"}, "extra": storage,
                    "images": [{"names": [BIG_IMAGE], "sizeBytes": 900 * MB}]},
        f"{ns}-b": {"cpu": "4", "labels": {ZONE: "b", "disk": "ssd"}, "extra": storage,
                    "taints": [{"key": "soft", "value": "yes", "effect": "PreferNoSchedule"}]},
        f"{ns}-c": {"cpu": "2", "memory": "4Gi", "labels": {ZONE: "b", "disk": "ssd"},
                    "extra": {"ephemeral-storage": "2Gi", "example.com/gpu": "2"},
                    "taints": [{"key": "gpu", "value": "true", "effect": "NoSchedule"}]},
        f"{ns}-d": {"cpu": "6", "memory": "16Gi", "labels": {ZONE: "c"}, "extra": storage},
    }


def plugin_waves(ns: str, scheduler: str) -> list[list[dict]]:
    gpu_toleration = [{"key": "gpu", "operator": "Exists"}]
    sidecar_first = [  # init phase needs 1 + 3 cpu (the sidecar keeps running), the run 1 + 1
        {"name": "sidecar", "image": "registry.k8s.io/pause:3.10", "restartPolicy": "Always",
         "resources": {"requests": {"cpu": "1"}}},
        {"name": "setup", "image": "registry.k8s.io/pause:3.10", "resources": {"requests": {"cpu": "3"}}}]
    return [
        # ImageLocality outweighs the bigger nodes' resource scores
        [pod(ns, scheduler, "image", image=BIG_IMAGE)],
        # only c has gpus, and only a toleration with operator Exists lets the pod there
        [pod(ns, scheduler, "gpu", requests={"example.com/gpu": "1"}, tolerations=gpu_toleration),
         pod(ns, scheduler, "gpu-too-many", requests={"example.com/gpu": "3"}, tolerations=gpu_toleration),
         pod(ns, scheduler, "no-storage", requests={"ephemeral-storage": "12Gi"})],
        # b or d by name; preferred weights choose b (ssd), whose soft taint is tolerated
        [pod(ns, scheduler, "fields", affinity={"nodeAffinity": {
            **names_in(ns, "b", "d"),
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": 90, "preference": {"matchExpressions": [{"key": "disk", "operator": "In",
                                                                    "values": ["ssd"]}]}},
                {"weight": 10, "preference": {"matchExpressions": [{"key": ZONE, "operator": "In",
                                                                    "values": ["c"]}]}}]}},
            tolerations=[{"key": "soft", "operator": "Exists", "effect": "PreferNoSchedule"}])],
        # a or b: b is bigger, but its untolerated PreferNoSchedule taint costs more
        [pod(ns, scheduler, "soft", cpu="1", affinity={"nodeAffinity": names_in(ns, "a", "b")})],
        [pod(ns, scheduler, "port-1", nodeSelector={ZONE: "c"}, ports=[{"containerPort": 80, "hostPort": 8080}])],
        # d's host port is taken: a; and nowhere at all in zone c
        [pod(ns, scheduler, "port-2", affinity={"nodeAffinity": names_in(ns, "a", "d")},
             ports=[{"containerPort": 80, "hostPort": 8080}]),
         pod(ns, scheduler, "port-3", nodeSelector={ZONE: "c"}, ports=[{"containerPort": 81, "hostPort": 8080,
                                                                        "protocol": "TCP"}])],
        # 4 cpu while initialising: only d has them
        [pod(ns, scheduler, "sidecar", cpu="1", initContainers=sidecar_first)],
        # 1 cpu + 2500m overhead: only b has 3.5 cpu left
        [pod(ns, scheduler, "overhead", cpu="1", runtimeClassName=f"{ns}-heavy")],
    ]


@pytest.fixture
def plugin_cluster(control_plane: ControlPlane, namespace):
    nodes = plugin_nodes(namespace)
    make_nodes(control_plane, nodes)
    for rc in (f"{namespace}-heavy", f"{namespace}-k-heavy"):
        control_plane.api("POST", "/apis/node.k8s.io/v1/runtimeclasses", {
            "metadata": {"name": rc}, "handler": "runc", "overhead": {"podFixed": {"cpu": "2500m"}}})
    yield nodes
    drop_nodes(control_plane, nodes)
    for rc in (f"{namespace}-heavy", f"{namespace}-k-heavy"):
        control_plane.api("DELETE", f"/apis/node.k8s.io/v1/runtimeclasses/{rc}")


def test_filters_and_scores_of_many_plugins_as_kube_scheduler(control_plane, namespace, plugin_cluster, tmp_path):
    assert len(control_plane.api("GET", "/api/v1/nodes")["items"]) == 4

    def waves(ns: str, scheduler: str) -> list[list[dict]]:
        made = plugin_waves(namespace, scheduler)  # node names are the upstream namespace's
        for wave in made:
            for manifest in wave:
                manifest["metadata"]["namespace"] = ns
                if manifest["spec"].get("runtimeClassName"):
                    manifest["spec"]["runtimeClassName"] = f"{ns}-heavy"
        return made

    upstream, ours = both(control_plane, namespace, tmp_path, waves)
    n = namespace
    assert {k: v[0] for k, v in upstream.items()} == {
        "image": f"{n}-a", "gpu": f"{n}-c", "gpu-too-many": "", "no-storage": "", "fields": f"{n}-b",
        "soft": f"{n}-a", "port-1": f"{n}-d", "port-2": f"{n}-a", "port-3": "", "sidecar": f"{n}-d",
        "overhead": f"{n}-b"}
    assert ours == upstream


# ---------------------------------------------------------------------- topology spread
def spread_nodes(ns: str) -> dict[str, dict[str, Any]]:
    """Zones a (s1, and s2 tainted), b (s3, s4), c (s5); s3 and s5 in pool big; every size apart."""
    return {
        f"{ns}-s1": {"cpu": "2", "labels": {ZONE: "a"}},
        f"{ns}-s2": {"cpu": "3", "labels": {ZONE: "a"}, "taints": [{"key": "t", "value": "x", "effect": "NoSchedule"}]},
        f"{ns}-s3": {"cpu": "4", "labels": {ZONE: "b", "pool": "big"}},
        f"{ns}-s4": {"cpu": "5", "labels": {ZONE: "b"}},
        f"{ns}-s5": {"cpu": "8", "labels": {ZONE: "c", "pool": "big"}},
    }


def spread_waves(nodes_ns: str):
    def make(ns: str, scheduler: str) -> list[list[dict]]:
        def spread(app: str, **more: Any) -> list[dict]:
            return [{"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "DoNotSchedule",
                     "labelSelector": {"matchLabels": {"app": app}}, **more}]

        def on(name: str, node: str, labels: dict, **spec: Any) -> dict:
            return pod(ns, scheduler, name, labels=labels,
                       nodeSelector={"kubernetes.io/hostname": f"{nodes_ns}-{node}"}, **spec)

        # a whole cpu each, so that the bigger node scores strictly higher (100m would tie after
        # the scores' integer divisions)
        md = {"cpu": "1", "labels": {"app": "md"}, "topologySpreadConstraints": spread("md", minDomains=4)}
        tolerate_t = [{"key": "t", "operator": "Equal", "value": "x", "effect": "NoSchedule"}]
        zones_ab = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": ZONE, "operator": "In", "values": ["a", "b"]}]}]}}}
        return [
            # minDomains 4 with 3 zones: the global minimum counts as 0, one pod a zone, then none
            [pod(ns, scheduler, "md-1", **md)], [pod(ns, scheduler, "md-2", **md)],
            [pod(ns, scheduler, "md-3", **md)], [pod(ns, scheduler, "md-4", **md)],
            # pods pinned by hostname, for the constraints below to count
            [on("th-0a", "s2", {"app": "th"}, tolerations=tolerate_t), on("th-0b", "s3", {"app": "th"}),
             on("nap-0b", "s3", {"app": "nap"}), on("nap-0c", "s5", {"app": "nap"}),
             on("mlk-old-a", "s1", {"app": "mlk", "version": "v2"}),
             on("mlk-b", "s4", {"app": "mlk", "version": "v1"}), on("mlk-c", "s5", {"app": "mlk", "version": "v1"})],
            [   # nodeTaintsPolicy Honor: s2's pod does not count (zone a 0, b 1), so zone a: s1
                pod(ns, scheduler, "th-1", labels={"app": "th"}, affinity=zones_ab,
                    topologySpreadConstraints=spread("th", nodeTaintsPolicy="Honor")),
                # nodeAffinityPolicy Ignore: zone a (0 pods) counts though the selector excludes it
                pod(ns, scheduler, "nap-ignore", labels={"app": "nap"}, nodeSelector={"pool": "big"},
                    topologySpreadConstraints=spread("nap", nodeAffinityPolicy="Ignore")),
                # matchLabelKeys: only v1 pods count (a 0, b 1, c 1), so zone a: s1
                pod(ns, scheduler, "mlk-new", labels={"app": "mlk", "version": "v1"},
                    topologySpreadConstraints=spread("mlk", matchLabelKeys=["version"]))],
            # nodeAffinityPolicy Honor (the default): zones b and c only, 1 each: the emptier s3
            [pod(ns, scheduler, "nap-honor", labels={"app": "nap"}, nodeSelector={"pool": "big"},
                 topologySpreadConstraints=spread("nap"))],
        ]
    return make


@pytest.fixture
def spread_cluster(control_plane: ControlPlane, namespace):
    nodes = spread_nodes(namespace)
    make_nodes(control_plane, nodes)
    yield nodes
    drop_nodes(control_plane, nodes)


def test_topology_spread_min_domains_policies_and_match_label_keys(control_plane, namespace, spread_cluster,
                                                                    tmp_path):
    assert len(control_plane.api("GET", "/api/v1/nodes")["items"]) == 5
    upstream, ours = both(control_plane, namespace, tmp_path, spread_waves(namespace))
    n = namespace
    assert {k: v[0] for k, v in upstream.items()} == {
        "md-1": f"{n}-s5", "md-2": f"{n}-s4", "md-3": f"{n}-s1", "md-4": "",
        "th-0a": f"{n}-s2", "th-0b": f"{n}-s3", "nap-0b": f"{n}-s3", "nap-0c": f"{n}-s5",
        "mlk-old-a": f"{n}-s1", "mlk-b": f"{n}-s4", "mlk-c": f"{n}-s5",
        "th-1": f"{n}-s1", "nap-ignore": "", "mlk-new": f"{n}-s1", "nap-honor": f"{n}-s3"}
    assert ours == upstream


# ---------------------------------------------------------------------- scoring strategies
def proportional_nodes(ns: str) -> dict[str, dict[str, Any]]:
    """Memory in proportion to cpu, as every pod's request: BalancedAllocation scores all alike."""
    return {f"{ns}-r{cpu}": {"cpu": str(cpu), "memory": f"{2 * cpu}Gi"} for cpu in (2, 4, 6)}


@pytest.fixture
def proportional_cluster(control_plane: ControlPlane, namespace):
    nodes = proportional_nodes(namespace)
    make_nodes(control_plane, nodes)
    yield nodes
    drop_nodes(control_plane, nodes)


def _fit_profile(strategy: dict) -> dict:
    return {"pluginConfig": [{"name": "NodeResourcesFit", "args": {"scoringStrategy": {
        "resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}], **strategy}}}]}


STRATEGIES = {
    # the fullest node first: r2 takes two pods, then r4
    "MostAllocated": (_fit_profile({"type": "MostAllocated"}), ["r2", "r2", "r4", "r4", "r4"]),
    # a peak at half use: r2 to 50%, r4 to 25% then 50%, r4 to 75% (r2 full scores 0), then r6
    "RequestedToCapacityRatio": (_fit_profile({"type": "RequestedToCapacityRatio", "requestedToCapacityRatio": {
        "shape": [{"utilization": 0, "score": 0}, {"utilization": 50, "score": 10},
                  {"utilization": 100, "score": 0}]}}), ["r2", "r4", "r4", "r4", "r6"]),
}


@pytest.mark.parametrize("strategy", list(STRATEGIES))
def test_fit_scoring_strategies_of_a_custom_profile(control_plane, namespace, proportional_cluster, tmp_path,
                                                    strategy):
    assert len(control_plane.api("GET", "/api/v1/nodes")["items"]) == 3
    profile, want = STRATEGIES[strategy]

    def waves(ns: str, scheduler: str) -> list[list[dict]]:
        return [[pod(ns, scheduler, f"p{i}", cpu="1", memory="2Gi")] for i in range(len(want))]

    upstream, ours = both(control_plane, namespace, tmp_path, waves, must_bind=True, profile=profile)
    assert {k: v[0] for k, v in upstream.items()} == {f"p{i}": f"{namespace}-{node}" for i, node in enumerate(want)}
    assert ours == upstream


# ---------------------------------------------------------------------- cordons, hugepages, pod-level resources
def misc_nodes(ns: str) -> dict[str, dict[str, Any]]:
    """m2 cordoned; only m3 has hugepages; m4 the biggest."""
    return {
        f"{ns}-m1": {"cpu": "2", "labels": {ZONE: "a"}},
        f"{ns}-m2": {"cpu": "4", "labels": {ZONE: "b"}},
        f"{ns}-m3": {"cpu": "6", "labels": {ZONE: "c"}, "extra": {"hugepages-2Mi": "1Gi"}},
        f"{ns}-m4": {"cpu": "8", "labels": {ZONE: "c"}},
    }


def misc_waves(ns: str, scheduler: str) -> list[list[dict]]:
    cordon_toleration = [{"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoSchedule"}]
    hugepages = {"hugepages-2Mi": "512Mi"}
    self_affinity = {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": {"matchLabels": {"app": "self"}}, "topologyKey": ZONE}]}}
    near_self = {"podAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 100, "podAffinityTerm": {
        "labelSelector": {"matchLabels": {"app": "self"}}, "topologyKey": "kubernetes.io/hostname",
        "namespaceSelector": {}}}]}}
    hugepages_pod = pod(ns, scheduler, "hugepages", requests=hugepages)

    def on_m1(name: str, port: dict) -> dict:
        m1 = next(iter(misc_nodes(ns.removesuffix("-k"))))
        return pod(ns, scheduler, name, nodeSelector={"kubernetes.io/hostname": m1},
                   ports=[{"containerPort": 80, "hostPort": 9000, **port}])

    hugepages_pod["spec"]["containers"][0]["resources"]["limits"] = {**hugepages, "memory": "64Mi"}
    return [
        [pod(ns, scheduler, "cordoned-ok", nodeSelector={ZONE: "b"}, tolerations=cordon_toleration),
         pod(ns, scheduler, "cordoned-no", nodeSelector={ZONE: "b"}),
         pod(ns, scheduler, "no-such-label", nodeSelector={"missing": "x"})],
        [hugepages_pod],
        # pod-level requests: 7 cpu fit only m4, 9 cpu nowhere (the containers ask 100m)
        [pod(ns, scheduler, "pod-level", resources={"requests": {"cpu": "7", "memory": "64Mi"}}),
         pod(ns, scheduler, "pod-level-big", resources={"requests": {"cpu": "9", "memory": "64Mi"}})],
        # the first pod of a group whose required affinity matches itself may go anywhere
        [pod(ns, scheduler, "self", cpu="1", labels={"app": "self"}, affinity=self_affinity)],
        [pod(ns, scheduler, "near-self", cpu="1", affinity=near_self)],
        # empty but present pod (anti-)affinity: nothing to satisfy
        [pod(ns, scheduler, "empty-affinity", cpu="1", affinity={"podAffinity": {}, "podAntiAffinity": {}})],
        # one host port on m1: other host IPs and another protocol share it, 0.0.0.0 does not
        [on_m1("hp-a", {"hostIP": "127.0.0.1"})],
        [on_m1("hp-b", {"hostIP": "127.0.0.2"}), on_m1("hp-c", {"protocol": "UDP"})],
        [on_m1("hp-d", {"hostIP": "0.0.0.0"})],
    ]


@pytest.fixture
def misc_cluster(control_plane: ControlPlane, namespace):
    nodes = misc_nodes(namespace)
    make_nodes(control_plane, nodes)
    control_plane.api("PATCH", f"/api/v1/nodes/{namespace}-m2", {"spec": {"unschedulable": True}},
                      content_type="application/merge-patch+json")
    yield nodes
    drop_nodes(control_plane, nodes)


def test_cordons_hugepages_pod_level_resources_and_self_affinity(control_plane, namespace, misc_cluster, tmp_path):
    assert len(control_plane.api("GET", "/api/v1/nodes")["items"]) == 4
    upstream, ours = both(control_plane, namespace, tmp_path, misc_waves)
    n = namespace
    assert {k: v[0] for k, v in upstream.items()} == {
        "cordoned-ok": f"{n}-m2", "cordoned-no": "", "no-such-label": "", "hugepages": f"{n}-m3",
        "pod-level": f"{n}-m4", "pod-level-big": "", "self": f"{n}-m3", "near-self": f"{n}-m3",
        "empty-affinity": f"{n}-m3", "hp-a": f"{n}-m1", "hp-b": f"{n}-m1", "hp-c": f"{n}-m1", "hp-d": ""}
    assert ours == upstream


# ---------------------------------------------------------------------- batching and empty pod affinity
@pytest.mark.usefixtures("batch_cluster")
def test_empty_pod_affinity_is_never_batched_as_kube_scheduler(control_plane, namespace, tmp_path):
    """Pods that would each take the previous pod's next-best node (see test_differential's
    batching test, where kube-scheduler gives hints) but carry ``podAffinity: {}``: upstream's
    InterPodAffinity refuses to sign them, so neither scheduler uses a hint."""
    assert len(control_plane.api("GET", "/api/v1/nodes")["items"]) == BATCH_NODES

    def waves(ns: str, scheduler: str) -> list[list[dict]]:
        (wave,) = one_pod_per_node_waves(ns, scheduler)
        for manifest in wave:
            manifest["spec"]["affinity"] = {"podAffinity": {}}
        return [wave]

    runners: list = []
    upstream, ours = both(control_plane, namespace, tmp_path, waves, must_bind=True, profile=NO_DEFAULT_SPREAD,
                          runners=runners)
    expected = {f"p{i}": f"{namespace}-n{BATCH_NODES - 1 - i}" for i in range(BATCH_NODES)}
    assert {k: v[0] for k, v in upstream.items()} == expected
    assert {k: v[0] for k, v in ours.items()} == expected
    assert (tmp_path / "kube-scheduler.log").read_text().count("OpportunisticBatch provided node hint") == 0
    assert runners[0].scheduler.batch_metrics.attempts.get((f"ours-{namespace}", "hint_used"), 0) == 0


# ---------------------------------------------------------------------- soft constraints
def soft_nodes(ns: str) -> dict[str, dict[str, Any]]:
    return {
        f"{ns}-w1": {"cpu": "4", "labels": {ZONE: "a"}},
        f"{ns}-w2": {"cpu": "6", "labels": {ZONE: "a"}},
        f"{ns}-w3": {"cpu": "5", "labels": {ZONE: "b"}},
        f"{ns}-w4": {"cpu": "3", "labels": {ZONE: "c"}},
    }


def soft_waves(cp: ControlPlane, nodes_ns: str):
    def make(ns: str, scheduler: str) -> list[list[dict]]:
        cp.api("POST", f"/api/v1/namespaces/{ns}/services", {  # before the pods, as a Deployment's
            "metadata": {"name": "web"}, "spec": {"selector": {"app": "web"}, "ports": [{"port": 80}]}})
        web = {"cpu": "500m", "labels": {"app": "web"}}  # a Service selects them: system default spreading
        soft = [{"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "ScheduleAnyway",
                 "labelSelector": {"matchLabels": {"app": "soft"}}}]
        magnet = {"podAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 100, "podAffinityTerm": {
            "labelSelector": {"matchLabels": {"app": "lonely"}}, "topologyKey": "kubernetes.io/hostname"}}]}}
        shy = {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 50, "podAffinityTerm": {
            "labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": ZONE}}]}}
        return [
            *([pod(ns, scheduler, f"web-{i}", **web)] for i in range(1, 5)),
            [pod(ns, scheduler, "magnet", nodeSelector={"kubernetes.io/hostname": f"{nodes_ns}-w4"}, affinity=magnet)],
            # the existing magnet's preferred term draws it to the smallest node
            [pod(ns, scheduler, "lonely", cpu="500m", labels={"app": "lonely"})],
            *([pod(ns, scheduler, f"soft-{i}", cpu="300m", labels={"app": "soft"},
                   topologySpreadConstraints=soft)] for i in range(1, 4)),
            [pod(ns, scheduler, "shy", cpu="200m", affinity=shy)],
        ]
    return make


@pytest.fixture
def soft_cluster(control_plane: ControlPlane, namespace):
    nodes = soft_nodes(namespace)
    make_nodes(control_plane, nodes)
    yield nodes
    drop_nodes(control_plane, nodes)


def test_soft_spread_default_constraints_and_preferred_pod_affinity(control_plane, namespace, soft_cluster, tmp_path):
    assert len(control_plane.api("GET", "/api/v1/nodes")["items"]) == 4
    upstream, ours = both(control_plane, namespace, tmp_path, soft_waves(control_plane, namespace))
    n = namespace
    # web-3 goes to the small w4 only by the default constraints of the Service's pods (before
    # kschedfw's kube backend watched Services it went to w1); lonely to w4 by magnet's term
    assert {k: v[0] for k, v in upstream.items()} == {
        "web-1": f"{n}-w2", "web-2": f"{n}-w3", "web-3": f"{n}-w4", "web-4": f"{n}-w1", "magnet": f"{n}-w4",
        "lonely": f"{n}-w4", "soft-1": f"{n}-w2", "soft-2": f"{n}-w3", "soft-3": f"{n}-w4", "shy": f"{n}-w3"}
    assert ours == upstream
