"""Lean cached pods: a pod decoded with only the fields the scheduler reads parses to the same
:class:`Pod` as the whole object the API server sent (upstream's scheduler reads those fields
from its full informer copy), through msgspec and through the pure-Python fallback alike."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from kschedfw.api import Pod, load_manifests
from kschedfw.cluster.kube import leanpod
from kschedfw.cluster.kube.resources import BY_KIND, parse_api_object
from kschedfw.api.field import ManifestError
from tests.scenarios.test_random_clusters import random_pod

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
POD = BY_KIND["Pod"]

# what a real pod carries that no part of the scheduler reads: must not change the parsed Pod
NOISE = {
    "metadata": {"managedFields": [{"manager": "kubectl", "operation": "Update", "fieldsV1": {"f:spec": {}}}],
                 "generation": 3, "selfLink": "/x"},
    "spec": {"dnsPolicy": "ClusterFirst", "restartPolicy": "Always", "serviceAccountName": "default",
             "securityContext": {"runAsUser": 1000}, "enableServiceLinks": True},
    "status": {"qosClass": "Burstable", "hostIP": "10.0.0.1", "podIP": "10.1.0.1",
               "containerStatuses": [{"name": "c", "ready": True, "restartCount": 0, "image": "nginx"}]},
}
CONTAINER_NOISE = {"command": ["sleep", "1d"], "env": [{"name": "A", "value": "b"}],
                   "volumeMounts": [{"name": "v", "mountPath": "/v"}], "imagePullPolicy": "IfNotPresent",
                   "livenessProbe": {"httpGet": {"path": "/", "port": 80}}, "terminationMessagePath": "/dev/x"}

RICH_POD = {
    "apiVersion": "v1", "kind": "Pod",
    "metadata": {
        "name": "rich", "namespace": "team", "uid": "u-rich", "resourceVersion": "42", "generateName": "rich-",
        "labels": {"app": "web"}, "annotations": {"a": "b", "kubectl.kubernetes.io/last-applied-configuration": "{}"},
        "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs", "uid": "u-rs",
                             "controller": True}],
        "creationTimestamp": "2026-01-01T00:00:00Z", "deletionTimestamp": "2026-01-01T00:01:00Z",
        "deletionGracePeriodSeconds": 30, "finalizers": ["x/y"]},
    "spec": {
        "nodeName": "", "schedulerName": "custom", "priority": 1000, "priorityClassName": "high",
        "preemptionPolicy": "Never", "overhead": {"cpu": "250m"}, "nodeSelector": {"disk": "ssd"},
        "hostNetwork": True, "terminationGracePeriodSeconds": 5, "runtimeClassName": "kata",
        "resources": {"requests": {"cpu": "2"}, "limits": {"memory": "1Gi"}},
        "containers": [{"name": "c", "image": "nginx:1", "ports": [{"containerPort": 80, "protocol": "TCP"}],
                        "resources": {"requests": {"cpu": "100m"}, "limits": {"cpu": "200m", "memory": "64Mi"}}}],
        "initContainers": [{"name": "side", "image": "envoy", "restartPolicy": "Always",
                            "resources": {"requests": {"memory": "32Mi"}}},
                           {"name": "init", "image": "busybox", "resources": {"requests": {"cpu": "1"}}}],
        "affinity": {
            "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
                {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a", "b"]}]}]},
                "preferredDuringSchedulingIgnoredDuringExecution": [
                    {"weight": 5, "preference": {"matchExpressions": [
                        {"key": "disk", "operator": "Exists"}]}}]},
            "podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
                {"labelSelector": {"matchLabels": {"app": "db"}}, "topologyKey": "zone",
                 "matchLabelKeys": ["pod-template-hash"]}]},
            "podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": 10, "podAffinityTerm": {"labelSelector": {"matchExpressions": [
                    {"key": "app", "operator": "In", "values": ["web"]}]}, "topologyKey": "kubernetes.io/hostname",
                    "namespaceSelector": {}}}]}},
        "tolerations": [{"key": "t", "operator": "Equal", "value": "x", "effect": "NoSchedule"},
                        {"operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 60}],
        "topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule",
                                       "labelSelector": {"matchLabels": {"app": "web"}}, "minDomains": 2,
                                       "nodeAffinityPolicy": "Honor", "nodeTaintsPolicy": "Ignore",
                                       "matchLabelKeys": ["pod-template-hash"]}],
        "schedulingGates": [{"name": "wait"}],
        "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": "pvc-1", "readOnly": True}},
                    {"name": "scratch", "ephemeral": {"volumeClaimTemplate": {"spec": {
                        "accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}}},
                    {"name": "cfg", "configMap": {"name": "cm", "items": [{"key": "k", "path": "p"}]}}],
        "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "gpu-template"}],
    },
    "status": {
        "phase": "Pending", "nominatedNodeName": "n1", "startTime": "2026-01-01T00:00:05Z",
        "conditions": [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
                        "message": "0/3 nodes are available", "lastTransitionTime": "2026-01-01T00:00:02Z",
                        "lastProbeTime": None}],
        "resourceClaimStatuses": [{"name": "gpu", "resourceClaimName": "rich-gpu-abc"}],
        "extendedResourceClaimStatus": {"resourceClaimName": "rich-extended", "requestMappings": []},
    },
}


def with_noise(d: dict) -> dict:
    out = json.loads(json.dumps(d))
    for section, extra in NOISE.items():
        out.setdefault(section, {}).update(extra)
    for key in ("containers", "initContainers"):
        for c in out["spec"].get(key) or []:
            c.update(CONTAINER_NOISE)
    return out


def recorded_pods() -> list[dict]:
    return json.loads((HERE / "fixtures" / "recorded-pods.json").read_text())


def manifest_pods() -> list[dict]:
    """Every Pod in the repository's cluster manifests (kubectl's own snapshot among them)."""
    files = [ROOT / "tests/api/fixtures/snapshot-kubectl.yaml",
             *sorted((ROOT / "contrib-plugins").glob("*/tests/data/*.yaml")), *sorted((ROOT / "kschedfw/demo").glob("*.yaml"))]
    pods = []
    for f in files:
        if "kind: Pod" not in f.read_text():
            continue
        try:
            pods += [o.raw for o in load_manifests(str(f)) if isinstance(o, Pod)]
        except ManifestError:  # a scheduler configuration, not a cluster
            continue
    return pods


def random_pods() -> list[dict]:
    r = random.Random(7)
    return [random_pod(r, i, [f"n{j}" for j in range(5)]).raw for i in range(60)]


TABLE = ([("recorded", p) for p in recorded_pods()] + [("manifest", p) for p in manifest_pods()]
         + [("random", with_noise(p)) for p in random_pods()] + [("rich", with_noise(RICH_POD))])


def test_the_table_covers_what_the_parser_reads():
    assert len([1 for source, _ in TABLE if source == "recorded"]) == 35
    assert len([1 for source, _ in TABLE if source == "manifest"]) >= 5
    kinds = {k for _, p in TABLE for k in (p.get("spec") or {})}
    assert {"affinity", "tolerations", "topologySpreadConstraints", "volumes", "initContainers"} <= kinds


@pytest.mark.parametrize("fast", [True, False], ids=["msgspec", "python"])
def test_a_lean_pod_parses_to_the_same_pod_as_the_whole_object(fast):
    decode = leanpod.pod_decoder(fast)
    for source, whole in TABLE:
        lean = decode(json.dumps(whole).encode())
        full_pod = parse_api_object(POD, whole)
        lean_pod = parse_api_object(POD, lean)
        assert lean_pod == full_pod, (source, whole["metadata"].get("name"))
        # what the backend and the queue read from the manifest itself
        for field in ("conditions", "resourceClaimStatuses", "extendedResourceClaimStatus"):
            assert (lean_pod.raw.get("status") or {}).get(field) == (full_pod.raw.get("status") or {}).get(field)
        assert "managedFields" not in lean["metadata"]
        assert all(set(c) <= set(leanpod.POD_FIELDS["spec"]["containers"][0])
                   for c in (lean.get("spec") or {}).get("containers") or [])


def test_msgspec_and_the_python_fallback_decode_alike():
    pods = [p for _, p in TABLE]
    page = json.dumps({"kind": "PodList", "apiVersion": "v1", "metadata": {"resourceVersion": "9", "continue": "c"},
                       "items": pods}).encode()
    assert leanpod.pod_list_decoder(True)(page) == leanpod.pod_list_decoder(False)(page)
    for type_ in ("ADDED", "MODIFIED", "DELETED"):
        line = json.dumps({"type": type_, "object": with_noise(RICH_POD)}).encode()
        assert leanpod.pod_event_decoder(True)(line) == leanpod.pod_event_decoder(False)(line)


@pytest.mark.parametrize("fast", [True, False], ids=["msgspec", "python"])
def test_bookmarks_and_error_events_keep_what_the_reflector_reads(fast):
    decode = leanpod.pod_event_decoder(fast)
    error = {"type": "ERROR", "object": {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                                         "message": "too old resource version: 289 (291)", "reason": "Expired",
                                         "code": 410}}
    assert decode(json.dumps(error).encode()) == error  # the Status whole, not pruned as a pod
    bookmark = {"type": "BOOKMARK", "object": {"kind": "Pod", "apiVersion": "v1", "metadata": {
        "resourceVersion": "15", "annotations": {"k8s.io/initial-events-end": "true"}}}}
    assert decode(json.dumps(bookmark).encode()) == bookmark


@pytest.mark.parametrize("fast", [True, False], ids=["msgspec", "python"])
def test_a_malformed_pod_is_still_reported_by_the_parser(fast):
    """A shape the Structs refuse falls back to json: the parser names the field, as for a whole object."""
    bad = {"metadata": {"name": "bad", "namespace": "ns"}, "spec": {"containers": "nope"}}
    lean = leanpod.pod_decoder(fast)(json.dumps(bad).encode())
    assert lean == bad
    with pytest.raises(Exception, match="spec.containers"):
        parse_api_object(POD, lean)
