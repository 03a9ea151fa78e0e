"""The embedded cluster standing in for the resourceclaim controller, and its claim status writes."""

from __future__ import annotations

from kschedfw import testing as kit
from kschedfw.api import parse_object
from kschedfw.cluster.memory import MemoryCluster
from kschedfw.cluster.controllers.resourceclaim import generate_name

TEMPLATE = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
            "metadata": {"name": "gpu-template", "namespace": "default"},
            "spec": {"metadata": {"labels": {"team": "a"}, "annotations": {"note": "x"}},
                     "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu"}}]}}}}


def pod(name="web"):
    return kit.make_pod(name, namespace="default", uid=f"uid-{name}",
                        resourceClaims=[{"name": "accel", "resourceClaimTemplateName": "gpu-template"}])


def test_generate_name_cuts_both_parts_in_proportion():
    assert generate_name("web", "accel") == "web-accel-"
    long_pod, long_claim = "p" * 50, "c" * 30
    name = generate_name(long_pod, long_claim)
    assert name == "p" * 34 + "-" + "c" * 20  # as upstream: no trailing hyphen once cut


def test_pod_gets_its_generated_claim_and_status():
    cluster = MemoryCluster()
    events = []
    cluster.watch(lambda e: events.append((e.type, e.kind)))
    cluster.create(parse_object(TEMPLATE))
    created = cluster.create(pod())
    [claim] = cluster.list("ResourceClaim")
    meta = claim.raw["metadata"]
    assert meta["generateName"] == "web-accel-" and claim.name.startswith("web-accel-") and len(claim.name) == 15
    assert meta["ownerReferences"] == [{"apiVersion": "v1", "kind": "Pod", "name": "web", "uid": "uid-web",
                                        "controller": True}]
    assert meta["annotations"] == {"note": "x", "resource.kubernetes.io/pod-claim-name": "accel"}
    assert meta["labels"] == {"team": "a"}
    assert claim.raw["spec"] == TEMPLATE["spec"]["spec"]
    assert created.raw["status"]["resourceClaimStatuses"] == [{"name": "accel", "resourceClaimName": claim.name}]
    cluster.deliver()
    assert events[-2:] == [("ADDED", "ResourceClaim"), ("ADDED", "Pod")]


def test_template_created_after_the_pod():
    cluster = MemoryCluster()
    cluster.create(pod())
    assert cluster.list("ResourceClaim") == []
    cluster.create(parse_object(TEMPLATE))
    [claim] = cluster.list("ResourceClaim")
    stored = cluster.get("Pod", "web", "default")
    assert stored.raw["status"]["resourceClaimStatuses"] == [{"name": "accel", "resourceClaimName": claim.name}]


def test_claim_status_write_and_pod_removal():
    cluster = MemoryCluster()
    cluster.create(parse_object(TEMPLATE))
    cluster.create(pod())
    [claim] = cluster.list("ResourceClaim")
    finalizers = ["resource.kubernetes.io/delete-protection"]
    raw = {**claim.raw, "metadata": {**claim.raw["metadata"], "finalizers": finalizers},
           "status": {"allocation": {"devices": {"results": []}},
                      "reservedFor": [{"resource": "pods", "name": "web", "uid": "uid-web"}]}}
    events = []
    cluster.watch(lambda e: events.append((e.type, e.kind, e.new)))
    written = cluster.update_resource_claim_status(parse_object(raw))
    assert written.raw["status"] == raw["status"]
    assert written.raw["metadata"]["finalizers"] == ["resource.kubernetes.io/delete-protection"]
    cluster.deliver()
    assert events[-1][:2] == ("MODIFIED", "ResourceClaim")
    cluster.remove("Pod", "web", "default")
    assert cluster.list("ResourceClaim") == []
    cluster.deliver()
    deallocated = [new for kind_, kind, new in events if kind == "ResourceClaim" and kind_ == "MODIFIED"][-1]
    assert "status" not in deallocated.raw or not deallocated.raw["status"]
    assert "finalizers" not in deallocated.raw["metadata"]
