"""KubeBackend's ResourceClaim writes against a real API server: DynamicResources' PreBind
allocation (finalizer, allocation, reservedFor) and PostFilter's deallocation."""

from __future__ import annotations

import copy


from kschedfw.api import parse_object

FINALIZER = "resource.kubernetes.io/delete-protection"


def test_allocation_with_finalizer_then_deallocation(control_plane, namespace, backend):
    created = control_plane.api("POST", f"/apis/resource.k8s.io/v1/namespaces/{namespace}/resourceclaims", {
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": "c"},
        "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu"}}]}}})
    raw = copy.deepcopy(created)
    raw["metadata"]["finalizers"] = [FINALIZER]
    raw["status"] = {
        "allocation": {"devices": {"results": [{"request": "gpu", "driver": "gpu.example.com", "pool": "n1",
                                                "device": "gpu-0"}]},
                       "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
                           {"key": "metadata.name", "operator": "In", "values": ["n1"]}]}]},
                       "allocationTimestamp": "2026-01-01T00:00:00Z"},
        "reservedFor": [{"resource": "pods", "name": "p", "uid": "0b4cf5a4-1111-4a52-9d6b-3a8f6a1d0a01"}]}
    written = backend.update_resource_claim_status(parse_object(raw))
    got = control_plane.api("GET", f"/apis/resource.k8s.io/v1/namespaces/{namespace}/resourceclaims/c")
    assert got["metadata"]["finalizers"] == [FINALIZER]
    assert got["status"]["allocation"]["devices"] == raw["status"]["allocation"]["devices"]
    assert got["status"]["reservedFor"] == raw["status"]["reservedFor"]
    assert written.raw["metadata"]["resourceVersion"] == got["metadata"]["resourceVersion"]
    released = copy.deepcopy(got)
    del released["status"]
    backend.update_resource_claim_status(parse_object(released))
    got = control_plane.api("GET", f"/apis/resource.k8s.io/v1/namespaces/{namespace}/resourceclaims/c")
    assert not got.get("status", {}).get("allocation")


def test_extended_resource_claim_create_then_delete_despite_its_finalizer(control_plane, namespace, backend):
    """DRAExtendedResource: PreBind's create (generateName completed by the server), Unreserve's
    delete of a claim holding the delete-protection finalizer (dropped first, as upstream)."""
    claim = parse_object({
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
        "metadata": {"generateName": "p-extended-resources-", "namespace": namespace,
                     "annotations": {"resource.kubernetes.io/extended-resource-claim": "true"},
                     "finalizers": [FINALIZER]},
        "spec": {"devices": {"requests": [{"name": "container-0-request-0", "exactly": {
            "deviceClassName": "gpu", "allocationMode": "ExactCount", "count": 1}}]}}})
    created = backend.create_resource_claim(claim)
    assert created.name.startswith("p-extended-resources-") and len(created.name) > len("p-extended-resources-")
    path = f"/apis/resource.k8s.io/v1/namespaces/{namespace}/resourceclaims/{created.name}"
    assert control_plane.api("GET", path)["metadata"]["finalizers"] == [FINALIZER]
    backend.delete_resource_claim(created)
    names = [c["metadata"]["name"] for c in control_plane.api(
        "GET", f"/apis/resource.k8s.io/v1/namespaces/{namespace}/resourceclaims")["items"]]
    assert created.name not in names


def test_pod_extended_resource_claim_status(control_plane, namespace, backend):
    from kschedfw.cluster.kube.resources import BY_KIND, parse_api_object
    from tests.kube.helpers import pod_manifest
    manifest = pod_manifest("p", namespace)
    manifest["spec"]["containers"][0]["resources"] = {"requests": {"example.com/gpu": "1"},
                                                      "limits": {"example.com/gpu": "1"}}
    pod = parse_api_object(BY_KIND["Pod"], control_plane.api("POST", f"/api/v1/namespaces/{namespace}/pods", manifest))
    status = {"requestMappings": [{"containerName": "c", "resourceName": "example.com/gpu",
                                   "requestName": "container-0-request-0"}],
              "resourceClaimName": "p-extended-resources-abcde"}
    backend.set_extended_resource_claim_status(pod, status)
    got = control_plane.api("GET", f"/api/v1/namespaces/{namespace}/pods/p")
    assert got["status"]["extendedResourceClaimStatus"] == status
