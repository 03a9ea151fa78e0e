"""What the API server checks when an object is created: validation of Pods, Nodes, RuntimeClasses
and DRA objects, and Priority admission.

Upstream's Priority admission plugin resolves ``spec.priorityClassName`` to ``spec.priority`` and
``spec.preemptionPolicy``, falls back to the global default class (or 0 and
``PreemptLowerPriority``), and refuses a pod that names a class that does not exist or sets a
priority or policy other than the one computed, and a second global default class.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterable, Mapping

import attrs

from kschedfw.cluster.apiserver.apivalidation import (invalid_message, validate_node_manifest,
                                             validate_pod_manifest, validate_runtime_class_manifest)
from kschedfw.cluster.apiserver.dravalidation import GROUP as DRA_GROUP
from kschedfw.cluster.apiserver.dravalidation import VALIDATORS as DRA_VALIDATORS
from kschedfw.cluster.apiserver.dravalidation import CELCompiler, strict_decoding_message
from kschedfw.api.field import UNSUPPORTED, FieldError
from kschedfw.api.workload_names import POD_GROUP_KIND, WORKLOAD_KIND
from kschedfw.fwk.features import enabled

if TYPE_CHECKING:
    from kschedfw.api import Pod, PriorityClass

SYSTEM_CLUSTER_CRITICAL = "system-cluster-critical"
SYSTEM_NODE_CRITICAL = "system-node-critical"
SYSTEM_CRITICAL_PRIORITY = 2_000_000_000
HIGHEST_USER_DEFINABLE_PRIORITY = 1_000_000_000
SYSTEM_PRIORITY_CLASSES = {
    SYSTEM_CLUSTER_CRITICAL: SYSTEM_CRITICAL_PRIORITY,
    SYSTEM_NODE_CRITICAL: SYSTEM_CRITICAL_PRIORITY + 1000,
}


class AdmissionError(ValueError):
    """The API server would refuse this object; the message is upstream's."""


def validate_priority_class(pc: "PriorityClass", existing: Iterable["PriorityClass"] = ()) -> None:
    """ValidatePriorityClass, then Priority admission: a second global default is refused."""
    kind = "PriorityClass.scheduling.k8s.io"
    if pc.name.startswith("system-"):
        expected = SYSTEM_PRIORITY_CLASSES.get(pc.name)
        if expected is None:
            raise AdmissionError(
                f'{kind} "{pc.name}" is invalid: metadata.name: Forbidden: priority class names '
                "with 'system-' prefix are reserved for system use only. error: "
                f"{pc.name} is not a known system priority class")
        if pc.value != expected:
            raise AdmissionError(f'{kind} "{pc.name}" is invalid: value: Invalid value: '
                                 f"{pc.value}: value of {pc.name} PriorityClass must be {expected}")
    elif pc.value > HIGHEST_USER_DEFINABLE_PRIORITY:
        raise AdmissionError(f'{kind} "{pc.name}" is invalid: value: Forbidden: maximum allowed '
                             f"value of a user defined priority is {HIGHEST_USER_DEFINABLE_PRIORITY}")
    default = global_default(existing) if pc.global_default else None
    if default is not None:
        raise AdmissionError(f'priorityclasses.scheduling.k8s.io "{pc.name}" is forbidden: PriorityClass '
                             f"{default.name} is already marked as default. Only one default can exist")


def validate_pod(pod: "Pod", comparison_operators: bool) -> None:
    """The pod validation the scheduler's behaviour depends on: without the
    TaintTolerationComparisonOperators gate, ``Gt``/``Lt`` tolerations are refused."""
    errs = _operator_errors(pod, comparison_operators)
    if errs:
        raise AdmissionError(invalid_message("Pod", pod.name, errs))


def _operator_errors(pod: "Pod", comparison_operators: bool) -> list[FieldError]:
    if comparison_operators:
        return []
    return [FieldError(("spec", "tolerations", i, "operator"), UNSUPPORTED,
                       'supported values: "Equal", "Exists"', toleration.operator)
            for i, toleration in enumerate(pod.tolerations) if toleration.operator in ("Gt", "Lt")]


def validate_create(obj: Any, gates: Mapping[str, bool] | None = None,
                    compile_cel: CELCompiler | None = None) -> None:
    """ValidatePodCreate / ValidateNode / ValidateRuntimeClass for a Pod, Node or RuntimeClass
    written in a manifest (see :mod:`kschedfw.cluster.apiserver.apivalidation`), strict decoding and
    validation for DRA objects (:mod:`kschedfw.cluster.apiserver.dravalidation`, CEL compiled by
    ``compile_cel``); other kinds pass. Raises :class:`AdmissionError` with the API server's
    message."""
    kind = getattr(obj, "kind", None) or type(obj).__name__
    if kind in DRA_VALIDATORS and isinstance(obj.raw, dict) and obj.raw:
        undecodable = strict_decoding_message(kind, obj.raw)
        if undecodable:
            raise AdmissionError(undecodable)
        errs = DRA_VALIDATORS[kind](obj.raw, compile_cel)
        kind = f"{kind}.{DRA_GROUP}"
    elif kind == "Pod":
        errs = validate_pod_manifest(obj.raw) + _operator_errors(
            obj, enabled(gates, "TaintTolerationComparisonOperators"))
    elif kind == "Node":
        errs = validate_node_manifest(obj.raw)
    elif kind == "RuntimeClass":
        errs = validate_runtime_class_manifest(obj.raw)
        kind = "RuntimeClass.node.k8s.io"  # the API server names a group's kind so
    elif kind in (POD_GROUP_KIND, WORKLOAD_KIND):  # what the strategy keeps, validated as the API server does
        errs = _workload_errors(obj, gates)
        kind = f"{type(obj).__name__}.scheduling.k8s.io"
    else:
        return
    if errs:
        raise AdmissionError(invalid_message(kind, obj.name, errs))


def _workload_errors(obj: Any, gates: Mapping[str, bool] | None) -> list[FieldError]:
    """A PodGroup's or Workload's findings on create (the validation module loads with the first)."""
    from kschedfw.api.workload import PodGroup
    from kschedfw.api.workload_validation import (WorkloadGates, drop_disabled_workload_fields,
                                                  prepare_pod_group_for_create, validate_pod_group,
                                                  validate_workload)
    workload_gates = WorkloadGates(
        topology_aware_workload_scheduling=enabled(gates, "TopologyAwareWorkloadScheduling"),
        dra_workload_resource_claims=enabled(gates, "DRAWorkloadResourceClaims"),
        workload_aware_preemption=enabled(gates, "WorkloadAwarePreemption"))
    if isinstance(obj, PodGroup):
        return validate_pod_group(prepare_pod_group_for_create(obj, workload_gates), workload_gates)
    return validate_workload(drop_disabled_workload_fields(obj, None, workload_gates), workload_gates)


def admit_pod(pod: "Pod", classes: Iterable["PriorityClass"]) -> "Pod":
    """Priority admission: the pod's priority and preemption policy from its class, or from the
    global default class (whose name the pod then gets), or 0 and ``PreemptLowerPriority``; a
    pod that names a missing class, or sets a priority or policy other than the computed one, is
    refused."""
    value, name, policy = resolve_priority_class(pod.priority_class_name, classes, f'pods "{pod.name}"')
    if pod.priority is not None and pod.priority != value:
        raise AdmissionError(f'pods "{pod.name}" is forbidden: the integer value of priority ({pod.priority}) '
                             f"must not be provided in pod spec; priority admission controller computed "
                             f"{value} from the given PriorityClass name")
    if pod.preemption_policy is not None and pod.preemption_policy != policy:
        raise AdmissionError(f'pods "{pod.name}" is forbidden: the string value of PreemptionPolicy '
                             f"({pod.preemption_policy}) must not be provided in pod spec; priority admission "
                             f"controller computed {policy} from the given PriorityClass name")
    if (pod.priority, pod.preemption_policy, pod.priority_class_name) == (value, policy, name):
        return pod
    raw = dict(pod.raw)
    spec = dict(raw.get("spec") or {})
    if name:
        spec["priorityClassName"] = name
    spec["priority"] = value
    spec["preemptionPolicy"] = policy
    raw["spec"] = spec
    return attrs.evolve(pod, priority=value, preemption_policy=policy, priority_class_name=name, raw=raw)


def resolve_priority_class(name: str | None, classes: Iterable["PriorityClass"],
                           refused: str) -> tuple[int, str, str]:
    """The Priority admission plugin's lookup for an object naming class ``name`` (or none):
    its value, the class name it ends with (the global default's when it named none) and its
    preemption policy (``PreemptLowerPriority`` when the class sets none, or without a class);
    a missing class is refused as ``<refused> is forbidden: no PriorityClass ...``."""
    by_name = {pc.name: pc for pc in classes}
    policy = "PreemptLowerPriority"  # a class without one is defaulted so
    if name:
        if name in by_name:
            return by_name[name].value, name, by_name[name].preemption_policy or policy
        if name in SYSTEM_PRIORITY_CLASSES:  # the API server creates them at start-up
            return SYSTEM_PRIORITY_CLASSES[name], name, policy
        raise AdmissionError(f"{refused} is forbidden: no PriorityClass with name {name} was found")
    default = global_default(by_name.values())
    if default is None:
        return 0, "", policy
    return default.value, default.name, default.preemption_policy or policy


def global_default(classes: Iterable["PriorityClass"]) -> "PriorityClass | None":
    """The global default class; of several (created in a race), the lowest (upstream)."""
    defaults = [pc for pc in classes if pc.global_default]
    return min(defaults, key=lambda pc: pc.value) if defaults else None


def validate_extended_resource_claim_status(pod: "Pod", status: Mapping[str, Any]) -> None:
    """The API server's check of ``status.extendedResourceClaimStatus`` on a pods/status update
    (upstream validatePodExtendedResourceClaimStatus): mappings present, each naming a container
    of the pod and a resource that container requests, and a claim name."""
    path = "status.extendedResourceClaimStatus"
    containers = {c.name: c for c in (*pod.init_containers, *pod.containers)}
    errors = []
    mappings = list(status.get("requestMappings") or ())
    if not mappings:
        errors.append(f"{path}.requestMappings: Required value: at least one request mapping is required")
    for i, mapping in enumerate(mappings):
        container = containers.get(str(mapping.get("containerName") or ""))
        if container is None:
            errors.append(f'{path}.requestMappings[{i}].containerName: Invalid value: "{mapping.get("containerName")}": '
                          "must match the name of an entry in spec.initContainers.name or spec.containers.name")
        elif mapping.get("resourceName") not in container.requests:
            errors.append(f'{path}.requestMappings[{i}].resourceName: Invalid value: "{mapping.get("resourceName")}": '
                          "must match the extended resource name of an entry in "
                          "spec.initContainers.resources.requests or spec.containers.resources.requests")
    if not status.get("resourceClaimName"):
        errors.append(f"{path}.resourceClaimName: Required value")
    if errors:
        raise AdmissionError(f'Pod "{pod.name}" is invalid: ' + ", ".join(errors))
