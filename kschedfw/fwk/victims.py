"""What preemption and the extenders exchange: the victims on a node and a candidate node.

Upstream keeps ``Victims`` with the extender interface and ``Candidate`` with the preemption
framework, both in the framework layer: a preemption plugin builds them, an extender's
``ProcessPreemption`` narrows them, and neither side imports the other.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import attrs

if TYPE_CHECKING:
    from kschedfw.api import Pod, PodDisruptionBudget

__all__ = ["Victims", "Candidate", "violated_budgets"]


@attrs.define(eq=True)
class Victims:
    """Pods to evict on one node (most important first) and how many of them break a PDB."""

    pods: list["Pod"] = attrs.Factory(list)
    num_pdb_violations: int = 0


@attrs.define(eq=True)
class Candidate:
    """A node the preemptor could run on once ``victims`` are gone."""

    name: str
    victims: Victims


def violated_budgets(pods: list["Pod"], pdbs: list["PodDisruptionBudget"]) -> list[list["PodDisruptionBudget"]]:
    """For each of ``pods``, evicted in this order, the budgets its eviction breaks: the rule of
    upstream's ``filterPodsWithPDBViolation`` (a pod violates when a matching budget goes
    negative), naming the budgets: which budgets a preemption's victims broke, for reports."""
    allowed = [pdb.disruptions_allowed for pdb in pdbs]
    out: list[list["PodDisruptionBudget"]] = []
    for pod in pods:
        broken: list["PodDisruptionBudget"] = []
        for i, pdb in enumerate(pdbs):
            selector = pdb.selector
            if not pod.labels or pdb.namespace != pod.namespace or selector is None or selector.is_empty \
                    or not selector.matches(pod.labels) or pod.name in pdb.disrupted_pods:
                continue
            allowed[i] -= 1
            if allowed[i] < 0:
                broken.append(pdb)
        out.append(broken)
    return out
