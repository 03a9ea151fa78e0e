"""PodDisruptionBudgets in victim selection (upstream ``filterPodsWithPDBViolation``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

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
