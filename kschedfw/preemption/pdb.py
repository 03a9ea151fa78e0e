"""PodDisruptionBudgets in victim selection (upstream ``filterPodsWithPDBViolation`` and, for
workload-aware preemption, its per-pod rule)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

from kschedfw.fwk.victims import violated_budgets

if TYPE_CHECKING:
    from kschedfw.api import Pod, PodDisruptionBudget


def filter_pods_with_pdb_violation(pods: list["Pod"], pdbs: list["PodDisruptionBudget"]
                                   ) -> tuple[list["Pod"], list["Pod"]]:
    """Split ``pods`` (order kept) into those whose eviction would break a PDB and the others, by
    the one rule of :func:`kschedfw.fwk.victims.violated_budgets` (budgets consumed in order; a
    pod violates when a matching budget goes negative)."""
    violating: list["Pod"] = []
    non_violating: list["Pod"] = []
    for pod, broken in zip(pods, violated_budgets(pods, pdbs)):
        (violating if broken else non_violating).append(pod)
    return violating, non_violating


def pod_violates_budget(pod: "Pod", pdbs: Sequence["PodDisruptionBudget"], allowed: list[int]) -> bool:
    """Would evicting ``pod`` break one of ``pdbs``? ``allowed`` holds the disruptions each budget
    still allows and is consumed: each matching budget (the pod not already among its disrupted
    pods) is charged, up to the first one that goes negative (upstream's per-pod rule of
    ``filterVictimsWithPDBViolation``)."""
    if not pod.labels:
        return False
    for i, pdb in enumerate(pdbs):
        selector = pdb.selector
        if pdb.namespace != pod.namespace or selector is None or selector.is_empty \
                or not selector.matches(pod.labels) or pod.name in pdb.disrupted_pods:
            continue
        allowed[i] -= 1
        if allowed[i] < 0:
            return True
    return False
