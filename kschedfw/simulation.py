"""The composition root of the embedded simulation (its sibling for a real cluster is
:mod:`kschedfw.kube_runner`): run the scheduler on the embedded cluster until nothing more can
happen, and report.

Time is simulated: the loop schedules every pod that is ready, then jumps the clock to the next
thing that can change the picture (a scenario step, a backoff expiry, a Permit timeout, a victim's
grace period ending) until none is left. The cluster files are created before that, like
``kubectl create -f`` creates them: one after another, the last at time 0.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any, Callable, Iterable, Mapping, Protocol

import attrs

from kschedfw.api.pod import SCHEDULER_ERROR
from kschedfw.api.workload_names import POD_GROUP_KIND, POD_GROUP_SCHEDULED, REASON_SCHEDULER_ERROR
from kschedfw.clock import SimulatedClock
from kschedfw.cluster.memory import MemoryCluster
from kschedfw.cluster.apiserver.podadmission import ADMISSION_PLUGINS
from kschedfw.cluster.inputs.scenario import Step
from kschedfw.deletions import BrokenBudget, Fate, fates
from kschedfw.api.field import ManifestError
from kschedfw.gcpause import paused
from kschedfw.scheduler import Scheduler
from kschedfw.scheduler.outcomes import Failure
from kschedfw.scheduler.pending_reason import Gating, message_of, pending_reason, pod_group_reason

if TYPE_CHECKING:
    from kschedfw.config.expand import SchedulerConfig
    from kschedfw.scheduler.podgroup_attempts import GroupAttempt
    from kschedfw.framework.registry import Registry
    from kschedfw.metrics import SchedulerMetrics

#: Once every scenario step has run, stop when nothing has progressed (no pod bound, no object
#: changed) for this long: pods that only fail again and again (an erroring plugin, a gang that
#: times out at Permit) would otherwise be retried forever. Five minutes matches upstream's
#: flush of long-unschedulable pods.
DEFAULT_SETTLE_SECONDS = 300.0

#: Objects of the cluster files are created one after another this many simulated seconds apart,
#: as ``kubectl create -f`` creates them against a real API server. Measured on loopback with
#: kubectl v1.32 and kube-apiserver v1.36.2, 100 pods per run: gaps mostly 35-85 ms, median
#: 47-69 ms per run; the server answers each POST in 3-16 ms, the rest is kubectl's own work per
#: object. So about 20 objects share each whole-second creationTimestamp, and the queue sees
#: pods at distinct, increasing sub-second times in file order.
CREATE_SPACING_SECONDS = 0.05


class AppliedStep(Protocol):
    """A step that is not a scenario's but applies itself at ``at`` (a trace's recorded event,
    :class:`kschedfw.trace.replay.RecordedStep`); ``objects``: the pods it creates."""

    at: float
    action: str

    @property
    def objects(self) -> tuple[Any, ...]: ...

    def apply(self, sim: "Simulation") -> None: ...


class InvariantError(AssertionError):
    """A pod that is neither bound, queued, waiting nor reported: the scheduler lost it."""


#: Every PodOutcome status: Bound (by this run), or Running/Succeeded/Failed (it came bound),
#: Pending, Gated, Waiting (at Permit), Binding (its binding cycle waits), Ignored (no profile),
#: Terminating (it came terminating), Preempted or Deleted (during the run: gone, or terminating).
STATUSES = ("Bound", "Running", "Succeeded", "Failed", "Pending", "Gated", "Waiting", "Binding", "Ignored",
            "Terminating", "Preempted", "Deleted")


@attrs.frozen
class PodOutcome:
    key: str
    scheduler_name: str
    status: str  # one of STATUSES
    node: str = ""
    reason: str = ""
    message: str = ""
    nominated_node: str = ""
    #: Preempted or Deleted: who (the preemptor's key, "scenario step at 60s"), when its deletion
    #: began and when the object went away (None: still terminating), in simulated seconds
    deleted_by: str = ""
    deleted_at: float | None = None
    gone_at: float | None = None
    #: Preempted: the PodDisruptionBudgets it was evicted in spite of
    broken_budgets: tuple[BrokenBudget, ...] = ()
    #: Pending: its last failed attempt (None: not attempted yet); Gated: what holds it
    why: Failure | Gating | None = attrs.field(default=None, eq=False, repr=False)

    def pending_reason(self) -> dict[str, Any] | None:
        """The structured reason of a Pending or Gated pod (None for the others), built on
        demand: see :mod:`kschedfw.scheduler.pending_reason`."""
        return pending_reason(self.why) if self.status in ("Pending", "Gated") else None


@attrs.frozen
class GroupOutcome:
    """Where a PodGroup ended: its policy (``gang`` with ``min_count``, or ``basic``), its pods
    (keys) and how many are bound, the PodGroupScheduled condition the scheduler wrote
    (``condition``: (status, reason, message); None: none yet), its topology key, and its last
    scheduling attempt (None: not attempted). ``read``: False when the scheduler does not read
    PodGroups (the GenericWorkload gate off)."""

    key: str
    policy: str
    min_count: int
    pods: tuple[str, ...]
    bound: int
    condition: tuple[str, str, str] | None
    topology_key: str = ""
    attempt: "GroupAttempt | None" = attrs.field(default=None, eq=False, repr=False)
    read: bool = True

    @property
    def scheduled(self) -> bool:
        return self.condition is not None and self.condition[0] == "True"

    def pending_reason(self) -> dict[str, Any] | None:
        """Why the group is not scheduled, as data (None once it is): see
        :func:`kschedfw.scheduler.pending_reason.pod_group_reason`."""
        if self.scheduled or not self.read:
            return None
        attempt = self.attempt
        if attempt is None or self.condition is None:
            state = "WaitingForPods" if self.policy == "gang" and len(self.pods) < self.min_count else "NotAttempted"
            return pod_group_reason(self.key, self.policy, self.min_count, len(self.pods), state)
        if self.condition[1] == REASON_SCHEDULER_ERROR:
            state = "SchedulerError"
        else:
            state = "WaitingOnPreemption" if attempt.result == "waiting_on_preemption" else "Unschedulable"
        placement = f"{self.topology_key}={attempt.placement}" if self.topology_key and attempt.placement \
            else attempt.placement
        return pod_group_reason(self.key, self.policy, self.min_count, len(self.pods), state, tried=attempt.tried,
                                fit=attempt.fit, placements=attempt.placements, placement=placement,
                                message=self.condition[2])

    def line(self) -> str:
        """The group in one line: why it is pending, or how many of its pods are bound."""
        if not self.read:
            return f"{self.policy} {self.key}: not read by the scheduler (the GenericWorkload gate is off)"
        reason = self.pending_reason()
        if reason is not None:
            return message_of(reason)
        quorum = f" (minCount {self.min_count})" if self.policy == "gang" else ""
        return f"{self.policy} {self.key}: {self.bound} of {len(self.pods)} pods bound{quorum}; PodGroupScheduled"


@attrs.define
class SimulationResult:
    pods: list[PodOutcome]
    cluster: MemoryCluster
    scheduler: Scheduler
    rejected: list[tuple[str, str]]
    end_time: float

    def summary(self) -> dict[str, dict[str, int]]:
        """Counts per status, overall and per profile (schedulerName)."""
        out: dict[str, dict[str, int]] = {"total": {}}
        for p in self.pods:
            for key in ("total", p.scheduler_name):
                bucket = out.setdefault(key, {})
                bucket[p.status] = bucket.get(p.status, 0) + 1
        return out

    def failed_with_error(self) -> list[PodOutcome]:
        """The pods still pending because their last attempt failed with an error
        (:data:`SCHEDULER_ERROR`), not because no node fits them."""
        return [p for p in self.pods if p.status == "Pending" and p.reason == SCHEDULER_ERROR]

    def broken_budgets(self) -> dict[BrokenBudget, list[str]]:
        """Each PodDisruptionBudget a preemption broke, with the pods evicted in spite of it."""
        out: dict[BrokenBudget, list[str]] = {}
        for p in self.pods:
            for budget in p.broken_budgets:
                out.setdefault(budget, []).append(p.key)
        return out

    def pod_groups(self) -> list[GroupOutcome]:
        """Every PodGroup (``scheduling.k8s.io``) of the cluster, by key; none without any."""
        return collect_groups(self.cluster, self.scheduler)

    def written_objects(self) -> list[Any]:
        """The cluster's objects as ``--write-out`` writes them: as they are at the end (a
        preempted victim terminating, or gone once its grace period ended), each
        PodDisruptionBudget with the status the disruption controller computes from them."""
        from kschedfw.cluster.controllers.disruption import with_status_after
        pods = self.cluster.list("Pod")
        now = self.cluster.clock.now_datetime()
        return [with_status_after(o, pods, now) if type(o).__name__ == "PodDisruptionBudget" else o
                for o in self.cluster.all_objects()]


class Simulation:
    """``once`` and ``ties`` are kschedfw extensions, not upstream. ``once``: every pending pod
    gets exactly one attempt, in queue order, as capacity-planning simulators do; a pod whose
    attempt fails is never retried and is reported Pending with that attempt's reason and
    message. ``ties="name"``: among the nodes with the best total score the smallest name wins,
    instead of upstream's seeded random pick (``"random"``). ``metrics``: upstream's metrics,
    kept there from the first object created (None: none are kept)."""

    def __init__(self, config: "SchedulerConfig", registry: "Registry", objects: Iterable[Any] = (),
                 steps: Iterable["Step | AppliedStep"] = (), *, seed: int = 0,
                 settle_seconds: float = DEFAULT_SETTLE_SECONDS,
                 on_progress: Callable[[int, int], None] | None = None,
                 feature_gates: Mapping[str, bool] | None = None, fast_paths: bool = True,
                 once: bool = False, ties: str = "random",
                 admission_plugins: Iterable[str] = ADMISSION_PLUGINS,
                 metrics: "SchedulerMetrics | None" = None) -> None:
        objects = list(objects)
        # the files are created before the scheduling loop starts at 0: the last object at 0
        self.clock = SimulatedClock(-creation_span(len(objects)))
        self.cluster = MemoryCluster(self.clock, feature_gates, admission_plugins=admission_plugins)
        self.scheduler = Scheduler(config, registry, self.cluster, seed=seed, feature_gates=feature_gates,
                                   fast_paths=fast_paths, once=once, ties=ties, metrics=metrics)
        self.steps = sorted(steps, key=lambda s: s.at)
        self._steps_left = len(self.steps)
        self.settle_seconds = settle_seconds
        self.on_progress = on_progress
        self._last_progress = 0.0
        self.scheduler.on_progress = self._progress
        with paused():  # creating the objects (and the scheduler's view of them) makes no cycles
            self.cluster.load(objects, CREATE_SPACING_SECONDS)
        if self.clock.now() < 0:  # nothing loaded, or float rounding
            self.clock.set(0.0)
        for step in self.steps:  # scenario steps are backend timers, in order
            self.cluster.call_at(step.at, functools.partial(self._apply, step))

    def _progress(self) -> None:
        self._last_progress = self.clock.now()
        if self.on_progress is not None:
            self.on_progress(self.scheduler.bound_count, 0)

    # ------------------------------------------------------------------ steps
    def _apply(self, step: "Step | AppliedStep") -> None:
        if not isinstance(step, Step):
            step.apply(self)
        else:
            self._apply_scenario_step(step)
        self._steps_left -= 1
        self._last_progress = self.clock.now()

    def _apply_scenario_step(self, step: Step) -> None:
        cluster = self.cluster
        if step.action == "create":
            for obj in step.objects:
                cluster.try_create(obj)
        elif step.action == "update":
            for obj in step.objects:
                self.update_object(obj, step.at)
        elif step.action == "delete":
            kind, name = step.target["kind"], step.target["name"]
            namespace = step.target.get("namespace", "default" if kind == "Pod" else "")
            obj = cluster.get(kind, name, namespace)
            if obj is None:
                cluster.rejected.append((f"{kind} {name}", f"delete at {step.at:g}s: not found"))
            elif kind == "Pod":
                cluster.delete_pod(obj, by=f"scenario step at {step.at:g}s")
            else:
                cluster.delete(kind, name, namespace)
        elif step.action == "removeSchedulingGate":
            self._remove_gate(step)

    def update_object(self, obj: Any, at: float) -> None:
        """Update ``obj`` (create it if it is not there), as a scenario's update step: a pod keeps
        its uid, priority and node; a refusal is recorded in ``rejected``."""
        from kschedfw.cluster.apiserver.admission import AdmissionError
        from kschedfw.cluster.apiserver.tolerationseconds import add_default_tolerations
        current = self.cluster.get(getattr(obj, "kind", None) or type(obj).__name__, obj.name,
                                   getattr(obj, "namespace", "") or "")
        if current is None:
            self.cluster.try_create(obj)
            return
        if hasattr(current, "uid") and hasattr(obj, "uid") and type(obj).__name__ == "Pod":
            obj = attrs.evolve(obj, uid=current.uid, priority=current.priority if obj.priority is None else obj.priority,
                               preemption_policy=obj.preemption_policy or current.preemption_policy,
                               node_name=obj.node_name or current.node_name)
            if "DefaultTolerationSeconds" in self.cluster.admission_plugins:  # it admits updates too
                obj = add_default_tolerations(obj)
        try:
            self.cluster.update(obj)
        except AdmissionError as exc:
            self.cluster.rejected.append((f"update at {at:g}s", str(exc)))

    def _remove_gate(self, step: Step) -> None:
        namespace, _, name = step.target["pod"].rpartition("/")
        pod = self.cluster.get("Pod", name, namespace or "default")
        if pod is None:
            self.cluster.rejected.append((step.target["pod"], f"removeSchedulingGate at {step.at:g}s: pod not found"))
            return
        gate = step.target.get("gate")
        gates = tuple(g for g in pod.scheduling_gates if gate is not None and g != gate)
        raw = dict(pod.raw)
        spec = dict(raw.get("spec") or {})
        if gates:
            spec["schedulingGates"] = [{"name": g} for g in gates]
        else:
            spec.pop("schedulingGates", None)
        raw["spec"] = spec
        self.cluster.update(attrs.evolve(pod, scheduling_gates=gates, raw=raw))

    # ------------------------------------------------------------------ loop
    def _idle(self, deadline: float | None) -> bool:
        """The scheduler has nothing ready: jump the clock to ``deadline``, or end the run when
        only the 5-minute flush of unschedulable pods is left (nothing changed that could help
        them), or when every step has run and nothing progressed for ``settle_seconds``."""
        if deadline is None:
            return False
        scheduler = self.scheduler
        hard = self.cluster.next_timer() is not None or scheduler.next_waiting_deadline() is not None
        if not hard and scheduler.queue.pending_pods().get("backoff", 0) == 0:
            return False
        if not self._steps_left and deadline - self._last_progress > self.settle_seconds:
            return False
        if deadline > self.clock.now():
            self.clock.set(deadline)
        return True

    def run(self, until: float | None = None) -> SimulationResult:
        """Run the scheduler's loop on the simulated clock until the run settles (or the next
        thing to happen is after ``until``)."""
        self.scheduler.run(until, idle=self._idle)
        return self.result()

    def result(self) -> SimulationResult:
        outcomes = collect_outcomes(self.cluster, self.scheduler)
        return SimulationResult(outcomes, self.cluster, self.scheduler, list(self.cluster.rejected),
                                self.clock.now())


def creation_span(count: int) -> float:
    """Simulated seconds from the first to the last of ``count`` objects created from files."""
    return max(count - 1, 0) * CREATE_SPACING_SECONDS


def collect_outcomes(cluster: MemoryCluster, scheduler: Scheduler) -> list[PodOutcome]:
    """Where every pod ended up, the pods deleted during the run among them; raises
    InvariantError if one is unaccounted for."""
    pending = dict(_pending_entries(scheduler))
    failures = scheduler.attempt_log.failures
    waiting = {wp.pod.uid for wp in scheduler.waiting_pods.values()}
    outcomes = [_deleted_outcome(fate) for fate in fates(cluster)]
    lost = []
    for pod in cluster.list("Pod"):
        if cluster.terminating_deletion(pod) is not None:
            continue  # deleted during the run: reported above
        condition = pod.condition("PodScheduled")
        reason = condition.reason if condition is not None else ""
        message = condition.message if condition is not None else ""
        if pod.node_name:
            if pod.uid in scheduler.bound_uids:
                status = "Bound"
            else:  # it came bound: report what it is doing
                status = pod.phase if pod.phase in ("Succeeded", "Failed") else "Running"
            outcomes.append(PodOutcome(pod.key, pod.scheduler_name, status, pod.node_name))
        elif pod.scheduler_name not in scheduler.frameworks:
            outcomes.append(PodOutcome(pod.key, pod.scheduler_name, "Ignored",
                                       message=f'no profile for schedulerName "{pod.scheduler_name}"'))
        elif pod.uid in waiting:
            outcomes.append(PodOutcome(pod.key, pod.scheduler_name, "Waiting", message="waiting at Permit"))
        elif pod.uid in scheduler.waiting_bindings:
            outcomes.append(PodOutcome(pod.key, pod.scheduler_name, "Binding", reason=reason,
                                       message=message or "waiting in its binding cycle (PreBind or Bind)"))
        elif pod.key in pending:
            queue_name, qpi = pending[pod.key]
            if queue_name == "gated" or qpi.gated:
                gating = _gating(pod, qpi, cluster)
                outcomes.append(PodOutcome(pod.key, pod.scheduler_name, "Gated", reason="SchedulingGated",
                                           message=message_of(pending_reason(gating)), why=gating))
            else:
                outcomes.append(PodOutcome(pod.key, pod.scheduler_name, "Pending", reason=reason,
                                           message=message or "not attempted yet", nominated_node=pod.nominated_node_name,
                                           why=failures.get(pod.uid)))
        elif pod.is_terminated or pod.deletion_timestamp is not None:
            outcomes.append(PodOutcome(pod.key, pod.scheduler_name, "Terminating"))
        else:
            lost.append(pod.key)
    if lost:
        raise InvariantError(f"pods neither bound, queued nor reported: {', '.join(sorted(lost)[:10])}")
    outcomes.sort(key=lambda o: o.key)  # stable: a pod deleted before a namesake was created
    return outcomes


def collect_groups(cluster: MemoryCluster, scheduler: Scheduler) -> list[GroupOutcome]:
    """Where every PodGroup ended, from its condition, its pods and its last attempt."""
    groups = cluster.list(POD_GROUP_KIND)
    if not groups:
        return []
    members: dict[tuple[str, str], list[Any]] = {}
    for pod in cluster.list("Pod"):
        group = pod.scheduling_group
        if group is not None and group.pod_group_name is not None:
            members.setdefault((pod.namespace, group.pod_group_name), []).append(pod)
    cycle = scheduler.scheduling.pod_groups
    attempts = cycle.last_attempts if cycle is not None else {}
    out = []
    for group in sorted(groups, key=lambda g: g.key):
        pods = sorted(members.get((group.namespace, group.name), ()), key=lambda p: p.key)
        policy = group.scheduling_policy
        condition = group.condition(POD_GROUP_SCHEDULED)
        out.append(GroupOutcome(
            group.key, "gang" if policy.gang is not None else "basic", policy.min_count,
            tuple(p.key for p in pods), sum(1 for p in pods if p.node_name),
            (condition.status, condition.reason, condition.message) if condition is not None else None,
            group.topology_key, attempts.get(group.key), read=cycle is not None))
    return out


def _deleted_outcome(fate: Fate) -> PodOutcome:
    pod = fate.pod
    reason = "PreemptionByScheduler" if fate.status == "Preempted" else ""
    return PodOutcome(pod.key, pod.scheduler_name, fate.status, fate.node, reason, fate.message(),
                      deleted_by=fate.by, deleted_at=fate.at, gone_at=fate.gone_at, broken_budgets=fate.broken)


def _pending_entries(scheduler: Scheduler) -> list[tuple[str, Any]]:
    return [(qpi.pod.key, (queue_name, qpi)) for queue_name, qpi in scheduler.queue.list_pending()]


def _gating(pod: Any, qpi: Any, cluster: MemoryCluster) -> Gating:
    """Why a gated pod waits: its scheduling gates, or the PreEnqueue plugin with its message and,
    when a claim cannot be created from its ResourceClaimTemplate, the template and why."""
    if pod.scheduling_gates:
        return Gating(scheduling_gates=tuple(pod.scheduling_gates))
    if not qpi.gating_plugin:
        return Gating()
    return Gating(plugin=qpi.gating_plugin, message=qpi.gating_message or "",
                  detail=cluster.claim_creation_failure(pod) or "")


__all__ = ["GroupOutcome", "collect_groups", "Simulation", "STATUSES", "CREATE_SPACING_SECONDS", "creation_span", "SimulationResult", "PodOutcome", "InvariantError", "collect_outcomes", "ManifestError", "AppliedStep"]
