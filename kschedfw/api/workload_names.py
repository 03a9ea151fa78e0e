"""The names of the ``scheduling.k8s.io`` workload API (its group, the store keys of its kinds,
condition types, reasons, limits), apart from the objects in :mod:`kschedfw.api.workload`: the
scheduler's handlers and stores read these for every cluster, the objects are built only for one
that has Workloads or PodGroups."""

from __future__ import annotations

__all__ = ["API_VERSION", "DISRUPTION_MODES", "DISRUPTION_MODE_POD", "DISRUPTION_MODE_POD_GROUP",
           "DISRUPTION_TARGET", "GROUP", "MAX_POD_GROUP_RESOURCE_CLAIMS", "POD_GROUP_KIND",
           "POD_GROUP_SCHEDULED", "REASON_PREEMPTION_BY_SCHEDULER", "REASON_SCHEDULER_ERROR",
           "REASON_UNSCHEDULABLE", "WORKLOAD_KIND", "WORKLOAD_MAX_POD_GROUP_TEMPLATES", "is_workload_api"]

GROUP = "scheduling.k8s.io"
API_VERSION = f"{GROUP}/v1alpha2"

#: the keys the stores and listers hold these kinds under (upstream's EventResource spelling),
#: so they never meet the coscheduling plugin's ``scheduling.x-k8s.io`` PodGroup (plain "PodGroup")
POD_GROUP_KIND = f"{GROUP}/PodGroup"
WORKLOAD_KIND = f"{GROUP}/Workload"

DISRUPTION_MODE_POD = "Pod"
DISRUPTION_MODE_POD_GROUP = "PodGroup"
DISRUPTION_MODES = (DISRUPTION_MODE_POD, DISRUPTION_MODE_POD_GROUP)

#: condition types and reasons of a PodGroup's status
POD_GROUP_SCHEDULED = "PodGroupScheduled"
DISRUPTION_TARGET = "DisruptionTarget"
REASON_UNSCHEDULABLE = "Unschedulable"
REASON_SCHEDULER_ERROR = "SchedulerError"
REASON_PREEMPTION_BY_SCHEDULER = "PreemptionByScheduler"

WORKLOAD_MAX_POD_GROUP_TEMPLATES = 8
MAX_POD_GROUP_RESOURCE_CLAIMS = 4


def is_workload_api(api_version: str) -> bool:
    """True for the in-tree ``scheduling.k8s.io`` group (any version), False for another group
    that uses the same kind names (the coscheduling plugin's ``scheduling.x-k8s.io``)."""
    return api_version.partition("/")[0] == GROUP
