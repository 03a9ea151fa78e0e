"""Why does a pod go where it goes, or nowhere? One dry-run scheduling cycle, every number shown.

``explain(scheduler, pod)`` runs the scheduler's own cycle (:mod:`kschedfw.cycle`) as a dry run
against its current state: PreFilter, Filter on every node (not just the sample a real cycle
looks at), then PreScore, Score and NormalizeScore on the feasible nodes, with a recorder that
keeps every number. Nothing is assumed, reserved or bound, and PostFilter (preemption) does not run.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import attrs

from kschedfw.framework.fit_error import FitError
from kschedfw.framework.recorder import CycleRecord
from kschedfw.framework.status import Status

if TYPE_CHECKING:
    from kschedfw.api import Pod
    from kschedfw.scheduler import Scheduler


@attrs.frozen
class Explanation:
    pod: str
    profile: str
    pre_filter: Status | None
    node_statuses: dict[str, Status | None]  # None: the node fits
    plugin_scores: dict[str, dict[str, int]]  # plugin -> node -> weighted score
    totals: dict[str, int]
    message: str  # the FitError text when nothing fits, else ""

    def render(self) -> str:
        lines = [f"pod {self.pod} (profile {self.profile})"]
        if self.pre_filter is not None and not self.pre_filter.is_success():
            lines.append(f"  PreFilter {self.pre_filter.plugin}: {self.pre_filter.code.name}: {self.pre_filter.message()}")
        width = max([len("NODE")] + [len(n) for n in self.node_statuses])
        plugins = list(self.plugin_scores)
        fits = [n for n, st in self.node_statuses.items() if st is None]
        rejected = [n for n, st in self.node_statuses.items() if st is not None]
        if fits and plugins:
            lines.append("  " + "NODE".ljust(width) + "".join(f"  {p}" for p in plugins) + "  TOTAL")
            for node in sorted(fits, key=lambda n: (-self.totals.get(n, 0), n)):
                cells = "".join(f"  {str(self.plugin_scores[p].get(node, '-')).rjust(len(p))}" for p in plugins)
                lines.append("  " + node.ljust(width) + cells + f"  {str(self.totals.get(node, 0)).rjust(5)}")
        elif fits:
            lines.append("  fits: " + ", ".join(sorted(fits)))
        for node in sorted(rejected):
            status = self.node_statuses[node]
            assert status is not None
            lines.append("  " + node.ljust(width) + f"  rejected by {status.plugin}: {status.message()}")
        if self.message:
            lines.append(f"  => {self.message}")
        return "\n".join(lines)


def explain(scheduler: "Scheduler", pod: "Pod") -> Explanation:
    """Explain ``pod``'s placement on the scheduler's current state; a bound pod is explained as
    if it were pending again and not on its node."""
    if pod.node_name:
        scheduler.cache.remove_pod(pod)
        try:
            return _explain(scheduler, pod.with_node(""))
        finally:
            scheduler.cache.add_pod(pod)
    return _explain(scheduler, pod)


def _explain(scheduler: "Scheduler", pod: "Pod") -> Explanation:
    fwk = scheduler.frameworks[pod.scheduler_name]
    scheduler.update_snapshot()
    nodes = fwk.handle.snapshot.node_infos()
    state, _ = scheduler.new_cycle_state()
    record = CycleRecord()
    _, status = scheduler.schedule_pod(fwk, state, pod, record, dry_run=True)
    statuses = {ni.name: record.node_status(ni.name) for ni in nodes}
    plugin_scores = {name: dict(scores.weighted) for name, scores in record.plugin_scores.items()}
    message = ""  # the FitError text when nothing fits (or the cycle's error), as simulate reports it
    if status is not None and not status.is_success():
        message = str(status.error) if isinstance(status.error, FitError) else status.message()
    return Explanation(pod.key, fwk.profile_name, record.pre_filter_status, statuses, plugin_scores,
                       dict(record.node_totals), message)
