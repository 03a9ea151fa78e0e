"""The embedded cluster's side of DRAExtendedResource: the claim DynamicResources creates (its
generateName completed reproducibly), its delete despite the delete-protection finalizer, and the
pod's ``status.extendedResourceClaimStatus`` validated as the API server validates it."""

from __future__ import annotations

import pytest

from kschedfw import testing as kit
from kschedfw.api import parse_object
from kschedfw.cluster.apiserver.admission import AdmissionError
from kschedfw.cluster.memory import MemoryCluster
from kschedfw.fwk.interface import NotFound

FINALIZER = "resource.kubernetes.io/delete-protection"


def claim(owner_uid="u1"):
    return parse_object({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                         "metadata": {"generateName": "p-extended-resources-", "namespace": "default",
                                      "finalizers": [FINALIZER],
                                      "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": "p",
                                                           "uid": owner_uid, "controller": True}]},
                         "spec": {"devices": {"requests": []}}})


def test_create_completes_the_name_reproducibly_and_delete_drops_the_finalizer_first():
    names = []
    for _ in range(2):
        cluster = MemoryCluster()
        seen = []
        cluster.watch(lambda event: seen.append((event.type, event.kind)))
        created = cluster.create_resource_claim(claim())
        names.append(created.name)
        assert created.name.startswith("p-extended-resources-") and len(created.name) == len("p-extended-resources-") + 5
        assert cluster.get("ResourceClaim", created.name, "default") is created
        cluster.delete_resource_claim(created)
        assert cluster.get("ResourceClaim", created.name, "default") is None
        cluster.deliver()
        assert seen == [("ADDED", "ResourceClaim"), ("MODIFIED", "ResourceClaim"), ("DELETED", "ResourceClaim")]
        with pytest.raises(NotFound):
            cluster.delete_resource_claim(created)
    assert names[0] == names[1]


def test_pod_status_is_validated_as_the_api_server_does():
    cluster = MemoryCluster()
    pod = cluster.create(kit.make_pod("p", requests={"example.com/gpu": "1"}))
    good = {"requestMappings": [{"containerName": pod.containers[0].name, "resourceName": "example.com/gpu",
                                 "requestName": "container-0-request-0"}], "resourceClaimName": "p-extended-resources-x"}
    cluster.set_extended_resource_claim_status(pod, good)
    assert cluster.get("Pod", "p", "default").raw["status"]["extendedResourceClaimStatus"] == good
    with pytest.raises(AdmissionError, match="at least one request mapping is required"):
        cluster.set_extended_resource_claim_status(pod, {"requestMappings": [], "resourceClaimName": "x"})
    with pytest.raises(AdmissionError, match="containerName: Invalid value"):
        cluster.set_extended_resource_claim_status(pod, {**good, "requestMappings": [
            {**good["requestMappings"][0], "containerName": "nope"}]})
