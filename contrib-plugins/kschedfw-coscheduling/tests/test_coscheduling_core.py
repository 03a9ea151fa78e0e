"""The PodGroup manager, ported from upstream's pkg/coscheduling/core/core_test.go cases."""

from __future__ import annotations

import pytest
import yaml

from cosched_testlib import DATA, Env, make_node, make_pod, make_pod_group, pod_group_manifest
from kschedfw.api import parse_object
from kschedfw_coscheduling.core import (POD_GROUP_KIND, POD_GROUP_LABEL, PermitStatus, PodGroupInfo,
                                        check_cluster_resource)

TWO_NODES = [make_node("node-a", cpu="4"), make_node("node-b", cpu="4")]


@pytest.mark.parametrize("pod, pending, groups, success", [
    pytest.param(make_pod("p", namespace="default"),
                 [make_pod("p1", group="pg1"), make_pod("p2", group="pg2")],
                 [make_pod_group("pg1", min_member=1), make_pod_group("pg2", min_member=1)], True,
                 id="pod does not belong to any pg"),
    pytest.param(make_pod("p", group="pg-non-existent"), [],
                 [make_pod_group("pg1", min_member=1)], True,
                 id="pod belongs to a non-existent pg"),
    pytest.param(make_pod("p", group="pg1"), [make_pod("pg2-1", group="pg2")],
                 [make_pod_group("pg1", min_member=2), make_pod_group("pg2", min_member=2)], False,
                 id="pod count less than minMember"),
    pytest.param(make_pod("p1a", group="pg1"), [make_pod("p1b", group="pg1"), make_pod("p1c", group="pg1")],
                 [make_pod_group("pg1", min_member=2), make_pod_group("pg2", min_member=2)], True,
                 id="pod count equal minMember"),
    pytest.param(make_pod("p1a", group="pg1"), [make_pod("p1b", group="pg1"), make_pod("p1c", group="pg1")],
                 [make_pod_group("pg1", min_member=2)], True,
                 id="pod count more than minMember"),
    pytest.param(make_pod("p1a", group="pg1"),
                 [make_pod("p1b", group="pg1"), make_pod("p1c", group="pg1", gates=["example-gate"])],
                 [make_pod_group("pg1", min_member=2)], True,
                 id="gated pods but still meeting quorum (minMember < replicas)"),
    pytest.param(make_pod("p1a", group="pg1"),
                 [make_pod("p1b", group="pg1", gates=["example-gate"]), make_pod("p1c", group="pg1")],
                 [make_pod_group("pg1", min_member=3)], False,
                 id="gated pods push group below quorum"),
    pytest.param(make_pod("p1a", group="pg1"),
                 [make_pod("p1b", group="pg1", gates=["example-gate"]),
                  make_pod("p1c", group="pg1", gates=["example-gate"])],
                 [make_pod_group("pg1", min_member=2)], False,
                 id="all sibling pods are gated"),
    pytest.param(make_pod("p1a", group="pg1"), [make_pod("p1b", group="pg1"), make_pod("p1c", group="pg1")],
                 [make_pod_group("pg1", min_member=2, min_resources={"cpu": "6"})], True,
                 id="cluster's resource satisfies minResource"),
    pytest.param(make_pod("p1a", group="pg1"), [make_pod("p1b", group="pg1"), make_pod("p1c", group="pg1")],
                 [make_pod_group("pg1", min_member=2, min_resources={"cpu": "10"})], False,
                 id="cluster's resource cannot satisfy minResource"),
])
def test_pre_filter(pod, pending, groups, success):
    env = Env([*pending, pod, *groups], nodes=TWO_NODES, args={"permitWaitingTimeSeconds": 10})
    reason = env.plugin.pg_mgr.pre_filter(pod, env.handle.snapshot.node_infos())
    assert (reason is None) == success, reason


def test_pre_filter_messages():
    pod = make_pod("p", group="pg1")
    env = Env([pod, make_pod_group("pg1", min_member=2)], nodes=TWO_NODES)
    assert env.plugin.pg_mgr.pre_filter(pod) == (
        "pre-filter pod p cannot find enough sibling pods, current pods number: 1, minMember of group: 2")

    gated = [make_pod("a", group="pg2"), make_pod("b", group="pg2", gates=["g"])]
    env = Env([*gated, make_pod_group("pg2", min_member=2)], nodes=TWO_NODES)
    assert env.plugin.pg_mgr.pre_filter(gated[0]) == (
        "pre-filter pod a cannot proceed due to gated pods in the same PodGroup")

    members = [make_pod("c", group="pg3"), make_pod("d", group="pg3")]
    env = Env([*members, make_pod_group("pg3", min_member=2, min_resources={"cpu": "10"})], nodes=TWO_NODES)
    assert env.plugin.pg_mgr.pre_filter(members[0], env.handle.snapshot.node_infos()) == "resource gap: map[cpu:2]"


def test_min_resources_pass_is_remembered_for_the_permit_timeout():
    members = [make_pod("c", group="pg"), make_pod("d", group="pg")]
    env = Env([*members, make_pod_group("pg", min_member=2, min_resources={"cpu": "6"})], nodes=TWO_NODES,
              args={"permitWaitingTimeSeconds": 10})
    mgr = env.plugin.pg_mgr
    assert mgr.pre_filter(members[0], env.handle.snapshot.node_infos()) is None
    assert mgr.pre_filter(members[1], []) is None  # cached: the (empty) node list is not looked at
    env.clock.advance(10)
    assert mgr.pre_filter(members[1], []) is not None


@pytest.mark.parametrize("pod, existing, groups, want", [
    pytest.param(make_pod("p"), [], [make_pod_group("pg1", min_member=2)],
                 PermitStatus.POD_GROUP_NOT_SPECIFIED, id="pod does not belong to any pg"),
    pytest.param(make_pod("p", group="pg-non-existent"), [], [make_pod_group("pg1", min_member=2)],
                 PermitStatus.POD_GROUP_NOT_FOUND, id="pod specifies a non-existent pg"),
    pytest.param(make_pod("p", group="pg1"), [], [make_pod_group("pg1", min_member=2)],
                 PermitStatus.WAIT, id="pod belongs to a pg that doesn't have quorum"),
    pytest.param(make_pod("p1a", group="pg1"), [make_pod("p1b", group="pg1", node="node")],
                 [make_pod_group("pg1", min_member=2)],
                 PermitStatus.SUCCESS, id="pod belongs to a pg that have quorum satisfied"),
])
def test_permit(pod, existing, groups, want):
    env = Env([*existing, pod, *groups], nodes=[make_node("node")], args={"permitWaitingTimeSeconds": 10})
    assert env.plugin.pg_mgr.permit(None, pod) is want


@pytest.mark.parametrize("existing, min_cpu, group, want", [
    pytest.param([make_pod("p1", node="node-a", cpu="2")], "4", "ns/pg1", True, id="Cluster resource enough"),
    pytest.param([make_pod("p1", node="node-a", cpu="2"), make_pod("p2", node="node-b", cpu="1")], "4", "ns/pg1",
                 False, id="Cluster resource not enough"),
    pytest.param([make_pod("p1", group="pg1", node="node-a", cpu="2"), make_pod("p2", node="node-b", cpu="1")],
                 "4", "ns/pg1", True,
                 id="Cluster resource enough as p1's resource needs to be excluded from minResources"),
])
def test_check_cluster_resource(existing, min_cpu, group, want):
    nodes = [make_node("node-a", cpu="3"), make_node("node-b", cpu="3")]
    env = Env(existing, nodes=nodes)
    request = {"cpu": int(min_cpu) * 1000}
    assert (check_cluster_resource(env.handle.snapshot.node_infos(), request, group) is None) == want


def test_mark_and_clear_pod_group_schedule_failure():
    env = Env()
    env.cluster.create(make_pod_group("pg1", min_member=3, created=env.at(-10)))
    mgr = env.plugin.pg_mgr
    pod = make_pod("p1", group="pg1")
    now = env.clock.now()
    assert mgr.get_creation_timestamp(pod, now) == -10  # the PodGroup's creationTimestamp
    env.clock.advance(5)
    mgr.mark_pod_group_schedule_failure("ns/pg1")
    assert mgr.get_creation_timestamp(pod, now) == 5  # when it failed, after its creation
    mgr.clear_pod_group_schedule_failure("ns/pg1")
    assert mgr.get_creation_timestamp(pod, now) == -10


def test_pod_group_written_without_creation_timestamp_sorts_by_the_one_the_cluster_stamped():
    # like the API server, the embedded cluster stamps creationTimestamp at create, in whole
    # seconds: groups created within one second tie there (then the group name decides)
    env = Env()
    env.clock.advance(7.6)
    env.cluster.create(make_pod_group("pg1", min_member=3))
    env.clock.advance(3)
    mgr = env.plugin.pg_mgr
    pod = make_pod("p1", group="pg1")
    assert mgr.get_creation_timestamp(pod, 100.0) == 7
    assert mgr.get_creation_timestamp(make_pod("lone"), 100.0) == 100.0


def test_get_pod_group_reads_the_embedded_cluster():
    env = Env([make_pod_group("pg1", min_member=2, timeout=30, min_resources={"cpu": "1500m", "memory": "1Gi"})])
    full, pg = env.plugin.pg_mgr.get_pod_group(make_pod("p1", group="pg1"))
    assert full == "ns/pg1"
    assert (pg.name, pg.namespace, pg.min_member, pg.schedule_timeout_seconds) == ("pg1", "ns", 2, 30)
    assert pg.min_resources == {"cpu": 1500, "memory": 1024 ** 3}
    assert env.plugin.pg_mgr.get_pod_group(make_pod("p2", group="nope")) == ("ns/nope", None)
    assert env.plugin.pg_mgr.get_pod_group(make_pod("p3")) == ("", None)


def test_reads_every_spec_field_the_pod_group_crd_defines():
    crd = next(d for d in yaml.safe_load_all((DATA / "crds__scheduling.x-k8s.io_podgroups.yaml").read_text()) if d)
    version = crd["spec"]["versions"][0]
    assert crd["spec"]["names"]["kind"] == POD_GROUP_KIND
    assert POD_GROUP_LABEL == crd["spec"]["group"] + "/pod-group"
    spec = version["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]
    manifest = pod_group_manifest("pg", min_member=3, min_resources={"cpu": "2"}, timeout=15)
    assert set(manifest["spec"]) == set(spec)
    pg = PodGroupInfo.from_object(parse_object({**manifest, "apiVersion": f"{crd['spec']['group']}/{version['name']}"}))
    assert (pg.min_member, pg.min_resources, pg.schedule_timeout_seconds) == (3, {"cpu": 2000}, 15)
