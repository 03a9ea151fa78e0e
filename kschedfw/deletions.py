"""What became of the pods deleted during a simulated run: preempted (by which pod, on which
node, in spite of which PodDisruptionBudgets) or deleted (by whom), when, and whether the
object was gone when the run ended.

Upstream's only record of a preemptor is its victim's ``Preempted`` event: the scheduler sets
the victim's DisruptionTarget condition and deletes it itself, with no eviction, so the API
server checks no budget. DefaultPreemption prefers victims that break no PodDisruptionBudget
but takes them when nothing else makes room; which budgets a preemption broke is worked out
here by preemption's own rule (:func:`~kschedfw.fwk.victims.violated_budgets`), from the
budgets' status as the scheduler read it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import attrs

from kschedfw.fwk.victims import violated_budgets

if TYPE_CHECKING:
    from kschedfw.api import Pod, PodDisruptionBudget

__all__ = ["BrokenBudget", "Fate", "fates", "PREEMPTED_PREFIX"]

#: the start of the victim's ``Preempted`` event, followed by the preemptor's uid
PREEMPTED_PREFIX = "Preempted by pod "
#: a victim waiting at Permit is preempted in the scheduler's memory: it is not deleted
_IN_MEMORY = "(in kube-scheduler memory)"


@attrs.frozen
class BrokenBudget:
    """A PodDisruptionBudget a preemption evicted a pod in spite of."""

    pdb: str  # namespace/name
    rule: str  # "minAvailable 3", "maxUnavailable 10%", "" (neither)
    disruptions_allowed: int  # its status.disruptionsAllowed, as the scheduler read it

    @classmethod
    def of(cls, pdb: "PodDisruptionBudget") -> "BrokenBudget":
        if pdb.min_available is not None:
            rule = f"minAvailable {pdb.min_available}"
        elif pdb.max_unavailable is not None:
            rule = f"maxUnavailable {pdb.max_unavailable}"
        else:
            rule = ""
        return cls(pdb.key, rule, pdb.disruptions_allowed)

    def describe(self) -> str:
        n = self.disruptions_allowed
        allowed = f"{n} disruption{'' if n == 1 else 's'} allowed"
        return f"PodDisruptionBudget {self.pdb} ({self.rule + ', ' if self.rule else ''}{allowed})"


@attrs.frozen
class Fate:
    """One pod deleted during the run."""

    pod: "Pod"  # as it was when its deletion began
    status: str  # Preempted | Deleted
    at: float  # simulated seconds when its deletion began
    by: str  # the preemptor's key, or the deleter's own words ("scenario step at 60s"); "" unknown
    node: str
    gone_at: float | None  # when the object went away; None: still terminating at the end
    broken: tuple[BrokenBudget, ...] = ()

    def message(self) -> str:
        if self.status == "Preempted":
            text = f"preempted by {self.by} at {self.at:g}s" + (f" on {self.node}" if self.node else "")
        else:
            text = (f"deleted by {self.by}" if self.by else f"deleted at {self.at:g}s") \
                + (f" on {self.node}" if self.node else "")
        if self.gone_at is None:
            text += "; still terminating (its grace period had not ended)"
        for budget in self.broken:
            text += f"; evicted despite {budget.describe()}"
        return text


def fates(cluster: Any) -> list[Fate]:
    """Every pod deleted on the embedded ``cluster``, in the order the deletions began."""
    preemptions: dict[str, list[tuple[float, str, str]]] = {}  # victim uid -> (time, preemptor uid, node)
    for event in cluster.events:
        if event.reason == "Preempted" and event.message.startswith(PREEMPTED_PREFIX) \
                and _IN_MEMORY not in event.message:
            uid, _, rest = event.message[len(PREEMPTED_PREFIX):].partition(" on node ")
            preemptions.setdefault(event.object_uid, []).append((event.time, uid, rest.strip()))
    keys = {p.uid: p.key for p in cluster.list("Pod")}
    keys.update((d.pod.uid, d.pod.key) for d in cluster.deletions if d.pod.uid not in keys)
    out: list[Fate] = []
    batches: dict[tuple[str, str, float], list[int]] = {}  # one preemption's victims
    for deletion in cluster.deletions:
        pod, gone = deletion.pod, deletion.gone_at
        found = [p for p in preemptions.get(pod.uid, ()) if p[0] >= deletion.at and (gone is None or p[0] <= gone)]
        if found:
            time, preemptor, node = found[0]
            batches.setdefault((preemptor, node, time), []).append(len(out))
            out.append(Fate(pod, "Preempted", deletion.at, keys.get(preemptor, preemptor), node or pod.node_name, gone))
        else:
            out.append(Fate(pod, "Deleted", deletion.at, deletion.by, pod.node_name, gone))
    pdbs = cluster.list("PodDisruptionBudget")
    for indices in batches.values():
        broken = violated_budgets([out[i].pod for i in indices], pdbs)
        for i, budgets in zip(indices, broken):
            if budgets:
                out[i] = attrs.evolve(out[i], broken=tuple(BrokenBudget.of(b) for b in budgets))
    return out
