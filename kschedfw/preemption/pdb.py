"""PodDisruptionBudgets in victim selection (upstream ``filterPodsWithPDBViolation``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from kschedfw.api import Pod, PodDisruptionBudget


def filter_pods_with_pdb_violation(pods: list["Pod"], pdbs: list["PodDisruptionBudget"]
                                   ) -> tuple[list["Pod"], list["Pod"]]:
    """Split ``pods`` (order kept) into those whose eviction would break a PDB and the others.

    Budgets are consumed in order: each matching PDB (same namespace, non-empty selector that
    matches, pod not already in ``status.disruptedPods``) loses one allowed disruption; a pod
    violates when some budget goes negative.
    """
    allowed = [pdb.disruptions_allowed for pdb in pdbs]
    violating: list["Pod"] = []
    non_violating: list["Pod"] = []
    for pod in pods:
        violated = False
        if pod.labels:  # a pod without labels matches no PDB
            for i, pdb in enumerate(pdbs):
                if pdb.namespace != pod.namespace:
                    continue
                selector = pdb.selector
                # A nil or empty selector matches nothing.
                if selector is None or selector.is_empty or not selector.matches(pod.labels):
                    continue
                # Already counted by the disruption controller: not a new violation.
                if pod.name in pdb.disrupted_pods:
                    continue
                allowed[i] -= 1
                if allowed[i] < 0:
                    violated = True
        (violating if violated else non_violating).append(pod)
    return violating, non_violating
