"""TopologyPlacementGenerator: one placement per topology domain for a PodGroup that asks for one.

A group whose ``schedulingConstraints.topology`` names a key gets one placement per value of
that node label among the parent placement's nodes (nodes without it are in none); once pods
of the group are scheduled, only their domain is offered. A group without a constraint gets
the parent placement back.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kschedfw import hookimpl
from kschedfw.api.workload import POD_GROUP_KIND, PodGroup
from kschedfw.fwk.interface import NotFound
from kschedfw.fwk.podgroup import GeneratePlacementsResult, Placement
from kschedfw.fwk.status import Status

if TYPE_CHECKING:
    from kschedfw.api import Pod
    from kschedfw.fwk.cycle_state import PodGroupCycleState
    from kschedfw.fwk.interface import Handle
    from kschedfw.fwk.podgroup import PodGroupInfo
    from kschedfw.fwk.types import NodeInfo

NAME = "TopologyPlacementGenerator"


class DomainError(Exception):
    """The group's scheduled pods do not name one domain of the key."""


def topology_key(pod_group: PodGroup) -> str | None:
    """The group's topology key (the API allows one constraint), or None."""
    constraints = pod_group.scheduling_constraints
    if constraints is not None and constraints.topology:
        return constraints.topology[0].key
    return None


class TopologyPlacementGenerator:
    """PlacementGenerate by the PodGroup's topology constraint (upstream TopologyPlacement)."""

    name = NAME

    def __init__(self, args: dict[str, Any] | None, handle: Handle) -> None:
        self.handle = handle

    @hookimpl
    def generate_placements(self, state: PodGroupCycleState, pod_group: PodGroupInfo,
                            parent_placement: Placement) -> tuple[GeneratePlacementsResult | None, Status | None]:
        found = self.handle.lister.get(POD_GROUP_KIND, pod_group.name, pod_group.namespace)
        if not isinstance(found, PodGroup):
            return None, Status.as_status(f'podgroup.scheduling.k8s.io "{pod_group.name}" not found')
        key = topology_key(found)
        if key is None:
            return GeneratePlacementsResult([parent_placement]), None
        try:
            scheduled = self.handle.snapshot.pod_group_states().get(
                pod_group.namespace, pod_group.name).scheduled_pods()
        except NotFound as err:
            return None, Status.as_status(err)
        required: str | None = None
        if scheduled:
            try:
                required = self._scheduled_domain(key, scheduled)
            except DomainError as err:
                return None, Status.as_status(f"cannot determine domain for already scheduled pods: {err}")
        domains: dict[str, list[NodeInfo]] = {}
        for node_info in parent_placement.nodes:
            node = node_info.node
            domain = node.labels.get(key) if node is not None else None
            if domain is not None and (required is None or domain == required):
                domains.setdefault(domain, []).append(node_info)
        return GeneratePlacementsResult([Placement(domain, nodes) for domain, nodes in domains.items()]), None

    def _scheduled_domain(self, key: str, pods: list[Pod]) -> str:
        domain = ""
        for pod in pods:
            node_info = self.handle.snapshot.get(pod.node_name)
            node = node_info.node if node_info is not None else None
            if node is None:
                raise DomainError(f'getting node for pod {pod.key}: nodeinfo not found for node name "{pod.node_name}"')
            value = node.labels.get(key)
            if value is None:
                raise DomainError(f"no topology domain found for pod {pod.key}")
            if domain and domain != value:
                raise DomainError(f"more than 1 domain found for pod group: {domain}, {value}")
            domain = value
        return domain
