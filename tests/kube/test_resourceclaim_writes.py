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
