"""What-if: the same cluster, seed and pods under two scheduler setups, and which plugin made each
pod land differently.

Each side is a :class:`~kschedfw.simulation.Simulation` whose scheduler hands every real
scheduling cycle a :class:`DecisionRecorder` (``SchedulingCycle.recorder_for``). A recorder keeps only
what a comparison needs, so memory stays bounded on large clusters: which plugins rejected how
many nodes, and the filter verdict and weighted scores of the chosen node and of the *focus*
nodes (where the pod went on the other side). Side B runs knowing side A's placements; side A is
then run again, with B's placements as focus, only if some pod moved. Both runs of A are the same
run (same input, seed and configuration), which :func:`compare` checks.
"""

from __future__ import annotations

import contextlib
import re
from typing import TYPE_CHECKING, Any, Callable, ContextManager, Iterable, Mapping

import attrs

from kschedfw.explain import claim_devices
from kschedfw.simulation import GroupOutcome, PodOutcome, Simulation

if TYPE_CHECKING:
    from kschedfw.api import Pod
    from kschedfw.config.expand import SchedulerConfig
    from kschedfw.fwk.fit_error import Diagnosis
    from kschedfw.framework.registry import Registry
    from kschedfw.fwk.status import Status
    from kschedfw.fwk.types import PreFilterResult
    from kschedfw.trace.agreement import Agreement
    from kschedfw.trace.replay import RecordedPod

__all__ = ["Setup", "NodeView", "Decision", "DecisionRecorder", "NodeUsage", "Reason", "PodChange", "PodDevices",
           "GroupChange", "Comparison", "compare", "PLACED", "DELETED"]

#: Outcomes in which the pod sits on a node.
PLACED = frozenset(("Bound", "Running", "Succeeded", "Failed"))
#: Outcomes of a pod deleted during the run.
DELETED = frozenset(("Preempted", "Deleted"))


@attrs.frozen
class Setup:
    """One side: a configuration and feature gates, with a label naming them for people."""

    label: str
    config: "SchedulerConfig"
    feature_gates: Mapping[str, bool]
    objects: tuple[Any, ...]
    steps: tuple[Any, ...] = ()
    refused: Mapping[str, str] = attrs.Factory(dict)  # pod key -> why the API server refused it
    #: a replayed trace: where the run ends (simulated seconds) and the recorded decisions by pod uid
    until: float | None = None
    recorded: "Mapping[str, RecordedPod] | None" = None


@attrs.frozen
class NodeView:
    """One node as one cycle saw it: rejected (by which plugin, why), or scored."""

    rejected_by: str = ""
    reason: str = ""
    evaluated: bool = True  # False: the cycle never looked at it (node sampling)
    scores: Mapping[str, int] = attrs.Factory(dict)  # plugin -> weighted score
    total: int | None = None


@attrs.frozen
class Decision:
    """What a pod's last scheduling cycle decided, kept small."""

    node: str
    message: str  # the cycle's failure ("" on success)
    rejectors: Mapping[str, int]  # plugin -> nodes it rejected
    feasible: int
    views: Mapping[str, NodeView]  # the chosen node and the focus nodes


class DecisionRecorder:
    """A :class:`~kschedfw.framework.recorder.CycleRecorder` that boils one cycle down to a
    :class:`Decision` when the cycle ends, and then lets go of everything else."""

    def __init__(self, focus: Iterable[str], node_count: Callable[[], int]) -> None:
        self.focus = frozenset(focus)
        self.node_count = node_count  # nodes in the cycle's snapshot
        self.decision: Decision | None = None
        self._clear()

    def _clear(self) -> None:
        self._pre_filter: "Status | None" = None
        self._candidates: set[str] = set()
        self._feasible: set[str] = set()
        self._diagnosis: "Diagnosis | None" = None
        self._scores: dict[str, tuple[list[str], list[int]]] = {}
        self._totals: dict[str, int] = {}

    def pre_filter(self, result: "PreFilterResult | None", status: "Status | None",
                   narrowing: tuple[str, ...]) -> None:
        self._pre_filter = status

    def filtered(self, nodes: list[str], feasible: list[str], diagnosis: "Diagnosis") -> None:
        self._candidates, self._feasible, self._diagnosis = set(nodes), set(feasible), diagnosis

    def pre_scored(self, skipped: frozenset[str]) -> None:
        """A skipped plugin has no score to compare."""

    def scores(self, plugin: str, nodes: list[str], raw: list[int], normalized: list[int],
               weighted: list[int]) -> None:
        self._scores[plugin] = (nodes, weighted)

    def totals(self, nodes: list[str], totals: list[int]) -> None:
        self._totals = dict(zip(nodes, totals))

    def permit_wait(self, waits: dict[str, float]) -> None:
        """Where a pod ends is decided by its cycle, not by how long it waited at Permit."""

    def result(self, evaluated: int, feasible: int, node: str, status: "Status | None") -> None:
        wanted = self.focus | {node} if node else self.focus
        views = {name: self._view(name) for name in sorted(wanted)}
        message = "" if status is None else status.message()
        self.decision = Decision(node, message, self._rejectors(), feasible, views)
        self._clear()

    def _rejectors(self) -> dict[str, int]:
        """Plugin -> nodes it rejected: each Filter rejection, and the PreFilter's (rejecting or
        narrowing) for the nodes it kept out."""
        counts: dict[str, int] = {}
        diagnosis, pre = self._diagnosis, self._pre_filter
        if diagnosis is None:
            if pre is not None and not pre.is_success() and pre.plugin:
                counts[pre.plugin] = self.node_count()
            return counts
        statuses = diagnosis.node_to_status
        for _, status in statuses.items():
            counts[status.plugin] = counts.get(status.plugin, 0) + 1
        plugin = statuses.absent_nodes_status.plugin
        kept_out = self.node_count() - len(self._candidates)
        if plugin and kept_out > 0:
            counts[plugin] = counts.get(plugin, 0) + kept_out
        return counts

    def _view(self, name: str) -> NodeView:
        if name in self._feasible:
            scores = {plugin: weighted[nodes.index(name)] for plugin, (nodes, weighted) in self._scores.items()
                      if name in nodes}
            return NodeView(scores=scores, total=self._totals.get(name))
        diagnosis, pre = self._diagnosis, self._pre_filter
        if diagnosis is None:
            if pre is not None and not pre.is_success():
                return NodeView(rejected_by=pre.plugin, reason=pre.message())
            return NodeView(evaluated=False)
        statuses = diagnosis.node_to_status
        if name in self._candidates:
            if any(n == name for n, _ in statuses.items()):
                status = statuses.get(name)
                return NodeView(rejected_by=status.plugin, reason=status.message())
            return NodeView(evaluated=False)  # not in the sample this cycle filtered
        absent = statuses.absent_nodes_status
        if absent.plugin:  # kept out by PreFilter
            return NodeView(rejected_by=absent.plugin, reason=absent.message())
        return NodeView(evaluated=False)


@attrs.frozen
class NodeUsage:
    """Requests of the pods on a node against what it can allocate (cpu in millicores, memory in bytes)."""

    node: str
    cpu_requested: int
    cpu_allocatable: int
    memory_requested: int
    memory_allocatable: int
    pods: int


@attrs.frozen
class Reason:
    """Why one side ended as it did. Against the other side's node: ``score`` (``plugins``: those
    whose weighted score favoured ``chosen``; none on a tie the seed broke), ``filter`` (``other``
    rejected), ``unevaluated`` (``other`` outside the filtered sample), ``only-feasible``,
    ``unknown``. Otherwise: ``unschedulable`` (``rejectors`` and the FitError), ``placed`` (the
    other side did not place it), ``preempted`` (by ``other`` on ``chosen``), ``refused`` (by the
    API server), ``pod-group`` (scheduled with its PodGroup: ``other`` names it, ``message`` is
    the group's line)."""

    kind: str
    chosen: str = ""
    other: str = ""
    plugins: tuple[str, ...] = ()  # the deciding plugins
    differences: Mapping[str, int] = attrs.Factory(dict)  # plugin -> weighted(chosen) - weighted(other)
    totals: Mapping[str, int] = attrs.Factory(dict)  # node -> weighted total
    rejectors: Mapping[str, int] = attrs.Factory(dict)  # plugin -> nodes rejected
    message: str = ""
    preempted: tuple[str, ...] = ()  # pods this one preempted (its victims) on this side


@attrs.frozen
class PodChange:
    """A pod that ended differently: ``moved``, ``unscheduled`` (placed on A only), ``scheduled``
    (placed on B only), ``deleted`` (preempted or deleted during one side's run only), ``status``
    (placed on neither, in different states) or ``devices`` (on the same node, with other devices
    allocated to its ResourceClaims). ``devices_a``/``devices_b``: the
    pod's claims and their allocated devices on each side (empty for a pod without claims)."""

    pod: str
    change: str
    a: PodOutcome
    b: PodOutcome
    why_a: Reason | None
    why_b: Reason | None
    devices_a: "PodDevices" = ()
    devices_b: "PodDevices" = ()


@attrs.frozen
class GroupChange:
    """A PodGroup scheduled (its PodGroupScheduled condition True) on one side only:
    ``scheduled`` (on B only) or ``unscheduled`` (on A only), with each side's one line (how
    many pods fit where, and the condition's message)."""

    group: str
    change: str
    a: str
    b: str


@attrs.frozen
class Comparison:
    a: Setup
    b: Setup
    pods: int  # pods compared (on either side)
    changes: tuple[PodChange, ...]
    usage_a: tuple[NodeUsage, ...]
    usage_b: tuple[NodeUsage, ...]
    groups: int = 0  # PodGroups compared (on either side)
    group_changes: tuple[GroupChange, ...] = ()
    #: each side's agreement with the recorded scheduler (a replayed trace only)
    agreement_a: "Agreement | None" = None
    agreement_b: "Agreement | None" = None

    @property
    def differs(self) -> bool:
        return bool(self.changes or self.group_changes)


#: A pod's ResourceClaims after a run: (pod's claim name, ("request: driver/pool/device", ...)) each.
PodDevices = tuple[tuple[str, tuple[str, ...]], ...]


@attrs.define
class _Run:
    outcomes: dict[str, PodOutcome]
    decisions: dict[str, Decision]
    usage: tuple[NodeUsage, ...]
    preemptor_of: dict[str, tuple[str, str]]  # victim key -> (preemptor key, node)
    devices: dict[str, PodDevices] = attrs.Factory(dict)  # pod key -> its claims' devices (pods with claims)
    groups: dict[str, GroupOutcome] = attrs.Factory(dict)  # PodGroup key -> where it ended
    #: pod key -> the PodGroup it was scheduled with (the pod-group cycle on)
    group_of: dict[str, GroupOutcome] = attrs.field(init=False)
    agreement: "Agreement | None" = None

    def __attrs_post_init__(self) -> None:
        self.group_of = {pod: g for g in self.groups.values() if g.read for pod in g.pods}

    def victims_of(self, key: str) -> tuple[str, ...]:
        return tuple(sorted(v for v, (p, _) in self.preemptor_of.items() if p == key))


def compare(a: Setup, b: Setup, registry: "Registry", *, seed: int = 0,
            progress: Callable[[str], ContextManager[Any]] | None = None) -> Comparison:
    """Run both setups on their objects with ``seed`` and explain every pod that ends differently.
    ``progress(description)``, if given, is entered around each run and gives its ``on_progress``."""
    run_a = _simulate(a, registry, seed, {}, progress, "A")
    run_b = _simulate(b, registry, seed, {k: o.node for k, o in run_a.outcomes.items() if o.node}, progress, "B")
    moved = {k: o.node for k, o in run_b.outcomes.items()
             if o.node and k in run_a.outcomes and run_a.outcomes[k].node not in ("", o.node)}
    if moved:
        again = _simulate(a, registry, seed, moved, progress, "A again, for the moves")
        if again.outcomes != run_a.outcomes:
            raise RuntimeError("the same simulation ran twice with different results")
        run_a = again
    keys = sorted(set(run_a.outcomes) | set(run_b.outcomes))
    changes = []
    for key in keys:
        oa = run_a.outcomes.get(key) or PodOutcome(key, "", "Deleted")
        ob = run_b.outcomes.get(key) or PodOutcome(key, "", "Deleted")
        devices_a, devices_b = run_a.devices.get(key, ()), run_b.devices.get(key, ())
        change = _change(oa, ob) or ("devices" if devices_a != devices_b else None)
        if change is None:
            continue
        changes.append(PodChange(key, change, oa, ob, _reason(oa, ob, run_a, key), _reason(ob, oa, run_b, key),
                                 devices_a, devices_b))
    group_keys = sorted(set(run_a.groups) | set(run_b.groups))
    return Comparison(a, b, len(keys), tuple(changes), run_a.usage, run_b.usage, len(group_keys),
                      tuple(_group_changes(group_keys, run_a.groups, run_b.groups)),
                      run_a.agreement, run_b.agreement)


def _group_changes(keys: list[str], a: Mapping[str, GroupOutcome], b: Mapping[str, GroupOutcome]
                   ) -> list[GroupChange]:
    """The groups scheduled on one side only (a group missing on a side is not scheduled there)."""
    out = []
    for key in keys:
        ga, gb = a.get(key), b.get(key)
        scheduled_a, scheduled_b = ga is not None and ga.scheduled, gb is not None and gb.scheduled
        if scheduled_a != scheduled_b:
            out.append(GroupChange(key, "scheduled" if scheduled_b else "unscheduled",
                                   ga.line() if ga is not None else "not created",
                                   gb.line() if gb is not None else "not created"))
    return out


def _change(a: PodOutcome, b: PodOutcome) -> str | None:
    if (a.status in DELETED) != (b.status in DELETED):
        return "deleted"
    placed_a, placed_b = a.status in PLACED, b.status in PLACED
    if placed_a and placed_b:
        return "moved" if a.node != b.node else None
    if placed_a:
        return "unscheduled"
    if placed_b:
        return "scheduled"
    return "status" if a.status != b.status else None


def _reason(mine: PodOutcome, theirs: PodOutcome, run: _Run, key: str) -> Reason | None:
    """Why this side's last cycle for the pod ended as it did, against the other side's node."""
    if mine.status == "Refused":
        return Reason("refused", message=mine.message)
    if key in run.preemptor_of:
        preemptor, node = run.preemptor_of[key]
        return Reason("preempted", chosen=node, other=preemptor)
    group = run.group_of.get(key) if key not in run.decisions else None
    reason = Reason("pod-group", other=group.key, message=group.line()) if group is not None \
        else _decided(mine, theirs, run.decisions.get(key))
    victims = run.victims_of(key)
    return attrs.evolve(reason, preempted=victims) if reason is not None and victims else reason


def _decided(mine: PodOutcome, theirs: PodOutcome, decision: Decision | None) -> Reason | None:
    if decision is None:
        return None
    if mine.status not in PLACED:
        return Reason("unschedulable", rejectors=dict(decision.rejectors),
                      message=mine.message or decision.message)
    chosen, other = mine.node, theirs.node
    if not other or theirs.status not in PLACED:
        return Reason("placed", chosen=chosen, rejectors=dict(decision.rejectors))
    view = decision.views.get(other)
    mine_view = decision.views.get(chosen)
    if view is None or mine_view is None:
        return Reason("unknown", chosen=chosen, other=other)
    if view.rejected_by or view.reason:
        return Reason("filter", chosen=chosen, other=other, plugins=(view.rejected_by,), message=view.reason)
    if not view.evaluated:
        return Reason("unevaluated", chosen=chosen, other=other)
    differences = {p: mine_view.scores.get(p, 0) - view.scores.get(p, 0)
                   for p in sorted(set(mine_view.scores) | set(view.scores))}
    differences = {p: d for p, d in sorted(differences.items(), key=lambda kv: (-kv[1], kv[0])) if d}
    totals = {n: t for n, t in ((chosen, mine_view.total), (other, view.total)) if t is not None}
    tie = len(totals) == 2 and totals[chosen] == totals[other]
    deciding = () if tie else tuple(p for p, d in differences.items() if d > 0)
    if decision.feasible == 1 and not totals:
        return Reason("only-feasible", chosen=chosen, other=other)
    return Reason("score", chosen=chosen, other=other, plugins=deciding, differences=differences, totals=totals)


def _simulate(setup: Setup, registry: "Registry", seed: int, focus: Mapping[str, str],
              progress: Callable[[str], ContextManager[Any]] | None, side: str) -> _Run:
    with progress(f"binding pods ({side})") if progress is not None else contextlib.nullcontext() as on_progress:
        sim = Simulation(setup.config, registry, setup.objects, setup.steps, seed=seed,
                         feature_gates=dict(setup.feature_gates), on_progress=on_progress)
        return _record_run(sim, setup, focus)


def _record_run(sim: Simulation, setup: Setup, focus: Mapping[str, str]) -> _Run:
    decisions: dict[str, DecisionRecorder] = {}
    frameworks = sim.scheduler.frameworks

    def recorder_for(pod: "Pod") -> DecisionRecorder:
        wanted = focus.get(pod.key)
        handle = frameworks[pod.scheduler_name].handle
        recorder = DecisionRecorder((wanted,) if wanted else (), lambda: len(handle.snapshot))
        decisions[pod.key] = recorder
        return recorder

    sim.scheduler.scheduling.recorder_for = recorder_for
    watch = None
    if setup.recorded is not None:
        from kschedfw.trace.agreement import AgreementWatch
        watch = AgreementWatch(sim.scheduler, dict(setup.recorded)).attach()
    result = sim.run(setup.until)
    outcomes = {o.key: o for o in result.pods}
    for key, why in setup.refused.items():
        outcomes.setdefault(key, PodOutcome(key, "", "Refused", message=why))
    kept = {k: r.decision for k, r in decisions.items() if r.decision is not None}
    agreed = None
    if watch is not None:
        from kschedfw.trace.agreement import agreement
        agreed = agreement(watch)
    return _Run(outcomes, kept, usage(sim.cluster), _preemptions(sim.cluster, setup), _devices(sim.cluster),
                {g.key: g for g in result.pod_groups()}, agreed)


def _devices(cluster: Any) -> dict[str, PodDevices]:
    """Every pod with ResourceClaims: its claims and the devices allocated to them."""
    out = {}
    for pod in cluster.list("Pod"):
        if (pod.raw.get("spec") or {}).get("resourceClaims"):
            out[pod.key] = tuple((c["name"], tuple(f"{d['request']}: {d['driver']}/{d['pool']}/{d['device']}"
                                                   for d in c["devices"]))
                                 for c in claim_devices(cluster, pod.key))
    return out


def _preemptions(cluster: Any, setup: Setup) -> dict[str, tuple[str, str]]:
    """Victim -> (preemptor, node), from the Preempted events the scheduler recorded."""
    keys = {o.uid: f"{o.namespace}/{o.name}" for o in (*setup.objects, *(o for s in setup.steps for o in s.objects))
            if type(o).__name__ == "Pod"}
    keys.update((p.uid, p.key) for p in cluster.list("Pod"))
    out = {}
    for event in cluster.events:
        found = _PREEMPTED.match(event.message) if event.reason == "Preempted" else None
        if found is not None and event.object_kind == "Pod":
            out[event.object_key] = (keys.get(found["uid"], found["uid"]), found["node"])
    return out


_PREEMPTED = re.compile(r"Preempted by pod (?P<uid>\S+) on node (?P<node>[^\s.]+(?:\.[^\s.]+)*)")


def usage(cluster: Any) -> tuple[NodeUsage, ...]:
    """Each node's requested cpu and memory (pods on it that have not terminated) and allocatable."""
    requested: dict[str, dict[str, int]] = {}
    counts: dict[str, int] = {}
    for pod in cluster.list("Pod"):
        if not pod.node_name or pod.is_terminated:
            continue
        totals = requested.setdefault(pod.node_name, {})
        for name, amount in pod.request().items():
            totals[name] = totals.get(name, 0) + amount
        counts[pod.node_name] = counts.get(pod.node_name, 0) + 1
    out = []
    for node in sorted(cluster.list("Node"), key=lambda n: n.name):
        req = requested.get(node.name, {})
        out.append(NodeUsage(node.name, req.get("cpu", 0), node.allocatable.get("cpu", 0),
                             req.get("memory", 0), node.allocatable.get("memory", 0),
                             counts.get(node.name, 0)))
    return tuple(out)
