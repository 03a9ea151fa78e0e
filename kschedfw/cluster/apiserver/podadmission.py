"""The admission chain a pod passes on create, in kube-apiserver's order.

Mutating plugins first: LimitRanger (container defaults), Priority, DefaultTolerationSeconds,
RuntimeClass (which also refuses an overhead that differs from its class's); then the pod's
validation; then the validating plugins: LimitRanger (min, max, ratio) and RuntimeClass (an
overhead no class defines). The first refusal wins, so a pod naming a missing PriorityClass is
refused for that even when it is also invalid.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Iterable, Mapping

from kschedfw.cluster.apiserver.admission import AdmissionError, admit_pod, validate_create, validate_pod
from kschedfw.cluster.apiserver.limitranger import LimitViolation, check_limits, set_defaults
from kschedfw.cluster.apiserver.runtimeclass import admit_runtime_class, check_overhead
from kschedfw.cluster.apiserver.tolerationseconds import add_default_tolerations
from kschedfw.fwk.features import enabled

if TYPE_CHECKING:
    from kschedfw.api import Pod, PriorityClass, RuntimeClass

#: The admission plugins of a default kube-apiserver that change or refuse what the scheduler
#: reads of a pod, and of a PodGroup (:mod:`kschedfw.cluster.apiserver.podgroupadmission`):
#: those the embedded cluster runs (``--disable-admission-plugins`` takes some away, as
#: scheduler_perf's API server runs without Priority).
ADMISSION_PLUGINS = frozenset({"LimitRanger", "Priority", "DefaultTolerationSeconds", "RuntimeClass",
                               "PodGroupProtection", "PodGroupWorkloadExists"})


def admit_new_pod(pod: "Pod", *, priority_classes: Iterable["PriorityClass"],
                  runtime_class: Callable[[str], "RuntimeClass | None"], limit_ranges: Iterable[Any],
                  gates: Mapping[str, bool] | None = None, validate: bool = False,
                  plugins: frozenset[str] = ADMISSION_PLUGINS) -> "Pod":
    """The pod as the admission ``plugins`` leave it, or :class:`AdmissionError` with upstream's
    message.

    The manifest's full validation runs when ``validate`` is set or LimitRanger changed the pod
    (its defaults can make a limit fall below a request); otherwise only the check of
    toleration operators the feature gates allow (what was written is validated before it is
    created, see :func:`kschedfw.cluster.inputs.manifests.admit`)."""
    limit_ranges = list(limit_ranges) if "LimitRanger" in plugins else []
    admitted = defaulted = set_defaults(pod, limit_ranges)
    if "Priority" in plugins:
        admitted = admit_pod(admitted, priority_classes)
    if "DefaultTolerationSeconds" in plugins:
        admitted = add_default_tolerations(admitted)
    if "RuntimeClass" in plugins:
        admitted = admit_runtime_class(admitted, runtime_class)
    if validate or defaulted is not pod:
        validate_create(admitted, gates)
    else:
        validate_pod(admitted, enabled(gates, "TaintTolerationComparisonOperators"))
    try:
        check_limits(admitted, limit_ranges)
    except LimitViolation as exc:
        raise AdmissionError(f'pods "{pod.name}" is forbidden: {exc}') from None
    if "RuntimeClass" in plugins:
        check_overhead(admitted, runtime_class)
    return admitted
