"""The per-profile runtime: plugins built once, their hooks compiled into one plan object.

pluggy is the registry and the validator; the compiled :class:`~kschedfw.framework.plans.Plans`
hold bound methods in profile order, so per-node work (Filter, Score) is a plain Python call.
Every plugin call is guarded: an exception, a return value of the wrong type or a bad score
becomes an Error status naming the plugin, the extension point and what came back, never a crash
of the scheduling loop (see ``plugin_results``).

:class:`Framework` is the profile's public face, as upstream's frameworkImpl: it builds the Handle
(from a factory, before any plugin sees it) and the plugins, compiles the plans
(:func:`~kschedfw.framework.plans.compile_plans`, from the extension-point table) and, once
instrumented, their timed copy; each ``run_*`` picks the plain or the timed plans for its cycle
and hands them to a runner of one job: :class:`~kschedfw.framework.points.ExtensionPoints` the
once-per-call points, :class:`~kschedfw.framework.filtering.NodeFiltering` Filter (with
:mod:`~kschedfw.framework.nominated`, the nominated-pods pass),
:class:`~kschedfw.framework.scoring.NodeScoring` Score,
:class:`~kschedfw.framework.placement_points.PlacementPoints` a pod group's PlacementGenerate
and PlacementScore. :mod:`~kschedfw.framework.instrumented`
observes the extension points' durations around the ``run_*`` methods.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any, Callable, Collection, Hashable, Mapping

import pluggy

from kschedfw.fwk import hookspecs
from kschedfw.fwk.cycle_state import CycleState
from kschedfw.fwk.features import enabled as gate_enabled
from kschedfw.fwk.podgroup import Placement, PlacementPluginScores, PodGroupAssignments
from kschedfw.fwk.status import Status
from kschedfw.fwk.types import NodeInfo, NodePluginScores, NodeToStatus, PostFilterResult, PreFilterResult
from kschedfw.framework.batch import BatchMetrics, OpportunisticBatch, PodSignature
from kschedfw.framework.filtering import NodeFiltering
from kschedfw.framework.guard import PluginFaults
from kschedfw.framework.handle import Handle, HandleFactory
from kschedfw.framework.instrumented import OBSERVED_POINTS, Instrumentation, Observe, extension_point
from kschedfw.framework.nominated import NominatedPods
from kschedfw.framework.plans import FrameworkError, Hint, Plan, Plans, compile_plans
from kschedfw.framework.placement_points import PlacementPoints
from kschedfw.framework.points import SCHEDULER_NAME_SIGNER_NAME, ExtensionPoints
from kschedfw.framework.registry import Registry, implemented_hooks
from kschedfw.framework.scoring import NodeScoring
from kschedfw.framework.waiting_pods import WaitingPod

if TYPE_CHECKING:
    from kschedfw.api import Pod
    from kschedfw.config.expand import ResolvedProfile
    from kschedfw.framework.recorder import CycleRecorder
    from kschedfw.fwk.cycle_state import PodGroupCycleState
    from kschedfw.fwk.podgroup import PodGroupInfo

__all__ = ["Framework", "FrameworkError", "SCHEDULER_NAME_SIGNER_NAME", "ERR_POST_FILTERS_SKIPPED"]

ERR_POST_FILTERS_SKIPPED = "All PostFilter plugins are skipped"


class Framework:
    """One scheduling profile: its plugin instances, its compiled :class:`Plans`, and the runners
    of its extension points, each given the plans it runs.

    ``fast_paths`` (the default) lets the runtime keep per-node results between cycles (the
    nominated-pods pass's clones and outcomes, see :mod:`~kschedfw.framework.nominated`), use
    the plugins' declared whole-list forms (:mod:`kschedfw.fwk.hookspecs`), and lets the plugins keep
    their own memos (``Handle.fast_paths``); off, every cycle works everything out afresh node by
    node, to check that both give the same results.
    """

    def __init__(self, profile: "ResolvedProfile", registry: Registry, *, handle: HandleFactory = Handle,
                 fast_paths: bool = True, batch_metrics: BatchMetrics | None = None,
                 faults: PluginFaults | None = None) -> None:
        """``handle`` builds the plugins' Handle, given this runtime first thing, so the plugins'
        constructors see every facet (``Handle.factory(snapshot=...)`` for tests and tools; the
        scheduler's is :func:`kschedfw.framework.profile.new_profile`'s). ``faults``: where the
        guard reports plugin faults (a test kit keeps them; by default they are logged)."""
        if isinstance(handle, Handle):
            raise TypeError("a profile's runtime builds its own Handle: give Handle.factory(...) with its facets, "
                            "not a Handle")
        self.profile = profile
        self.profile_name = profile.scheduler_name
        self.fast_paths = fast_paths
        self.handle = handle(framework=self, profile_name=profile.scheduler_name, fast_paths=fast_paths)
        self.percentage_of_nodes_to_score = profile.percentage_of_nodes_to_score
        self.plugins: dict[str, Any] = {}
        self.faults = faults if faults is not None else PluginFaults()
        #: the compiled plans (none until the plugins are built), and their timed copy once
        #: instrumented, which the cycles that record plugin metrics run (:meth:`_plans`)
        self.plans = Plans()
        self._timed: Plans | None = None
        #: where durations go and each extension point's observer, once instrumented
        self.instrumentation: Instrumentation | None = None
        self.point_observers: dict[str, Observe] | None = None
        self.nominated = NominatedPods(self.handle, self.run_filter_plugins,
                                       self.run_pre_filter_extension_add_pod, keep=fast_paths)
        self._points = ExtensionPoints(self.faults)
        self._filtering = NodeFiltering(self.faults, self.nominated, fast_paths=fast_paths,
                                        outcomes=self.handle.node_memo())
        self._scoring = NodeScoring(self.faults)
        self._placements = PlacementPoints(self.faults)
        pm = pluggy.PluginManager("kschedfw")
        pm.add_hookspecs(hookspecs)
        used: list[str] = []
        for entries in profile.plugins.values():
            for entry in entries:
                if entry.name not in used:
                    used.append(entry.name)
        #: plugin name -> the hooks its class implements, read once
        hooks: dict[str, frozenset[str]] = {}
        for name in used:
            try:
                cls = registry.load(name)
            except KeyError:
                raise FrameworkError(f'plugin "{name}" does not exist') from None
            except Exception as exc:
                raise FrameworkError(str(exc)) from None
            args = dict(profile.plugin_args.get(name, {}))
            try:
                instance = cls(args, self.handle)
            except Exception as exc:
                raise FrameworkError(f'initializing plugin "{name}": {exc}') from None
            pm.register(instance, name=name)
            self.plugins[name] = instance
            hooks[name] = frozenset(implemented_hooks(type(instance)))
        pm.check_pending()
        self.plans = compile_plans(profile, self.plugins, hooks, pm, fast_paths=fast_paths,
                                   workload_aware_preemption=gate_enabled(self.handle.feature_gates,
                                                                          "WorkloadAwarePreemption"))
        #: gate OpportunisticBatching: this profile's batch (None with the gate off)
        self.batch: OpportunisticBatch | None = None
        if gate_enabled(self.handle.feature_gates, "OpportunisticBatching"):
            self.batch = OpportunisticBatch(self.profile_name, self.handle.clock.now, batch_metrics)

    def instrument(self, instrumentation: Instrumentation) -> None:
        """Compile the timed plans against ``instrumentation`` (:meth:`Plans.timed`), for the
        cycles that record plugin metrics, and an observer per extension point for every run
        (upstream instrumented_plugins.go and the duration each Run*Plugins observes)."""
        self._timed = self.plans.timed(instrumentation)
        self.instrumentation = instrumentation
        self.point_observers = {point: instrumentation.extension_point_observer(point, self.profile_name)
                                for point in OBSERVED_POINTS}
        if self.batch is not None:
            self.batch.instrument(instrumentation)

    def _plans(self, state: CycleState) -> Plans:
        """The plans a cycle runs: the timed copy when it records plugin metrics (upstream
        CycleState.ShouldRecordPluginMetrics), else the plain ones."""
        timed = self._timed
        return timed if timed is not None and state.record_plugin_metrics else self.plans

    # ------------------------------------------------------------------ queue side
    @property
    def less(self) -> Callable[[Any, Any], bool]:
        """The QueueSort plugin's ``less`` (arrival order without one)."""
        return self.plans.less

    @property
    def queue_sort_key(self) -> Callable[[Any], Any] | None:
        """The QueueSort plugin's optional ``sort_key``, which orders exactly like its ``less``."""
        return self.plans.queue_sort_key

    @extension_point("PreEnqueue", None)  # called by the queue, as upstream's is
    def run_pre_enqueue_plugins(self, pod: "Pod", gating_plugin: str = "") -> Status | None:
        """First non-success; the plugin that gated the pod last time runs first, as upstream."""
        return self._points.run_pre_enqueue_plugins(self.plans, pod, gating_plugin)

    def sign_pod(self, pod: "Pod") -> PodSignature:
        """Upstream SignPod (see :meth:`ExtensionPoints.sign_pod`)."""
        return self._points.sign_pod(self.plans, pod)

    def queueing_hints(self) -> list[Hint]:
        return list(self.plans.hints)

    def pre_enqueue_plugin_names(self) -> frozenset[str]:
        return frozenset(name for name, _ in self.plans.pre_enqueue)

    # ------------------------------------------------------------------ scheduling cycle
    @extension_point("PreFilter", 1)
    def run_pre_filter_plugins(self, state: CycleState, pod: "Pod", nodes: list[NodeInfo]
                               ) -> tuple[PreFilterResult | None, Status | None, set[str]]:
        """Upstream RunPreFilterPlugins: (merged result, status, plugins). On a rejection the
        plugins are those that rejected; on success, those whose result narrowed the nodes."""
        return self._points.run_pre_filter_plugins(self._plans(state), state, pod, nodes)

    def run_pre_filter_extension_add_pod(self, state: CycleState, pod: "Pod", pod_to_add: "Pod",
                                         node_info: NodeInfo) -> Status | None:
        return self._points.run_pre_filter_extension_add_pod(self._plans(state), state, pod, pod_to_add, node_info)

    def run_pre_filter_extension_remove_pod(self, state: CycleState, pod: "Pod", pod_to_remove: "Pod",
                                            node_info: NodeInfo) -> Status | None:
        return self._points.run_pre_filter_extension_remove_pod(self._plans(state), state, pod, pod_to_remove,
                                                                node_info)

    def run_filter_plugins(self, state: CycleState, pod: "Pod", node_info: NodeInfo) -> Status | None:
        """Upstream RunFilterPlugins: stop at the first non-success on this node. Per node (the
        nominated-pods pass, preemption's dry runs): the plan is read here, in one call."""
        plan = state.filter_plan
        if plan is None:
            plan = NodeFiltering.filters_to_run(self._plans(state), state)
        return self._filtering.filter_one(state, pod, node_info, plan, None)

    def run_filter_plugins_with_nominated_pods(self, state: CycleState, pod: "Pod",
                                               node_info: NodeInfo) -> Status | None:
        """Two passes when higher-or-equal priority pods are nominated to this node, as upstream's
        RunFilterPluginsWithNominatedPods: once with them added, once without."""
        return self.nominated.run(state, pod, node_info, NodeFiltering.add_pod_extensions(self._plans(state), state))

    def nominated_pods_to_add(self, state: CycleState, pod: "Pod", node_name: str) -> list["Pod"]:
        """See :meth:`NominatedPods.pods_to_add` (what the Handle calls directly: preemption's
        dry run asks once per node with nominations)."""
        return self.nominated.pods_to_add(state, pod, node_name)

    def filter_plugins_to_run(self, state: CycleState) -> Plan:
        """The Filter plugins this cycle runs (those PreFilter did not skip)."""
        return NodeFiltering.filters_to_run(self._plans(state), state)

    def pre_filter_extensions_to_run(self, state: CycleState) -> tuple[str, ...]:
        """The PreFilter plugins with an AddPod or RemovePod extension that did not skip."""
        plans = self._plans(state)
        skip = state.skip_filter_plugins
        names: list[str] = []
        for name, _ in (*plans.pre_filter_add_pod, *plans.pre_filter_remove_pod):
            if name not in skip and name not in names:
                names.append(name)
        return tuple(names)

    def filter_verdict_key(self, state: CycleState, pod: "Pod") -> Hashable | None:
        """See :meth:`NodeFiltering.filter_verdict_key`, over the Filter plugins this cycle runs."""
        plans = self._plans(state)
        return self._filtering.filter_verdict_key(plans, NodeFiltering.filters_to_run(plans, state), state, pod)

    def filter_nodes(self, state: CycleState, pod: "Pod", nodes: list[NodeInfo], start: int, to_find: int,
                     nominated_nodes: Collection[str] = ()
                     ) -> tuple[list[NodeInfo], list[tuple[NodeInfo, Status]], Status | None]:
        """See :meth:`NodeFiltering.filter_nodes` (the cycle's Filter over the snapshot's nodes)."""
        return self._filtering.filter_nodes(self._plans(state), state, pod, nodes, start, to_find, nominated_nodes)

    @extension_point("PostFilter", 1)
    def run_post_filter_plugins(self, state: CycleState, pod: "Pod", node_to_status: NodeToStatus
                                ) -> tuple[PostFilterResult | None, Status]:
        """Upstream RunPostFilterPlugins: first Success or UAU wins; rejections' messages join.
        None runs in a state that skips them all (workload-aware preemption's reruns)."""
        if state.skip_all_post_filter_plugins:
            return None, Status.unschedulable(ERR_POST_FILTERS_SKIPPED)
        return self._points.run_post_filter_plugins(self._plans(state), state, pod, node_to_status)

    @extension_point("PreScore", None)
    def run_pre_score_plugins(self, state: CycleState, pod: "Pod", nodes: list[NodeInfo]) -> Status | None:
        return self._points.run_pre_score_plugins(self._plans(state), state, pod, nodes)

    @extension_point("Score", 1)
    def run_score_plugins(self, state: CycleState, pod: "Pod", nodes: list[NodeInfo]
                          ) -> tuple[list[NodePluginScores], Status | None]:
        """See :meth:`NodeScoring.run_score_plugins` (per node, each plugin's weighted score)."""
        return self._scoring.run_score_plugins(self._plans(state), state, pod, nodes)

    @extension_point("Score", 1)
    def run_score_plugins_totals(self, state: CycleState, pod: "Pod", nodes: list[NodeInfo],
                                 recorder: "CycleRecorder | None" = None, *, names: list[str] | None = None
                                 ) -> tuple[list[int], Status | None]:
        """See :meth:`NodeScoring.run_score_plugins_totals` (each node's weighted total)."""
        return self._scoring.run_score_plugins_totals(self._plans(state), state, pod, nodes, recorder, names=names)

    @extension_point("Reserve", None)
    def run_reserve_plugins_reserve(self, state: CycleState, pod: "Pod", node_name: str) -> Status | None:
        return self._points.run_reserve_plugins_reserve(self._plans(state), state, pod, node_name)

    @extension_point("Unreserve", "")
    def run_reserve_plugins_unreserve(self, state: CycleState, pod: "Pod", node_name: str) -> None:
        self._points.run_reserve_plugins_unreserve(self._plans(state), state, pod, node_name)

    @extension_point("Permit", 0)
    def run_permit_plugins(self, state: CycleState, pod: "Pod", node_name: str, now: float
                           ) -> tuple[Status | None, dict[str, float]]:
        """Returns (status, {plugin: timeout}) — Wait when any plugin asked to wait."""
        return self._points.run_permit_plugins(self._plans(state), state, pod, node_name, now)

    def new_waiting_pod(self, pod: "Pod", node_name: str, waits: dict[str, float], now: float,
                        on_resolved: Callable[[WaitingPod], None]) -> WaitingPod:
        wp = WaitingPod(pod, node_name, {p: now + t for p, t in waits.items()}, on_resolved)
        wp.timeouts = dict(waits)
        return wp

    # ------------------------------------------------------------------ pod-group cycle
    def _placement_plans(self, state: "PodGroupCycleState") -> Plans:
        """The placement points' plans: timed when the pod-group cycle records plugin metrics."""
        timed = self._timed
        return timed if timed is not None and state.should_record_plugin_metrics() else self.plans

    @extension_point("PlacementGenerate", 1)
    def run_placement_generate_plugins(self, state: "PodGroupCycleState", pod_group: "PodGroupInfo",
                                       nodes: list[NodeInfo]) -> tuple[list[Placement], Status | None]:
        """See :meth:`PlacementPoints.run_placement_generate_plugins` (the candidate placements)."""
        return self._placements.run_placement_generate_plugins(self._placement_plans(state), state, pod_group,
                                                               nodes)

    @extension_point("PlacementScore", 1)
    def run_placement_score_plugins(self, state: "PodGroupCycleState", pod_group: "PodGroupInfo",
                                    placements_assignments: list[PodGroupAssignments]
                                    ) -> tuple[list[PlacementPluginScores], Status | None]:
        """See :meth:`PlacementPoints.run_placement_score_plugins` (per placement, each plugin's
        weighted score and the total)."""
        return self._placements.run_placement_score_plugins(self._placement_plans(state), state, pod_group,
                                                            placements_assignments)

    def has_placement_generate_plugins(self) -> bool:
        return bool(self.plans.placement_generate)

    def pod_group_post_filter_plugins(self) -> list[Callable[..., Status]]:
        """Upstream PodGroupPostFilterPlugins: DefaultPreemption's ``pod_group_post_filter``
        alone, with WorkloadAwarePreemption on (else none), each call guarded: ``(pod_group,
        pods, scheduling_func) -> Status``."""
        return [functools.partial(self._points.run_pod_group_post_filter, name, fn)
                for name, fn in self.plans.pod_group_post_filter]

    # ------------------------------------------------------------------ binding cycle
    @extension_point("PreBindPreFlight", None)
    def run_pre_bind_pre_flights(self, state: CycleState, pod: "Pod", node_name: str) -> Status | None:
        """Success if any plugin has PreBind work, Skip if none; Skip marks a plugin's PreBind skipped."""
        return self._points.run_pre_bind_pre_flights(self._plans(state), state, pod, node_name)

    @extension_point("PreBind", None)
    def run_pre_bind_plugins(self, state: CycleState, pod: "Pod", node_name: str) -> Status | None:
        return self._points.run_pre_bind_plugins(self._plans(state), state, pod, node_name)

    @extension_point("Bind", None)
    def run_bind_plugins(self, state: CycleState, pod: "Pod", node_name: str) -> Status:
        return self._points.run_bind_plugins(self._plans(state), state, pod, node_name)

    @extension_point("PostBind", "")
    def run_post_bind_plugins(self, state: CycleState, pod: "Pod", node_name: str) -> None:
        self._points.run_post_bind_plugins(self._plans(state), state, pod, node_name)

    # ------------------------------------------------------------------ introspection
    def has_filter_plugins(self) -> bool:
        return bool(self.plans.filter)

    def has_score_plugins(self) -> bool:
        return bool(self.plans.score)

    def has_post_filter_plugins(self) -> bool:
        return bool(self.plans.post_filter)

    def list_plugins(self) -> Mapping[str, list[str]]:
        return {point: [e.name for e in entries] for point, entries in self.profile.plugins.items()}
