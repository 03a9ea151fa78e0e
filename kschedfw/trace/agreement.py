"""How closely a replay reproduced the recorded scheduler: per pod it decided, the same node,
the same first verdict (scheduled or unschedulable) and the same end (ever bound or not), with
the first disagreements and both decisions.

A node choice upstream made among nodes of equal best score is a tie its seed broke: when
kschedfw's binding cycle scored the recorded node as high as its own choice, a different node
is counted as a tie, not a disagreement. :class:`AgreementWatch` learns this from the cycles
(a :class:`~kschedfw.framework.recorder.CycleRecorder` per cycle of a recorded pod, beside
any other the run has)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

import attrs

from kschedfw.framework.recorder import ForwardingRecorder
from kschedfw.trace.replay import RecordedPod

if TYPE_CHECKING:
    from kschedfw.api import Pod
    from kschedfw.framework.recorder import CycleRecorder
    from kschedfw.fwk.fit_error import Diagnosis
    from kschedfw.fwk.status import Status
    from kschedfw.scheduler import Scheduler

__all__ = ["Agreement", "AgreementWatch", "Disagreement", "Measure", "agreement", "render_agreement"]

#: disagreements listed (all are counted)
LISTED = 10


@attrs.define
class Attempt:
    """One of kschedfw's cycles for a recorded pod: when, the node chosen ("" if none), why not,
    and the recorded node as the cycle saw it (its total against the chosen one's, its rejection)."""

    at: float
    node: str
    message: str = ""
    tie: bool = False
    chosen_total: int | None = None
    recorded_total: int | None = None
    recorded_rejection: str = ""


class _PodCycle(ForwardingRecorder):
    """Keeps one cycle's outcome for :class:`AgreementWatch`, passing every fact on to ``inner``."""

    def __init__(self, watch: "AgreementWatch", pod: "Pod", recorded_node: str, inner: "CycleRecorder | None") -> None:
        super().__init__(inner)
        self.watch, self.pod, self.recorded_node = watch, pod, recorded_node
        self._diagnosis: "Diagnosis | None" = None
        self._totals: tuple[list[str], list[int]] = ([], [])
        self._feasible: list[str] = []

    def filtered(self, nodes: list[str], feasible: list[str], diagnosis: "Diagnosis") -> None:
        self._diagnosis, self._feasible = diagnosis, feasible
        super().filtered(nodes, feasible, diagnosis)

    def totals(self, nodes: list[str], totals: list[int]) -> None:
        self._totals = (nodes, totals)
        super().totals(nodes, totals)

    def result(self, evaluated: int, feasible: int, node: str, status: "Status | None") -> None:
        super().result(evaluated, feasible, node, status)
        attempt = Attempt(self.watch.now(), node, "" if status is None else status.message())
        wanted = self.recorded_node
        if node and wanted:
            nodes, totals = self._totals
            if wanted == node:  # the same node: among equals (a tie followed) or the best alone
                attempt.tie = totals.count(max(totals)) > 1 if totals else len(self._feasible) > 1
            else:
                by_node = dict(zip(nodes, totals))
                attempt.chosen_total, attempt.recorded_total = by_node.get(node), by_node.get(wanted)
                if wanted in self._feasible:
                    # no Score plugin (no totals) leaves the pick among feasible nodes to the seed
                    attempt.tie = not by_node or attempt.chosen_total == attempt.recorded_total
                elif self._diagnosis is not None:
                    attempt.recorded_rejection = _rejection(self._diagnosis, wanted)
        self.watch.attempted(self.pod.uid, attempt)


def _rejection(diagnosis: "Diagnosis", node: str) -> str:
    statuses = diagnosis.node_to_status
    rejected = next((s for n, s in statuses.items() if n == node), None)
    if rejected is None and statuses.absent_nodes_status.plugin:
        rejected = statuses.absent_nodes_status
    return "" if rejected is None else f"{rejected.plugin}: {rejected.message()}"


class AgreementWatch:
    """The scheduling cycle's ``recorder_for`` while a replay runs: each cycle of a pod the trace
    has decisions for is watched (its first attempt and its last binding kept), and handed on
    to the recorder the run had (``explain``, ``diff``)."""

    def __init__(self, scheduler: "Scheduler", recorded: dict[str, RecordedPod]) -> None:
        self.scheduler = scheduler
        self.recorded = recorded
        self.now: Callable[[], float] = scheduler.clock.now
        self.first: dict[str, Attempt] = {}
        self.bound: dict[str, Attempt] = {}

    def attach(self, follow_ties: bool = True) -> "AgreementWatch":
        """Watch the scheduler's cycles; ``follow_ties``: where the recorded node scores as high
        as kschedfw's pick, take it (the recorded scheduler's seed broke that tie), so that the
        replay stays on the recorded track instead of diverging from a coin toss."""
        cycle = self.scheduler.scheduling
        inner = cycle.recorder_for
        if follow_ties:
            recorded = self.recorded

            def recorded_node(pod: "Pod") -> str:
                entry = recorded.get(pod.uid)
                return entry.node if entry is not None else ""
            cycle.algorithm.tie_breaker = recorded_node

        def recorder_for(pod: "Pod") -> "CycleRecorder | None":
            theirs = inner(pod) if inner is not None else None
            entry = self.recorded.get(pod.uid)
            if entry is None:
                return theirs
            return _PodCycle(self, pod, entry.node, theirs)

        cycle.recorder_for = recorder_for
        return self

    def attempted(self, uid: str, attempt: Attempt) -> None:
        self.first.setdefault(uid, attempt)
        if attempt.node:
            self.bound[uid] = attempt


@attrs.frozen
class Measure:
    """``ties``: a different node where the recorded one scored as high (not compared);
    ``followed``: the recorded node taken among equal best scores (compared, agreed)."""

    agreed: int
    compared: int
    ties: int = 0
    followed: int = 0

    def as_json(self) -> dict[str, Any]:
        return {"agreed": self.agreed, "compared": self.compared, "ties": self.ties, "tiesFollowed": self.followed,
                "percent": _percent(self.agreed, self.compared)}


@attrs.frozen
class Disagreement:
    pod: str
    measure: str  # node | verdict | scheduled
    at: float  # the recorded decision's time, in simulated seconds
    recorded: str
    kschedfw: str
    detail: str = ""


@attrs.frozen
class Agreement:
    node: Measure
    verdict: Measure
    scheduled: Measure
    disagreements: tuple[Disagreement, ...]  # every one, in time order
    pods: tuple[dict[str, Any], ...]  # per compared pod: both decisions

    def as_json(self) -> dict[str, Any]:
        return {"node": self.node.as_json(), "firstVerdict": self.verdict.as_json(),
                "scheduled": self.scheduled.as_json(), "disagreementCount": len(self.disagreements),
                "disagreements": [attrs.asdict(d) for d in self.disagreements[:LISTED]],
                "pods": list(self.pods)}


def agreement(watch: AgreementWatch) -> Agreement:
    """Compare, pod by pod, what the trace recorded with what kschedfw's cycles decided; a pod
    whose schedulerName has no profile in the replay is not kschedfw's to decide."""
    profiles = watch.scheduler.frameworks
    node = [0, 0, 0, 0]
    verdict = [0, 0]
    scheduled = [0, 0]
    out: list[Disagreement] = []
    pods = []
    for uid, rec in watch.recorded.items():
        if rec.scheduler not in profiles:
            continue
        first, bound = watch.first.get(uid), watch.bound.get(uid)
        ours_node = bound.node if bound is not None else ""
        pods.append({"pod": rec.key, "uid": uid,
                     "recorded": {"verdict": rec.verdict, "node": rec.node},
                     "kschedfw": {"verdict": _verdict(first), "node": ours_node}})
        scheduled[1] += 1
        if bool(rec.node) == bool(ours_node):
            scheduled[0] += 1
        else:
            out.append(Disagreement(rec.key, "scheduled", rec.bound_at if rec.bound_at is not None else rec.verdict_at,
                                    f"Bound {rec.node}" if rec.node else "never bound",
                                    f"Bound {ours_node}" if ours_node else _never(first),
                                    "" if first is None else first.message))
        if first is not None and rec.verdict:
            verdict[1] += 1
            if _verdict(first) == rec.verdict:
                verdict[0] += 1
            else:
                out.append(Disagreement(rec.key, "verdict", rec.verdict_at, _said(rec.verdict, rec.message),
                                        _said(_verdict(first), first.message or first.node)))
        if rec.node and bound is not None:
            node[1] += 1
            if bound.node == rec.node:
                node[0] += 1
                node[3] += bound.tie
            elif bound.tie:
                node[2] += 1
            else:
                out.append(Disagreement(rec.key, "node", rec.bound_at or 0.0, f"Bound {rec.node}",
                                        f"Bound {bound.node}", _why_not(rec.node, bound)))
    out.sort(key=lambda d: (d.at, d.pod, d.measure))
    return Agreement(Measure(node[0], node[1] - node[2], node[2], node[3]), Measure(*verdict), Measure(*scheduled),
                     tuple(out), tuple(pods))


def _verdict(attempt: Attempt | None) -> str:
    if attempt is None:
        return ""
    return "scheduled" if attempt.node else "unschedulable"


def _never(first: Attempt | None) -> str:
    return "never attempted" if first is None else "never bound"


def _said(verdict: str, message: str) -> str:
    return f"{verdict}: {message}" if message and verdict == "unschedulable" else verdict


def _why_not(recorded: str, bound: Attempt) -> str:
    if bound.recorded_rejection:
        return f"{recorded} rejected by {bound.recorded_rejection}"
    if bound.recorded_total is not None:
        return f"{recorded} total score {bound.recorded_total}, {bound.node} {bound.chosen_total}"
    return f"{recorded} not among the nodes kschedfw's cycle looked at"


def _percent(agreed: int, compared: int) -> float:
    return round(100.0 * agreed / compared, 1) if compared else 100.0


def render_agreement(a: Agreement) -> list[str]:
    """The agreement for the text report."""
    def part(name: str, m: Measure) -> str:
        return f"{name} {m.agreed}/{m.compared} ({_percent(m.agreed, m.compared):g}%)"

    ties = "".join((f"; {a.node.followed} recorded choice{'s' if a.node.followed != 1 else ''} among equal "
                    "scores followed" if a.node.followed else "",
                    f"; {a.node.ties} score tie{'s' if a.node.ties != 1 else ''} not counted" if a.node.ties else ""))
    lines = ["agreement with the recorded scheduler: " + ", ".join(
        (part("node", a.node) + ties, part("first verdict", a.verdict), part("scheduled", a.scheduled)))]
    if a.disagreements:
        shown = a.disagreements[:LISTED]
        lines.append(f"first {len(shown)} of {len(a.disagreements)} disagreements:")
        for d in shown:
            lines.append(f"  {d.pod} at {d.at:.3f}s ({d.measure}): recorded {d.recorded}; kschedfw {d.kschedfw}"
                         + (f" ({d.detail})" if d.detail else ""))
    return lines
