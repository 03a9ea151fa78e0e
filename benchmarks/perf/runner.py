"""Running a scheduler_perf workload on the embedded cluster and measuring its throughput.

The runner plays upstream's ``WorkloadExecutor`` (``test/integration/scheduler_perf``): it builds a
fresh cluster and scheduler per workload, applies the ops in order and, for ops with
``collectMetrics`` (or between ``startCollectingMetrics`` and ``stopCollectingMetrics``), measures
how fast the scheduler binds the measured pods.

Upstream runs the API server, the scheduler and the test's pod creators concurrently. Here
everything is one thread: an op creates its objects (each creation is handed to the scheduler's
event handlers before the next is created), then the scheduling loop runs until the op's wait condition holds
(upstream's ``waitUntilPodsScheduledInNamespace``, barriers...). Background ops (``churn``,
``deletePods`` with a rate, ``skipWaitToCompletion``) are timers on the cluster's simulated clock.

Time: with ``pace="wall"`` (the default) the simulated clock follows the wall clock while the
scheduler is busy, so a churn op ticking every 200 ms interleaves with scheduling as it does
upstream; whenever the scheduler is idle (waiting for a backoff, a timer), the clock jumps ahead
instead of sleeping. ``pace="instant"`` only moves time when the scheduler is idle (fully
deterministic for a seed; scheduling takes no simulated time).

Measurements (per measured op):

- ``throughput``: measured pods bound / wall seconds spent in the scheduling loop during the op;
- ``e2e_throughput``: measured pods / the op's whole wall time (building and submitting the pod
  objects, which upstream does concurrently on other cores, plus scheduling);
- ``sampled_average``: upstream's ``SchedulingThroughput`` ``Average`` computed the same way
  (1-second samples of the bound count, the first non-empty one skipped), over the op's wall time;
  ``None`` when the op is too short for two samples.
"""

from __future__ import annotations

import bisect
import cProfile
import contextlib
import hashlib
import random
import time
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator, Mapping

import attrs

from kschedfw.api import Node, parse_object, parse_resource_list
from kschedfw.cluster.memory import NotFound
from kschedfw.cluster.apiserver.podadmission import ADMISSION_PLUGINS
from kschedfw.api.field import ManifestError
from kschedfw.gcpause import frozen
from benchmarks.perf.dra_ops import AllocationFailed, allocate_claims, driver_slices, matching_nodes
from benchmarks.perf.updates import UpdateRefused, update_states
from benchmarks.perf.workload import (AllocResourceClaims, Barrier, Churn, CreateAny, CreateNamespaces,
                                    CreateNodes, CreatePods, CreateResourceClaims, CreateResourceDriver,
                                    DeletePods, NameGenerator, Op, Sleep, StartCollectingMetrics,
                                    StopCollectingMetrics, UnrolledWorkload, UnsupportedOp, UpdateAny,
                                    WorkloadError, MIGRATED_PLUGINS_ANNOTATION)
from kschedfw.simulation import Simulation

if TYPE_CHECKING:
    from kschedfw.config.expand import SchedulerConfig
    from kschedfw.framework.registry import Registry

__all__ = ["RunOptions", "Measurement", "OpRecord", "WorkloadResult", "WorkloadRunner",
           "run_workload", "build_config", "ConfigProblem", "upstream_sampled_average"]

#: Upstream waits up to 10 minutes for pods to be scheduled; here: simulated seconds without a
#: single bind before an op is declared stuck.
DEFAULT_STALL_TIMEOUT = 600.0
#: How often (simulated seconds) the paced loop runs the queue's flushes and the cluster's timers.
DUE_INTERVAL = 0.01
SAMPLE_INTERVAL = 1.0  # upstream throughputSampleInterval

_perf = time.perf_counter


class ConfigProblem(Exception):
    """The scheduler configuration cannot be built (a missing plugin, an invalid file)."""

    def __init__(self, message: str, missing_plugins: list[str] | None = None) -> None:
        super().__init__(message)
        self.missing_plugins = missing_plugins or []


class OpFailed(Exception):
    """An op could not complete (pods never scheduled, a create refused...)."""


@attrs.define
class RunOptions:
    seed: int = 0
    pace: str = "wall"  # "wall" | "instant"
    stall_timeout: float = DEFAULT_STALL_TIMEOUT
    profile: bool = False  # cProfile the scheduling loop of the measured ops
    progress: Callable[[str], None] | None = None
    #: gates set on the command line: they win over the workload's featureGates
    feature_gates: dict[str, bool] = attrs.field(factory=dict)
    #: False: the plain path (no memos, indexes or whole-list forms), which the fast one must equal
    fast_paths: bool = True


def effective_feature_gates(workload_gates: Mapping[str, bool], overrides: Mapping[str, bool]
                            ) -> tuple[dict[str, bool], list[str]]:
    """The gates a workload runs with, as upstream's harness sets them: the workload's (with its
    test case's) featureGates, OpportunisticBatching off unless the workload names it, then the
    command line's. Gates kschedfw does not know are left out: (gates, warnings)."""
    from kschedfw.fwk.features import DEFAULT_FEATURE_GATES
    gates = dict(workload_gates)
    gates.setdefault("OpportunisticBatching", False)
    gates.update(overrides)
    unknown = sorted(name for name in gates if name not in DEFAULT_FEATURE_GATES)
    warnings = [f"feature gate {name} is not one kschedfw knows: ignored" for name in unknown]
    return {k: bool(v) for k, v in gates.items() if k in DEFAULT_FEATURE_GATES}, warnings


@attrs.define
class Measurement:
    """One metrics window (an op with ``collectMetrics``, or start/stopCollectingMetrics)."""

    name: str
    namespaces: list[str]
    expected_pods: int | None
    bound_pods: int = 0
    sched_seconds: float = 0.0
    sched_cpu_seconds: float = 0.0
    create_seconds: float = 0.0
    wall_seconds: float = 0.0
    sampled_average: float | None = None
    bind_times: list[float] = attrs.field(factory=list, repr=False)
    start: float = 0.0

    @property
    def throughput(self) -> float | None:
        return self.bound_pods / self.sched_seconds if self.sched_seconds > 0 and self.bound_pods else None

    @property
    def cpu_throughput(self) -> float | None:
        """Measured pods per CPU second of this process in the scheduling loop (less sensitive to
        other load on the machine than the wall-clock figure)."""
        return self.bound_pods / self.sched_cpu_seconds if self.sched_cpu_seconds > 0 and self.bound_pods else None

    @property
    def e2e_throughput(self) -> float | None:
        return self.bound_pods / self.wall_seconds if self.wall_seconds > 0 and self.bound_pods else None

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "namespaces": self.namespaces, "expected_pods": self.expected_pods,
                "bound_pods": self.bound_pods, "sched_seconds": round(self.sched_seconds, 4),
                "sched_cpu_seconds": round(self.sched_cpu_seconds, 4),
                "create_seconds": round(self.create_seconds, 4),
                "wall_seconds": round(self.wall_seconds, 4),
                "throughput": _round(self.throughput), "cpu_throughput": _round(self.cpu_throughput),
                "e2e_throughput": _round(self.e2e_throughput),
                "sampled_average": _round(self.sampled_average)}


@attrs.define
class OpRecord:
    index: int
    description: str
    seconds: float
    note: str = ""


def placements_digest(pods: Any) -> str:
    """A short digest of the bound pods' placements (namespace/name -> node)."""
    bound = sorted(f"{p.namespace}/{p.name}={p.node_name}" for p in pods if p.node_name)
    return hashlib.sha256("\n".join(bound).encode()).hexdigest()[:16]


@attrs.define
class WorkloadResult:
    test_case: str
    workload: str
    status: str = "ok"  # ok | failed | unsupported | error
    error: str = ""
    profile_note: str = "default"
    feature_gates: dict[str, bool] = attrs.field(factory=dict)
    labels: list[str] = attrs.field(factory=list)
    params: dict[str, Any] = attrs.field(factory=dict)
    threshold: float | None = None
    #: the test case's first workload with a threshold (upstream's CI benchmark, usually 5000 nodes)
    reference_workload: str = ""
    reference_threshold: float | None = None
    init_seconds: float = 0.0
    total_seconds: float = 0.0
    measurements: list[Measurement] = attrs.field(factory=list)
    ops: list[OpRecord] = attrs.field(factory=list)
    nodes: int = 0
    pods: int = 0
    total_bound: int = 0
    pending_end: dict[str, int] = attrs.field(factory=dict)
    attempts: int = 0
    simulated_seconds: float = 0.0
    warnings: list[str] = attrs.field(factory=list)
    unschedulable_reasons: dict[str, int] = attrs.field(factory=dict)
    #: upstream's batching counters at the end: "metric{label}" -> count, every profile summed
    batch_counters: dict[str, int] = attrs.field(factory=dict)
    #: a digest of where the pods still in the cluster at the end are bound (namespace/name ->
    #: node): two runs with the same seed and ``--pace instant`` (or without churn) must agree
    placements_digest: str = ""
    profile: Any = attrs.field(default=None, repr=False)  # cProfile.Profile when profiling

    @property
    def measured(self) -> Measurement | None:
        return self.measurements[0] if self.measurements else None

    @property
    def pending_total(self) -> int:
        return sum(v for k, v in self.pending_end.items() if k != "gated")

    def to_dict(self) -> dict[str, Any]:
        return {
            "test_case": self.test_case, "workload": self.workload, "status": self.status,
            "error": self.error, "profile": self.profile_note, "feature_gates": self.feature_gates,
            "labels": self.labels, "params": self.params, "threshold": self.threshold,
            "reference_workload": self.reference_workload,
            "reference_threshold": self.reference_threshold,
            "init_seconds": round(self.init_seconds, 4), "total_seconds": round(self.total_seconds, 4),
            "measurements": [m.to_dict() for m in self.measurements],
            "ops": [attrs.asdict(o) for o in self.ops],
            "nodes": self.nodes, "pods": self.pods, "total_bound": self.total_bound,
            "pending_end": self.pending_end, "attempts": self.attempts,
            "simulated_seconds": round(self.simulated_seconds, 3), "warnings": self.warnings,
            "unschedulable_reasons": self.unschedulable_reasons,
            "batch_counters": self.batch_counters, "placements_digest": self.placements_digest,
        }


def reference_threshold(tc: Any) -> tuple[str, float | None]:
    """The first workload of ``tc`` with a threshold (upstream's benchmark size) and its value."""
    for w in tc.workloads:
        if w.threshold_value:
            return w.name, w.threshold_value
    return "", None


def _round(v: float | None) -> float | None:
    return None if v is None else round(v, 2)


# =========================================================================== configuration

def build_config(registry: "Registry", config_path: str | None = None, *,
                 allow_missing_plugins: bool = False) -> tuple["SchedulerConfig", str]:
    """The scheduler configuration and a note naming it (``default``, the file, or ``default
    without X`` when ``allow_missing_plugins`` lets missing default plugins be disabled)."""
    from kschedfw.config.validate import default_config, load_config, load_config_text
    if config_path:
        config, diagnostics = load_config(config_path, registry)
        if config is None:
            raise ConfigProblem(f"{config_path}: invalid scheduler configuration:\n"
                                + "\n".join(d.render() for d in diagnostics if d.is_error))
        return config, str(config_path)
    try:
        return default_config(registry), "default"
    except ValueError as exc:
        from kschedfw.config.defaults import DEFAULT_MULTI_POINT
        missing = [r.name for r in DEFAULT_MULTI_POINT if registry.load_error(r.name) is not None
                   or r.name not in registry.names()]
        if not missing:
            raise ConfigProblem(str(exc)) from None
        if not allow_missing_plugins:
            raise ConfigProblem(f"the default profile cannot be built: plugin(s) {', '.join(missing)} "
                                "cannot be loaded", missing) from None
        from kschedfw.config.schema import API_VERSION, KIND
        disabled = "".join(f"      - name: {name}\n" for name in missing)
        text = (f"apiVersion: {API_VERSION}\nkind: {KIND}\nprofiles:\n- schedulerName: default-scheduler\n"
                f"  plugins:\n    multiPoint:\n      disabled:\n{disabled}")
        config, diagnostics = load_config_text(text, "<default minus missing plugins>", registry)
        if config is None:
            raise ConfigProblem("the default profile without the missing plugins cannot be built:\n"
                                + "\n".join(d.render() for d in diagnostics if d.is_error), missing) from None
        return config, f"default without {', '.join(missing)}"


# =========================================================================== the runner

def _labels_match(labels: dict[str, str], selector: dict[str, str]) -> bool:
    return all(labels.get(k) == v for k, v in selector.items())


def _cluster_scoped(kind: str) -> bool:
    from kschedfw.api._parse import CLUSTER_SCOPED_KINDS
    return kind in CLUSTER_SCOPED_KINDS


class WorkloadRunner:
    def __init__(self, unrolled: UnrolledWorkload, config: "SchedulerConfig", registry: "Registry",
                 options: RunOptions | None = None, *, profile_note: str = "default") -> None:
        self.unrolled = unrolled
        self.config = config
        self.registry = registry
        self.options = options or RunOptions()
        self.paced = self.options.pace == "wall"
        if self.options.pace not in ("wall", "instant"):
            raise ValueError(f"pace must be 'wall' or 'instant', not {self.options.pace!r}")
        tc, w = unrolled.test_case, unrolled.workload
        threshold = w.threshold_value
        self.result = WorkloadResult(test_case=tc.name, workload=w.name, profile_note=profile_note,
                                     feature_gates=dict(w.feature_gates),
                                     labels=list(dict.fromkeys((*tc.labels, *w.labels))),
                                     params=dict(w.params), threshold=threshold,
                                     warnings=list(unrolled.warnings))
        self.result.reference_workload, self.result.reference_threshold = reference_threshold(tc)
        self.names = NameGenerator(self.options.seed)
        # upstream numPodsScheduledPerNamespace: namespaces barriers may wait on -> expected pods
        self.expected: dict[str, int] = {}
        self.bound: dict[str, int] = {}  # namespace -> pods currently bound
        self.attempted: dict[str, set[str]] = {}  # namespace -> uids of unbound attempted pods
        self.next_node_index = 0
        self.collector: Measurement | None = None
        self._collector_selector: dict[str, str] = {}
        self._offset = 0.0
        self._next_due = 0.0
        self._timers_active = True
        self._profiler: cProfile.Profile | None = cProfile.Profile() if self.options.profile else None
        # the node order allocResourceClaims tries (upstream shuffles with an unseeded generator)
        self._alloc_rng = random.Random(f"scheduler_perf-alloc-{self.options.seed}")

    # ------------------------------------------------------------------ helpers
    def _say(self, text: str) -> None:
        if self.options.progress is not None:
            self.options.progress(text)

    @property
    def cluster(self) -> Any:
        return self.sim.cluster

    @property
    def scheduler(self) -> Any:
        return self.sim.scheduler

    @property
    def clock(self) -> Any:
        return self.sim.clock

    def _on_event(self, event: Any) -> None:
        """Per-namespace bookkeeping (upstream: the test's pod informer)."""
        if event.kind != "Pod":
            return
        old, new = event.old, event.new
        if event.type == "DELETED":
            ns = old.namespace
            if old.node_name:
                self.bound[ns] = self.bound.get(ns, 0) - 1
            else:
                s = self.attempted.get(ns)
                if s is not None:
                    s.discard(old.uid)
            return
        ns = new.namespace
        if new.node_name:
            if old is None or not old.node_name:
                self.bound[ns] = self.bound.get(ns, 0) + 1
                if old is not None:
                    s = self.attempted.get(ns)
                    if s is not None:
                        s.discard(new.uid)
                c = self.collector
                if c is not None and ns in c.namespaces and (
                        not self._collector_selector or _labels_match(new.labels, self._collector_selector)):
                    c.bound_pods += 1
                    c.bind_times.append(_perf())
        elif new.condition("PodScheduled") is not None:
            self.attempted.setdefault(ns, set()).add(new.uid)

    # ------------------------------------------------------------------ time
    def _tick(self) -> None:
        """Paced mode: let the simulated clock follow the wall clock; run what is due."""
        now = _perf() + self._offset
        clock = self.clock
        if now > clock.now():
            clock.set(now)
        if now >= self._next_due:
            self.scheduler.run_due()
            self._next_due = clock.now() + DUE_INTERVAL
        else:
            nt = self.cluster.next_timer()
            if nt is not None and nt <= now:
                self.cluster.run_due_timers()

    def _jump(self, when: float) -> None:
        now = self.clock.now()
        if when > now:
            self._offset += when - now
            self.clock.set(when)

    def _drive(self, done: Callable[[], bool], *, until: float | None = None,
               what: str | Callable[[], str] = "") -> None:
        """Run the scheduling loop until ``done()`` (or the simulated clock reaches ``until``).
        Raises :class:`OpFailed` when nothing can make progress any more."""
        if self._profiler is not None and self.collector is not None:
            self._profiler.enable()
        start, cpu_start = _perf(), time.process_time()
        try:
            self._drive_inner(done, until, what)
        finally:
            elapsed, cpu = _perf() - start, time.process_time() - cpu_start
            if self._profiler is not None and self.collector is not None:
                self._profiler.disable()
            if self.collector is not None:
                self.collector.sched_seconds += elapsed
                self.collector.sched_cpu_seconds += cpu

    def _drive_inner(self, done: Callable[[], bool], until: float | None,
                     what: str | Callable[[], str]) -> None:
        """The scheduler's own loop; this runner decides when it stops (``done``, ``until``), keeps
        the simulated clock on the wall clock when paced, and jumps it when the scheduler is idle."""
        sched, clock = self.scheduler, self.clock
        paced = self.paced
        tick = self._tick
        if paced:
            tick()
        last_bound, last_progress = sched.bound_count, clock.now()
        stuck_at: float | None = None

        def stop() -> bool:
            if paced:
                tick()
            return done() or (until is not None and clock.now() >= until)

        def idle(wake: float | None) -> bool:
            nonlocal last_bound, last_progress, stuck_at
            now = clock.now()
            if sched.bound_count != last_bound:
                last_bound, last_progress = sched.bound_count, now
            if until is not None:
                wake = until if wake is None else min(wake, until)
            if wake is None:
                raise OpFailed(self._stuck_message(what, "nothing left that could schedule them"))
            if wake - last_progress > self.options.stall_timeout:
                raise OpFailed(self._stuck_message(
                    what, f"no pod bound for {self.options.stall_timeout:g} simulated seconds"))
            if wake <= now:
                if stuck_at == now:  # a wakeup that moves nothing: step past it
                    wake = now + 0.001
                stuck_at = now
            self._jump(wake)
            self._next_due = clock.now() + DUE_INTERVAL
            return True

        sched.run(stop=stop, idle=idle)

    def _stuck_message(self, what: str | Callable[[], str], why: str) -> str:
        if callable(what):
            what = what()
        pending = self.scheduler.queue.pending_pods()
        parts = [f"{what}: {why}"]
        parts.append("queue: " + ", ".join(f"{k} {v}" for k, v in pending.items() if v))
        reasons = self.scheduler.queue.unschedulable_reasons()
        if reasons:
            top = sorted(reasons.items(), key=lambda kv: -kv[1])[:4]
            parts.append("rejected by: " + ", ".join(f"{plugin} ({n})" for (plugin, _), n in top))
        for ev in reversed(self.cluster.events):
            if ev.reason == "FailedScheduling":
                parts.append(f"last failure: {ev.object_key}: {ev.message[:300]}")
                break
        return "; ".join(parts)

    # ------------------------------------------------------------------ creation
    def _create(self, objects: Any) -> int:
        n = 0
        create, deliver = self.cluster.create, self.cluster.deliver
        start = _perf()
        try:
            for obj in objects:
                try:
                    create(obj)
                except (ValueError, LookupError) as exc:  # AdmissionError, Conflict
                    raise OpFailed(f"creating {type(obj).__name__} {getattr(obj, 'name', '?')}: {exc}") from None
                deliver()  # the informer hears of it before the next is created
                n += 1
        finally:
            if self.collector is not None:
                self.collector.create_seconds += _perf() - start
        return n

    def _ensure_namespace(self, ns: str, *, register: bool = True) -> None:
        if register and ns in self.expected:
            return
        if self.cluster.get("Namespace", ns) is None:
            self.cluster.create(parse_object({"apiVersion": "v1", "kind": "Namespace",
                                              "metadata": {"name": ns}}))
        if register:
            self.expected.setdefault(ns, 0)

    # ------------------------------------------------------------------ run
    def run(self) -> WorkloadResult:
        result = self.result
        unsupported = self.unrolled.unsupported
        if unsupported:
            result.status = "unsupported"
            result.error = "; ".join(f"op {o.index} {o.opcode}: {o.reason}" for o in unsupported)
            return result
        t0 = _perf()
        gates, warnings = effective_feature_gates(self.unrolled.workload.feature_gates, self.options.feature_gates)
        result.feature_gates = gates
        result.warnings.extend(warnings)
        # scheduler_perf's API server runs without Priority admission: its pods set priorities
        self.sim = Simulation(self.config, self.registry, seed=self.options.seed, feature_gates=gates,
                              admission_plugins=ADMISSION_PLUGINS - {"Priority"}, fast_paths=self.options.fast_paths)
        self.scheduler.attempt_log.enabled = self.scheduler.attempt_log.keep_failures = False
        self.cluster.watch(self._on_event)
        self._offset = self.clock.now() - _perf()
        first_measured = next((o.index for o in self.unrolled.ops if o.collects_metrics
                               or isinstance(o, StartCollectingMetrics)), None)
        init_state = contextlib.ExitStack()
        try:
            for op in self.unrolled.ops:
                if op.index == first_measured:
                    result.init_seconds = _perf() - t0
                    # as simulate does with a loaded cluster: what the init ops built stays out
                    # of cycle collection while the measured ops run (it is freed as usual)
                    init_state.enter_context(frozen())
                self._say(f"op {op.index}: {op.describe()}")
                start = _perf()
                note = ""
                try:
                    note = self._run_op(op) or ""
                finally:
                    result.ops.append(OpRecord(op.index, op.describe(), round(_perf() - start, 4), note))
            if self.collector is not None:
                result.warnings.append("startCollectingMetrics without stopCollectingMetrics: "
                                       "measured until the end")
                self._stop_collecting()
        except OpFailed as exc:
            result.status = "failed"
            result.error = f"op {op.index} ({op.describe()}): {exc}"
            if self.collector is not None:
                self._stop_collecting()
        except WorkloadError as exc:
            result.status = "error"
            result.error = f"op {op.index} ({op.describe()}): {exc}"
            self.collector = None
        except Exception as exc:  # a bug in a plugin or the core: report it, do not crash the run
            import traceback
            frame = traceback.extract_tb(exc.__traceback__)[-1]
            result.status = "error"
            result.error = (f"op {op.index} ({op.describe()}): {type(exc).__name__}: {exc} "
                            f"(at {frame.filename.rsplit('/', 1)[-1]}:{frame.lineno} in {frame.name})")
            self.collector = None
        finally:
            init_state.close()
            self._timers_active = False
            result.total_seconds = _perf() - t0
            if first_measured is None:
                result.init_seconds = result.total_seconds
            self._summarise()
        return result

    def _summarise(self) -> None:
        r, sched, cluster = self.result, self.scheduler, self.cluster
        r.nodes = len(cluster.list("Node"))
        pods = cluster.list("Pod")
        r.pods = len(pods)
        r.placements_digest = placements_digest(pods)
        r.total_bound = sched.bound_count
        r.pending_end = dict(sched.queue.pending_pods())
        r.attempts = sched.queue.scheduling_cycle
        r.simulated_seconds = self.clock.now()
        r.unschedulable_reasons = {plugin: n for (plugin, _), n in sched.queue.unschedulable_reasons().items()}
        for metric, counts in sched.batch_metrics.counters().items():
            for (_, label), n in counts.items():
                key = f"{metric}{{{label}}}"
                r.batch_counters[key] = r.batch_counters.get(key, 0) + n
        r.profile = self._profiler

    def _run_op(self, op: Op) -> str | None:
        if isinstance(op, CreateNodes):
            return self._create_nodes(op)
        if isinstance(op, CreateNamespaces):
            for ns in op.build(self.names):
                if self.cluster.get("Namespace", ns.name) is None:
                    self._create([ns])
                self.expected.setdefault(ns.name, 0)
            return None
        if isinstance(op, CreatePods):
            return self._create_pods(op)
        if isinstance(op, DeletePods):
            return self._delete_pods(op)
        if isinstance(op, Churn):
            return self._churn(op)
        if isinstance(op, Barrier):
            return self._barrier(op)
        if isinstance(op, Sleep):
            end = self.clock.now() + op.duration
            self._drive(lambda: False, until=end, what="sleep")
            return None
        if isinstance(op, CreateAny):
            if op.namespace:
                self._ensure_namespace(op.namespace)
            objs = op.build(self.names)
            for obj in objs:
                if op.namespace and _cluster_scoped(getattr(obj, "kind", type(obj).__name__)):
                    raise WorkloadError(f"namespace {op.namespace!r} set for {op.template.source}, but "
                                        f"{type(obj).__name__} is cluster-scoped")
            self._create(objs)
            return None
        if isinstance(op, CreateResourceClaims):
            self._ensure_namespace(op.namespace)
            self._create(op.template.build(i, op.count, "ResourceClaim") for i in range(op.count))
            return None
        if isinstance(op, CreateResourceDriver):
            nodes = matching_nodes(op.nodes, (n.name for n in self.cluster.list("Node")))
            self._create(driver_slices(op.driver_name, nodes, op.max_claims_per_node))
            return f"{len(nodes)} ResourceSlices"
        if isinstance(op, AllocResourceClaims):
            try:
                gates = {**self.unrolled.workload.feature_gates, **self.options.feature_gates}
                n = allocate_claims(self.cluster, op.namespace, gates, self._alloc_rng)
            except AllocationFailed as exc:
                raise OpFailed(str(exc)) from None
            self.cluster.deliver()
            return f"{n} claims allocated"
        if isinstance(op, UpdateAny):
            return self._update_any(op)
        if isinstance(op, StartCollectingMetrics):
            if self.collector is not None:
                raise WorkloadError("metrics collection is overlapping")
            for ns in op.namespaces:
                self._ensure_namespace(ns)
            self._start_collecting(op.name or f"op {op.index}", op.namespaces, None, op.label_selector)
            return None
        if isinstance(op, StopCollectingMetrics):
            if self.collector is None:
                raise WorkloadError("missing startCollectingMetrics operation before stopping")
            self._stop_collecting()
            return None
        if isinstance(op, UnsupportedOp):
            raise WorkloadError(op.reason)
        raise WorkloadError(f"op {op.opcode} is not implemented")

    # ------------------------------------------------------------------ nodes
    def _create_nodes(self, op: CreateNodes) -> str | None:
        nodes: list[Node] = op.build(self.names)
        strategy = op.label_strategy or op.unique_label_strategy or op.allocatable_strategy
        csi_nodes = []
        if strategy is not None:
            # upstream: list all nodes (sorted by name) and prepare items [nextNodeIndex, +count)
            new_by_name = {n.name: i for i, n in enumerate(nodes)}
            all_names = sorted([n.name for n in self.cluster.list("Node")] + list(new_by_name))
            targets = all_names[self.next_node_index:self.next_node_index + op.count]
            rr = 0
            updates = []
            for name in targets:
                node = nodes[new_by_name[name]] if name in new_by_name else self.cluster.get("Node", name)
                if op.label_strategy is not None:
                    values = op.label_strategy["labelValues"]
                    node = node.with_labels({**node.labels, op.label_strategy["labelKey"]: values[rr]})
                    rr = (rr + 1) % len(values)
                elif op.unique_label_strategy is not None:
                    node = node.with_labels({**node.labels, op.unique_label_strategy["labelKey"]: self.names.uid()})
                else:
                    alloc = op.allocatable_strategy
                    assert alloc is not None
                    extra = parse_resource_list(alloc["nodeAllocatable"], field="nodeAllocatable")
                    node = node.with_allocatable({**node.allocatable, **extra})
                    if alloc["csiNodeAllocatable"] or alloc["migratedPlugins"]:
                        csi_nodes.append(self._csi_node(name, alloc))
                if name in new_by_name:
                    nodes[new_by_name[name]] = node
                else:
                    updates.append(node)
            for node in updates:
                self.cluster.update(node)
        self._create(nodes)
        for csi in csi_nodes:
            existing = self.cluster.get("CSINode", csi.name)
            if existing is None:
                self._create([csi])
            else:
                self.cluster.update(csi)
        self.next_node_index += op.count
        return None

    @staticmethod
    def _csi_node(name: str, alloc: dict) -> Any:
        drivers = []
        for driver, allocatable in alloc["csiNodeAllocatable"].items():
            d: dict[str, Any] = {"name": driver, "nodeID": name}
            if isinstance(allocatable, dict):
                count = allocatable.get("count", allocatable.get("Count"))
                if count is not None:
                    d["allocatable"] = {"count": count}
            drivers.append(d)
        return parse_object({"apiVersion": "storage.k8s.io/v1", "kind": "CSINode",
                             "metadata": {"name": name, "annotations": {
                                 MIGRATED_PLUGINS_ANNOTATION: ",".join(alloc["migratedPlugins"])}},
                             "spec": {"drivers": drivers}})

    # ------------------------------------------------------------------ pods
    def _start_collecting(self, name: str, namespaces: list[str], expected: int | None,
                          selector: dict[str, str] | None = None) -> None:
        self.collector = Measurement(name=name, namespaces=list(namespaces), expected_pods=expected,
                                     start=_perf())
        self._collector_selector = dict(selector or {})

    def _stop_collecting(self) -> None:
        c = self.collector
        assert c is not None
        # binds already stored but not yet heard (a label-selector barrier reads the store) count
        self.cluster.deliver()
        end = _perf()
        c.wall_seconds = end - c.start
        c.sampled_average = upstream_sampled_average(c.bind_times, c.start, end)
        self.result.measurements.append(c)
        self.collector = None

    def _create_pods(self, op: CreatePods) -> str | None:
        ns = op.namespace
        self._ensure_namespace(ns)
        if op.collect_metrics:
            if self.collector is not None:
                raise WorkloadError("metrics collection is overlapping: a second collector was started "
                                    "before stopping the previous one")
            self._start_collecting(f"{op.index} createPods {ns}", [ns], op.count)
        self._create(self._pod_objects(op))
        if op.skip_wait:
            self.expected[ns] = self.expected.get(ns, 0) + op.count
        elif op.steady_state:
            self._steady_state(op)
        else:
            count = op.count
            bound = self.bound
            self._drive(lambda: bound.get(ns, 0) >= count,
                        what=lambda: f"waiting for {count} pods in {ns} to be scheduled "
                                     f"({bound.get(ns, 0)} bound)")
        if op.collect_metrics:
            self._stop_collecting()
        return None

    def _pod_objects(self, op: CreatePods) -> Iterable[Any]:
        """The op's pods, each after its bound claim and volume when the op names volume templates."""
        pods = op.factory(self.names)
        if op.pvc_template is None:
            return pods

        def with_volumes() -> Iterator[Any]:
            for i in range(op.count):
                yield from op.volume_objects(i)
                yield pods.one(i)
        return with_volumes()

    def _steady_state(self, op: CreatePods) -> None:
        """Upstream ``createPodsSteadily``: whenever the whole batch is bound, delete it and create
        the next one, until ``duration`` is over."""
        if not self.paced:
            raise WorkloadError("steadyState runs for a duration of (wall-clock paced) time: use pace='wall'")
        ns, count = op.namespace, op.count
        self._tick()  # the clock catches up with the wall time the ops before spent: the duration starts now
        end = self.clock.now() + op.duration
        bound = self.bound
        total = 0
        while True:
            before = bound.get(ns, 0)
            self._drive(lambda: bound.get(ns, 0) >= count, until=end,
                        what=f"steady state in {ns}")
            total += bound.get(ns, 0) - before
            if self.clock.now() >= end:
                break
            for pod in self.cluster.list("Pod", ns):
                try:
                    self.cluster.delete_pod(pod, grace_period_seconds=0)
                except NotFound:
                    pass
            self._create(op.factory(self.names))
        if total == 0:
            raise OpFailed("no pod at all got scheduled, either because of a problem or because "
                           "the test interval was too small")

    def _delete_pods(self, op: DeletePods) -> str | None:
        victims = [p for p in self.cluster.list("Pod", op.namespace)
                   if _labels_match(p.labels, op.label_selector)]
        cluster = self.cluster
        state = {"left": len(victims)}

        def delete(pod: Any) -> None:
            state["left"] -= 1
            if not self._timers_active:
                return
            current = cluster.get("Pod", pod.name, pod.namespace)
            if current is not None and current.uid == pod.uid:
                try:
                    cluster.delete_pod(current)
                except NotFound:
                    pass

        if op.per_second > 0:
            now = self.clock.now()
            step = 1.0 / op.per_second
            for i, pod in enumerate(victims):
                cluster.call_at(now + (i + 1) * step, lambda pod=pod: delete(pod))
            if not op.skip_wait:
                self._drive(lambda: state["left"] <= 0, what=f"deleting pods in {op.namespace}")
        else:
            for pod in victims:
                delete(pod)
        return f"{len(victims)} pods"

    def _barrier(self, op: Barrier) -> str | None:
        namespaces = op.namespaces or list(self.expected)
        for ns in namespaces:
            if ns not in self.expected:
                raise WorkloadError(f"unknown namespace {ns}")
        expected, bound, attempted, sel = self.expected, self.bound, self.attempted, op.label_selector

        if sel:
            def count(ns: str) -> int:
                pods = [p for p in self.cluster.list("Pod", ns) if _labels_match(p.labels, sel)]
                if op.stage == "Attempted":
                    return sum(1 for p in pods if p.node_name or p.condition("PodScheduled") is not None)
                return sum(1 for p in pods if p.node_name)
        elif op.stage == "Attempted":
            def count(ns: str) -> int:
                return bound.get(ns, 0) + len(attempted.get(ns, ()))
        else:
            def count(ns: str) -> int:
                return bound.get(ns, 0)

        self._drive(lambda: all(count(ns) >= expected[ns] for ns in namespaces),
                    what=f"barrier ({op.stage}) on {', '.join(namespaces) or 'no namespace'}")
        if op.stage == "Scheduled":
            if not op.namespaces:
                self.expected.clear()
            else:
                for ns in op.namespaces:
                    self.expected.pop(ns, None)
        return None

    # ------------------------------------------------------------------ updates
    def _update_any(self, op: UpdateAny) -> str | None:
        """Upstream ``updateAny``: object ``i`` of the template written over the stored one, all at
        once or one every ``1/per_second`` seconds (the op waits for the last)."""
        if op.namespace:
            self._ensure_namespace(op.namespace)
        state = {"left": op.count}

        def update(i: int) -> None:
            state["left"] -= 1
            if self._timers_active:
                self._update_one(op, i)
                self.cluster.deliver()

        if op.per_second > 0:
            now, step = self.clock.now(), 1.0 / op.per_second
            for i in range(op.count):
                self.cluster.call_at(now + (i + 1) * step, lambda i=i: update(i))
            self._drive(lambda: state["left"] <= 0, what=f"updating {op.count} objects of {op.template.source}")
        else:
            for i in range(op.count):
                update(i)
        return f"{op.count} updates"

    def _update_one(self, op: UpdateAny, i: int) -> None:
        d = op.template.data(i, op.count)
        kind = str(d.get("kind") or "")
        scoped = _cluster_scoped(kind)
        if op.namespace and scoped:
            raise WorkloadError(f"namespace {op.namespace!r} set for {op.template.source}, but {kind} is cluster-scoped")
        if not op.namespace and not scoped:
            raise WorkloadError(f"namespace not set for {op.template.source}, but {kind} is namespaced")
        name = str((d.get("metadata") or {}).get("name") or "")
        current = self.cluster.get(kind, name, op.namespace)
        if current is None:
            raise OpFailed(f"updating {kind} {op.namespace + '/' if op.namespace else ''}{name}: not found")
        if op.namespace:
            d["metadata"] = {**(d.get("metadata") or {}), "namespace": op.namespace}
        try:
            states = update_states(kind, current.raw, d, op.subresources)
        except UpdateRefused as exc:
            raise OpFailed(f"updating {kind} {name}: {exc}") from None
        for manifest in states:
            try:
                obj = parse_object(manifest, source=op.template.source, template=True)
            except ManifestError as exc:
                raise WorkloadError(str(exc)) from None
            obj = attrs.evolve(obj, uid=current.uid) if getattr(obj, "uid", current.uid) != current.uid else obj
            if kind == "Pod":
                obj = self._admitted_update(obj)
            try:
                self.cluster.update(obj)
            except (ValueError, LookupError) as exc:
                raise OpFailed(f"updating {kind} {name}: {exc}") from None

    def _admitted_update(self, pod: Any) -> Any:
        """The pod as the API server's defaults and admission (on updates, as on creates, bar
        Priority, which only admits new pods) leave it."""
        from kschedfw.cluster.apiserver.podadmission import admit_new_pod
        cluster = self.cluster
        return admit_new_pod(pod, priority_classes=(), runtime_class=lambda name: cluster.get("RuntimeClass", name),
                             limit_ranges=cluster.list("LimitRange", pod.namespace), gates=cluster.feature_gates,
                             plugins=cluster.admission_plugins - {"Priority"})

    # ------------------------------------------------------------------ churn
    def _churn(self, op: Churn) -> str | None:
        self._ensure_namespace(op.namespace, register=False)
        cluster, names = self.cluster, self.names

        def make(tmpl: Any) -> Any:
            d = tmpl.data()
            kind = str(d.get("kind") or "")
            meta = dict(d.get("metadata") or {})
            ns = "" if _cluster_scoped(kind) else op.namespace
            if ns:
                meta["namespace"] = ns
            if not meta.get("name"):
                meta["name"] = names.generate(kind, ns, meta.get("generateName") or "churn-")
            d["metadata"] = meta
            try:
                return parse_object(d, source=tmpl.source, template=True)
            except ManifestError as exc:
                raise WorkloadError(str(exc)) from None

        def create(tmpl: Any) -> tuple[str, str, str] | None:
            obj = make(tmpl)
            try:
                cluster.create(obj)
            except (ValueError, LookupError):
                return None
            kind = getattr(obj, "kind", None) or type(obj).__name__
            return kind, obj.name, getattr(obj, "namespace", "") or ""

        def remove(ref: tuple[str, str, str]) -> None:
            kind, name, ns = ref
            obj = cluster.get(kind, name, ns)
            if obj is None:
                return
            try:
                if kind == "Pod":
                    cluster.delete_pod(obj)
                else:
                    cluster.remove(kind, name, ns)
            except NotFound:
                pass

        state = {"count": 0}
        slots: list[list[tuple[str, str, str] | None]] = [[None] * max(op.number, 1) for _ in op.templates]
        limit = op.number if op.number > 0 else None

        def tick() -> None:
            if not self._timers_active:
                return
            c = state["count"]
            if op.mode == "create":
                if limit is not None and c >= limit:
                    return
                for tmpl in op.templates:
                    create(tmpl)
            else:
                for i, tmpl in enumerate(op.templates):
                    slot = c % op.number
                    ref = slots[i][slot]
                    if ref is not None:
                        remove(ref)
                        slots[i][slot] = None
                    else:
                        slots[i][slot] = create(tmpl)
            state["count"] = c + 1
            cluster.call_at(self.clock.now() + op.interval, tick)

        cluster.call_at(self.clock.now() + op.interval, tick)
        return None


# =========================================================================== measuring

def upstream_sampled_average(bind_times: list[float], start: float, end: float,
                             interval: float = SAMPLE_INTERVAL) -> float | None:
    """Upstream's ``throughputCollector``: sample the bound count every ``interval`` seconds
    from ``start``; skip samples before the first bind and the first non-empty sample; an
    interval without binds is merged into the next one; the average of the per-interval rates
    (each repeated once per merged interval). None when there are fewer than two samples."""
    if not bind_times:
        return None
    times = sorted(bind_times)
    samples: list[float] = []
    started = False
    last_count, last_t, skipped = 0, start, 0
    k = 1
    while start + k * interval <= end:
        t = start + k * interval
        k += 1
        scheduled = bisect.bisect_right(times, t)
        if scheduled == 0:
            continue
        if not started:
            started, last_count, last_t = True, scheduled, t
            continue
        new = scheduled - last_count
        if new == 0:
            skipped += 1
            continue
        rate = new / (t - last_t)
        samples.extend([rate] * (skipped + 1))
        last_count, last_t, skipped = scheduled, t, 0
    return sum(samples) / len(samples) if samples else None


def run_workload(unrolled: UnrolledWorkload, registry: "Registry", *, config: "SchedulerConfig | None" = None,
                 config_path: str | None = None, allow_missing_plugins: bool = False,
                 options: RunOptions | None = None) -> WorkloadResult:
    """Build the configuration (``config``, ``config_path``, the test case's
    ``schedulerConfigPath`` or the default profile) and run ``unrolled``. Problems become the
    result's ``status``/``error`` rather than exceptions."""
    tc = unrolled.test_case
    note = "given"
    if config is None:
        path = config_path
        if path is None and tc.scheduler_config_path:
            path = str(tc.resolve(tc.scheduler_config_path))
        try:
            config, note = build_config(registry, path, allow_missing_plugins=allow_missing_plugins)
        except ConfigProblem as exc:
            r = WorkloadResult(test_case=tc.name, workload=unrolled.workload.name, status="error",
                               error=str(exc), feature_gates=dict(unrolled.workload.feature_gates),
                               params=dict(unrolled.workload.params),
                               threshold=unrolled.workload.threshold_value,
                               warnings=list(unrolled.warnings))
            r.reference_workload, r.reference_threshold = reference_threshold(tc)
            return r
    runner = WorkloadRunner(unrolled, config, registry, options, profile_note=note)
    return runner.run()
