"""Optional APIs that appear after start-up are watched without a restart: upstream's informers
for an API not served yet retry their list until it is; kschedfw retries discovery with the same
backoff and starts the informer once the API is served."""

from __future__ import annotations

from kschedfw.cluster.kube.backend import KubeBackend
from kschedfw.cluster.kube.client import KubeClient
from kschedfw.cluster.kube.credentials import load_connection
from kschedfw.cluster.kube.discovery import discover
from kschedfw.cluster.kube.resources import BY_KIND
from kschedfw.testing.controlplane import APIError, ControlPlane
from tests.kube.helpers import wait_for

CRD_NAME = "elasticquotas.scheduling.x-k8s.io"
CRD = {
    "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
    "metadata": {"name": CRD_NAME},
    "spec": {"group": "scheduling.x-k8s.io", "scope": "Namespaced",
             "names": {"kind": "ElasticQuota", "plural": "elasticquotas", "singular": "elasticquota",
                       "listKind": "ElasticQuotaList"},
             "versions": [{"name": "v1alpha1", "served": True, "storage": True,
                           "schema": {"openAPIV3Schema": {"type": "object",
                                                          "x-kubernetes-preserve-unknown-fields": True}}}]},
}


def test_a_crd_created_after_start_is_watched_once_served(control_plane: ControlPlane, namespace: str):
    client = KubeClient(load_connection(control_plane.kubeconfig))
    backend = KubeBackend(client, kinds=["Node", "ElasticQuota"],
                          informer_options={"initial_backoff": 0.05, "max_backoff": 0.4})
    try:
        served, missing = discover(client, [BY_KIND["Node"], BY_KIND["ElasticQuota"]])
        assert [r.kind for r in served] == ["Node"] and [r.kind for r in missing] == ["ElasticQuota"]
        backend.start()
        assert backend.wait_for_sync(30)  # start-up does not wait for what is not served
        assert [i.resource.kind for i in backend.informers] == ["Node"]
        control_plane.api("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", CRD)
        wait_for(lambda: [i for i in backend.informers if i.resource.kind == "ElasticQuota" and i.synced.is_set()],
                 timeout=30, what="the ElasticQuota informer")
        control_plane.api("POST", f"/apis/scheduling.x-k8s.io/v1alpha1/namespaces/{namespace}/elasticquotas",
                          {"apiVersion": "scheduling.x-k8s.io/v1alpha1", "kind": "ElasticQuota",
                           "metadata": {"name": "quota", "namespace": namespace},
                           "spec": {"max": {"cpu": "4"}, "min": {"cpu": "1"}}})
        quota = wait_for(lambda: (backend.deliver(), backend.get("ElasticQuota", "quota", namespace))[1],
                         what="the quota in the cache")
        assert quota.name == "quota"
        assert backend._late is not None and not backend._late.missing  # nothing left to look for
    finally:
        backend.stop()
        client.close()
        try:
            control_plane.api("DELETE", f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{CRD_NAME}")
        except APIError:
            pass
