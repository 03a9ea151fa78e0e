"""What a trace records: every kind ``kschedfw run`` watches, the kinds the embedded cluster
reads at admission (RuntimeClasses), the ``scheduling.k8s.io/v1alpha2`` PodGroups (whatever the
gates) and Workloads where served, and the ``events.k8s.io`` Events its decisions are read from."""

from __future__ import annotations

from kschedfw.cluster.kube.resources import RESOURCES, Resource

__all__ = ["EVENTS", "TRACED"]

#: read for FailedScheduling decisions only; never recorded as objects
EVENTS = Resource("Event", "events.k8s.io/v1", "events")

_MORE = (
    Resource("RuntimeClass", "node.k8s.io/v1", "runtimeclasses", namespaced=False),
    Resource("Workload", "scheduling.k8s.io/v1alpha2", "workloads", optional=True),
)


def _traced() -> tuple[Resource, ...]:
    seen = {(r.group_version, r.plural) for r in RESOURCES}
    return RESOURCES + tuple(r for r in _MORE if (r.group_version, r.plural) not in seen)


#: the kinds of a trace's objects, each once (those ``run`` watches first)
TRACED: tuple[Resource, ...] = _traced()
