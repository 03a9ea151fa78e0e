"""Differential for workload-aware scheduling: the same PodGroups and pods on the same nodes through
the shipped kube-scheduler v1.36.2 and through `kschedfw run`, both with the workload gates on and
the API server serving ``scheduling.k8s.io/v1alpha2``: the same node for each pod (or the same
nodes where the group's pods are alike), the same PodScheduled conditions and the same
``PodGroupScheduled`` condition on the group.

Upstream's determinism traps are kept out: every PodGroup and pod exists before the scheduler
starts (a group is gathered from the queue when its first pod is popped), a gang either fits
whole or not at all (Permit would wait five minutes), and no two placements tie (ties are
broken at random)."""

from __future__ import annotations

import json
import subprocess
import threading
from pathlib import Path
from typing import Any, Callable

import pytest

from kschedfw.config.validate import load_config
from kschedfw.framework.registry import default_registry
from kschedfw.fwk.features import FeatureGates
from kschedfw.kube_runner import KubeRunner
from kschedfw.testing.controlplane import ControlPlane, free_port
from tests.kube.conftest import WORKLOAD_GATES
from tests.kube.helpers import pod_manifest, wait_for

GROUPS = "/apis/scheduling.k8s.io/v1alpha2/namespaces/{ns}/podgroups"
RACK = "example.com/rack"
FENCE = "example.com/fence"  # this test's nodes only: another test's nodes never take its pods

Outcome = tuple[dict[str, tuple[str, str, str]], tuple[str, str, str]]


def pod_group(name: str, *, min_count: int | None = None, topology: str = "") -> dict[str, Any]:
    spec: dict[str, Any] = {"schedulingPolicy": {"gang": {"minCount": min_count}} if min_count else {"basic": {}}}
    if topology:
        spec["schedulingConstraints"] = {"topology": [{"key": topology}]}
    return {"apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "PodGroup", "metadata": {"name": name}, "spec": spec}


def member(name: str, ns: str, scheduler: str, group: str, fence: str, cpu: str, **spec: Any) -> dict[str, Any]:
    selector = {FENCE: fence, **spec.pop("nodeSelector", {})}
    return pod_manifest(name, ns, scheduler=scheduler, cpu=cpu, schedulingGroup={"podGroupName": group},
                        nodeSelector=selector, **spec)


def outcome(cp: ControlPlane, ns: str, group: str) -> Outcome:
    pods = {}
    for p in cp.api("GET", f"/api/v1/namespaces/{ns}/pods")["items"]:
        cond = next((c for c in p["status"].get("conditions") or [] if c["type"] == "PodScheduled"), {})
        pods[p["metadata"]["name"]] = (p["spec"].get("nodeName", ""), cond.get("reason", ""), cond.get("message", ""))
    found = cp.api("GET", GROUPS.format(ns=ns) + f"/{group}")
    cond = next((c for c in (found.get("status") or {}).get("conditions") or []
                 if c["type"] == "PodGroupScheduled"), {})
    return pods, (cond.get("status", ""), cond.get("reason", ""), cond.get("message", ""))


def decided(cp: ControlPlane, ns: str, group: str, count: int) -> bool:
    pods, condition = outcome(cp, ns, group)
    return len(pods) == count and bool(condition[0]) and all(node or reason for node, reason, _ in pods.values())


def run_kube_scheduler(cp: ControlPlane, scheduler: str, log: Path, until: Callable[[], bool], gates: str) -> None:
    binary = cp.assets / "kube-scheduler"
    config = log.with_suffix(".yaml")
    config.write_text(json.dumps({
        "apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
        "clientConnection": {"kubeconfig": str(cp.kubeconfig)}, "leaderElection": {"leaderElect": False},
        "profiles": [{"schedulerName": scheduler}]}))
    with open(log, "w") as out:
        proc = subprocess.Popen([str(binary), f"--config={config}", "--bind-address=127.0.0.1",
                                 f"--secure-port={free_port()}", "-v=3", f"--feature-gates={gates}"],
                                stdout=out, stderr=subprocess.STDOUT)
        try:
            wait_for(until, timeout=90, what=f"kube-scheduler to decide (log {log.name})")
        finally:
            proc.terminate()
            proc.wait(30)


def run_kschedfw(cp: ControlPlane, scheduler: str, tmp_path: Path, until: Callable[[], bool], gates: str) -> None:
    config = tmp_path / "ours.yaml"
    config.write_text(json.dumps({
        "apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
        "leaderElection": {"leaderElect": False}, "profiles": [{"schedulerName": scheduler}]}))
    registry = default_registry()
    parsed = FeatureGates.parse(gates)
    loaded, diagnostics = load_config(str(config), registry, parsed)
    assert loaded is not None, diagnostics
    runner = KubeRunner(loaded, registry, kubeconfig=cp.kubeconfig, feature_gates=parsed)
    assert runner.start(30)
    thread = threading.Thread(target=runner.run, daemon=True)
    thread.start()
    try:
        wait_for(until, timeout=90, what="kschedfw to decide")
    finally:
        runner.stop()
        thread.join(10)
        runner.close()


def both(cp: ControlPlane, namespace: str, tmp_path: Path, group: dict[str, Any],
         make_pods: Callable[[str, str], list[dict[str, Any]]], gates: str = WORKLOAD_GATES) -> tuple[Outcome, Outcome]:
    """Create the group and its pods, then start kube-scheduler and wait until every pod and the
    group are decided; free the nodes; the same in a second namespace through kschedfw. Both
    schedulers run with ``gates``."""
    results = []
    for ns, run in ((namespace, "upstream"), (f"{namespace}-k", "ours")):
        if run == "ours":
            cp.api("POST", "/api/v1/namespaces", {"metadata": {"name": ns}})
        scheduler = f"{run}-{namespace}"
        name = group["metadata"]["name"]
        cp.api("POST", GROUPS.format(ns=ns), group)
        pods = make_pods(ns, scheduler)
        for manifest in pods:
            cp.api("POST", f"/api/v1/namespaces/{ns}/pods", manifest)

        def until(ns: str = ns, name: str = name, count: int = len(pods)) -> bool:
            return decided(cp, ns, name, count)
        if run == "upstream":
            run_kube_scheduler(cp, scheduler, tmp_path / "kube-scheduler.log", until, gates)
        else:
            run_kschedfw(cp, scheduler, tmp_path, until, gates)
        results.append(outcome(cp, ns, name))
        for manifest in pods:  # free the nodes for the next run
            cp.api("DELETE", f"/api/v1/namespaces/{ns}/pods/{manifest['metadata']['name']}",
                   {"gracePeriodSeconds": 0})
        wait_for(lambda ns=ns: not cp.api("GET", f"/api/v1/namespaces/{ns}/pods")["items"],
                 what="the run's pods gone")
    return results[0], results[1]


@pytest.fixture
def namespace(workload_control_plane: ControlPlane) -> str:
    from tests.kube.conftest import _names
    name = f"w{next(_names)}"
    workload_control_plane.api("POST", "/api/v1/namespaces", {"metadata": {"name": name}})
    return name


def make_nodes(cp: ControlPlane, namespace: str, specs: dict[str, tuple[str, dict[str, str]]]) -> list[str]:
    names = []
    for suffix, (cpu, labels) in specs.items():
        name = f"{namespace}-{suffix}"
        cp.create_ready_node(name, cpu=cpu, labels={FENCE: namespace, **labels})
        names.append(name)
    return names


@pytest.fixture
def nodes(workload_control_plane: ControlPlane, namespace: str):
    made: list[str] = []

    def make(specs: dict[str, tuple[str, dict[str, str]]]) -> list[str]:
        made.extend(make_nodes(workload_control_plane, namespace, specs))
        return made
    yield make
    for name in made:
        workload_control_plane.api("DELETE", f"/api/v1/nodes/{name}")


def alike(pods: dict[str, tuple[str, str, str]]) -> list[tuple[str, str, str]]:
    """The outcomes of a group whose pods are alike: which pod gets which is the queue's order
    among equal priorities, random upstream."""
    return sorted(pods.values())


WITHOUT_WAP = WORKLOAD_GATES.replace("WorkloadAwarePreemption=true", "WorkloadAwarePreemption=false")


@pytest.mark.parametrize("gates", [
    pytest.param(WORKLOAD_GATES, id="workload-aware preemption on"),
    pytest.param(WITHOUT_WAP, id="workload-aware preemption off")])
def test_a_gang_of_which_only_two_fit_binds_none(workload_control_plane, namespace, nodes, tmp_path, gates):
    # two nodes of 2 cpu for four pods of 1500m: two fit, minCount is 4 (upstream: none bound,
    # the group PodGroupScheduled=False/Unschedulable)
    nodes({"a": ("2", {}), "b": ("2", {})})
    upstream, ours = both(workload_control_plane, namespace, tmp_path, pod_group("gang", min_count=4),
                          lambda ns, s: [member(f"m{i}", ns, s, "gang", namespace, "1500m") for i in range(4)],
                          gates)
    upstream_pods, upstream_group = upstream
    assert [node for node, _, _ in upstream_pods.values()] == ["", "", "", ""]
    assert upstream_group[:2] == ("False", "Unschedulable")
    assert ours[1] == upstream_group
    assert alike(ours[0]) == alike(upstream_pods)


def test_a_gang_that_fits_is_bound_whole(workload_control_plane, namespace, nodes, tmp_path):
    # each pod can go to one node only (its slot): the gang of 3 fits, every pod on its node
    names = nodes({f"n{i}": ("2", {"slot": str(i)}) for i in range(3)})
    upstream, ours = both(workload_control_plane, namespace, tmp_path, pod_group("gang", min_count=3),
                          lambda ns, s: [member(f"m{i}", ns, s, "gang", namespace, "1", nodeSelector={"slot": str(i)})
                                         for i in range(3)])
    assert {k: v[0] for k, v in upstream[0].items()} == {f"m{i}": names[i] for i in range(3)}
    assert upstream[1] == ("True", "Scheduled", "")
    assert ours == upstream


def test_a_basic_policy_group_binds_what_fits(workload_control_plane, namespace, nodes, tmp_path):
    # basic policy: no quorum, so the two pods that fit are bound and the third is not
    nodes({"a": ("2", {}), "b": ("2", {})})
    upstream, ours = both(workload_control_plane, namespace, tmp_path, pod_group("basic"),
                          lambda ns, s: [member(f"m{i}", ns, s, "basic", namespace, "1500m") for i in range(3)])
    assert sorted(node for node, _, _ in upstream[0].values()) == ["", f"{namespace}-a", f"{namespace}-b"]
    # the group is Scheduled once one pod passes Permit, and a True condition is never taken back.
    # kube-scheduler v1.36.2 itself sometimes ends False: its cycle for the leftover pod reads the
    # PodGroup from an informer that has not seen its own True yet (a race of its cache)
    assert ours[1] == ("True", "Scheduled", "")
    assert upstream[1][:2] in {("True", "Scheduled"), ("False", "Unschedulable")}
    assert alike(ours[0]) == alike(upstream[0])


def test_a_gang_with_a_rack_constraint_takes_the_fuller_rack(workload_control_plane, namespace, nodes, tmp_path):
    # both racks can hold the gang of 4 pods of 1 cpu; NodeResourcesFit scores a placement as
    # MostAllocated over the rack as one node, so the small rack r1 (4 cpu) beats r2 (16 cpu)
    nodes({"r1a": ("2", {RACK: "r1"}), "r1b": ("2", {RACK: "r1"}),
           "r2a": ("8", {RACK: "r2"}), "r2b": ("8", {RACK: "r2"})})
    upstream, ours = both(workload_control_plane, namespace, tmp_path, pod_group("gang", min_count=4, topology=RACK),
                          lambda ns, s: [member(f"m{i}", ns, s, "gang", namespace, "1") for i in range(4)])
    r1 = [f"{namespace}-r1a", f"{namespace}-r1a", f"{namespace}-r1b", f"{namespace}-r1b"]
    assert sorted(node for node, _, _ in upstream[0].values()) == r1
    assert upstream[1] == ("True", "Scheduled", "")
    assert ours[1] == upstream[1]
    assert alike(ours[0]) == alike(upstream[0])


def priority_class(cp: ControlPlane, name: str, value: int) -> None:
    from kschedfw.testing.controlplane import APIError
    try:
        cp.api("POST", "/apis/scheduling.k8s.io/v1/priorityclasses",
               {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": name},
                "value": value})
    except APIError as exc:
        if exc.status != 409:
            raise


def started(cp: ControlPlane, ns: str, name: str, second: int) -> None:
    """A kubelet's part: the bound pod's start time (preemption spares the oldest first)."""
    cp.api("PATCH", f"/api/v1/namespaces/{ns}/pods/{name}/status",
           {"status": {"startTime": f"2026-01-01T00:00:{second:02d}Z"}}, content_type="application/merge-patch+json")


def test_a_gang_preempts_the_fewest_low_priority_pods_it_needs(workload_control_plane, namespace, nodes, tmp_path):
    """Workload-aware preemption (DefaultPreemption's PodGroupPostFilter): the gang's priority is
    its PodGroup's (from the PodGroup's priorityClassName); every lower-priority pod of the
    cluster is removed, the group must fit, then the victims are given back one by one, the
    most important first (higher priority, then the earlier start), each kept if the group
    still fits without it. Nodes a and b of 4 cpu; on a, v-a1 (2 cpu) and v-a2 (1 cpu); on b,
    v-b1 and v-b2 (1 cpu each), all of priority 100 and started b1, a2, b2, a1; and m-b (1 cpu,
    priority 2000, above the gang's 1000). Three pods of 2 cpu, minCount 3: with every victim
    gone, two fit on a and one on b. v-b1 is given back (b keeps 2 cpu free); v-a2, v-b2 and
    v-a1 are not (each leaves room for two pods only). The gang then binds two pods on a and
    one on b, and its PodGroupScheduled is True."""
    cp = workload_control_plane
    priority_class(cp, "wap-low", 100)
    priority_class(cp, "wap-gang", 1000)
    priority_class(cp, "wap-high", 2000)
    a, b = nodes({"a": ("4", {}), "b": ("4", {})})
    placed = {"v-a1": (a, "2", "wap-low", 4), "v-a2": (a, "1", "wap-low", 2), "v-b1": (b, "1", "wap-low", 1),
              "v-b2": (b, "1", "wap-low", 3), "m-b": (b, "1", "wap-high", 5)}
    group = pod_group("gang", min_count=3)
    group["spec"]["priorityClassName"] = "wap-gang"
    results = []
    for ns, run in ((namespace, "upstream"), (f"{namespace}-k", "ours")):
        if run == "ours":
            cp.api("POST", "/api/v1/namespaces", {"metadata": {"name": ns}})
        for name, (node, cpu, pc, second) in placed.items():
            cp.api("POST", f"/api/v1/namespaces/{ns}/pods",
                   pod_manifest(name, ns, cpu=cpu, nodeName=node, priorityClassName=pc, terminationGracePeriodSeconds=0))
            started(cp, ns, name, second)
        stored = cp.api("POST", GROUPS.format(ns=ns), group)
        assert stored["spec"]["priority"] == 1000  # the Priority admission plugin's part
        scheduler = f"{run}-{namespace}"
        members = [member(f"g{i}", ns, scheduler, "gang", namespace, "2", priorityClassName="wap-gang",
                          terminationGracePeriodSeconds=0) for i in range(3)]
        for manifest in members:
            cp.api("POST", f"/api/v1/namespaces/{ns}/pods", manifest)

        def until(ns: str = ns) -> bool:
            pods, condition = outcome(cp, ns, "gang")
            return condition[0] == "True" and all(pods.get(f"g{i}", ("",))[0] for i in range(3))
        if run == "upstream":
            run_kube_scheduler(cp, scheduler, tmp_path / "kube-scheduler.log", until, WORKLOAD_GATES)
        else:
            run_kschedfw(cp, scheduler, tmp_path, until, WORKLOAD_GATES)
        pods, condition = outcome(cp, ns, "gang")
        results.append((sorted(n for n in placed if n not in pods),
                        sorted(pods[f"g{i}"][0].rsplit("-", 1)[1] for i in range(3)), condition))
        cp.api("DELETE", f"/api/v1/namespaces/{ns}/pods", {"gracePeriodSeconds": 0})
        wait_for(lambda ns=ns: not cp.api("GET", f"/api/v1/namespaces/{ns}/pods")["items"], what="the run's pods gone")
    upstream, ours = results
    assert upstream == (["v-a1", "v-a2", "v-b2"], ["a", "a", "b"], ("True", "Scheduled", ""))
    assert ours == upstream


ZONE = "example.com/zone"


def test_a_zone_spread_gang_counts_the_zone_outside_its_rack(workload_control_plane, namespace, nodes, tmp_path):
    # rack r1 is zone z1 and holds an app=x pod; r2 is zone z2 and empty. The gang's pods spread
    # over zones (maxSkew 1). PodTopologySpread counts every node, not only the placement's, so
    # in r1 the first member's skew would be 1+1-0 = 2: only r2 is feasible. (Counting r1 alone
    # would allow r1, and MostAllocated would prefer it, the fuller rack.)
    nodes({"r1a": ("2", {RACK: "r1", ZONE: "z1"}), "r1b": ("2", {RACK: "r1", ZONE: "z1"}),
           "r2a": ("2", {RACK: "r2", ZONE: "z2"}), "r2b": ("2", {RACK: "r2", ZONE: "z2"})})
    spread = [{"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "DoNotSchedule",
               "labelSelector": {"matchLabels": {"app": "x"}}}]

    def make(ns: str, scheduler: str) -> list[dict[str, Any]]:
        existing = pod_manifest("existing", ns, cpu="1", nodeName=f"{namespace}-r1a")
        pods = [existing] + [member(f"m{i}", ns, scheduler, "gang", namespace, "1", topologySpreadConstraints=spread)
                             for i in range(2)]
        for manifest in pods:
            manifest["metadata"]["labels"] = {"app": "x"}
        return pods
    upstream, ours = both(workload_control_plane, namespace, tmp_path, pod_group("gang", min_count=2, topology=RACK),
                          make)
    placed = {upstream[0][f"m{i}"][0] for i in range(2)}
    assert placed <= {f"{namespace}-r2a", f"{namespace}-r2b"}, upstream[0]
    assert upstream[1] == ("True", "Scheduled", "")
    assert ours[1] == upstream[1]
    assert alike(ours[0]) == alike(upstream[0])
