"""Writing annotations on a pod through the framework's client, on whichever backend runs the
scheduler: the embedded cluster (``kschedfw simulate``) or a kube-apiserver (``kschedfw run``).

kschedfw's client contract has no general pod patch yet, so this uses what each backend offers:
a ``patch_pod_annotations(pod, annotations)`` method when the client has one, the embedded
cluster's object update, or a JSON merge patch of the pod through the API server's client (the
pod's uid in the patch, so a same-named successor is never changed). A dry run writes nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Mapping

import attrs

from kschedfw.fwk.interface import NotFound

if TYPE_CHECKING:
    from kschedfw.api import Pod

MERGE_PATCH = "application/merge-patch+json"


def write_pod_annotations(client: Any, pod: "Pod", annotations: Mapping[str, str]) -> None:
    """Set ``annotations`` on the pod (this uid); NotFound when it is gone."""
    patch = getattr(client, "patch_pod_annotations", None)
    if callable(patch):
        patch(pod, dict(annotations))
        return
    api: Any = getattr(client, "client", None)
    if callable(getattr(api, "request", None)):
        if getattr(client, "dry_run", False):
            return
        body = {"metadata": {"uid": pod.uid, "annotations": dict(annotations)}}
        api.request("PATCH", f"/api/v1/namespaces/{pod.namespace}/pods/{pod.name}", body=body,
                    content_type=MERGE_PATCH)
        return
    if callable(getattr(client, "update", None)) and callable(getattr(client, "get", None)):
        current = client.get("Pod", pod.name, pod.namespace)
        if current is None or current.uid != pod.uid:
            raise NotFound(f'pods "{pod.name}" not found')
        merged = {**current.annotations, **annotations}
        raw = dict(current.raw)
        raw["metadata"] = {**(raw.get("metadata") or {}), "annotations": merged}
        client.update(attrs.evolve(current, annotations=merged, raw=raw))
        return
    raise TypeError(f"the client ({type(client).__name__}) cannot write pod annotations")
