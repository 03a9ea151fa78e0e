"""Shadow mode's output: what `kschedfw run --dry-run` would have done, one decision per line as it
is made, in the formats of `kschedfw simulate` (its table columns, or its JSON pod entries as JSON
lines), and a per-profile summary when the run stops.

The table is read by people, so it says what did not happen as not having happened: "would
bind", not "Bound". The JSON keeps simulate's status values, so both outputs compare field by
field."""

from __future__ import annotations

import json
import sys
from collections import Counter
from typing import Any, TextIO

import attrs

from kschedfw.api.pod import SCHEDULER_ERROR

__all__ = ["Decision", "DecisionPrinter"]

_WIDTHS = (40, 20, 18, 30)  # POD, SCHEDULER, STATUS, NODE; REASON takes the rest of the line
#: each decision's status as the table shows it: nothing was written to the cluster
WOULD = {"Bound": "would bind", "Pending": "would stay pending", "Preempted": "would be preempted"}


@attrs.frozen
class Decision:
    """One thing the scheduler would have written: a bind ("Bound"), a scheduling failure
    ("Pending", with the PodScheduled reason and message and any nomination) or a victim's
    eviction ("Preempted")."""

    pod: str  # namespace/name
    scheduler_name: str
    status: str
    node: str = ""
    reason: str = ""
    message: str = ""
    nominated_node: str = ""
    #: Pending: the structured reason (simulate's ``pendingReason``), when it was asked for
    pending_reason: dict[str, Any] | None = attrs.field(default=None, eq=False)

    def as_json(self) -> dict[str, Any]:
        """The keys of simulate's ``pods`` entries."""
        out: dict[str, Any] = {
            "pod": self.pod, "schedulerName": self.scheduler_name, "status": self.status, "node": self.node,
            "reason": self.reason, "message": self.message, "nominatedNodeName": self.nominated_node}
        if self.pending_reason is not None:
            out["pendingReason"] = self.pending_reason
        return out


class DecisionPrinter:
    """Called with each :class:`Decision` (on the scheduler's thread); :meth:`summary` at the end."""

    def __init__(self, output: str = "table", stream: TextIO | None = None) -> None:
        if output not in ("table", "json"):
            raise ValueError(f"unknown output format {output!r}")
        self.output = output
        self.stream = stream if stream is not None else sys.stdout
        self.counts: dict[str, Counter[str]] = {}
        self._last: dict[str, Decision] = {}
        self._header_done = False

    def __call__(self, decision: Decision) -> None:
        self.counts.setdefault(decision.scheduler_name, Counter())[decision.status] += 1
        self._last[decision.pod] = decision
        if self.output == "json":
            self._line(json.dumps(decision.as_json()))
            return
        if not self._header_done:
            self._row("POD", "SCHEDULER", "STATUS", "NODE", "REASON")
            self._header_done = True
        node = decision.node or (f"(nominated {decision.nominated_node})" if decision.nominated_node else "")
        reason = decision.message if decision.status != "Bound" else ""
        if decision.reason == SCHEDULER_ERROR:  # as simulate's table leads with it
            reason = f"{SCHEDULER_ERROR}: {reason}"
        self._row(decision.pod, decision.scheduler_name, WOULD.get(decision.status, decision.status),
                  node, reason)

    def failed_with_error(self) -> list[str]:
        """The pods whose latest decision is a failure with an error (:data:`SCHEDULER_ERROR`),
        not one for want of a node: what makes simulate exit 1."""
        return sorted(pod for pod, d in self._last.items() if d.status == "Pending" and d.reason == SCHEDULER_ERROR)

    def summary(self) -> None:
        """Decisions per profile and status, as simulate's summary (``{"summary": ...}`` in JSON;
        ``prof: 1 would bind, 1 would stay pending`` in the table)."""
        if self.output == "json":
            self._line(json.dumps({"summary": {p: dict(sorted(c.items())) for p, c in sorted(self.counts.items())}}))
            return
        if self._header_done:
            self._line("")
        for profile, counts in sorted(self.counts.items()):
            self._line(f"{profile}: " + ", ".join(f"{counts[k]} {WOULD.get(k, k.lower())}"
                                                  for k in sorted(counts)))
        if not self.counts:
            self._line("no decisions")

    def _row(self, *values: str) -> None:
        self._line("  ".join(v.ljust(w) for v, w in zip(values, _WIDTHS)) + "  " + values[-1])

    def _line(self, text: str) -> None:
        print(text, file=self.stream, flush=True)
