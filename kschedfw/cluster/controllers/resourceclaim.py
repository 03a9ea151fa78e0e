"""The embedded cluster's stand-in for kube-controller-manager's resourceclaim controller.

A pod naming a ResourceClaimTemplate gets a ResourceClaim generated from it (``generateName``
``<pod>-<pod claim>-``, owned by the pod, annotation ``resource.kubernetes.io/pod-claim-name``) and
``status.resourceClaimStatuses`` naming it; when the pod goes, its generated claims go with it and
the claims it shared drop it from ``status.reservedFor`` and are deallocated once nobody uses them.
Names get a suffix derived from the pod's uid instead of the API server's random one, so a
simulation stays reproducible.
"""

from __future__ import annotations

import copy
import hashlib
from typing import Any, Callable

from kschedfw.api import Pod, parse_object
from kschedfw.api.accessors import controller_ref, raw_of

POD_CLAIM_NAME_ANNOTATION = "resource.kubernetes.io/pod-claim-name"
CLAIM_FINALIZER = "resource.kubernetes.io/delete-protection"
# the API server's alphabet for generateName suffixes (no vowels, no look-alikes)
_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
_MAX_BASE_LEN = 57  # a 63-character name less "-" and the 5-character suffix


def generate_name(pod_name: str, claim_name: str) -> str:
    """upstream's generateName: ``<pod>-<claim>-``, both parts cut in proportion when too long."""
    base = f"{pod_name}-{claim_name}-"
    if len(base) > _MAX_BASE_LEN:
        base = (pod_name[:len(pod_name) * _MAX_BASE_LEN // len(base)] + "-"
                + claim_name[:len(claim_name) * _MAX_BASE_LEN // len(base)])
    return base


def generated_suffix(seed: str) -> str:
    """Five characters of the API server's generateName alphabet, derived from ``seed``."""
    digest = hashlib.sha256(seed.encode()).digest()
    return "".join(_ALPHABET[b % len(_ALPHABET)] for b in digest[:5])


def _claim_from_template(pod: Pod, pod_claim_name: str, template: Any) -> Any:
    spec = raw_of(template).get("spec") or {}
    meta = spec.get("metadata") or {}
    prefix = generate_name(pod.name, pod_claim_name)
    annotations = {**(meta.get("annotations") or {}), POD_CLAIM_NAME_ANNOTATION: pod_claim_name}
    metadata: dict[str, Any] = {
        "name": prefix + generated_suffix(f"{pod.uid}/{pod_claim_name}"), "generateName": prefix, "namespace": pod.namespace,
        "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": pod.name, "uid": pod.uid,
                             "controller": True}],
        "annotations": annotations}
    if meta.get("labels"):
        metadata["labels"] = dict(meta["labels"])
    return parse_object({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": metadata,
                         "spec": copy.deepcopy(spec.get("spec") or {})})


def with_generated_claims(pod: Pod, get: Callable[[str, str, str], Any], create: Callable[[Any], Any],
                          failed: Callable[[str, str], None] | None = None) -> Pod:
    """``pod`` with ``status.resourceClaimStatuses`` for each template claim whose template exists,
    creating the claims (upstream handleClaim); the pod as it was when there is nothing to do.
    ``failed(template, message)`` hears of the first claim that cannot be created, in the words
    of upstream's FailedResourceClaimCreation event."""
    if not pod.resource_claims or pod.node_name:
        return pod
    statuses = list((raw_of(pod).get("status") or {}).get("resourceClaimStatuses") or ())
    known = {s.get("name") for s in statuses if isinstance(s, dict)}
    added = False
    for pod_claim in pod.resource_claims:
        name = str(pod_claim.get("name") or "")
        template_name = pod_claim.get("resourceClaimTemplateName")
        if not template_name or name in known:
            continue
        template = get("ResourceClaimTemplate", str(template_name), pod.namespace)
        if template is None:  # upstream retries; a template created later is picked up then
            if failed is not None:
                failed(str(template_name), f'PodResourceClaim {name}: resource claim template "{template_name}": '
                                           f'resourceclaimtemplate.resource.k8s.io "{template_name}" not found')
                failed = None  # upstream's sync stops at the first failure, with one event
            continue
        claim = _claim_from_template(pod, name, template)
        if get("ResourceClaim", claim.name, claim.namespace) is None:
            create(claim)
        statuses.append({"name": name, "resourceClaimName": claim.name})
        added = True
    if not added:
        return pod
    raw = dict(pod.raw)
    raw["status"] = {**(raw.get("status") or {}), "resourceClaimStatuses": statuses}
    return pod._evolve_keep_caches(raw=raw)


def claims_after_pod_removal(pod: Pod, claims: list[Any]) -> tuple[list[Any], list[Any]]:
    """(claims to update, then claims to delete) once ``pod`` is gone: the claims it reserved drop
    it from ``reservedFor`` and, reserved for nobody, are deallocated (the update that requeues pods
    waiting for devices); the claims generated for it are deleted after that."""
    to_update: list[Any] = []
    to_delete: list[Any] = []
    for claim in claims:
        ref = controller_ref(claim)
        owned = ref is not None and str(ref.get("uid") or "") == pod.uid and ref.get("kind") == "Pod"
        if owned:
            to_delete.append(claim)
        status = raw_of(claim).get("status") or {}
        reserved = [r for r in status.get("reservedFor") or () if isinstance(r, dict)]
        if not any(str(r.get("uid") or "") == pod.uid for r in reserved):
            continue
        raw = copy.deepcopy(raw_of(claim))
        new_status = raw.setdefault("status", {})
        new_status["reservedFor"] = [r for r in reserved if str(r.get("uid") or "") != pod.uid]
        if not new_status["reservedFor"]:
            for key in ("reservedFor", "allocation", "devices"):
                new_status.pop(key, None)
            meta = raw.setdefault("metadata", {})
            meta["finalizers"] = [f for f in meta.get("finalizers") or () if f != CLAIM_FINALIZER]
            if not meta["finalizers"]:
                del meta["finalizers"]
        to_update.append(parse_object(raw))
    return to_update, to_delete
