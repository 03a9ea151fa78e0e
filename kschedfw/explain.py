"""Why does a pod go where it goes, or nowhere? One dry-run scheduling cycle, every number shown.

``explain(scheduler, pod)`` runs PreFilter, Filter on every node (not just the sample a real
cycle looks at), then PreScore, Score and NormalizeScore on the feasible nodes, against the
scheduler's current state. Nothing is assumed, reserved or bound.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import attrs

from kschedfw.framework.cycle_state import CycleState
from kschedfw.framework.fit_error import Diagnosis, fit_error_message
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
            lines.append("  " + node.ljust(width) + f"  rejected by {status.plugin}: {status.message()}")
        if self.message:
            lines.append(f"  => {self.message}")
        return "\n".join(lines)


def explain(scheduler: "Scheduler", pod: "Pod") -> Explanation:
    fwk = scheduler.frameworks[pod.scheduler_name]
    snapshot = scheduler.cache.update_snapshot()
    fwk.handle.snapshot = snapshot
    nodes = snapshot.node_infos()
    state = CycleState()
    result, pre_status, _ = fwk.run_pre_filter_plugins(state, pod, nodes)
    statuses: dict[str, Status | None] = {}
    diagnosis = Diagnosis()
    if pre_status is not None and not pre_status.is_success():
        for ni in nodes:
            statuses[ni.name] = pre_status
        diagnosis.pre_filter_msg = pre_status.message()
    else:
        allowed = None if result is None or result.all_nodes() else result.node_names
        for ni in nodes:
            if allowed is not None and ni.name not in allowed:
                status: Status | None = Status.unresolvable("node(s) didn't satisfy plugin(s) PreFilter result")
            else:
                status = fwk.run_filter_plugins_with_nominated_pods(state, pod, ni)
                if status is not None and status.is_success():
                    status = None
            statuses[ni.name] = status
            if status is not None:
                diagnosis.node_to_status.set(ni.name, status)
    feasible = [ni for ni in nodes if statuses.get(ni.name) is None]
    plugin_scores: dict[str, dict[str, int]] = {}
    totals: dict[str, int] = {}
    if len(feasible) > 1 and fwk.has_score_plugins():
        if fwk.run_pre_score_plugins(state, pod, feasible) is None:
            node_totals, status = fwk.run_score_plugins_totals(state, pod, feasible)
            if status is None:
                totals = {ni.name: t for ni, t in zip(feasible, node_totals)}
                plugin_scores = {name: {ni.name: v for ni, v in zip(feasible, values)}
                                 for name, values in fwk.last_plugin_scores}
    message = "" if feasible else fit_error_message(len(nodes), diagnosis)
    return Explanation(pod.key, fwk.profile_name, pre_status, statuses, plugin_scores, totals, message)
