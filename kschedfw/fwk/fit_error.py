"""FitError: why a pod fits nowhere, in the exact words kube-scheduler uses."""

from __future__ import annotations

import attrs

from kschedfw.fwk.status import Status
from kschedfw.fwk.types import NodeToStatus, PostFilterResult

NO_NODE_AVAILABLE = "0/{} nodes are available"
ERR_NO_NODES_AVAILABLE = "no nodes available to schedule pods"


@attrs.define
class Diagnosis:
    """What the filtering phase learned: per-node statuses and which plugins rejected the pod."""

    node_to_status: NodeToStatus = attrs.Factory(NodeToStatus)
    unschedulable_plugins: set[str] = attrs.Factory(set)
    pending_plugins: set[str] = attrs.Factory(set)
    pre_filter_msg: str = ""
    post_filter_msg: str = ""
    #: the PostFilter status whose message is ``post_filter_msg`` (None: PostFilter did not run),
    #: kept so a report can say which plugin answered and with what code (not upstream)
    post_filter_status: Status | None = None
    #: and its result (the nomination; the per-node verdicts when it nominated no node)
    post_filter_result: PostFilterResult | None = None


@attrs.define
class FitError(Exception):
    pod_key: str
    num_all_nodes: int
    diagnosis: Diagnosis

    def __str__(self) -> str:
        return fit_error_message(self.num_all_nodes, self.diagnosis)


def fit_error_message(num_all_nodes: int, diagnosis: Diagnosis) -> str:
    """``0/N nodes are available: <counted reasons>. <PostFilter message>`` (upstream FitError.Error)."""
    message = NO_NODE_AVAILABLE.format(num_all_nodes) + ":"
    if diagnosis.pre_filter_msg:
        message += f" {diagnosis.pre_filter_msg}."
    else:
        histogram = reason_histogram(num_all_nodes, diagnosis)
        if histogram:
            message += " " + ", ".join(f"{count} {reason}" for reason, count in histogram) + "."
    if diagnosis.post_filter_msg:
        message += f" {diagnosis.post_filter_msg}"
    return message


def reason_histogram(num_all_nodes: int, diagnosis: Diagnosis) -> list[tuple[str, int]]:
    """Each rejection reason with the number of nodes it was given for, in the message's order
    (upstream sorts the ``"<count> <reason>"`` strings); nodes without a status of their own
    count for the absent nodes' status. The message and the structured reason both read it."""
    counts: dict[str, int] = {}
    statuses = diagnosis.node_to_status
    for _, status in statuses.items():
        for reason in status.reasons:
            counts[reason] = counts.get(reason, 0) + 1
    if len(statuses) < num_all_nodes:
        for reason in statuses.absent_nodes_status.reasons:
            counts[reason] = counts.get(reason, 0) + num_all_nodes - len(statuses)
    return sorted(counts.items(), key=lambda item: f"{item[1]} {item[0]}")
