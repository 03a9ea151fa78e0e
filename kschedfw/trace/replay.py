"""A trace as a simulation: the cluster as the window starts, then every recorded watch event
as a step at its recorded time (seconds after the window's start), and the decisions the
recorded schedulers made, for :mod:`kschedfw.trace.agreement` to compare with kschedfw's.

The recorded world is replayed, not the recorded scheduler: kschedfw makes its own bindings and
preemptions. So the replay keeps from a pod update only what a user or a controller changed
(labels, spec, a deletion, a terminal phase), as upstream's informer would show it to a
scheduler that had bound the pod elsewhere or not at all; it drops what only carries the
recorded scheduler's work (``spec.nodeName``, PodScheduled, the nomination) and the deletion of
the victims it preempted (their ``DisruptionTarget`` condition says by which scheduler). Pods of
schedulers the replay has no profile for keep their recorded bindings, as another scheduler of
the cluster would bind them.
"""

from __future__ import annotations

import datetime as _dt
import math
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterator

import attrs

from kschedfw.api.field import ManifestError
from kschedfw.api.load import Located, parse_object
from kschedfw.cluster.inputs.manifests import Inputs
from kschedfw.trace.reader import TraceError, numbered_lines, object_key

if TYPE_CHECKING:
    from kschedfw.simulation import Simulation

__all__ = ["Replay", "RecordedStep", "RecordedPod", "load_replay", "parse_instant"]

#: terminal phases: the kubelet's update that frees a pod's node is part of the world
_TERMINAL = ("Succeeded", "Failed")
#: a deletion whose end the trace does not hold: the pod stays terminating past any window
_NEVER = 10**9


@attrs.define
class RecordedPod:
    """What the recorded schedulers decided for one pod (by uid): its first verdict (``scheduled``
    or ``unschedulable``) and when, the first node it was bound to, its schedulerName."""

    key: str
    uid: str
    scheduler: str
    verdict: str = ""
    verdict_at: float = 0.0
    message: str = ""
    node: str = ""
    bound_at: float | None = None


@attrs.frozen
class RecordedStep:
    """One recorded watch event, applied at ``at`` by :meth:`apply` (a step of
    :class:`~kschedfw.simulation.Simulation` that applies itself)."""

    at: float
    event: str  # ADDED | MODIFIED | DELETED
    kind: str
    raw: dict[str, Any] = attrs.field(eq=False, repr=False)
    obj: Any = attrs.field(eq=False, repr=False)
    line: int
    #: a pod deletion begun: seconds until the trace removes it (None: not a deletion's start)
    grace: int | None = None
    #: the recorded scheduler's preemption of this pod: dropped when that scheduler is replayed
    preempted_by: str = ""
    #: a MODIFIED that changed what the scheduler reads (else only a pod's binding is applied,
    #: for a scheduler the replay has no profile for)
    changed: bool = True
    action: str = "recorded"

    @property
    def objects(self) -> tuple[Any, ...]:
        """The pod this step creates, for those who list a run's pods in advance."""
        return (self.obj,) if self.event == "ADDED" and self.kind == "Pod" else ()

    def apply(self, sim: "Simulation") -> None:
        cluster = sim.cluster
        meta = self.raw.get("metadata") or {}
        name, namespace = str(meta.get("name", "")), str(meta.get("namespace") or "")
        current = cluster.get(self.kind, name, namespace)
        if self.kind == "Pod":
            _apply_pod(self, sim, current)
        elif self.event == "DELETED":
            if current is not None:
                cluster.remove(self.kind, name, namespace)
        elif current is None:
            cluster.try_create(self.obj)
        else:
            sim.update_object(self.obj, self.at)


def _apply_pod(step: RecordedStep, sim: "Simulation", current: Any) -> None:
    cluster, pod = sim.cluster, step.obj
    if step.event == "ADDED":
        if current is None:
            cluster.try_create(pod)
        return
    if current is None or current.uid != pod.uid:
        return  # gone already: deleted by kschedfw's own preemption, or never created
    replayed = pod.scheduler_name in sim.scheduler.frameworks
    if step.preempted_by and step.preempted_by in sim.scheduler.frameworks:
        return  # the recorded scheduler's victim: kschedfw preempts (or not) on its own
    if step.event == "DELETED":
        cluster.delete_pod(current, 0, by=f"trace line {step.line}")
        return
    if step.grace is not None:
        cluster.delete_pod(current, step.grace, by=f"trace line {step.line}")
        return
    if not replayed and pod.node_name and not current.node_name:
        cluster.bind(current, pod.node_name)  # another scheduler's binding
    if step.changed:
        sim.update_object(_merged_pod(step.raw, current, step), step.at)


def _pod_fingerprint(raw: dict[str, Any]) -> tuple[Any, ...]:
    """What of a pod a user or a controller changes: not its binding, nor the scheduler's status."""
    meta = raw.get("metadata") or {}
    spec = {k: v for k, v in (raw.get("spec") or {}).items() if k != "nodeName"}
    phase = (raw.get("status") or {}).get("phase")
    return (meta.get("labels"), meta.get("annotations"), meta.get("ownerReferences"), spec,
            phase if phase in _TERMINAL else None)


def _merged_pod(raw: dict[str, Any], current: Any, step: RecordedStep) -> Any:
    """The recorded pod with kschedfw's binding and status (and the recorded phase, if terminal)."""
    spec = {k: v for k, v in (raw.get("spec") or {}).items() if k != "nodeName"}
    if current.node_name:
        spec["nodeName"] = current.node_name
    status = dict(current.raw.get("status") or {})
    phase = (raw.get("status") or {}).get("phase")
    if phase in _TERMINAL:
        status["phase"] = phase
    return parse_object({**raw, "spec": spec, "status": status}, source=f"trace line {step.line}")


def _fingerprint_of(raw: dict[str, Any]) -> Any:
    return _pod_fingerprint(raw) if raw.get("kind") == "Pod" else _fingerprint(raw)


def _fingerprint(raw: dict[str, Any]) -> Any:
    """An object without what changes on every write (its version) and a node's heartbeats."""
    meta = {k: v for k, v in (raw.get("metadata") or {}).items() if k not in ("resourceVersion", "generation")}
    status = raw.get("status")
    if isinstance(status, dict) and isinstance(status.get("conditions"), list):
        status = {**status, "conditions": [
            {k: v for k, v in c.items() if k not in ("lastHeartbeatTime", "lastProbeTime")}
            if isinstance(c, dict) else c for c in status["conditions"]]}
    return {**raw, "metadata": meta, "status": status}


@attrs.define
class Replay:
    """A trace read for one window: ``objects`` (the cluster at its start), ``steps`` (the events
    in it), ``pods`` (the recorded decisions by uid, of pods decided in it), ``origin`` (the epoch
    time of simulated 0), ``end`` (the window's end in simulated seconds)."""

    source: str
    located: list[Located]
    steps: list[RecordedStep]
    pods: dict[str, RecordedPod]
    origin: float
    end: float
    malformed: list[ManifestError] = attrs.Factory(list)

    @property
    def objects(self) -> list[Any]:
        return [x.obj for x in self.located]

    def inputs(self) -> Inputs:
        """The starting cluster as simulation inputs (the steps go to the simulation apart)."""
        return Inputs(tuple(self.located), (), (), tuple(self.malformed))


def parse_instant(text: str, option: str) -> tuple[str, float]:
    """``--from``/``--until``'s value: an RFC 3339 time (``("at", epoch)``) or a duration after
    the trace's start (``("after", seconds)``); ValueError says what is wrong."""
    from kschedfw.cluster.inputs.scenario import parse_duration
    try:
        stamp = _dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        try:
            return "after", parse_duration(text, source=option, line=None, field=option)
        except ManifestError:
            raise ValueError(f"{option} {text!r}: give a duration after the trace's start (90s, 1h30m) "
                             "or an RFC 3339 time (2026-01-02T15:04:05Z)") from None
    if stamp.tzinfo is None:
        stamp = stamp.replace(tzinfo=_dt.timezone.utc)
    return "at", stamp.timestamp()


def load_replay(path: str | Path, start: tuple[str, float] | None = None,
                until: tuple[str, float] | None = None) -> Replay:
    """Read the trace at ``path`` for the window from ``start`` to ``until`` (None: from the end
    of its first list to its last line); a kube-scheduler-simulator recorder file is read too
    (:mod:`kschedfw.trace.kss`). Raises :class:`TraceError` naming the file and line."""
    from kschedfw.trace.kss import is_kss_record_file, kss_lines
    source = str(path)
    lines = list(kss_lines(path) if is_kss_record_file(path) else numbered_lines(path))
    synced = next((i for i, (_, line) in enumerate(lines) if line["type"] == "synced"), None)
    if synced is None:
        raise TraceError(f"{source}: the trace ends before every kind was listed (no synced line)")
    first = float(lines[synced][1].get("t", 0.0))
    last = max((float(line.get("t", first)) for _, line in lines[synced:]), default=first)
    origin = _instant(start, first, first)
    end = _instant(until, first, last)
    if end < origin:
        raise TraceError(f"{source}: --until is before --from")
    state: dict[tuple[str, str, str, str], tuple[int, dict[str, Any]]] = {}
    recorded: dict[str, RecordedPod] = {}
    events: list[tuple[int, dict[str, Any]]] = []
    for i, (number, line) in enumerate(lines):
        kind = line["type"]
        if kind in ("list", "event"):
            obj = line.get("object")
            if not isinstance(obj, dict) or not isinstance(obj.get("metadata"), dict):
                raise TraceError(f"{source}:{number}: a {kind} line without an object")
            t = float(line.get("t", first))
            if i < synced or t < origin:
                key = object_key(obj)
                if line.get("event") == "DELETED":
                    state.pop(key, None)
                else:
                    state[key] = (number, obj)
            elif t <= end:
                if line.get("event") not in ("ADDED", "MODIFIED", "DELETED"):
                    raise TraceError(f"{source}:{number}: an event line needs event ADDED, MODIFIED or DELETED")
                events.append((number, line))
        elif kind == "decision":
            _decided(recorded, line, origin, end, source, number)
    malformed: list[ManifestError] = []
    located = []
    for number, obj in state.values():
        parsed = _parse(obj, source, number, malformed)
        if parsed is not None:
            located.append(Located(parsed, source, number))
    steps = list(_steps(events, {k: obj for k, (_, obj) in state.items()}, origin, source, malformed))
    return Replay(source, located, steps, recorded, origin, end - origin, malformed)


def _instant(value: tuple[str, float] | None, first: float, default: float) -> float:
    if value is None:
        return default
    how, amount = value
    return first + amount if how == "after" else amount


def _parse(obj: dict[str, Any], source: str, number: int, malformed: list[ManifestError]) -> Any:
    try:
        return parse_object(obj, source=source, line=number)
    except ManifestError as exc:
        malformed.append(exc)
        return None


def _steps(events: list[tuple[int, dict[str, Any]]], start: dict[tuple[str, str, str, str], dict[str, Any]],
           origin: float, source: str, malformed: list[ManifestError]) -> Iterator[RecordedStep]:
    """The events as steps, without those that change nothing the replay reads (``start``: the
    objects as the window starts)."""
    deleted_at: dict[str, float] = {}  # pod uid -> when the trace removed it
    for _, line in events:
        obj = line["object"]
        if line["event"] == "DELETED" and obj.get("kind") == "Pod":
            deleted_at[str(obj["metadata"].get("uid", ""))] = float(line["t"])
    terminating: set[str] = set()
    victims: dict[str, str] = {}
    seen = {key: _fingerprint_of(obj) for key, obj in start.items()}  # the fingerprint last recorded
    bound = {key for key, obj in start.items() if (obj.get("spec") or {}).get("nodeName")}
    for number, line in events:
        raw = line["object"]
        kind = str(raw.get("kind", ""))
        key = object_key(raw)
        fingerprint = _fingerprint_of(raw)
        changed = line["event"] != "MODIFIED" or seen.get(key) != fingerprint
        if line["event"] == "DELETED":
            seen.pop(key, None)
            bound.discard(key)
        else:
            seen[key] = fingerprint
        newly_bound = False
        if kind == "Pod" and (raw.get("spec") or {}).get("nodeName") and key not in bound:
            bound.add(key)
            newly_bound = line["event"] == "MODIFIED"
        if not changed and not (kind == "Pod" and (newly_bound or raw["metadata"].get("deletionTimestamp")
                                                   or _preempting_scheduler(raw))):
            continue  # a heartbeat, a status the replay makes its own, a pod already bound
        parsed = _parse(raw, source, number, malformed)
        if parsed is None:
            continue
        t = float(line["t"])
        grace: int | None = None
        preempted_by = ""
        if kind == "Pod":
            uid = str(raw["metadata"].get("uid", ""))
            by = _preempting_scheduler(raw)
            if by:
                victims[uid] = by
            preempted_by = victims.get(uid, "")
            if raw["metadata"].get("deletionTimestamp") and uid not in terminating and line["event"] == "MODIFIED":
                terminating.add(uid)
                gone = deleted_at.get(uid)
                grace = _NEVER if gone is None else max(math.ceil(gone - t), 0) + 1
        yield RecordedStep(t - origin, line["event"], kind, raw, parsed, number, grace, preempted_by, changed)


def _preempting_scheduler(raw: dict[str, Any]) -> str:
    """The scheduler whose preemption this pod is a victim of (its DisruptionTarget condition
    says ``<schedulerName>: preempting to accommodate ...``), or ""."""
    for c in (raw.get("status") or {}).get("conditions") or []:
        if isinstance(c, dict) and c.get("type") == "DisruptionTarget" and c.get("reason") == "PreemptionByScheduler":
            return str(c.get("message", "")).partition(":")[0]
    return ""


def _decided(recorded: dict[str, RecordedPod], line: dict[str, Any], origin: float, end: float,
             source: str, number: int) -> None:
    """One decision line into the pod's record (those outside the window are not compared)."""
    uid, pod = line.get("uid"), line.get("pod")
    if not isinstance(uid, str) or not isinstance(pod, str):
        raise TraceError(f"{source}:{number}: a decision line needs pod and uid")
    at = float(line.get("t", 0.0))  # when it was seen: finer than the API's whole seconds
    decision = line.get("decision")
    if decision not in ("Bound", "FailedScheduling"):
        return
    entry = recorded.get(uid)
    if entry is None:
        if not origin <= at <= end:
            return
        entry = recorded[uid] = RecordedPod(pod, uid, str(line.get("scheduler", "")))
    if decision == "Bound" and entry.bound_at is None:
        entry.node, entry.bound_at = str(line.get("node", "")), at - origin
    if not entry.verdict and not line.get("derived"):  # a binding read from a pod update tells no first verdict
        entry.verdict = "scheduled" if decision == "Bound" else "unschedulable"
        entry.verdict_at = at - origin
        entry.message = str(line.get("message", ""))
