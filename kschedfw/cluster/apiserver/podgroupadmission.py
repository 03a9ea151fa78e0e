"""The admission a ``scheduling.k8s.io`` PodGroup passes on create while GenericWorkload is on, as
kube-apiserver v1.36 runs it: PodGroupProtection (mutating) stamps the protection finalizer, then
PodGroupWorkloadExists (validating) refuses a group whose ``podGroupTemplateRef`` names a
Workload that does not exist or is being deleted, or a template that Workload lacks. A group
without a Workload reference passes. Both plugins are in the API server's default set and do
nothing while the gate is off."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

import attrs

from kschedfw.api.workload_names import GROUP
from kschedfw.cluster.apiserver.admission import AdmissionError

if TYPE_CHECKING:
    from kschedfw.api.workload import PodGroup, Workload

#: the finalizer PodGroupProtection adds, which its controller removes once no pod uses the group
PROTECTION_FINALIZER = f"{GROUP}/podgroup-protection"

POD_GROUP_ADMISSION_PLUGINS = frozenset({"PodGroupProtection", "PodGroupWorkloadExists"})


def admit_new_pod_group(pod_group: "PodGroup", workload: Callable[[str, str], "Workload | None"], *,
                        plugins: frozenset[str] = POD_GROUP_ADMISSION_PLUGINS) -> "PodGroup":
    """The PodGroup as the admission ``plugins`` leave it, or :class:`AdmissionError` with the
    API server's message. ``workload(namespace, name)`` looks a Workload up."""
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
