"""What kube-apiserver v1.36.2 does to a pod it is asked to create: one table of cases, asserted
on the embedded cluster (``tests/api/test_admission_table.py``) and on a real API server
(``tests/kube/test_admission_table.py``) from the same expectations.

Each case creates its ``setup`` objects (PriorityClasses, RuntimeClasses, LimitRanges), then asks
for its ``subject``: either it is refused (the HTTP status and the message, as ``kschedfw
simulate`` prints it after ``rejected ...``), or it is admitted and the pod the server stores
differs from the pod written only by what :func:`admitted` lists. The admission plugins of a
default kube-apiserver that change or refuse a pod run in this order: LimitRanger, Priority,
DefaultTolerationSeconds, RuntimeClass (mutating), then the pod's validation, then LimitRanger
and RuntimeClass again (validating).

Cluster-scoped names (classes) are unique across the table, so the real server can run every
case on one control plane; pods are all ``p`` (each case has its own namespace there).
"""

from __future__ import annotations

from typing import Any, Mapping

import attrs

from kschedfw.api import Pod, parse_resource_list

NOT_READY = "node.kubernetes.io/not-ready"
UNREACHABLE = "node.kubernetes.io/unreachable"
#: DefaultTolerationSeconds: every pod that does not tolerate these NoExecute taints yet
DEFAULT_TOLERATIONS = (
    {"key": NOT_READY, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
    {"key": UNREACHABLE, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
)


@attrs.frozen
class Refused:
    """The API server's answer: its HTTP status and its message."""

    code: int
    message: str


@attrs.frozen
class Admitted:
    """The parts of the stored pod admission can change (see :func:`admitted_fields`)."""

    fields: Mapping[str, Any]


@attrs.frozen
class Case:
    id: str
    subject: dict[str, Any]
    expected: Refused | Admitted
    setup: tuple[dict[str, Any], ...] = ()


# ------------------------------------------------------------------------------ comparing pods

def _toleration(t: Mapping[str, Any]) -> tuple[str, str, str, str, int | None]:
    return (t.get("key") or "", t.get("operator") or "Equal", t.get("value") or "", t.get("effect") or "",
            t.get("tolerationSeconds"))


def admitted_fields(pod: Pod) -> dict[str, Any]:
    """What the scheduler reads of the fields admission sets: priority, preemption policy,
    overhead, node selector, tolerations, each container's requests and limits (requests
    include the limits the API server copies into them), annotations."""
    return {
        "priorityClassName": pod.priority_class_name,
        "priority": pod.priority,
        "preemptionPolicy": pod.preemption_policy,
        "overhead": dict(pod.overhead),
        "nodeSelector": dict(pod.node_selector),
        "tolerations": [(t.key, t.operator or "Equal", t.value, t.effect, t.toleration_seconds)
                        for t in pod.tolerations],
        "containers": [(c.name, dict(c.requests), dict(c.limits)) for c in (*pod.init_containers, *pod.containers)],
        "annotations": dict(pod.annotations),
    }


def admitted(*, tolerations: Any = DEFAULT_TOLERATIONS, containers: Any = (("c", {}, {}),),
             overhead: Mapping[str, str] | None = None, **fields: Any) -> Admitted:
    """The fields of a plain pod ``p`` once admitted (priority 0, ``PreemptLowerPriority``, the
    default tolerations), with ``fields`` instead; quantities as written in manifests."""
    base: dict[str, Any] = {
        "priorityClassName": "", "priority": 0, "preemptionPolicy": "PreemptLowerPriority",
        "nodeSelector": {}, "annotations": {}, **fields,
        "overhead": parse_resource_list(overhead, field="overhead"),
        "tolerations": [_toleration(t) for t in tolerations],
        "containers": [(name, parse_resource_list(req, field="requests"), parse_resource_list(lim, field="limits"))
                       for name, req, lim in containers],
    }
    return Admitted(base)


# ------------------------------------------------------------------------------ objects

def pod(*, containers: Any = None, init_containers: Any = None, **spec: Any) -> dict[str, Any]:
    """Pod ``p``: one container ``c`` without resources unless ``containers`` (name -> resources)."""
    def written(items: Mapping[str, Any]) -> list[dict[str, Any]]:
        return [{"name": name, "image": "registry.k8s.io/pause:3.10", **({"resources": res} if res else {})}
                for name, res in items.items()]
    body: dict[str, Any] = {"containers": written(containers or {"c": None})}
    if init_containers:
        body["initContainers"] = written(init_containers)
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {**body, **spec}}


def priority_class(name: str, value: int, **fields: Any) -> dict[str, Any]:
    return {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": name},
            "value": value, **fields}


def runtime_class(name: str, **fields: Any) -> dict[str, Any]:
    return {"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass", "metadata": {"name": name},
            "handler": name, **fields}


def limit_range(*limits: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "LimitRange", "metadata": {"name": "limits"},
            "spec": {"limits": list(limits)}}


def forbidden(reason: str) -> Refused:
    return Refused(403, f'pods "p" is forbidden: {reason}')


def preemption_conflict(written: str, computed: str) -> Refused:
    return forbidden(f"the string value of PreemptionPolicy ({written}) must not be provided in pod spec; "
                     f"priority admission controller computed {computed} from the given PriorityClass name")


def priority_conflict(written: int, computed: int) -> Refused:
    return forbidden(f"the integer value of priority ({written}) must not be provided in pod spec; "
                     f"priority admission controller computed {computed} from the given PriorityClass name")


def resources(requests: Mapping[str, str] | None = None, limits: Mapping[str, str] | None = None) -> dict[str, Any]:
    return {**({"requests": dict(requests)} if requests else {}), **({"limits": dict(limits)} if limits else {})}


# ------------------------------------------------------------------------------ Priority

PRIORITY = [
    Case("no class, no default: priority 0", pod(), admitted()),
    Case("class gives priority and policy", pod(priorityClassName="pc-high"),
         admitted(priorityClassName="pc-high", priority=1000),
         (priority_class("pc-high", 1000),)),
    Case("class with Never", pod(priorityClassName="pc-never"),
         admitted(priorityClassName="pc-never", priority=10, preemptionPolicy="Never"),
         (priority_class("pc-never", 10, preemptionPolicy="Never"),)),
    Case("pod PreemptLowerPriority, class Never", pod(priorityClassName="pc-never2", preemptionPolicy="PreemptLowerPriority"),
         preemption_conflict("PreemptLowerPriority", "Never"),
         (priority_class("pc-never2", 10, preemptionPolicy="Never"),)),
    Case("pod Never, class defaulted to PreemptLowerPriority", pod(priorityClassName="pc-plain", preemptionPolicy="Never"),
         preemption_conflict("Never", "PreemptLowerPriority"),
         (priority_class("pc-plain", 10),)),
    Case("pod Never, class PreemptLowerPriority", pod(priorityClassName="pc-plp", preemptionPolicy="Never"),
         preemption_conflict("Never", "PreemptLowerPriority"),
         (priority_class("pc-plp", 10, preemptionPolicy="PreemptLowerPriority"),)),
    Case("pod Never, no class, no default", pod(preemptionPolicy="Never"),
         preemption_conflict("Never", "PreemptLowerPriority")),
    Case("pod policy equal to the class's", pod(priorityClassName="pc-never3", preemptionPolicy="Never"),
         admitted(priorityClassName="pc-never3", priority=10, preemptionPolicy="Never"),
         (priority_class("pc-never3", 10, preemptionPolicy="Never"),)),
    Case("pod priority differs from the class's", pod(priorityClassName="pc-1000", priority=5),
         priority_conflict(5, 1000), (priority_class("pc-1000", 1000),)),
    Case("pod priority equal to the class's", pod(priorityClassName="pc-1000b", priority=1000),
         admitted(priorityClassName="pc-1000b", priority=1000), (priority_class("pc-1000b", 1000),)),
    Case("pod priority, no class, no default", pod(priority=7), priority_conflict(7, 0)),
    Case("pod priority 0, no class, no default", pod(priority=0), admitted()),
    Case("unknown class", pod(priorityClassName="nope"), forbidden("no PriorityClass with name nope was found")),
    Case("system-node-critical outside kube-system", pod(priorityClassName="system-node-critical"),
         admitted(priorityClassName="system-node-critical", priority=2000001000)),
    Case("system-cluster-critical outside kube-system", pod(priorityClassName="system-cluster-critical"),
         admitted(priorityClassName="system-cluster-critical", priority=2000000000)),
    Case("global default names the class of a pod without one", pod(),
         admitted(priorityClassName="pc-default", priority=50),
         (priority_class("pc-default", 50, globalDefault=True),)),
    Case("global default with Never", pod(),
         admitted(priorityClassName="pc-default-never", priority=50, preemptionPolicy="Never"),
         (priority_class("pc-default-never", 50, globalDefault=True, preemptionPolicy="Never"),)),
    Case("global default, pod Never against it", pod(preemptionPolicy="Never"),
         preemption_conflict("Never", "PreemptLowerPriority"),
         (priority_class("pc-default2", 50, globalDefault=True),)),
    Case("global default, pod priority against it", pod(priority=0),
         priority_conflict(0, 50), (priority_class("pc-default3", 50, globalDefault=True),)),
    Case("global default, pod names another class", pod(priorityClassName="pc-other"),
         admitted(priorityClassName="pc-other", priority=7),
         (priority_class("pc-default4", 50, globalDefault=True), priority_class("pc-other", 7))),
    Case("second global default", priority_class("pc-default6", 60, globalDefault=True),
         Refused(403, 'priorityclasses.scheduling.k8s.io "pc-default6" is forbidden: PriorityClass pc-default5 '
                      "is already marked as default. Only one default can exist"),
         (priority_class("pc-default5", 50, globalDefault=True),)),
    Case("system- prefix is reserved", priority_class("system-mine", 10),
         Refused(422, 'PriorityClass.scheduling.k8s.io "system-mine" is invalid: metadata.name: Forbidden: '
                      "priority class names with 'system-' prefix are reserved for system use only. "
                      "error: system-mine is not a known system priority class")),
    Case("class above the user range", priority_class("pc-huge", 1_000_000_001),
         Refused(422, 'PriorityClass.scheduling.k8s.io "pc-huge" is invalid: value: Forbidden: maximum allowed '
                      "value of a user defined priority is 1000000000")),
]

# ------------------------------------------------------------------------------ RuntimeClass

OVERHEAD = {"cpu": "250m", "memory": "64Mi"}

RUNTIME_CLASS = [
    Case("unknown RuntimeClass", pod(runtimeClassName="nope"),
         forbidden('pod rejected: RuntimeClass "nope" not found')),
    Case("overhead from the class", pod(runtimeClassName="rc-oh"), admitted(overhead=OVERHEAD),
         (runtime_class("rc-oh", overhead={"podFixed": OVERHEAD}),)),
    Case("pod overhead differs from the class's", pod(runtimeClassName="rc-oh2", overhead={"cpu": "100m"}),
         forbidden("pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead"),
         (runtime_class("rc-oh2", overhead={"podFixed": OVERHEAD}),)),
    Case("pod overhead, class without one", pod(runtimeClassName="rc-plain", overhead={"cpu": "100m"}),
         forbidden("pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead"),
         (runtime_class("rc-plain"),)),
    Case("class node selector merged", pod(runtimeClassName="rc-zone", nodeSelector={"disk": "ssd"}),
         admitted(nodeSelector={"disk": "ssd", "zone": "a"}),
         (runtime_class("rc-zone", scheduling={"nodeSelector": {"zone": "a"}}),)),
    Case("class node selector conflicts", pod(runtimeClassName="rc-zone2", nodeSelector={"zone": "b"}),
         forbidden("conflict: runtimeClass.scheduling.nodeSelector[zone] = a; pod.spec.nodeSelector[zone] = b"),
         (runtime_class("rc-zone2", scheduling={"nodeSelector": {"zone": "a"}}),)),
    Case("class tolerations merged after the default ones", pod(runtimeClassName="rc-tol"),
         admitted(tolerations=(*DEFAULT_TOLERATIONS, {"key": "gpu", "operator": "Exists", "effect": "NoSchedule"})),
         (runtime_class("rc-tol", scheduling={"tolerations": [{"key": "gpu", "operator": "Exists",
                                                                "effect": "NoSchedule"}]}),)),
    Case("class toleration covering everything replaces the default ones", pod(runtimeClassName="rc-all"),
         admitted(tolerations=({"operator": "Exists"},)),
         (runtime_class("rc-all", scheduling={"tolerations": [{"operator": "Exists"}]}),)),
    Case("class not-ready toleration shorter than the default one", pod(runtimeClassName="rc-short"),
         admitted(),
         (runtime_class("rc-short", scheduling={"tolerations": [
             {"key": NOT_READY, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 60}]}),)),
    Case("class not-ready toleration longer than the default one replaces it", pod(runtimeClassName="rc-long"),
         admitted(tolerations=(
             DEFAULT_TOLERATIONS[1],
             {"key": NOT_READY, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 900})),
         (runtime_class("rc-long", scheduling={"tolerations": [
             {"key": NOT_READY, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 900}]}),)),
]

# ------------------------------------------------------------------------------ DefaultTolerationSeconds

DEFAULT_TOLERATION_SECONDS = [
    Case("pod tolerating not-ready gets only the unreachable one",
         pod(tolerations=[{"key": NOT_READY, "operator": "Exists", "effect": "NoExecute"}]),
         admitted(tolerations=({"key": NOT_READY, "operator": "Exists", "effect": "NoExecute"},
                               DEFAULT_TOLERATIONS[1]))),
    Case("a toleration without effect counts", pod(tolerations=[{"key": UNREACHABLE, "operator": "Exists"}]),
         admitted(tolerations=({"key": UNREACHABLE, "operator": "Exists"}, DEFAULT_TOLERATIONS[0]))),
    Case("a toleration without key tolerates both", pod(tolerations=[{"operator": "Exists", "effect": "NoExecute"}]),
         admitted(tolerations=({"operator": "Exists", "effect": "NoExecute"},))),
    Case("a NoSchedule toleration does not count",
         pod(tolerations=[{"key": NOT_READY, "operator": "Exists", "effect": "NoSchedule"}]),
         admitted(tolerations=({"key": NOT_READY, "operator": "Exists", "effect": "NoSchedule"},
                               *DEFAULT_TOLERATIONS))),
]

# ------------------------------------------------------------------------------ LimitRanger

LIMIT_RANGER = [
    Case("container defaults", pod(),
         admitted(containers=(("c", {"cpu": "100m", "memory": "256Mi"}, {"cpu": "500m", "memory": "256Mi"}),),
                  annotations={"kubernetes.io/limit-ranger":
                               "LimitRanger plugin set: cpu, memory request for container c; "
                               "cpu, memory limit for container c"}),
         (limit_range({"type": "Container", "default": {"cpu": "500m", "memory": "256Mi"},
                       "defaultRequest": {"cpu": "100m"}}),)),
    Case("container defaults for a pod with limits", pod(containers={"c": resources(limits={"cpu": "300m"})}),
         admitted(containers=(("c", {"cpu": "300m"}, {"cpu": "300m"}),)),
         (limit_range({"type": "Container", "default": {"cpu": "500m"}, "defaultRequest": {"cpu": "100m"}}),)),
    Case("init container defaults", pod(init_containers={"i": None}),
         admitted(containers=(("i", {"cpu": "100m"}, {}), ("c", {"cpu": "100m"}, {})),
                  annotations={"kubernetes.io/limit-ranger":
                               "LimitRanger plugin set: cpu request for container c; "
                               "cpu request for init container i"}),
         (limit_range({"type": "Container", "defaultRequest": {"cpu": "100m"}}),)),
    Case("container max is the default limit", pod(),
         admitted(containers=(("c", {"cpu": "1"}, {"cpu": "1"}),),
                  annotations={"kubernetes.io/limit-ranger":
                               "LimitRanger plugin set: cpu request for container c; cpu limit for container c"}),
         (limit_range({"type": "Container", "max": {"cpu": "1"}}),)),
    Case("container above max", pod(containers={"c": resources(limits={"cpu": "2"})}),
         forbidden("maximum cpu usage per Container is 1, but limit is 2"),
         (limit_range({"type": "Container", "max": {"cpu": "1"}}),)),
    Case("container below min", pod(containers={"c": resources(requests={"memory": "32Mi"})}),
         forbidden("minimum memory usage per Container is 64Mi, but request is 32Mi"),
         (limit_range({"type": "Container", "min": {"memory": "64Mi"}}),)),
    Case("pod above max", pod(containers={"a": resources(limits={"cpu": "600m"}),
                                          "b": resources(limits={"cpu": "600m"})}),
         forbidden("maximum cpu usage per Pod is 1, but limit is 1200m"),
         (limit_range({"type": "Pod", "max": {"cpu": "1"}}),)),
    Case("pod max without limits", pod(), forbidden("maximum cpu usage per Pod is 1.  No limit is specified"),
         (limit_range({"type": "Pod", "max": {"cpu": "1"}}),)),
    Case("limit to request ratio", pod(containers={"c": resources({"cpu": "100m"}, {"cpu": "400m"})}),
         forbidden("cpu max limit to request ratio per Container is 2, but provided ratio is 4.000000"),
         (limit_range({"type": "Container", "maxLimitRequestRatio": {"cpu": "2"}}),)),
    Case("every violation", pod(containers={"c": resources({"memory": "32Mi"}, {"cpu": "2", "memory": "32Mi"})}),
         forbidden("[minimum memory usage per Container is 64Mi, but request is 32Mi, "
                   "maximum cpu usage per Container is 1, but limit is 2]"),
         (limit_range({"type": "Container", "min": {"memory": "64Mi"}, "max": {"cpu": "1"}}),)),
    Case("default limit below the request", pod(containers={"c": resources(requests={"cpu": "1"})}),
         Refused(422, 'Pod "p" is invalid: spec.containers[0].resources.requests: Invalid value: "1": '
                      "must be less than or equal to cpu limit of 500m"),
         (limit_range({"type": "Container", "default": {"cpu": "500m"}}),)),
]

# ------------------------------------------------------------------------------ order of the plugins

BAD_NAME = Refused(422, 'Pod "p" is invalid: spec.containers[0].name: Invalid value: "Bad_Name": a lowercase '
                         "RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start "
                         "and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for "
                         "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')")

ORDER = [
    Case("Priority refuses before LimitRanger validates",
         pod(priorityClassName="nope", containers={"c": resources(limits={"cpu": "2"})}),
         forbidden("no PriorityClass with name nope was found"),
         (limit_range({"type": "Container", "max": {"cpu": "1"}}),)),
    Case("admission refuses before validation", pod(priorityClassName="nope", containers={"Bad_Name": None}),
         forbidden("no PriorityClass with name nope was found")),
    Case("RuntimeClass refuses before validation", pod(runtimeClassName="nope", containers={"Bad_Name": None}),
         forbidden('pod rejected: RuntimeClass "nope" not found')),
    Case("RuntimeClass checks an overhead without class after validation",
         pod(overhead={"cpu": "100m"}, containers={"Bad_Name": None}), BAD_NAME),
    Case("LimitRanger validates after validation", pod(containers={"Bad_Name": resources(limits={"cpu": "2"})}),
         BAD_NAME,
         (limit_range({"type": "Container", "max": {"cpu": "1"}}),)),
    Case("Priority refuses before RuntimeClass", pod(priorityClassName="nope", runtimeClassName="nope"),
         forbidden("no PriorityClass with name nope was found")),
]

# ------------------------------------------------------------------------------ PodGroup

@attrs.frozen
class PodGroupCase:
    """Upstream's TestPodGroupAdmission (test/integration/scheduler/podgroup/admission), GenericWorkload
    on: the ``workload`` created first (and deleted, when ``delete_workload``, which a finalizer
    holds back), then the PodGroup ``subject`` refused with Forbidden (``expected`` is the
    message) or admitted (``expected`` None) with the protection finalizer added."""

    id: str
    subject: dict[str, Any]
    expected: str | None
    workload: dict[str, Any] | None = None
    delete_workload: bool = False


def workload(name: str = "test-workload", *, finalizers: tuple[str, ...] = ()) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name}
    if finalizers:
        meta["finalizers"] = list(finalizers)
    return {"apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "Workload", "metadata": meta,
            "spec": {"podGroupTemplates": [{"name": "worker", "schedulingPolicy": {"gang": {"minCount": 3}}}]}}


def pod_group(template: str | None = "worker", workload_name: str = "test-workload") -> dict[str, Any]:
    spec: dict[str, Any] = {"schedulingPolicy": {"gang": {"minCount": 3}}}
    if template is not None:
        spec["podGroupTemplateRef"] = {"workload": {"workloadName": workload_name, "podGroupTemplateName": template}}
    return {"apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "PodGroup", "metadata": {"name": "pg1"}, "spec": spec}


def pod_group_refused(why: str) -> str:
    return f'podgroups.scheduling.k8s.io "pg1" is forbidden: PodGroup rejected: {why}'


POD_GROUP_PROTECTION_FINALIZER = "scheduling.k8s.io/podgroup-protection"

POD_GROUP: list[PodGroupCase] = [
    PodGroupCase("PodGroup referencing non-existent Workload is rejected",
                 pod_group("worker", "non-existent-workload"),
                 pod_group_refused('Workload "non-existent-workload" not found')),
    PodGroupCase("PodGroup referencing non-existent template is rejected",
                 pod_group("non-existent-template"),
                 pod_group_refused('PodGroupTemplate "non-existent-template" not found in Workload "test-workload"'),
                 workload()),
    PodGroupCase("PodGroup referencing valid Workload and template is accepted", pod_group(), None, workload()),
    PodGroupCase("PodGroup without templateRef is accepted", pod_group(None), None),
    PodGroupCase("PodGroup referencing terminating Workload is rejected", pod_group(),
                 pod_group_refused('Workload "test-workload" is being deleted'),
                 workload(finalizers=("test.k8s.io/block-deletion",)), delete_workload=True),
]

CASES = [*PRIORITY, *RUNTIME_CLASS, *DEFAULT_TOLERATION_SECONDS, *LIMIT_RANGER, *ORDER]
