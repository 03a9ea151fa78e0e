"""RuntimeClass admission: what the API server does to a pod that names a RuntimeClass.

Upstream's RuntimeClass admission plugin (``plugin/pkg/admission/runtimeclass``) refuses a pod
whose class does not exist, sets ``spec.overhead`` to the class's ``overhead.podFixed``, merges
the class's ``scheduling.nodeSelector`` into the pod's (a key with another value is a conflict)
and its ``scheduling.tolerations`` into the pod's (``MergeTolerations``: a toleration another
one covers is dropped). It then refuses a pod whose overhead no class defines. The scheduler
sees the result: the overhead counts in every fit and score, the selector and tolerations filter
nodes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

import attrs

from kschedfw.api import Toleration, format_quantity
from kschedfw.cluster.apiserver.admission import AdmissionError

if TYPE_CHECKING:
    from kschedfw.api import Pod, RuntimeClass

OVERHEAD_MISMATCH = "pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead"
OVERHEAD_WITHOUT_CLASS = "pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead"


class Forbidden(ValueError):
    """Upstream's reason for refusing the pod."""


def admit_runtime_class(pod: "Pod", lookup: Callable[[str], "RuntimeClass | None"]) -> "Pod":
    """The pod as the RuntimeClass plugin's Admit leaves it, or :class:`AdmissionError` with
    upstream's message (:func:`check_overhead` is its Validate). ``lookup`` finds a class by name."""
    try:
        return _admit(pod, lookup)
    except Forbidden as exc:
        raise AdmissionError(f'pods "{pod.name}" is forbidden: {exc}') from None


def check_overhead(pod: "Pod", lookup: Callable[[str], "RuntimeClass | None"]) -> None:
    """The plugin's Validate, after the pod's validation: refuse an overhead no class defines."""
    raw_spec = pod.raw.get("spec")
    spec: dict[str, Any] = raw_spec if isinstance(raw_spec, dict) else {}
    name = spec.get("runtimeClassName")
    rc = lookup(name) if name is not None else None
    if (rc is None or rc.overhead is None) and _sets_overhead(pod, spec):
        raise AdmissionError(f'pods "{pod.name}" is forbidden: {OVERHEAD_WITHOUT_CLASS}')


def _admit(pod: "Pod", lookup: Callable[[str], "RuntimeClass | None"]) -> "Pod":
    raw_spec = pod.raw.get("spec")
    spec: dict[str, Any] = raw_spec if isinstance(raw_spec, dict) else {}
    name = spec.get("runtimeClassName")
    if name is None:
        return pod
    rc = lookup(name)
    if rc is None:
        raise Forbidden(f'pod rejected: RuntimeClass "{name}" not found')
    spec = dict(spec)
    changes: dict[str, Any] = {}
    if rc.overhead is not None:
        if pod.overhead and pod.overhead != rc.overhead:
            raise Forbidden(OVERHEAD_MISMATCH)
        if rc.overhead:  # as written in the class
            pod_fixed = (rc.raw.get("overhead") or {}).get("podFixed")
            spec["overhead"] = dict(pod_fixed) if isinstance(pod_fixed, dict) else {
                k: format_quantity(k, v) for k, v in rc.overhead.items()}
        else:
            spec.pop("overhead", None)
        changes["overhead"] = dict(rc.overhead)
    if rc.scheduling is not None:
        selector = _merged_node_selector(spec.get("nodeSelector"), rc.scheduling.node_selector)
        if selector is not None:
            spec["nodeSelector"] = selector
            changes["node_selector"] = dict(selector)
        tolerations = merge_tolerations(list(spec.get("tolerations") or ()), list(rc.scheduling.tolerations))
        if tolerations or "tolerations" in spec:
            spec["tolerations"] = tolerations
        changes["tolerations"] = tuple(_typed(t) for t in tolerations)
    if not changes:
        return pod
    return attrs.evolve(pod, raw={**pod.raw, "spec": spec}, **changes)


def _sets_overhead(pod: "Pod", spec: dict[str, Any]) -> bool:
    """Whether the pod gives an overhead: upstream checks for a non-nil map, so an empty
    ``overhead: {}`` counts."""
    return spec.get("overhead") is not None or bool(pod.overhead)


def _merged_node_selector(pod_selector: Any, class_selector: dict[str, str] | None) -> dict[str, str] | None:
    """The pod's selector with the class's keys added; a key the pod sets to another value is a
    conflict. None when neither has one."""
    if pod_selector is None:
        return None if class_selector is None else dict(class_selector)
    merged = dict(pod_selector)
    for key, value in (class_selector or {}).items():
        if key in merged and merged[key] != value:
            raise Forbidden(f"conflict: runtimeClass.scheduling.nodeSelector[{key}] = {value}; "
                            f"pod.spec.nodeSelector[{key}] = {merged[key]}")
        merged[key] = value
    return merged


def _fields(t: dict[str, Any]) -> tuple[str, str, str, str, int | None]:
    """A toleration as upstream compares it: key, operator as written ("" is not "Equal"
    here), value, effect, tolerationSeconds."""
    return (t.get("key") or "", t.get("operator") or "", t.get("value") or "", t.get("effect") or "",
            t.get("tolerationSeconds"))


def _is_superset(ss: dict[str, Any], t: dict[str, Any]) -> bool:
    """Whether ``ss`` tolerates everything ``t`` does (upstream ``isSuperset``)."""
    ss_key, ss_op, ss_value, ss_effect, ss_seconds = _fields(ss)
    t_key, t_op, t_value, t_effect, t_seconds = _fields(t)
    if _fields(ss) == _fields(t):
        return True
    if t_key != ss_key and (ss_key or ss_op != "Exists"):
        return False
    if t_effect != ss_effect and ss_effect:
        return False
    if ss_effect == "NoExecute" and ss_seconds is not None:
        if t_seconds is None or t_seconds > ss_seconds:
            return False
    if ss_op in ("Equal", ""):
        return t_op == "Equal" and t_value == ss_value
    return ss_op == "Exists"


def merge_tolerations(first: list[dict[str, Any]], second: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Both lists in order, without a toleration that one kept before it, or a different one
    after it, covers (upstream ``MergeTolerations``; of two equal ones the first stays)."""
    everything = first + second
    merged: list[dict[str, Any]] = []
    for i, t in enumerate(everything):
        if any(_is_superset(kept, t) for kept in merged):
            continue
        if any(_fields(t) != _fields(later) and _is_superset(later, t) for later in everything[i + 1:]):
            continue
        merged.append(t)
    return merged


def _typed(t: dict[str, Any]) -> Toleration:
    key, operator, value, effect, seconds = _fields(t)
    return Toleration(key, operator or "Equal", value, effect, seconds)
