"""One scheduling attempt as either scheduler made it, and the comparison of both sides.

Both sides are reduced to the same :class:`Attempt`: upstream's from its ``-v=10`` log, kschedfw's
from its explain recorder. :class:`Tally` counts what was compared and keeps a readable diff of
every disagreement."""

from __future__ import annotations

from typing import Any

import attrs


@attrs.frozen
class Attempt:
    """What one scheduling cycle of a pod decided."""

    #: feasible nodes (upstream logs the count when it binds; 0 when nothing fits)
    feasible: int | None = None
    #: plugin -> node -> weighted score; empty when there was nothing to score (one feasible node)
    scores: dict[str, dict[str, int]] = attrs.field(factory=dict)
    #: node -> sum of the weighted scores
    totals: dict[str, int] = attrs.field(factory=dict)
    #: the node the pod was bound to ("" when the attempt failed)
    chosen: str = ""
    #: the FitError (or scheduling error) message of a failed attempt
    message: str = ""
    #: the node PostFilter nominated
    nominated: str = ""
    #: pods (namespace/name) deleted to make room, sorted
    victims: tuple[str, ...] = ()
    #: the node opportunistic batching handed over from the previous cycle: nothing was scored
    hint: str = ""
    #: ``claim request pool/device`` allocated to the pod's claims once it was bound, sorted
    devices: tuple[str, ...] = ()

    def best(self) -> set[str]:
        """The nodes with the highest total: any of them is a correct choice."""
        if not self.totals:
            return {self.chosen} if self.chosen else set()
        top = max(self.totals.values())
        return {n for n, t in self.totals.items() if t == top}


@attrs.define
class Tally:
    """Counts over a campaign, and the diffs of every mismatch (one block per pod)."""

    pods: int = 0
    score_tables: int = 0
    score_tables_identical: int = 0
    outcomes: int = 0
    outcomes_identical: int = 0
    #: attempts where kube-scheduler took a batching hint (no score table to compare)
    hinted: int = 0
    #: bound attempts whose allocated devices were compared (kube-scheduler allocated some, both
    #: chose the same node)
    allocations: int = 0
    #: PodGroups played as a unit, and those whose outcome was the same (see :func:`compare_group`)
    groups: int = 0
    groups_identical: int = 0
    #: groups whose first cycle upstream had a tie to break at random: pods compared by count
    groups_tied: int = 0
    #: groups whose cycle upstream preempted (workload-aware preemption: it deleted victims)
    groups_preempting: int = 0
    seconds: float = 0.0
    diffs: list[str] = attrs.field(factory=list)

    def add(self, other: "Tally") -> None:
        for name in ("pods", "score_tables", "score_tables_identical", "outcomes", "outcomes_identical", "hinted",
                     "allocations", "groups", "groups_identical", "groups_tied",
                     "groups_preempting", "seconds"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.diffs.extend(other.diffs)

    @property
    def identical(self) -> bool:
        return not self.diffs

    def summary(self) -> str:
        return (f"pods compared: {self.pods}; score tables identical: {self.score_tables_identical}/"
                f"{self.score_tables}; outcomes identical: {self.outcomes_identical}/{self.outcomes}"
                + (f" ({self.hinted} placed by a batching hint, no scores)" if self.hinted else "")
                + (f"; allocations compared: {self.allocations}" if self.allocations else "")
                + (f"; groups identical: {self.groups_identical}/{self.groups}" if self.groups else "")
                + (f" ({self.groups_tied} with a tie, pods compared by count)" if self.groups_tied else "")
                + (f"; groups that preempted: {self.groups_preempting}" if self.groups_preempting else ""))


def compare_pod(pod: str, upstream: list[Attempt], ours: list[Attempt]) -> Tally:
    """Compare one pod's attempts, in order; upstream's count decides how many are compared."""
    tally = Tally(pods=1)
    lines: list[str] = []
    if len(ours) < len(upstream):
        lines.append(f"  attempts: kube-scheduler made {len(upstream)}, kschedfw {len(ours)}")
    for number, (up, us) in enumerate(zip(upstream, ours), 1):
        where = f"  attempt {number}:"
        # a hinted cycle (OpportunisticBatching) filters the hinted node only and scores nothing;
        # kschedfw plays each pod in a fresh cycle: only where it goes can be compared
        tally.hinted += bool(up.hint)
        if (up.scores or us.scores) and not up.hint:
            tally.score_tables += 1
            table = score_diff(up, us)
            if table:
                lines.append(f"{where} score table differs (plugin node: kube-scheduler != kschedfw)")
                lines.extend(f"    {line}" for line in table)
            else:
                tally.score_tables_identical += 1
        tally.outcomes += 1
        tally.allocations += bool(up.devices) and up.chosen == us.chosen
        outcome = outcome_diff(up, us)
        if outcome:
            lines.append(f"{where} outcome differs")
            lines.extend(f"    {line}" for line in outcome)
        else:
            tally.outcomes_identical += 1
    if lines:
        tally.diffs.append("\n".join([f"pod {pod}:"] + lines))
    return tally


def score_diff(up: Attempt, us: Attempt) -> list[str]:
    out = []
    for plugin in sorted(set(up.scores) | set(us.scores)):
        theirs, mine = up.scores.get(plugin, {}), us.scores.get(plugin, {})
        for node in sorted(set(theirs) | set(mine)):
            if theirs.get(node) != mine.get(node):
                out.append(f"{plugin} {node}: {_show(theirs.get(node))} != {_show(mine.get(node))}")
    for node in sorted(set(up.totals) | set(us.totals)):
        if up.totals.get(node) != us.totals.get(node):
            out.append(f"total {node}: {_show(up.totals.get(node))} != {_show(us.totals.get(node))}")
    return out


def outcome_diff(up: Attempt, us: Attempt) -> list[str]:
    out = []
    if up.feasible is not None and us.feasible is not None and up.feasible != us.feasible and not up.hint:
        out.append(f"feasible nodes: {up.feasible} != {us.feasible}")
    if up.chosen != us.chosen and not (up.chosen and us.chosen in up.best()):
        out.append(f"node: {_show(up.chosen)} != {_show(us.chosen)} (best total: {sorted(up.best())})")
    for name in ("message", "nominated", "victims", "devices"):
        theirs, mine = getattr(up, name), getattr(us, name)
        if name == "devices" and up.chosen != us.chosen:
            continue  # another node of a tie: other devices
        if theirs != mine:
            out.append(f"{name}: {theirs!r} != {mine!r}")
    return out


def _show(value: Any) -> str:
    return "-" if value is None or value == "" else str(value)


def compare_group(group: str, upstream: Any, ours: Any, *, topology: bool, tied: bool = False) -> Tally:
    """Compare one PodGroup's outcome (``ours.GroupOutcome`` from both sides).

    What is deterministic is compared: how many of its pods went to each node (its pods are
    identical and tried in a random order, so which pod went where is not), the PodGroupScheduled
    condition's status and reason, and the victims. The condition's message is compared for a
    group without a topology constraint only: with one, it names the first placement tried, and
    placements come out of a Go map in a random order. The pending pods' own messages are not
    compared: which pod of a failed gang waited at Permit depends on the order. When upstream's
    first cycle of the group had a tie (``tied``: two best nodes for a pod, or two best
    placements), it broke it at random: only how many pods were bound is compared then."""
    tally = Tally(pods=len(upstream.nodes), groups=1, groups_tied=int(tied), groups_preempting=int(bool(upstream.victims)))
    lines: list[str] = []
    theirs, mine = _placed(upstream.nodes), _placed(ours.nodes)
    if tied:
        counts = [sum(n for k, n in d.items() if k != "-") for d in (theirs, mine)]
        if counts[0] != counts[1]:
            lines.append(f"  pods bound (after a tie upstream): {counts[0]} != {counts[1]}; "
                         f"pods per node: {theirs} != {mine}")
    elif theirs != mine:
        lines.append(f"  pods per node: {theirs} != {mine}")
    up_cond, us_cond = upstream.condition, ours.condition
    if topology:
        up_cond, us_cond = up_cond[:2], us_cond[:2]
    if up_cond != us_cond:
        lines.append(f"  PodGroupScheduled: {up_cond!r} != {us_cond!r}")
    if upstream.victims != ours.victims:
        lines.append(f"  victims: {list(upstream.victims)} != {list(ours.victims)}")
    if lines:
        tally.diffs.append("\n".join([f"pod group {group}:"] + lines))
    else:
        tally.groups_identical += 1
    return tally


def _placed(nodes: dict[str, str]) -> dict[str, int]:
    """node -> how many of the group's pods are bound there (unbound pods under "-")."""
    counts: dict[str, int] = {}
    for node in nodes.values():
        counts[node or "-"] = counts.get(node or "-", 0) + 1
    return dict(sorted(counts.items()))
