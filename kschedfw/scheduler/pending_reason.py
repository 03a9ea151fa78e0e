"""Why a pod is pending, as data: the structure beside upstream's ``0/N nodes are available: ...``
message, so nobody has to parse that string.

It is built when a report asks for it, from what the loop already keeps (a pod's last
:class:`~kschedfw.scheduler.outcomes.Failure`, its gates), and from the same counts the message is
made of (:func:`~kschedfw.fwk.fit_error.reason_histogram`); :func:`message_of` gives the message
back from the structure alone. ``kschedfw/report/pending_reason.schema.json`` is its JSON Schema.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import attrs

from kschedfw.fwk.fit_error import NO_NODE_AVAILABLE, Diagnosis, FitError, reason_histogram
from kschedfw.fwk.status import Code, Status
from kschedfw.fwk.types import NodeToStatus

if TYPE_CHECKING:
    from kschedfw.scheduler.outcomes import Failure

#: the message of a pod held by its scheduling gates (upstream's PodScheduled condition)
SCHEDULING_GATED_MESSAGE = "Scheduling is blocked due to non-empty scheduling gates"

#: ``type`` values: no node fit (or one was rejected at Reserve/Permit), an attempt failed with an
#: error, held by scheduling gates, held by a PreEnqueue plugin, queued and not tried yet; and a
#: PodGroup's (see :func:`pod_group_reason`)
TYPES = ("Unschedulable", "SchedulerError", "SchedulingGated", "PreEnqueue", "NotAttempted", "PodGroup")

#: a pending PodGroup's ``state``: its last attempt found too few pods a node, failed with an
#: error, or made room by preemption and waits for it; a gang with fewer than ``minCount`` pods
#: (GangScheduling's PreEnqueue holds them); no attempt yet
GROUP_STATES = ("Unschedulable", "SchedulerError", "WaitingOnPreemption", "WaitingForPods", "NotAttempted")


@attrs.frozen
class Gating:
    """What keeps a pod out of the active queue: its scheduling gates, or a PreEnqueue plugin
    with its message and, when a claim cannot be created from a template, why."""

    scheduling_gates: tuple[str, ...] = ()
    plugin: str = ""
    message: str = ""
    detail: str = ""


def pending_reason(why: "Failure | Gating | None") -> dict[str, Any]:
    """The structured reason of a pending pod from its last failure or its gating (None: not
    attempted yet)."""
    if why is None:
        return {"type": "NotAttempted"}
    if isinstance(why, Gating):
        return _gated(why)
    status = why.status
    if isinstance(status.error, FitError):
        return _fit_error(status.error, why.nominated_node)
    out: dict[str, Any] = {
        "type": "Unschedulable" if status.is_rejected() else "SchedulerError",
        "code": status.code.name, "plugin": status.plugin, "statusReasons": list(status.reasons)}
    if status.error is not None:
        out["error"] = str(status.error) or type(status.error).__name__
    return out


def _gated(gating: Gating) -> dict[str, Any]:
    if gating.scheduling_gates:
        return {"type": "SchedulingGated", "schedulingGates": list(gating.scheduling_gates)}
    out: dict[str, Any] = {"type": "PreEnqueue", "plugin": gating.plugin, "statusReasons":
                           [gating.message] if gating.message else []}
    if gating.detail:
        out["detail"] = gating.detail
    return out


def _fit_error(fit_error: FitError, nominated_node: str | None) -> dict[str, Any]:
    diagnosis = fit_error.diagnosis
    num_all = fit_error.num_all_nodes
    out: dict[str, Any] = {
        "type": "Unschedulable", "code": Code.Unschedulable.name, "numAllNodes": num_all,
        "reasons": [{"reason": reason, "nodes": count} for reason, count in reason_histogram(num_all, diagnosis)],
        "plugins": _per_plugin(diagnosis.node_to_status, num_all),
        "unschedulablePlugins": sorted(diagnosis.unschedulable_plugins),
        "pendingPlugins": sorted(diagnosis.pending_plugins),
    }
    if diagnosis.pre_filter_msg:
        absent = diagnosis.node_to_status.absent_nodes_status
        out["preFilter"] = {"plugin": absent.plugin, "code": absent.code.name,
                            "message": diagnosis.pre_filter_msg}
    post = diagnosis.post_filter_status
    if post is not None:
        post_filter: dict[str, Any] = {"plugin": post.plugin, "code": post.code.name,
                                       "message": diagnosis.post_filter_msg, "nominatedNodeName": nominated_node}
        out["postFilter"] = post_filter
        result = diagnosis.post_filter_result
        if result is not None and result.node_to_status is not None:  # why no node could be nominated
            verdicts = Diagnosis(node_to_status=result.node_to_status)
            post_filter["reasons"] = [{"reason": reason, "nodes": count}
                                      for reason, count in reason_histogram(num_all, verdicts)]
            post_filter["plugins"] = _per_plugin(result.node_to_status, num_all)
    return out


def _per_plugin(statuses: NodeToStatus, num_all: int) -> list[dict[str, Any]]:
    """Each (plugin, code) that rejected nodes: how many nodes, and each reason's node count."""
    groups: dict[tuple[str, str], tuple[list[int], dict[str, int]]] = {}

    def count(status: Status, nodes: int) -> None:
        seen, reasons = groups.setdefault((status.plugin, status.code.name), ([0], {}))
        seen[0] += nodes
        for reason in status.reasons:
            reasons[reason] = reasons.get(reason, 0) + nodes

    for _, status in statuses.items():
        count(status, 1)
    if len(statuses) < num_all:
        count(statuses.absent_nodes_status, num_all - len(statuses))
    return [{"plugin": plugin, "code": code, "nodes": seen[0],
             "reasons": [{"reason": r, "nodes": n} for r, n in sorted(reasons.items())]}
            for (plugin, code), (seen, reasons) in sorted(groups.items())]


def pod_group_reason(key: str, policy: str, min_count: int, pods: int, state: str, *, tried: int = 0,
                     fit: int = 0, placements: int = 0, placement: str = "", message: str = "") -> dict[str, Any]:
    """Why a PodGroup is not scheduled, as data: ``state`` (one of :data:`GROUP_STATES`), how
    many of its ``pods`` its last attempt tried and how many found a node (``fit``), in which
    ``placement`` (the one that fitted the most, of ``placements`` tried; none without the
    TopologyAwareWorkloadScheduling gate), and the PodGroupScheduled condition's ``message``."""
    out: dict[str, Any] = {"type": "PodGroup", "podGroup": key, "policy": policy, "minCount": min_count,
                           "pods": pods, "state": state}
    if state in ("Unschedulable", "SchedulerError", "WaitingOnPreemption"):
        out.update(tried=tried, fit=fit, message=message)
        if placements:
            out.update(placements=placements, placement=placement)
    return out


def _group_message(reason: dict[str, Any]) -> str:
    """A PodGroup's one line, led by its policy and name, worded on upstream's condition
    messages: ``gang default/train: 6 of minCount 8 pods fit; placement rack=r1 fits the most
    (of 3); 0/3 placements are available, first placement status: ...``."""
    head = f"{reason['policy']} {reason['podGroup']}: "
    state = reason["state"]
    if state == "NotAttempted":
        return head + "not attempted yet"
    if state == "WaitingForPods":
        return (head + f"{reason['pods']} of minCount {reason['minCount']} pods exist; GangScheduling "
                "keeps them out of the queue until minCount pods exist")
    if state == "SchedulerError":
        return head + f"SchedulerError: {reason['message']}"
    detail = f"; {reason['message']}" if reason["message"] else ""
    if state == "WaitingOnPreemption":
        where = f" in placement {reason['placement']} (chosen of {reason['placements']})" \
            if reason.get("placements") else ""
        return head + f"waiting for preemption to complete{where}"
    quorum = f"minCount {reason['minCount']}" if reason["policy"] == "gang" else str(reason["tried"])
    text = head + f"{reason['fit']} of {quorum} pods fit"
    if reason.get("placements"):
        text += f"; placement {reason['placement']} fits the most (of {reason['placements']})"
    return text + detail


def message_of(reason: dict[str, Any]) -> str:
    """Upstream's message, rebuilt from the structure alone (FitError's rules: the PreFilter
    message instead of the counts when PreFilter rejected, the counts in sorted
    ``"<count> <reason>"`` order, then the PostFilter message)."""
    kind = reason["type"]
    if kind == "PodGroup":
        return _group_message(reason)
    if kind == "NotAttempted":
        return "not attempted yet"
    if kind == "SchedulingGated":
        return SCHEDULING_GATED_MESSAGE
    if kind == "PreEnqueue":
        text = f"gated by {reason['plugin']}" if reason["plugin"] else "gated"
        if reason["statusReasons"]:
            text += ": " + ", ".join(reason["statusReasons"])
        return f"{text}; {reason['detail']}" if reason.get("detail") else text
    if "numAllNodes" not in reason:
        return ", ".join(([reason["error"]] if "error" in reason else []) + reason["statusReasons"])
    message = NO_NODE_AVAILABLE.format(reason["numAllNodes"]) + ":"
    if "preFilter" in reason:
        message += f" {reason['preFilter']['message']}."
    elif reason["reasons"]:
        message += " " + ", ".join(sorted(f"{r['nodes']} {r['reason']}" for r in reason["reasons"])) + "."
    post = reason.get("postFilter")
    if post is not None and post["message"]:
        message += f" {post['message']}"
    return message
