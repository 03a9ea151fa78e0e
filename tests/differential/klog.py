"""Reading kube-scheduler's ``-v=10`` log as it grows: each pod's scheduling attempts.

Only complete lines are parsed, from where the last read stopped, so polling stays cheap while
the scheduler writes megabytes of request dumps. The lines used (``schedule_one.go``,
``preemption/executor.go``) carry the pod as ``pod="namespace/name"``."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import IO

import attrs

from tests.differential.decision import Attempt

#: klog's text format: severity, date, time, pid, file:line] "message" key=value ...
_LINE = re.compile(r'^[IWEF]\d{4} [\d:.]+\s+\d+ [^\]]+\] "((?:[^"\\]|\\.)*)"(.*)$')
_PAIR = re.compile(r'(\w+)=("(?:[^"\\]|\\.)*"|[^\s"]\S*)')


def _value(text: str) -> str:
    if text.startswith('"'):
        try:
            return json.loads(text)
        except ValueError:  # a Go escape JSON lacks (\x..): keep it as written
            return text[1:-1]
    return text


def parse_line(line: str) -> tuple[str, dict[str, str]] | None:
    """A structured klog line's message and key/value pairs (values of quoted strings decoded)."""
    match = _LINE.match(line)
    if match is None:
        return None
    return _value(f'"{match.group(1)}"'), {k: _value(v) for k, v in _PAIR.findall(match.group(2))}


@attrs.define
class _Open:
    """An attempt being read: fields filled line by line."""

    scores: dict[str, dict[str, int]] = attrs.field(factory=dict)
    totals: dict[str, int] = attrs.field(factory=dict)
    feasible: int | None = None
    chosen: str = ""
    message: str = ""
    nominated: str = ""
    victims_expected: int = 0
    victims: list[str] = attrs.field(factory=list)
    hint: str = ""
    ended: bool = False

    def freeze(self) -> Attempt:
        return Attempt(feasible=self.feasible if self.chosen else 0, scores=self.scores, totals=self.totals,
                       chosen=self.chosen, message=self.message, nominated=self.nominated,
                       victims=tuple(sorted(self.victims)), hint=self.hint)


#: how upstream's pod-group cycle logs its end (schedule_one_podgroup.go), as group_outcomes names it
_GROUP_OUTCOMES = {"Successfully scheduled a pod group": "scheduled", "Unable to schedule a pod group": "unschedulable",
                   "Pod group is waiting for preemption": "waiting"}


class SchedulerLog:
    """Follows one kube-scheduler log file; :meth:`poll` reads what was appended since."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._file: IO[str] | None = None
        self._partial = ""
        self.synced = False
        #: nodes in the order kube-scheduler's cache added them (its informer's order, not the
        #: API server's: the image sizes and the node tree of its snapshot depend on it)
        self.nodes_added: list[str] = []
        self._attempts: dict[str, list[_Open]] = {}
        #: per PodGroup (namespace/name): the PodGroupScheduled conditions its status patches
        #: wrote, in order, as (status, reason, message)
        self.group_conditions: dict[str, list[tuple[str, str, str]]] = {}
        #: per PodGroup: its cycles begun, and the totals of each node (or placement) scored in
        #: its first cycle, one table per pod tried and one for the placements
        self._group_cycles: dict[str, int] = {}
        self._group_tables: dict[str, list[dict[str, int]]] = {}
        #: per PodGroup: how each of its cycles ended, in order: ("scheduled", pods sent to
        #: binding, pods left unschedulable), ("unschedulable", 0, pods) or ("waiting", 0, pods)
        #: (for its preemption to complete)
        self.group_outcomes: dict[str, list[tuple[str, int, int]]] = {}
        #: per PodGroup that preempted: [victims to delete, victims deleted] over its preemptions
        self._group_victims: dict[str, list[int]] = {}
        #: per PodGroup: the line number of its last cycle's end, of its last pod bound and of
        #: its last victim deleted (what came after what)
        self._group_marks: dict[str, dict[str, int]] = {}
        self._lines = 0

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None

    def poll(self) -> None:
        if self._file is None:
            try:
                self._file = open(self.path, encoding="utf-8", errors="replace")
            except FileNotFoundError:
                return
        chunk = self._file.read()
        if not chunk:
            return
        lines = (self._partial + chunk).split("\n")
        self._partial = lines.pop()
        for line in lines:
            if line[:1] in "IWEF" and '"' in line:
                self._feed(line)

    def _feed(self, line: str) -> None:
        self._lines += 1
        parsed = parse_line(line)
        if parsed is None:
            return
        message, kv = parsed
        if message == "Handlers synced":
            self.synced = True
            return
        if message == "Add event for node":
            self.nodes_added.append(kv.get("node", ""))
            return
        if message == "Preemptor Pod preempted victim Pod":
            if kv.get("preemptor", "") in self._group_victims:
                self._group_victims[kv["preemptor"]][1] += 1
                self._mark(kv["preemptor"], "victim")
                return
            attempt = self._nominating(kv.get("preemptor", ""))
            if attempt is not None:
                attempt.victims.append(kv.get("victim", ""))
            return
        if message == "Start the preemption asynchronously":
            if kv.get("preemptor", "") in self._group_cycles:  # a pod group's (workload-aware) preemption
                self._group_victims.setdefault(kv["preemptor"], [0, 0])[0] += int(kv.get("numVictimsToDelete", "0"))
                return
            attempt = self._nominating(kv.get("preemptor", ""))
            if attempt is not None:
                attempt.victims_expected = int(kv.get("numVictims", "0"))
            return
        if message == "Request Body" and "podGroup" in kv and "PodGroupScheduled" in kv.get("body", ""):
            self._group_condition(kv["podGroup"], kv["body"])
            return
        group = kv.get("podGroup")
        if group is not None and self._group_line(group, message, kv):
            return
        pod = kv.get("pod")
        if pod is None:
            return
        if message == "Attempting to schedule pod":
            self._attempts.setdefault(pod, []).append(_Open())
            return
        attempts = self._attempts.get(pod)
        if not attempts:
            return
        current = attempts[-1]
        if message == "Plugin scored node for pod":
            current.scores.setdefault(kv["plugin"], {})[kv["node"]] = int(kv["score"])
        elif message == "OpportunisticBatch provided node hint":
            current.hint = kv.get("hint", "")
        elif message == "Calculated node's final score for pod":
            current.totals[kv["node"]] = int(kv["score"])
        elif message == "Successfully bound pod to node":
            current.chosen, current.feasible, current.ended = kv["node"], int(kv["feasibleNodes"]), True
            # a nomination within the attempt that bound the pod was no preemption: with a PreBind
            # to do (claims to write), the binding cycle names the node first so that others expect
            # the pod there (NominatedNodeNameForExpectation, schedule_one.go)
            current.nominated = ""
        elif message in ("Unable to schedule pod; no fit; waiting", "Error scheduling pod; retrying"):
            current.message = kv.get("err", "")
        elif message == "Updating pod condition and nominated node name":
            current.nominated, current.ended = kv.get("nominatedNodeName", ""), True

    def _group_line(self, group: str, message: str, kv: dict[str, str]) -> bool:
        """Follow a group's first cycle; True when the line was about the group only."""
        if message == "Attempting to schedule pod group":
            self._group_cycles[group] = self._group_cycles.get(group, 0) + 1
            if self._group_cycles[group] == 1:
                self._group_tables[group] = [{}]  # the placements' totals
            return True
        outcome = _GROUP_OUTCOMES.get(message)
        if outcome is not None:
            self.group_outcomes.setdefault(group, []).append(
                (outcome, int(kv.get("scheduledPods", "0")), int(kv.get("unschedulablePods", "0"))))
            self._mark(group, "outcome")
            return True
        if message == "Successfully bound pod to node":
            self._mark(group, "bound")
        if self._group_cycles.get(group) != 1:
            return False
        tables = self._group_tables[group]
        if message == "Attempting to schedule a pod belonging to a pod group":
            tables.append({})
        elif message == "Calculated node's final score for pod":
            tables[-1][kv.get("node", "")] = int(kv.get("score", "0"))
        elif message == "Calculated placement's final score for podGroup":
            tables[0][kv.get("placement", "")] = int(kv.get("score", "0"))
        return False

    def group_settled(self, group: str) -> bool:
        """Whether the group is done with, as far as its cycles say: every pod sent to binding
        (the last cycle left none unschedulable), or its last cycle found the leftovers
        unschedulable after the last of its pods was bound and the last of its victims was
        deleted (its next cycle would see what the one before saw). A group waiting for its
        preemption, or whose leftovers are retried after a partial success (each bind is an
        event for them), is not done."""
        outcomes = self.group_outcomes.get(group)
        expected, deleted = self._group_victims.get(group, (0, 0))
        if not outcomes or deleted < expected:
            return False
        kind, _, left = outcomes[-1]
        if kind == "scheduled":
            return left == 0
        marks = self._group_marks.get(group, {})
        return kind == "unschedulable" and marks["outcome"] > max(marks.get("bound", 0), marks.get("victim", 0))

    def _mark(self, group: str, what: str) -> None:
        self._group_marks.setdefault(group, {})[what] = self._lines

    def group_sent_to_binding(self, group: str) -> int:
        """How many of the group's pods its cycles sent to binding (each will be bound)."""
        return sum(n for outcome, n, _ in self.group_outcomes.get(group, ()) if outcome == "scheduled")

    def group_tied(self, group: str) -> bool:
        """Whether the group's first cycle had a choice between equals: two best nodes for one
        of its pods, or two best placements. Upstream then chose at random."""
        for table in self._group_tables.get(group, ()):
            if table and list(table.values()).count(max(table.values())) > 1:
                return True
        return False

    def _group_condition(self, group: str, body: str) -> None:
        try:
            conditions = json.loads(body)["status"]["conditions"]
        except (ValueError, KeyError, TypeError):
            return
        for c in conditions:
            if c.get("type") == "PodGroupScheduled":
                self.group_conditions.setdefault(group, []).append(
                    (c.get("status", ""), c.get("reason", ""), c.get("message", "")))

    def _nominating(self, preemptor: str) -> _Open | None:
        attempts = [a for a in self._attempts.get(preemptor, []) if a.nominated]
        return attempts[-1] if attempts else None

    # ------------------------------------------------------------------ per pod
    def attempts(self, pod: str) -> list[Attempt]:
        """The pod's finished attempts (``namespace/name``), in order."""
        return [a.freeze() for a in self._attempts.get(pod, []) if a.ended]

    def settled(self, pod: str) -> bool:
        """Every attempt begun has ended, and a preemption's victims have all been deleted."""
        attempts = self._attempts.get(pod, [])
        return bool(attempts) and all(a.ended and len(a.victims) >= a.victims_expected for a in attempts)

    def decided(self, pod: str) -> str:
        """"bound", "unschedulable" (the last attempt nominated nothing), "preempting" (it
        nominated a node: a retry follows), or "" while an attempt is under way."""
        if not self.settled(pod):
            return ""
        last = self._attempts[pod][-1]
        if last.chosen:
            return "bound"
        return "preempting" if last.nominated else "unschedulable"
