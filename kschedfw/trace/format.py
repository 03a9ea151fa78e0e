"""The trace format, version 1: what `kschedfw record` writes.

A trace is one gzip-compressed file of JSON lines (UTF-8, one JSON object per line, in the order
they were received). ``kschedfw/trace/trace.schema.json`` is the JSON Schema of a line. Every
line has a ``type``; every line but the header has ``t``, the wall-clock time it was received
(seconds since the Unix epoch, a float). The lines, in the order they come:

``header`` (the first line, exactly once)
    ``format_version`` (this module's :data:`FORMAT_VERSION`; a reader refuses a newer one),
    ``started`` (the time recording began), ``server`` (the API server's ``/version``
    ``gitVersion``, when it answered) and ``resources``: every ``apiVersion``/``kind`` the
    server served as recording began (discovery decides the optional ones: DRA, PodGroups,
    Workloads). An optional kind served later (a CRD installed meanwhile) is recorded from
    then on, its objects as ``ADDED`` events.
``list``
    ``object``: one object of a kind's first list. A kind's list lines all come before its
    ``event`` lines, but the kinds are listed side by side, so one kind's events may come
    before another kind's list.
``synced`` (exactly once)
    Every kind has been listed. The cluster as the trace starts (its snapshot, what
    ``simulate --kubeconfig`` schedules) is every ``list`` object with every ``event`` before
    this line applied, in order: :func:`kschedfw.trace.reader.initial_objects`.
``event``
    ``event`` (``ADDED``, ``MODIFIED`` or ``DELETED``) and ``object``: a watch event, the object
    as it is after it (a ``DELETED`` carries the object as last seen). After a relist (a
    version expired, the server restarted) the differences between what was known and the new
    list come as such events, so a trace stays complete through API faults.
``decision``
    What the cluster's schedulers decided: ``decision`` is ``Bound`` (a pod got
    ``spec.nodeName``: ``node``), ``Nominated`` (its ``status.nominatedNodeName`` changed to
    ``node``, ``""`` when cleared) or ``FailedScheduling`` (an ``events.k8s.io`` Event:
    ``message``); with ``pod`` (``namespace/name``), ``uid``, ``scheduler`` (the pod's
    ``schedulerName``, or the Event's reporting controller) and ``at``: when the scheduler
    decided, from the API (the pod's PodScheduled condition, the Event's time), else ``t``.
``end`` (the last line of a trace that was closed, not cut short)
    ``counts``: ``listed``, ``events`` and ``decisions`` written.

Objects are the API server's JSON without what the scheduler never reads: ``managedFields``
and ``kubectl.kubernetes.io/last-applied-configuration`` on every object; pods keep only
:data:`kschedfw.cluster.kube.leanpod.POD_FIELDS`; nodes lose :data:`NODE_STATUS_DROPPED`.
Events are not objects of the trace (the scheduler does not read them), only decisions.
"""

from __future__ import annotations

from typing import Any

from kschedfw.cluster.kube.leanpod import prune

__all__ = ["FORMAT_VERSION", "LINE_TYPES", "NODE_STATUS_DROPPED", "slim"]

FORMAT_VERSION = 1
LINE_TYPES = ("header", "list", "synced", "event", "decision", "end")

#: node status fields no plugin reads (kubelet bookkeeping), dropped from recorded nodes
NODE_STATUS_DROPPED = ("addresses", "daemonEndpoints", "nodeInfo", "config", "volumesInUse",
                       "volumesAttached")
_DROPPED_ANNOTATIONS = ("kubectl.kubernetes.io/last-applied-configuration",)


def slim(d: dict[str, Any]) -> dict[str, Any]:
    """``d`` (an object as the API server sent it) without what the scheduler never reads; the
    input is not changed."""
    kind = d.get("kind")
    if kind == "Pod":
        d = prune(d)
    meta = d.get("metadata")
    if isinstance(meta, dict):
        meta = {k: v for k, v in meta.items() if k != "managedFields"}
        annotations = meta.get("annotations")
        if isinstance(annotations, dict) and any(a in annotations for a in _DROPPED_ANNOTATIONS):
            meta["annotations"] = {k: v for k, v in annotations.items() if k not in _DROPPED_ANNOTATIONS}
        d = {**d, "metadata": meta}
    status = d.get("status")
    if kind == "Node" and isinstance(status, dict) and any(f in status for f in NODE_STATUS_DROPPED):
        d = {**d, "status": {k: v for k, v in status.items() if k not in NODE_STATUS_DROPPED}}
    return d
