"""Why did a pod go where it went, or nowhere? Its real scheduling attempts, as they happened.

:class:`DecisionLog` is the scheduling cycle's ``recorder_for``: every real cycle of a pod that was asked
about is kept in full (each node's Filter verdict and plugin, every Score plugin's raw, normalized
and weighted score); every other pod's cycles, when wanted, are kept as a bounded summary
(rejections counted per plugin and message, the best-scored nodes), so a 5000-node run stays small.
After the run, :meth:`DecisionLog.explain` joins those records with what the scheduler and the
cluster saw afterwards: the cycle's outcome (bound, waited at Permit, failed to bind), the
nomination and victims of a preemption, and for a pod still pending the cluster events its
rejecting plugins registered, which are what would move it back to the active queue.

A pod group's attempts (gate GenericWorkload) are kept whole, each placement tried with its pods'
nodes, every PlacementScore plugin's weighted score, the total and the placement chosen
(:class:`~kschedfw.scheduler.podgroup_attempts.GroupRecord`), and :meth:`DecisionLog.explain_groups`
gives them with the group's one-line reason.

``explain(scheduler, pod)`` remains as a *dry run* against the scheduler's current state (every
node, nothing changed): what would happen now, not what happened.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterable

import attrs

from kschedfw.deletions import PREEMPTED_PREFIX
from kschedfw.fwk.fit_error import FitError
from kschedfw.framework.recorder import CycleRecord, SummaryRecord
from kschedfw.fwk.status import Status
from kschedfw.scheduler.podgroup_attempts import GroupRecord
from kschedfw.scheduler.schedule_one import new_cycle_state

if TYPE_CHECKING:
    from kschedfw.api import Pod
    from kschedfw.framework.recorder import CycleRecorder
    from kschedfw.scheduler import Scheduler
    from kschedfw.simulation import GroupOutcome, SimulationResult

__all__ = ["DecisionLog", "render", "render_group", "explain", "Explanation", "ALL"]

#: ``--explain all``: a summary of every pod
ALL = "all"
#: attempts kept per pod (the first and the latest ones); a pod retried for hours stays small
MAX_ATTEMPTS_PER_POD = 10
#: why a plugin that acted has no score column of its own (upstream SkipScorePlugins)
PRE_SCORE_SKIPPED = "its PreScore returned Skip"


def normalize_key(key: str) -> str:
    namespace, _, name = key.rpartition("/")
    return f"{namespace or 'default'}/{name}"


@attrs.define
class _Cycle:
    cycle: int
    time: float
    record: "CycleRecord | SummaryRecord"
    nodes: list[str] | None  # every node of the snapshot, for full records
    #: the cluster's Events from ``events_from`` to ``events_until`` (the pod's next attempt;
    #: None: none yet) were recorded during this attempt, its victims' Preempted events among
    #: them. Attempts of one simulated instant (victims without a grace period) share a time,
    #: not this span.
    events_from: int = 0
    events_until: int | None = None


@attrs.define
class _DetailedRecord(CycleRecord):
    """A full record that also asks each rejecting plugin having an ``explain_rejection(pod,
    node)`` method (DynamicResources: the request and selector a node cannot satisfy) why, when
    Filter is done: the plugin's state is then the one its Filter saw."""

    pod: Any = None
    framework: Any = None
    rejection_details: dict[str, list[str]] = attrs.Factory(dict)
    error_details: list[str] = attrs.Factory(list)

    def filtered(self, nodes: list[str], feasible: list[str], diagnosis: Any) -> None:
        super().filtered(nodes, feasible, diagnosis)
        plugins = getattr(self.framework, "plugins", {})
        snapshot = self.framework.handle.snapshot
        for name, status in diagnosis.node_to_status.items():
            why = getattr(plugins.get(status.plugin), "explain_rejection", None)
            if why is None:
                continue
            node_info = snapshot.get(name)
            if node_info is not None and node_info.node is not None:
                lines = why(self.pod, node_info.node)
                if lines:
                    self.rejection_details[name] = list(lines)

    def result(self, evaluated: int, feasible: int, node: str, status: Any) -> None:
        """Also asks the plugin whose error ended the cycle, if it has an ``explain_error(pod)``
        method (DynamicResources: the claim constraint an allocator error is about), what it was."""
        super().result(evaluated, feasible, node, status)
        if status is not None and not status.is_success() and not status.is_rejected():
            why = getattr(getattr(self.framework, "plugins", {}).get(status.plugin), "explain_error", None)
            if why is not None:
                self.error_details = list(why(self.pod))


class DecisionLog:
    """Records each real scheduling cycle: in full for the ``detail`` pods, as a summary for the
    others when ``summarize_all`` (in full too while the snapshot has at most ``detail_up_to``
    nodes: the HTML report's per-node tables). Install it with :meth:`attach` before the run."""

    def __init__(self, scheduler: "Scheduler", detail: Iterable[str] = (), *, summarize_all: bool = False,
                 top_n: int = 3, detail_up_to: int = 0) -> None:
        self.scheduler = scheduler
        self.detail = {normalize_key(k) for k in detail if k != ALL}
        self.summarize_all = summarize_all
        self.detail_up_to = detail_up_to
        self.top_n = top_n
        self.cycles: dict[str, list[_Cycle]] = {}
        self.dropped: dict[str, int] = {}
        #: priority of each pod deleted during the run: victims are gone when the run ends
        self.deleted_priority: dict[str, int] = {}
        #: each pod group's attempts (the first and the latest ones), by "namespace/name"
        self.group_cycles: dict[str, list[GroupRecord]] = {}
        self.groups_dropped: dict[str, int] = {}

    def attach(self) -> "DecisionLog":
        self.scheduler.scheduling.recorder_for = self
        pod_groups = self.scheduler.scheduling.pod_groups
        if pod_groups is not None:
            pod_groups.recorder_for = self._group_record
        self.scheduler.cluster.watch(self._on_event)
        return self

    def _group_record(self, key: str) -> GroupRecord:
        """Every group's attempt is kept (a group's record is per placement, not per node)."""
        records = self.group_cycles.setdefault(key, [])
        if len(records) >= MAX_ATTEMPTS_PER_POD:  # keep the first, drop the oldest of the rest
            del records[1]
            self.groups_dropped[key] = self.groups_dropped.get(key, 0) + 1
        record = GroupRecord()
        records.append(record)
        return record

    def _on_event(self, event: Any) -> None:
        if event.new is None and event.kind == "Pod":
            self.deleted_priority[event.old.key] = event.old.effective_priority

    def __call__(self, pod: "Pod") -> "CycleRecorder | None":
        key = pod.key
        scheduler = self.scheduler
        snapshot = scheduler.frameworks[pod.scheduler_name].handle.snapshot
        record: CycleRecord | SummaryRecord
        nodes: list[str] | None = None
        if key in self.detail or (self.summarize_all and len(snapshot) <= self.detail_up_to):
            record = _DetailedRecord(pod=pod, framework=scheduler.frameworks[pod.scheduler_name])
            nodes = [ni.name for ni in snapshot.node_infos()]
        elif self.summarize_all:
            record = SummaryRecord(num_nodes=len(snapshot), top_n=self.top_n)
        else:
            return None
        cycles = self.cycles.setdefault(key, [])
        events = len(getattr(scheduler.cluster, "events", ()))
        if cycles:
            cycles[-1].events_until = events
        if len(cycles) >= MAX_ATTEMPTS_PER_POD:  # keep the first, drop the oldest of the rest
            del cycles[1]
            self.dropped[key] = self.dropped.get(key, 0) + 1
        cycles.append(_Cycle(scheduler.queue.scheduling_cycle, scheduler.clock.now(), record, nodes, events))
        return record

    # ------------------------------------------------------------------ after the run
    def explain(self, result: "SimulationResult", keys: Iterable[str] | None = None) -> list[dict[str, Any]]:
        """The explanation (JSON-ready) of each pod of ``keys`` (default: every pod recorded, in
        the order of ``result.pods``)."""
        context = _Context(result)
        if keys is None:
            wanted = [p.key for p in result.pods
                      if p.key in self.cycles or p.status in ("Pending", "Preempted", "Deleted")]
        else:
            wanted = [normalize_key(k) for k in keys]
        return [self._explain_pod(key, context) for key in wanted]

    def _explain_pod(self, key: str, context: "_Context") -> dict[str, Any]:
        outcome = context.outcomes.get(key)
        out: dict[str, Any] = {
            "pod": key,
            "profile": outcome.scheduler_name if outcome is not None else "",
            "status": outcome.status if outcome is not None else "Deleted",
            "node": outcome.node if outcome is not None else "",
            "message": outcome.message if outcome is not None else "",
            "attempts": [],
        }
        if outcome is not None and outcome.nominated_node:
            out["nominatedNode"] = outcome.nominated_node
        if key in context.group_of:
            out["podGroup"] = context.group_of[key]
        reason = outcome.pending_reason() if outcome is not None else None
        if reason is not None:
            out["pendingReason"] = reason
        if outcome is not None and outcome.deleted_at is not None:  # Preempted, Deleted
            out.update(deletedBy=outcome.deleted_by, deletedAt=outcome.deleted_at, goneAt=outcome.gone_at)
        claims = claim_devices(context.result.cluster, key)
        if claims:
            out["claims"] = claims
        if key in self.dropped:
            out["attemptsNotKept"] = self.dropped[key]
        preempted = context.victims.get(key, [])
        number = 0
        for cycle in self.cycles.get(key, ()):
            until = cycle.events_until
            victims = [{"pod": victim, "priority": self._priority(victim, context)}
                       for index, victim in preempted
                       if index >= cycle.events_from and (until is None or index < until)]
            ended = context.outcome_of(key, cycle.cycle)
            # the pod's own count (upstream QueuedPodInfo.Attempts), which goes on past the
            # attempts not kept; a cycle still in flight comes after the previous one
            number = ended.pop("attempt", None) or number + 1
            out["attempts"].append(_attempt_json(cycle, number, ended, victims))
        if any("victims" in a for a in out["attempts"]):
            out["priority"] = self._priority(key, context)
        if outcome is not None and outcome.status == "Pending":
            if context.result.scheduler.queue.once:
                out["notRetried"] = "one attempt per pod (--once)"
            else:
                out["wakeUpEvents"] = context.wake_up_events(key)
        return out


    def explain_groups(self, result: "SimulationResult", pods: Iterable[str] | None = None) -> list[dict[str, Any]]:
        """The explanation (JSON-ready) of each PodGroup having one of ``pods`` (default: every
        PodGroup): its policy, condition and one-line reason, and each attempt recorded."""
        wanted = None if pods is None else {normalize_key(k) for k in pods}
        return [self._explain_group(g) for g in result.pod_groups()
                if wanted is None or wanted.intersection(g.pods)]

    def _explain_group(self, group: "GroupOutcome") -> dict[str, Any]:
        out: dict[str, Any] = {"podGroup": group.key, "policy": group.policy, "minCount": group.min_count,
                               "pods": list(group.pods), "bound": group.bound, "message": group.line()}
        if group.condition is not None:
            status, reason, message = group.condition
            out["condition"] = {"status": status, "reason": reason, "message": message}
        pending = group.pending_reason()
        if pending is not None:
            out["pendingReason"] = pending
        if group.key in self.groups_dropped:
            out["attemptsNotKept"] = self.groups_dropped[group.key]
        prefix = f"{group.topology_key}=" if group.topology_key else ""
        attempts = []
        for index, record in enumerate(r for r in self.group_cycles.get(group.key, ()) if r.attempt is not None):
            attempt = _group_attempt_json(record, prefix)
            attempt["attempt"] = index + 1 + (self.groups_dropped.get(group.key, 0) if index else 0)
            attempts.append(attempt)
        out["attempts"] = attempts
        return out

    def _priority(self, key: str, context: "_Context") -> int | None:
        namespace, _, name = key.partition("/")
        pod = context.result.cluster.get("Pod", name, namespace)
        return pod.effective_priority if pod is not None else self.deleted_priority.get(key)


class _Context:
    """What the scheduler and the cluster know after the run, indexed once for every pod."""

    def __init__(self, result: "SimulationResult") -> None:
        self.result = result
        scheduler = result.scheduler
        self.outcomes = {p.key: p for p in result.pods}
        self.attempts: dict[tuple[str, int], list[Any]] = {}
        for a in scheduler.attempts:
            self.attempts.setdefault((a.pod, a.cycle), []).append(a)
        uid_to_key = {d.pod.uid: d.pod.key for d in result.cluster.deletions}
        uid_to_key.update((p.uid, p.key) for p in result.cluster.list("Pod"))
        #: preemptor -> (index among the cluster's Events, victim) of each Preempted event
        self.victims: dict[str, list[tuple[int, str]]] = {}
        for index, event in enumerate(result.cluster.events):
            if event.reason != "Preempted" or not event.message.startswith(PREEMPTED_PREFIX):
                continue
            uid = event.message[len(PREEMPTED_PREFIX):].split(" ", 1)[0]
            preemptor = uid_to_key.get(uid)
            if preemptor is not None:
                self.victims.setdefault(preemptor, []).append((index, event.object_key))
        self.pending = {qpi.pod.key: qpi for _, qpi in scheduler.queue.list_pending()}
        #: each pod scheduled with its PodGroup (the pod-group cycle on): the group's key
        self.group_of: dict[str, str] = {}
        if scheduler.scheduling.pod_groups is not None:
            for pod in result.cluster.list("Pod"):
                group = pod.scheduling_group
                if group is not None and group.pod_group_name is not None:
                    self.group_of[pod.key] = f"{pod.namespace}/{group.pod_group_name}"

    def outcome_of(self, key: str, cycle: int) -> dict[str, Any]:
        """The cycle's outcome as the scheduler recorded it: its last result, and whether the pod
        waited at Permit on the way."""
        records = self.attempts.get((key, cycle), [])
        if not records:
            return {"result": "InFlight"}
        last = records[-1]
        out: dict[str, Any] = {"result": last.result, "attempt": last.attempt}
        if last.node:
            out["nominatedNode" if last.result in ("Unschedulable", "SchedulerError") else "node"] = last.node
        if last.message:
            out["message"] = last.message
        if len(records) > 1 or last.result == "Waiting":
            out["boundAt" if last.result == "Scheduled" else "endedAt"] = last.time
        return out

    def wake_up_events(self, key: str) -> list[dict[str, Any]]:
        """The events the rejecting plugins registered (the framework's queueing hints): one of
        them, if its hint says Queue, moves the pending pod back to the active queue."""
        qpi = self.pending.get(key)
        if qpi is None:
            return []
        fwk = self.result.scheduler.frameworks.get(qpi.pod.scheduler_name)
        rejectors = set(qpi.unschedulable_plugins) | set(qpi.pending_plugins)
        if fwk is None or not rejectors:
            return [{"plugin": "", "events": ["any cluster event (no plugin rejected it: retried after backoff)"]}]
        by_plugin: dict[str, list[str]] = {}
        for event, plugin, _ in fwk.queueing_hints():
            if plugin in rejectors:
                labels = by_plugin.setdefault(plugin, [])
                if event.describe() not in labels:
                    labels.append(event.describe())
        return [{"plugin": p, "events": by_plugin.get(p, [])} for p in sorted(rejectors)]


def claim_devices(cluster: Any, key: str) -> list[dict[str, Any]]:
    """The pod's ResourceClaims after the run: for each, the devices allocated per request
    (driver/pool/device, as the claim's ``status.allocation`` has them; none when unallocated),
    with the claim the scheduler created for extended resources backed by a DeviceClass last
    (``status.extendedResourceClaimStatus``)."""
    namespace, _, name = key.partition("/")
    pod = cluster.get("Pod", name, namespace)
    if pod is None:
        return []
    raw = pod.raw or {}
    generated = {s.get("name"): s.get("resourceClaimName")
                 for s in (raw.get("status") or {}).get("resourceClaimStatuses") or () if isinstance(s, dict)}
    out = []
    for ref in (raw.get("spec") or {}).get("resourceClaims") or ():
        if not isinstance(ref, dict):
            continue
        claim_name = ref.get("resourceClaimName") or generated.get(ref.get("name"))
        out.append(_claim_entry(cluster, namespace, ref.get("name"), claim_name))
    extended = (raw.get("status") or {}).get("extendedResourceClaimStatus")
    if isinstance(extended, dict) and extended.get("resourceClaimName"):
        out.append(_claim_entry(cluster, namespace, "for extended resources", extended["resourceClaimName"]))
    return out


def _claim_entry(cluster: Any, namespace: str, name: Any, claim_name: Any) -> dict[str, Any]:
    claim = cluster.get("ResourceClaim", claim_name, namespace) if claim_name else None
    allocation = ((claim.raw.get("status") or {}).get("allocation") or {}) if claim is not None else {}
    results = (allocation.get("devices") or {}).get("results") or ()
    return {"name": name, "claim": f"{namespace}/{claim_name}" if claim_name else "",
            "devices": [{f: r.get(f) for f in ("request", "driver", "pool", "device")} for r in results]}


def _group_attempt_json(record: GroupRecord, prefix: str) -> dict[str, Any]:
    """One attempt of a group: its pods, each placement tried (``prefix`` names a placement by
    its topology key) with each pod's node or why none, the PlacementScore plugins' weighted
    scores and total of the feasible ones, and the one chosen: the highest total, equal totals
    going to the highest randomizer (upstream), or with ``--ties name`` to the smallest name."""
    attempt = record.attempt
    assert attempt is not None
    scores = {name: (plugins, total, randomizer) for name, plugins, total, randomizer in record.scores}
    placements = []
    for tried in record.placements:
        entry: dict[str, Any] = {
            "placement": prefix + tried.name if tried.name else "(all nodes)", "nodes": tried.nodes,
            "feasible": tried.feasible, "fit": sum(1 for p in tried.pods if p.node and not p.needs_preemption),
            "pods": [{"pod": p.pod, "node": p.node, **({"needsPreemption": True} if p.needs_preemption else {}),
                      **({"reason": p.message} if p.message else {})} for p in tried.pods]}
        if tried.message:
            entry["status"] = tried.message
        if tried.name in scores:
            plugins, total, randomizer = scores[tried.name]
            entry["scores"] = dict(plugins)
            entry["total"] = total
            if record.ties == "random":
                entry["randomizer"] = randomizer
        placements.append(entry)
    out: dict[str, Any] = {"attempt": 0, "cycle": attempt.cycle, "time": attempt.time, "result": attempt.result,
                           "tried": attempt.tried, "fit": attempt.fit, "message": attempt.message,
                           "placements": placements}
    feasible = [p for p in placements if p["feasible"]]
    if record.chosen is not None:
        out["chosen"] = prefix + record.chosen if record.chosen else "(all nodes)"
        totals = [p["total"] for p in feasible if "total" in p]
        if totals and totals.count(max(totals)) > 1:
            out["tieBreak"] = ("the highest randomizer among equal totals (upstream)" if record.ties == "random"
                               else "the smallest placement name among equal totals (--ties name)")
    elif len(feasible) == 1 and len(placements) > 1:
        out["chosen"] = feasible[0]["placement"]
    return out


def _status_json(status: Status | None) -> dict[str, Any]:
    if status is None:
        return {"fits": True, "plugin": "", "reason": ""}
    return {"fits": False, "plugin": status.plugin, "reason": status.message()}


def _attempt_json(cycle: _Cycle, number: int, outcome: dict[str, Any], victims: list[dict[str, Any]]
                  ) -> dict[str, Any]:
    record = cycle.record
    out: dict[str, Any] = {"attempt": number, "cycle": cycle.cycle, "time": cycle.time, **outcome,
                           "evaluated": record.evaluated, "feasible": record.feasible_count}
    if record.node:
        out["chosen"] = record.node
    if isinstance(record, CycleRecord):
        _full_detail(out, record, cycle.nodes or [])
    else:
        _summary(out, record)
    if victims:
        out["victims"] = victims
    if record.permit_waits:
        out["permitWaits"] = dict(record.permit_waits)
    return out


def _full_detail(out: dict[str, Any], record: CycleRecord, nodes: list[str]) -> None:
    """Every node's verdict, the scores, and counts that agree with them: each node is listed as
    feasible, rejected (by Filter, or left out by PreFilter) or not evaluated, with why not."""
    status = record.pre_filter_status
    diagnosis = record.diagnosis
    statuses = diagnosis.node_to_status if diagnosis is not None else None
    pre: dict[str, Any] = {}
    if status is not None and not status.is_success():
        pre = {"plugin": status.plugin, "code": status.code.name, "reason": status.message()}
    elif statuses is not None and len(record.nodes) < len(nodes) and statuses.absent_nodes_status.reasons:
        absent = statuses.absent_nodes_status
        pre = {"plugin": absent.plugin, "narrowedTo": len(record.nodes), "reason": absent.message()}
    if pre:
        out["preFilter"] = pre
    feasible = set(record.feasible)
    rejected = dict(statuses.items()) if statuses is not None else {}
    candidates = set(record.nodes)
    left_out = statuses.absent_nodes_status if statuses is not None and statuses.absent_nodes_status.reasons \
        else None
    details = record.rejection_details if isinstance(record, _DetailedRecord) else {}
    node_json: dict[str, Any] = {}
    counts = {"leftOutByPreFilter": 0, "notEvaluated": 0}
    for name in nodes:
        if name in feasible:
            entry: dict[str, Any] = {"fits": True, "plugin": "", "reason": ""}
        elif name in rejected:
            entry = _status_json(rejected[name])
        elif name not in candidates and left_out is not None:
            entry = _status_json(left_out)
            counts["leftOutByPreFilter"] += 1
        else:
            entry = {"fits": None, "plugin": "", "reason": "not evaluated"}
            counts["notEvaluated"] += 1
        entry["total"] = record.node_totals.get(name)
        if details.get(name) and entry["fits"] is False:
            entry["details"] = details[name]
        node_json[name] = entry
    out["nodes"] = node_json
    failed = record.status is not None and not record.status.is_rejected()
    if failed and statuses is not None and record.evaluated == 0:
        # Filter stopped at an error: upstream's result counts nothing; these are the nodes
        # it had evaluated by then
        out["evaluated"], out["feasible"] = len(feasible) + len(rejected), len(feasible)
    out.update({k: v for k, v in counts.items() if v})
    if counts["notEvaluated"]:
        out["notEvaluatedWhy"] = _why_not_evaluated(record, failed, feasible, len(nodes))
    out["scores"] = {plugin: {n: {"raw": s.raw[n], "normalized": s.normalized[n], "weighted": s.weighted[n]}
                              for n in s.weighted}
                     for plugin, s in record.plugin_scores.items()}
    # scoring ran (it does for two feasible nodes or more), or PreScore or Score ended the cycle
    scored = bool(record.plugin_scores) or (failed and record.evaluated > 0)
    if scored and len(feasible) > 1:
        _unscored(out, record, node_json, failed)
    if diagnosis is not None and diagnosis.post_filter_msg:
        out["postFilter"] = diagnosis.post_filter_msg
    if isinstance(record, _DetailedRecord) and record.error_details:
        out["errorDetails"] = list(record.error_details)


def _why_not_evaluated(record: CycleRecord, failed: bool, feasible: set[str], num_nodes: int) -> str:
    """Why some nodes have no Filter verdict this cycle."""
    if record.diagnosis is None:
        return "the cycle ended before Filter"
    if failed and record.evaluated == 0:
        return "Filter stopped at an error"
    if len(record.nodes) == 1 and record.nodes[0] in feasible and num_nodes > 1:
        pod = getattr(record, "pod", None)
        if pod is not None and pod.nominated_node_name == record.nodes[0]:
            return "the nominated node was tried alone first and fit"
        return ("the opportunistic batch's hint (the next best node of the previous pod's scores) "
                "was tried alone and fit")
    return "enough feasible nodes were found (percentageOfNodesToScore)"


def _unscored(out: dict[str, Any], record: CycleRecord, node_json: dict[str, Any], failed: bool) -> None:
    """The plugins that acted this cycle without a score (a Filter rejection, PreScore's Skip, a
    Score error), each with why, so the score table has a column for every one of them; and
    why the totals are missing when the cycle ended before them."""
    unscored: dict[str, str] = {}
    status = record.status
    if failed and status is not None and status.plugin and status.plugin not in record.plugin_scores:
        unscored[status.plugin] = "failed: " + status.message()
    for entry in node_json.values():
        plugin = entry["plugin"]
        if entry["fits"] is False and plugin and plugin not in record.plugin_scores and plugin not in unscored:
            unscored[plugin] = (PRE_SCORE_SKIPPED if plugin in record.skipped_score_plugins
                                else "not a Score plugin of this profile")
    if unscored:
        out["unscored"] = unscored
    if not record.node_totals:
        out["noTotal"] = ("the cycle ended before the totals: " + status.message()) if failed and status is not None \
            else "no totals were computed"


def _summary(out: dict[str, Any], record: SummaryRecord) -> None:
    if record.pre_filter_plugin:
        out["preFilter"] = {"plugin": record.pre_filter_plugin, "reason": record.pre_filter_message}
    out["rejections"] = [{"plugin": p, "reason": m, "nodes": n}
                         for (p, m), n in sorted(record.rejections.items(), key=lambda kv: (-kv[1], kv[0]))]
    if record.top:
        out["top"] = [{"node": s.node, "total": s.total, "scores": s.scores} for s in record.top]
    if record.post_filter_message:
        out["postFilter"] = record.post_filter_message


# ---------------------------------------------------------------------- text
def render(explained: dict[str, Any]) -> str:
    """The explanation as text for a terminal."""
    head = f"pod {explained['pod']} (profile {explained['profile']}): {explained['status']}"
    if explained.get("node"):
        head += f" on {explained['node']}"
    lines = [head]
    attempts = explained["attempts"]
    if "deletedAt" in explained:  # who preempted or deleted it, when, where
        lines.append(f"  {explained['message']}")
    elif not attempts and explained.get("podGroup"):
        lines.append(f"  scheduled with its pod group {explained['podGroup']}: see the group's attempts"
                     + (f"; {explained['message']}" if explained.get("message") else ""))
    elif not attempts:
        lines.append("  no scheduling attempt" + (f": {explained['message']}" if explained.get("message") else ""))
    for claim in explained.get("claims", ()):
        devices = ", ".join(f"{d['request']}: {d['driver']}/{d['pool']}/{d['device']}" for d in claim["devices"])
        lines.append(f"  claim {claim['name']} ({claim['claim'] or 'not created'}): "
                     + (f"allocated {devices}" if devices else "not allocated"))
    for index, attempt in enumerate(attempts):
        if index == 1 and explained.get("attemptsNotKept"):  # the first is kept, then the latest
            lines.append(f"  ({explained['attemptsNotKept']} earlier attempts not kept)")
        lines.extend(_render_attempt(attempt, explained.get("priority")))
    if explained.get("notRetried"):
        lines.append(f"  not retried: {explained['notRetried']}")
    for wake in explained.get("wakeUpEvents", ()):
        who = f"{wake['plugin']}: " if wake["plugin"] else ""
        lines.append(f"  would be retried on {who}{', '.join(wake['events']) or 'no registered event'}")
    return "\n".join(lines)


def render_group(explained: dict[str, Any]) -> str:
    """A pod group's explanation as text: its line, then each attempt's placements (one row
    each: nodes, pods that fit, every PlacementScore plugin's weighted score, the total)."""
    lines = [f"pod group {explained['podGroup']} ({explained['policy']}, minCount {explained['minCount']}): "
             f"{explained['bound']} of {len(explained['pods'])} pods bound",
             f"  {explained['message']}"]
    if not explained["attempts"]:
        lines.append("  no scheduling attempt")
    for index, a in enumerate(explained["attempts"]):
        if index == 1 and explained.get("attemptsNotKept"):
            lines.append(f"  ({explained['attemptsNotKept']} earlier attempts not kept)")
        lines.append(f"  attempt {a['attempt']} (cycle {a['cycle']}, t={a['time']:g}s): {a['result']}; "
                     f"{a['tried']} pod(s) tried, {a['fit']} fit" + (f"; chosen {a['chosen']}" if "chosen" in a else ""))
        plugins = list(dict.fromkeys(p for placement in a["placements"] for p in placement.get("scores", {})))
        width = max([len("PLACEMENT")] + [len(p["placement"]) for p in a["placements"]])
        header = "    " + "PLACEMENT".ljust(width) + "  NODES  FIT" + "".join(f"  {p}" for p in plugins)
        lines.append(header + ("  TOTAL" if plugins else ""))
        for p in a["placements"]:
            row = "    " + p["placement"].ljust(width) + f"  {p['nodes']:>5}  {p['fit']:>3}"
            row += "".join(f"  {str(p.get('scores', {}).get(name, '-')).rjust(len(name))}" for name in plugins)
            if plugins:
                row += f"  {str(p.get('total', '-')).rjust(5)}"
            if p["placement"] == a.get("chosen"):
                row += "  <- chosen"
            elif not p["feasible"]:
                row += f"  {p.get('status', 'infeasible')}"
            lines.append(row)
            for pod in p["pods"]:
                if not pod["node"]:
                    lines.append(f"      {pod['pod']}: {pod.get('reason', 'no node')}")
        if a.get("tieBreak"):
            lines.append(f"    equal totals: chosen by {a['tieBreak']}")
        if a["message"] and a["result"] != "scheduled":
            lines.append(f"    => {a['message']}")
    return "\n".join(lines)


#: upstream DefaultPreemption's order for choosing among candidate nodes (pickOneNodeForPreemption)
PREEMPTION_ORDER = ("fewest PDB violations, lowest highest victim priority, smallest sum of victim "
                    "priorities, fewest victims, latest start of the highest-priority victims")


def _render_attempt(a: dict[str, Any], priority: int | None = None) -> list[str]:
    result = a["result"]
    where = a.get("node") or a.get("chosen") or ""
    text = f"  attempt {a['attempt']} (cycle {a['cycle']}, t={a['time']:g}s): {result}"
    if where and result in ("Scheduled", "Assumed", "Waiting"):
        text += f" on {where}"
    text += f"; {a['evaluated']} node(s) evaluated, {a['feasible']} feasible"
    if a.get("leftOutByPreFilter"):
        text += f", {a['leftOutByPreFilter']} left out by PreFilter"
    if a.get("notEvaluated"):
        text += f", {a['notEvaluated']} not evaluated"
    lines = [text]
    pre = a.get("preFilter")
    if pre:
        if "narrowedTo" in pre:
            lines.append(f"    PreFilter {pre['plugin']} narrowed the nodes to {pre['narrowedTo']}")
        else:
            lines.append(f"    PreFilter {pre['plugin']}: {pre['reason']}")
    if "nodes" in a:
        lines.extend(_render_nodes(a))
    else:
        for s in a.get("top", ()):
            scores = ", ".join(f"{p} {w}" for p, w in s["scores"].items())
            lines.append(f"    top {s['node']}: {s['total']}" + (f" ({scores})" if scores else ""))
        for r in a.get("rejections", ()):
            lines.append(f"    {r['nodes']} node(s) rejected by {r['plugin'] or '?'}: {r['reason']}")
    if a.get("postFilter"):
        lines.append(f"    PostFilter: {a['postFilter']}")
    if a.get("nominatedNode"):
        victims = a.get("victims", [])
        lines.append(f"    nominated node {a['nominatedNode']}" + ("; victims: " + ", ".join(
            f"{v['pod']} (priority {v['priority']})" for v in victims) if victims else ""))
        if victims:
            highest = max((v["priority"] for v in victims if v["priority"] is not None), default=None)
            lines.append(f"    why {a['nominatedNode']}: evicting pods of priority up to {highest} (this pod: "
                         f"{priority}) makes it fit there;")
            lines.append(f"      among such nodes upstream picks by {PREEMPTION_ORDER}")
    for plugin, timeout in a.get("permitWaits", {}).items():
        lines.append(f"    Permit: {plugin} made it wait (timeout {timeout:g}s)")
    if a.get("message") and result not in ("Scheduled", "Assumed", "Waiting"):
        lines.append(f"    => {a['message']}")
        lines.extend(f"       {detail}" for detail in a.get("errorDetails", ()))
    return lines


def _render_nodes(a: dict[str, Any]) -> list[str]:
    nodes: dict[str, Any] = a["nodes"]
    scores: dict[str, Any] = a.get("scores", {})
    unscored: dict[str, str] = a.get("unscored", {})
    plugins = list(scores) + list(unscored)
    width = max([len("NODE")] + [len(n) for n in nodes])
    lines = []
    fits = [n for n, v in nodes.items() if v["fits"]]
    if a.get("notEvaluated"):
        lines.append(f"    {a['notEvaluated']} node(s) not evaluated: {a['notEvaluatedWhy']}")
    if fits and plugins:
        def cell(p: str, n: str) -> str:
            if p in unscored:
                return "skip" if unscored[p] == PRE_SCORE_SKIPPED else "-"
            return "{raw}/{normalized}/{weighted}".format(**scores[p][n]) if n in scores[p] else "-"

        cells = {p: {n: cell(p, n) for n in fits} for p in plugins}
        widths = {p: max([len(p)] + [len(c) for c in cells[p].values()]) for p in plugins}
        lines.append("    " + "NODE".ljust(width) + "".join(f"  {p.rjust(widths[p])}" for p in plugins)
                     + "  TOTAL   (raw/normalized/weighted)")
        for n in sorted(fits, key=lambda n: (-(nodes[n]["total"] or 0), n)):
            total = nodes[n]["total"]
            lines.append("    " + n.ljust(width) + "".join(f"  {cells[p][n].rjust(widths[p])}" for p in plugins)
                         + f"  {('-' if total is None else str(total)).rjust(5)}")
        if unscored:
            lines.append("    no score from " + ", ".join(f"{p} ({why})" for p, why in unscored.items()))
        if a.get("noTotal"):
            lines.append(f"    no TOTAL: {a['noTotal']}")
    elif fits:
        lines.append("    fits: " + ", ".join(sorted(fits)))
    for n in sorted(n for n, v in nodes.items() if not v["fits"]):
        v = nodes[n]
        if v["fits"] is None:
            lines.append("    " + n.ljust(width) + f"  {v['reason']}")
        else:
            lines.append("    " + n.ljust(width) + f"  rejected by {v['plugin'] or '?'}: {v['reason']}")
            lines.extend(f"      {detail}" for detail in v.get("details", ()))
    return lines


# ---------------------------------------------------------------------- dry run
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
    """A dry run: explain ``pod``'s placement on the scheduler's current state; a bound pod is explained as
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
    scheduler.cache.update_snapshot()
    nodes = fwk.handle.snapshot.node_infos()
    state, _ = new_cycle_state()
    record = CycleRecord()
    _, status = scheduler.scheduling.schedule_pod(fwk, state, pod, record, dry_run=True)
    statuses = {ni.name: record.node_status(ni.name) for ni in nodes}
    plugin_scores = {name: dict(scores.weighted) for name, scores in record.plugin_scores.items()}
    message = ""  # the FitError text when nothing fits (or the cycle's error), as simulate reports it
    if status is not None and not status.is_success():
        message = str(status.error) if isinstance(status.error, FitError) else status.message()
    return Explanation(pod.key, fwk.profile_name, record.pre_filter_status, statuses, plugin_scores,
                       dict(record.node_totals), message)
