"""The admission a ``scheduling.k8s.io`` PodGroup passes on create while GenericWorkload is on, as
kube-apiserver v1.36 runs it: PodGroupProtection (mutating) stamps the protection finalizer, then
PodGroupWorkloadExists (validating) refuses a group whose ``podGroupTemplateRef`` names a
Workload that does not exist or is being deleted, or a template that Workload lacks. A group
without a Workload reference passes. Both plugins are in the API server's default set and do
nothing while the gate is off. With WorkloadAwarePreemption on, the Priority plugin resolves the
group's ``priority`` from its ``priorityClassName`` (or the global default class) as it does a
pod's: without it a group's priority is 0 and workload-aware preemption finds no victim."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Iterable

import attrs

from kschedfw.api.workload_names import GROUP
from kschedfw.cluster.apiserver.admission import AdmissionError, resolve_priority_class

if TYPE_CHECKING:
    from kschedfw.api.other import PriorityClass
    from kschedfw.api.workload import PodGroup, Workload

#: the finalizer PodGroupProtection adds, which its controller removes once no pod uses the group
PROTECTION_FINALIZER = f"{GROUP}/podgroup-protection"

POD_GROUP_ADMISSION_PLUGINS = frozenset({"PodGroupProtection", "PodGroupWorkloadExists"})


def admit_new_pod_group(pod_group: "PodGroup", workload: Callable[[str, str], "Workload | None"], *,
                        plugins: frozenset[str] = POD_GROUP_ADMISSION_PLUGINS,
                        priority_classes: Iterable["PriorityClass"] | None = None) -> "PodGroup":
    """The PodGroup as the admission ``plugins`` leave it, or :class:`AdmissionError` with the
    API server's message. ``workload(namespace, name)`` looks a Workload up; ``priority_classes``
    (given only with WorkloadAwarePreemption on) feed the Priority plugin."""
    if "Priority" in plugins and priority_classes is not None:
        pod_group = with_priority(pod_group, priority_classes)
    if "PodGroupProtection" in plugins:
        pod_group = with_protection_finalizer(pod_group)
    if "PodGroupWorkloadExists" in plugins:
        refusal = missing_workload(pod_group, workload)
        if refusal:
            raise AdmissionError(f'podgroups.{GROUP} "{pod_group.name}" is forbidden: PodGroup rejected: {refusal}')
    return pod_group


def with_protection_finalizer(pod_group: "PodGroup") -> "PodGroup":
    """PodGroupProtection: the finalizer appended to the manifest's metadata, unless it is there."""
    meta = dict(pod_group.raw.get("metadata") or {"name": pod_group.name, "namespace": pod_group.namespace})
    finalizers = list(meta.get("finalizers") or ())
    if PROTECTION_FINALIZER in finalizers:
        return pod_group
    meta["finalizers"] = [*finalizers, PROTECTION_FINALIZER]
    return attrs.evolve(pod_group, raw={**pod_group.raw, "metadata": meta})


def with_priority(pod_group: "PodGroup", classes: Iterable["PriorityClass"]) -> "PodGroup":
    """The Priority plugin on a new PodGroup: ``priority`` from the class it names, else from the
    global default class (whose name it then gets), else 0; a missing class, or a ``priority``
    other than the computed one, is refused."""
    refused = f'podgroups.{GROUP} "{pod_group.name}"'
    value, name, _ = resolve_priority_class(pod_group.priority_class_name, classes, refused)
    if pod_group.priority is not None and pod_group.priority != value:
        raise AdmissionError(f"{refused} is forbidden: priority set in the pod group ({pod_group.priority}) must match the "
                             f"priority computed ({value}) based on the priority class set in the spec")
    if (pod_group.priority, pod_group.priority_class_name) == (value, name):
        return pod_group
    spec = dict(pod_group.raw.get("spec") or {})
    if name:
        spec["priorityClassName"] = name
    spec["priority"] = value
    return attrs.evolve(pod_group, priority=value, priority_class_name=name, raw={**pod_group.raw, "spec": spec})


def missing_workload(pod_group: "PodGroup", workload: Callable[[str, str], "Workload | None"]) -> str:
    """PodGroupWorkloadExists: why the referenced Workload or template is missing ("" if not)."""
    ref = pod_group.pod_group_template_ref
    if ref is None or ref.workload is None:
        return ""
    name, template = ref.workload.workload_name, ref.workload.pod_group_template_name
    found = workload(pod_group.namespace, name)
    if found is None:
        return f'Workload "{name}" not found'
    if _terminating(found):
        return f'Workload "{name}" is being deleted'
    if found.template(template) is None:
        return f'PodGroupTemplate "{template}" not found in Workload "{name}"'
    return ""


def _terminating(obj: Any) -> bool:
    meta = obj.raw.get("metadata") if isinstance(obj.raw, dict) else None
    return isinstance(meta, dict) and bool(meta.get("deletionTimestamp"))
