"""The kschedfw plugin contract: one hook per extension point of the Kubernetes scheduler framework.

A plugin is a class with a ``name`` (the CamelCase name used in KubeSchedulerConfiguration YAML),
optionally an ``args_schema`` (JSON Schema with defaults) and ``validate_args``, a constructor
``__init__(self, args, handle)`` and any of the hooks below, each marked with
``@kschedfw.hookimpl``. The hooks a class implements are the extension points it extends; a
profile then chooses, orders and weights plugins per point. One instance is built per profile.
As with any pluggy hook, an implementation may take any subset of its spec's arguments, by name
and in any order (``def filter(self, pod, node_info)``); a name the spec does not have is refused
when the plugin loads.

Hooks are grouped in the order a pod meets them::

    queue:       pre_enqueue -> less ; events_to_register + queueing_hint (requeue decisions)
    scheduling:  pre_filter -> (pre_filter_add_pod / pre_filter_remove_pod) -> filter
                 -> post_filter (only when no node fits) -> pre_score -> score -> normalize_score
                 -> reserve -> permit
    binding:     pre_bind_pre_flight -> (wait on permit) -> pre_bind -> bind -> post_bind
    on failure after reserve: unreserve, in reverse order
    batching:    sign_pod (when a pod is queued; gate OpportunisticBatching)
    pod groups:  generate_placements -> score_placement -> normalize_placement_score (gates
                 GenericWorkload and TopologyAwareWorkloadScheduling), once per group cycle
                 -> pod_group_post_filter (DefaultPreemption's only, gate WorkloadAwarePreemption)

Return conventions: ``None`` always means Success. A :class:`~kschedfw.Status` carries the Code;
its meaning differs per point and is stated in each hook. A hook that raises, or returns a value
of another type than its hook states, is turned into an ``Error`` status naming the plugin, the
extension point and what came back (``plugin "X" Filter returned str 'no'; want Status or
None``): the scheduler keeps running and the pod is retried. Each distinct fault is logged once
(its first traceback at DEBUG: ``kschedfw --debug``), later ones are counted.

What a hook receives belongs to the scheduler and is read-only. ``NodeInfo`` objects (and the
``nodes`` lists) are the cycle's snapshot, which shares them with the scheduler's cache: valid
during the call's cycle, they change afterwards. Keep node names, values or ``node_info.clone()``,
never the objects themselves; mutating them corrupts the cache.

Plugins are called in profile order; ``tryfirst``/``trylast``/wrappers are refused at load time
because order belongs to the profile. The scheduler calls hooks through a plan compiled per
profile, not through ``pm.hook``, so nothing here is on pluggy's dispatch path per node, and
each hook's own rule (first result, all plugins, tried in order) is stated in its docstring.
The table of these hooks (config field, upstream interface, metric label, result) and of the
plain optional methods a plugin may define is :mod:`kschedfw.fwk.extension_points`; a plugin
member named close to one of them but not exactly is refused at load with "did you mean".

Whole-list forms (optional, for plugins whose per-node work is cheaper than a Python call per
node): beside :func:`filter`, :func:`score` and :func:`normalize_score`, which stay the contract,
a class may define the methods of :class:`WholeListFilter`, :class:`WholeListScore` and
:class:`WholeListNormalizeScore` (names in :data:`~kschedfw.fwk.extension_points.WHOLE_LIST_FORMS`).
They are plain methods, not hookimpls: the runtime uses one only when the class that defines it also defines the per-node
hook it stands for and that hook is the one the plugin resolves (a subclass overriding ``score``
does not inherit a stale ``score_nodes``), and only when the scheduler runs with its fast paths
on (``Framework(..., fast_paths=True)``, the default). A form must give exactly what its hook
gives, node for node; its results go through the same guard (a value of the wrong type, a list
of the wrong length, an exception, a score out of range: an Error naming the plugin, as for the
hook; whole-list scores are checked in one pass, where a bool counts as the int it is). Cycles
that sample plugin durations for metrics call the per-node hooks.

Results kept from one cycle to the next (a Filter verdict, a score, per node, for the next pod
asking the same) follow one rule and live in one kind of memo, which a plugin asks its Handle for
(``handle.node_memo()``): see :mod:`kschedfw.fwk.node_reuse`. A whole-list form is where such a memo
pays most: it reads its entries inline, a dict hit per node.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Callable, Hashable, Mapping, Protocol, Sequence

import pluggy

from kschedfw.fwk.extension_points import HOOK_NAMES, HOOKS

if TYPE_CHECKING:
    from kschedfw.api import Pod
    from kschedfw.api.workload import PodGroup
    from kschedfw.fwk.cycle_state import CycleState, PodGroupCycleState
    from kschedfw.fwk.events import ClusterEvent, ClusterEventWithHint, QueueingHint
    from kschedfw.fwk.podgroup import (GeneratePlacementsResult, Placement, PlacementScore, PodGroupAssignments,
                                       PodGroupInfo)
    from kschedfw.fwk.status import Status
    from kschedfw.fwk.types import (NodeInfo, NodeScore, NodeToStatus, PostFilterResult,
                                    PreBindPreFlightResult, PreFilterResult, QueuedPodInfo,
                                    SignFragment)

hookspec = pluggy.HookspecMarker("kschedfw")

#: Hooks the runtime calls for one plugin only, by hook: that plugin's name. Upstream puts
#: DefaultPreemption alone behind PodGroupPostFilter, so another plugin's ``pod_group_post_filter``
#: has no effect: loading a third-party plugin that implements it logs a warning and
#: ``kschedfw plugins --check`` lists it. A meta-test checks this against what the runtime binds.
RESERVED_HOOKS: Mapping[str, str] = MappingProxyType({h.name: h.only for h in HOOKS if h.only})

__all__ = list(HOOK_NAMES)


# --------------------------------------------------------------------------- queueing

@hookspec
def pre_enqueue(pod: "Pod") -> "Status | None":
    """Decide whether ``pod`` may enter the active queue. Upstream: PreEnqueuePlugin.PreEnqueue.

    Called on every attempt to move the pod into activeQ (on creation, after an update, after
    backoff), so it must be cheap. Plugins run in order and the first non-Success stops the rest.

    :param pod: the pod about to be queued (read-only).
    :return: None/Success lets it in. Any other code gates the pod: it waits in the unschedulable
        pool with this plugin recorded as its gating plugin, until an event this plugin registered
        (``events_to_register``) makes a hint return Queue. Error is logged and gates the same way.

    Example::

        @hookimpl
        def pre_enqueue(self, pod):
            if "example.com/hold" in pod.annotations:
                return Status.unresolvable("waiting for example.com/hold to be removed")
            return None
    """


@hookspec
def less(pod_info_a: "QueuedPodInfo", pod_info_b: "QueuedPodInfo") -> bool:
    """Order the active queue: True when ``pod_info_a`` should be popped before ``pod_info_b``.

    Upstream: QueueSortPlugin.Less. Exactly one QueueSort plugin per profile, and the same one in
    every profile (one queue serves them all). ``QueuedPodInfo.timestamp`` is when the pod was
    last added to the queue.

    Fast path: a QueueSort plugin may also define a plain method ``sort_key(queued_pod_info)``
    returning a key that orders exactly like ``less`` (``less(a, b) == (sort_key(a) <
    sort_key(b))``); the queue then compares keys instead of calling ``less`` (PrioritySort:
    ``(-priority, timestamp)``).

    Example::

        @hookimpl
        def less(self, pod_info_a, pod_info_b):
            a, b = pod_info_a.pod.priority or 0, pod_info_b.pod.priority or 0
            return a > b or (a == b and pod_info_a.timestamp < pod_info_b.timestamp)

        def sort_key(self, queued_pod_info):          # the same order, as a key
            return -(queued_pod_info.pod.priority or 0), queued_pod_info.timestamp
    """


@hookspec
def events_to_register() -> "list[ClusterEventWithHint]":
    """Cluster events that may make a pod this plugin rejected schedulable. Upstream: EnqueueExtensions.

    Called once per profile. Honoured for plugins at PreEnqueue, PreFilter, Filter, Reserve and
    Permit. Each :class:`ClusterEventWithHint` may carry a ``queueing_hint_fn(pod, old, new)``; with
    none, the plugin's ``queueing_hint`` hook is used if it has one, else the event always queues.
    A plugin of those kinds that does not implement this hook is retried on every event; one that
    returns an empty list has its pods retried only by the periodic flush (after 5 minutes).

    Example::

        @hookimpl
        def events_to_register(self):
            node_changed = ClusterEvent(EventResource.Node, ActionType.Add | ActionType.UpdateNodeLabel)
            return [ClusterEventWithHint(node_changed, self.pool_node_changed)]

        def pool_node_changed(self, pod, old_obj, new_obj):
            pool = pod.labels.get("example.com/pool")
            if new_obj is not None and new_obj.labels.get("example.com/pool") == pool:
                return QueueingHint.Queue
            return QueueingHint.QueueSkip
    """


@hookspec
def queueing_hint(event: "ClusterEvent", pod: "Pod", old_obj: Any, new_obj: Any) -> "QueueingHint":
    """Default QueueingHint for events this plugin registered without a hint function.

    Upstream: the QueueingHintFn of each ClusterEventWithHint. Called per (event, rejected pod) for pods whose rejectors include this plugin. ``old_obj`` is
    None for an add, ``new_obj`` None for a delete. Return ``QueueingHint.Queue`` to retry the pod
    (after its backoff; at once if this plugin returned Pending) or ``QueueSkip`` to leave it. A
    hint that raises counts as Queue and is logged.

    Example::

        @hookimpl
        def queueing_hint(self, event, pod, old_obj, new_obj):
            if event.resource == EventResource.Node and new_obj is not None:
                return QueueingHint.Queue
            return QueueingHint.QueueSkip
    """


# --------------------------------------------------------------------------- scheduling cycle

@hookspec
def sign_pod(pod: "Pod") -> "tuple[list[SignFragment] | None, Status | None]":
    """Fragments of the pod's scheduling signature for opportunistic batching. Upstream: SignPlugin.

    Called when a pod enters the scheduling queue or is updated there (gate
    OpportunisticBatching, on by default). The fragments of every plugin, with the pod's
    schedulerName, make the signature; fragments with the same key must carry the same value.
    Pods with equal signatures must get equal Filter and Score results on the same nodes: then
    consecutive such pods reuse the previous cycle's sorted scores (each takes the next node,
    filtered alone, not scored) while they go one per node. Unschedulable or Error means "do not
    batch this pod" (the fragments may then be None). A profile batches no pod unless every one
    of its PreFilter, Filter, PreScore and Score plugins implements this hook.

    Return ``(fragments, status)`` always, as upstream's ``([]SignFragment, *Status)``; a bare
    Status or None is accepted until the next release, with a DeprecationWarning.

    Example::

        @hookimpl
        def sign_pod(self, pod):
            # Filter and Score read only this label of the pod
            return [SignFragment("example.com/pool", pod.labels.get("example.com/pool"))], None
    """


@hookspec
def pre_filter(state: "CycleState", pod: "Pod", nodes: "list[NodeInfo]") -> "tuple[PreFilterResult | None, Status | None]":
    """Once per cycle, before Filter: precompute into ``state`` and check cluster-wide conditions.

    Upstream: PreFilterPlugin.PreFilter. Return ``(result, status)`` always, as upstream's
    ``(*PreFilterResult, *Status)``: ``(None, None)`` when there is nothing to say (a bare Status or
    None is accepted until the next release, with a DeprecationWarning). ``PreFilterResult(node_names)`` narrows the nodes Filter looks at; results of all
    plugins are intersected, and an empty intersection makes the pod UnschedulableAndUnresolvable.

    Codes: Skip = this plugin's Filter and AddPod/RemovePod are skipped this cycle.
    Unschedulable = every node fails for this reason; the loop continues so every rejector is
    recorded. UnschedulableAndUnresolvable or Error stops at once. A rejection here is given to all
    nodes, so preemption sees them with that code.

    Example::

        @hookimpl
        def pre_filter(self, state, pod, nodes):
            pool = pod.labels.get("example.com/pool")
            if pool is None:
                return None, Status.skip()            # this plugin's Filter is not called
            state.write("example.com/pool", pool)
            in_pool = frozenset(n.name for n in nodes if n.node.labels.get("example.com/pool") == pool)
            return PreFilterResult(in_pool), None
    """


@hookspec
def pre_filter_add_pod(state: "CycleState", pod_to_schedule: "Pod", pod_to_add: "Pod", node_info: "NodeInfo") -> "Status | None":
    """Update this plugin's ``state`` as if ``pod_to_add`` ran on ``node_info``. Upstream: PreFilterExtensions.AddPod.

    Called on a cloned state while evaluating nominated pods and during preemption dry runs; only
    for plugins that did not Skip in PreFilter. ``node_info`` is read-only. Any non-Success stops
    and becomes an Error.

    Example::

        @hookimpl
        def pre_filter_add_pod(self, state, pod_to_schedule, pod_to_add, node_info):
            counts = state.read("example.com/pods-per-node")   # written by this plugin's pre_filter
            counts[node_info.name] = counts.get(node_info.name, 0) + 1
            return None
    """


@hookspec
def pre_filter_remove_pod(state: "CycleState", pod_to_schedule: "Pod", pod_to_remove: "Pod", node_info: "NodeInfo") -> "Status | None":
    """Update this plugin's ``state`` as if ``pod_to_remove`` left ``node_info`` (preemption dry runs).

    Upstream: PreFilterExtensions.RemovePod. Same rules as :func:`pre_filter_add_pod`.

    Example::

        @hookimpl
        def pre_filter_remove_pod(self, state, pod_to_schedule, pod_to_remove, node_info):
            counts = state.read("example.com/pods-per-node")
            counts[node_info.name] -= 1
            return None
    """


@hookspec
def filter(state: "CycleState", pod: "Pod", node_info: "NodeInfo") -> "Status | None":
    """Can ``pod`` run on this node? Upstream: FilterPlugin.Filter. HOT PATH: called per node.

    Plugins run in order and the first non-Success stops the node's evaluation. Unschedulable:
    does not fit, preemption may help. UnschedulableAndUnresolvable: does not fit and evicting pods
    would not help. Pending: stop, an external actor must act. Any other code (Error, Wait, Skip)
    becomes an Error that aborts the whole cycle. Do not mutate ``node_info``; read precomputed
    data from ``state``. Status reasons end up in the FitError message users see.

    Example::

        @hookimpl
        def filter(self, state, pod, node_info):
            if node_info.node.labels.get("example.com/pool") != state.read("example.com/pool"):
                return Status.unresolvable("node(s) are in another pool")
            return None
    """


class FilterVerdictKey(Protocol):
    """Optional, not a hook: a Filter plugin may also define ``filter_verdict_key``.

    ``filter_verdict_key(state, pod)`` returns a hashable key such that the plugin's ``filter``
    gives every pod with an equal key the same status on the same NodeInfo (unchanged: the same
    object, ``generation``, ``node`` and ``image_states``), reading only that NodeInfo, the pod
    fields the key holds and what the key says of ``state``; or None for a pod it cannot say
    that of. It runs once per cycle, after PreFilter, and must not change anything.

    The runtime uses it to keep Filter outcomes between cycles, and only when every Filter
    plugin of the cycle gives a key (one None, or one plugin without the method, and nothing is
    kept): today for the nominated-pods pass, where a node with the same nominated pods added
    gives the next pod with the same keys the kept status. A plugin whose verdict reads anything
    else (other nodes, the pods of other nodes, objects from the lister) must not define it. A
    subclass that overrides ``filter`` does not inherit its base's ``filter_verdict_key``.
    """

    def filter_verdict_key(self, state: "CycleState", pod: "Pod") -> Hashable | None: ...


@hookspec
def post_filter(state: "CycleState", pod: "Pod", filtered_node_status_map: "NodeToStatus") -> "tuple[PostFilterResult | None, Status | None]":
    """Make an unschedulable pod schedulable, e.g. by preemption. Upstream: PostFilterPlugin.PostFilter.

    Called only when Filter found no feasible node. Plugins run until one returns Success (its
    result is used, e.g. to nominate a node) or UnschedulableAndUnresolvable. Unschedulable lets the
    next plugin try; its message is added to the FitError. Any other code becomes an Error. The
    attempt still ends as unschedulable: a nominated pod is retried and tries its node first.

    Return ``(result, status)`` always, as upstream's ``(*PostFilterResult, *Status)`` (a bare
    Status or None is accepted until the next release, with a DeprecationWarning).

    Example::

        @hookimpl
        def post_filter(self, state, pod, filtered_node_status_map):
            node_name = self.node_to_free_for(pod)     # the plugin's own choice
            if node_name is None:
                return None, Status.unschedulable("no node can be freed")
            return PostFilterResult.nominate(node_name), None
    """


@hookspec
def pre_score(state: "CycleState", pod: "Pod", nodes: "list[NodeInfo]") -> "Status | None":
    """Once per cycle with the feasible nodes, before Score. Upstream: PreScorePlugin.PreScore.

    Called only when there are at least two feasible nodes. Skip = this plugin's Score is not
    called this cycle. Anything other than Success/Skip aborts the cycle with an Error.

    Example::

        @hookimpl
        def pre_score(self, state, pod, nodes):
            state.write("example.com/most-pods", max(len(n.pods) for n in nodes))
            return None
    """


@hookspec
def score(state: "CycleState", pod: "Pod", node_info: "NodeInfo") -> "int | Status":
    """Rank a feasible node. Upstream: ScorePlugin.Score. HOT PATH: called per feasible node.

    Return the score, an int; when scoring failed return the Status instead (upstream's
    ``(int64, *Status)`` with the score then unused). Any non-Success status is an Error for the
    cycle. The old ``(int, status)`` pair is accepted until the next release, with a
    DeprecationWarning. The raw score may be any int if the plugin implements
    :func:`normalize_score`; after normalising it must be in [0, 100]. The framework multiplies it by the profile's weight and sums over plugins.
    A float, a bool, None or anything else is an Error naming the value (never truncated).

    Example::

        @hookimpl
        def score(self, state, pod, node_info):
            most = state.read("example.com/most-pods") or 1
            return MAX_NODE_SCORE * (most - len(node_info.pods)) // most   # emptier nodes first
    """


@hookspec
def normalize_score(state: "CycleState", pod: "Pod", scores: "list[NodeScore]") -> "Status | None":
    """Rescale this plugin's scores in place (``scores[i].score``). Upstream: ScoreExtensions.NormalizeScore.

    Called once per cycle with every scored node. Any non-Success is an Error; so is a score that
    is not an int afterwards. The list is new for each call; its NodeScore items are reused in
    later cycles unless the plugin keeps the list or an item past the call (the framework sees
    that and stops reusing them for this plugin), so keeping them is safe but slower: copy what
    you need instead.

    Example::

        @hookimpl
        def normalize_score(self, state, pod, scores):
            highest = max(s.score for s in scores) or 1
            for s in scores:
                s.score = s.score * MAX_NODE_SCORE // highest
            return None
    """


@hookspec
def reserve(state: "CycleState", pod: "Pod", node_name: str) -> "Status | None":
    """The pod was assumed on ``node_name``: reserve what it needs. Upstream: ReservePlugin.Reserve.

    Plugins run in order; the first non-Success stops. A rejection makes the pod unschedulable on
    this node ("0/1 nodes are available: <reason>."); other codes are Errors. Either way every
    reserve plugin's :func:`unreserve` is called in reverse order.

    Example::

        @hookimpl
        def reserve(self, state, pod, node_name):
            self.reserved.setdefault(node_name, set()).add(pod.uid)
            return None
    """


@hookspec
def unreserve(state: "CycleState", pod: "Pod", node_name: str) -> None:
    """Undo :func:`reserve`. Upstream: ReservePlugin.Unreserve.

    Called in reverse order on every failure after Reserve (reserve, permit, pre-bind, bind), even
    for plugins whose reserve never ran, so it must be idempotent and never fail.

    Example::

        @hookimpl
        def unreserve(self, state, pod, node_name):
            self.reserved.get(node_name, set()).discard(pod.uid)   # safe to run twice
    """


@hookspec
def permit(state: "CycleState", pod: "Pod", node_name: str) -> "tuple[Status | None, float]":
    """Approve, reject or delay binding. Upstream: PermitPlugin.Permit.

    Return ``(status, timeout_seconds)`` always, as upstream's ``(*Status, time.Duration)``: the
    timeout counts with Wait only, so ``(None, 0)`` allows (a bare Status or None is accepted
    until the next release, with a DeprecationWarning). The first rejection stops and
    fails the pod (unreserve runs). Wait from any plugin holds the pod as a *waiting pod* until
    every waiting plugin allows it through ``handle.get_waiting_pod(uid).allow(name)``, one rejects
    it, or that plugin's timeout (at most 15 minutes) expires: "rejected due to timeout after
    waiting <d> at plugin <name>".

    Example::

        @hookimpl
        def permit(self, state, pod, node_name):
            if self.gang_is_complete(pod):             # the plugin's own rule
                return None, 0
            return Status.wait("waiting for the rest of the gang"), 30.0

        # later, when the last member arrives:
        #     self.handle.get_waiting_pod(uid).allow(self.name)
    """


# --------------------------------------------------------------------------- binding cycle

@hookspec
def pre_bind_pre_flight(state: "CycleState", pod: "Pod", node_name: str) -> "tuple[PreBindPreFlightResult | None, Status | None]":
    """Will this plugin's PreBind have work to do? Upstream: PreBindPlugin.PreBindPreFlight.

    Called at the start of the binding cycle. Skip = this plugin's :func:`pre_bind` is not called.
    Success, Skip and Error are the only codes allowed; anything else is an Error. Return
    ``(result, status)`` always, as upstream's ``(*PreBindPreFlightResult, *Status)`` (a bare
    Status or None is accepted until the next release, with a DeprecationWarning).

    Example::

        @hookimpl
        def pre_bind_pre_flight(self, state, pod, node_name):
            if "example.com/volume" not in pod.annotations:
                return None, Status.skip()            # nothing to prepare: pre_bind is not called
            return None, None
    """


@hookspec
def pre_bind(state: "CycleState", pod: "Pod", node_name: str) -> "Status | None":
    """Prepare the node before binding (e.g. attach volumes). Upstream: PreBindPlugin.PreBind.

    Called after Permit allowed the pod. The first non-Success stops; the pod is unreserved and
    retried after backoff (not treated as unschedulable). Against a real API server it runs, with
    Bind, on a binding worker thread while the scheduler goes on (upstream's binding goroutine):
    state it shares with the other extension points needs a lock.

    Example::

        @hookimpl
        def pre_bind(self, state, pod, node_name):
            try:
                self.attach_volume(pod, node_name)     # the plugin's own call
            except TimeoutError as exc:
                return Status.as_status(exc)
            return None
    """


@hookspec
def bind(state: "CycleState", pod: "Pod", node_name: str) -> "Status | None":
    """Bind the pod to ``node_name``. Upstream: BindPlugin.Bind.

    Plugins are tried in order: Skip means "not mine, ask the next one"; the first other status
    ends the chain (Success = bound). Every profile needs at least one Bind plugin. Like PreBind,
    it runs on a binding worker thread against a real API server.

    Example::

        @hookimpl
        def bind(self, state, pod, node_name):
            if "example.com/custom-bind" not in pod.annotations:
                return Status.skip()                  # not mine: the next Bind plugin binds it
            self.handle.client.bind(pod, node_name)
            return None
    """


@hookspec
def post_bind(state: "CycleState", pod: "Pod", node_name: str) -> None:
    """Informational: the pod is bound. Upstream: PostBindPlugin.PostBind. All plugins run.

    Example::

        @hookimpl
        def post_bind(self, state, pod, node_name):
            log.info("bound %s to %s", pod.key, node_name)
    """


# --------------------------------------------------------------------------- pod groups (newest API)

@hookspec
def generate_placements(state: "PodGroupCycleState", pod_group: "PodGroupInfo", parent_placement: "Placement"
                        ) -> "tuple[GeneratePlacementsResult | None, Status | None]":
    """Candidate placements (named node sets) for a pod group. Upstream: PlacementGeneratePlugin.GeneratePlacements.

    Called once per pod-group cycle with the placement of every node (``parent_placement``,
    named ""); a profile has at most one PlacementGenerate plugin. Return ``(result, status)``,
    as upstream's ``(*GeneratePlacementsResult, *Status)``: the placements may overlap; none
    means the group fits nowhere this plugin allows (Unschedulable "no feasible placements
    found"). A non-Success status is the group's, as given (naming the plugin). The pod-group
    cycle calls it with the gates GenericWorkload and TopologyAwareWorkloadScheduling on.

    Example::

        @hookimpl
        def generate_placements(self, pod_group, parent_placement):
            racks = {}
            for node_info in parent_placement.nodes:
                rack = node_info.node.labels.get("example.com/rack")
                if rack is not None:
                    racks.setdefault(rack, []).append(node_info)
            placements = [Placement(f"rack={rack}", nodes) for rack, nodes in sorted(racks.items())]
            return GeneratePlacementsResult(placements), None
    """


@hookspec
def score_placement(state: "PodGroupCycleState", pod_group: "PodGroupInfo", placement: "PodGroupAssignments"
                    ) -> "int | Status":
    """Score one feasible placement of a pod group. Upstream: PlacementScorePlugin.ScorePlacement.

    Called per placement the group fits in, with the pods the cycle found room for there
    (``placement.proposed_assignments``). Return the score, or a Status when scoring failed
    (an Error for the cycle). Like :func:`score`, the score is in [MIN_SCORE, MAX_SCORE] after
    normalising and is multiplied by the profile's weight.

    Example::

        @hookimpl
        def score_placement(self, placement):
            # fewer nodes for the same pods: a tighter placement
            used = {assignment.node_name for assignment in placement.proposed_assignments}
            return MAX_SCORE - min(MAX_SCORE, len(used))
    """


@hookspec
def normalize_placement_score(state: "PodGroupCycleState", pod_group: "PodGroupInfo",
                              placement_scores: "list[PlacementScore]") -> "Status | None":
    """Rescale this plugin's placement scores in place (``placement_scores[i].score``).

    Upstream: PlacementScoreExtensions.NormalizePlacementScore. Called once per cycle with every
    scored placement; any non-Success is an Error.

    Example::

        @hookimpl
        def normalize_placement_score(self, placement_scores):
            top = max((p.score for p in placement_scores), default=0)
            for p in placement_scores:
                p.score = p.score * MAX_SCORE // top if top else 0
            return None
    """


@hookspec
def pod_group_post_filter(pod_group: "PodGroup", pods: "list[Pod]",
                          pod_group_scheduling_func: "Callable[[], Status | None]") -> "Status | None":
    """Make a pod group that did not fit schedulable, by workload-aware preemption.

    Upstream: PodGroupPostFilterPlugin.PodGroupPostFilter (internal: DefaultPreemption's only).
    Called, with the gate WorkloadAwarePreemption on, when a pod group's cycle found the group
    Unschedulable, for the profile's plugin named DefaultPreemption alone (:data:`RESERVED_HOOKS`:
    another plugin's implementation has no effect), and not for a group with a topology
    constraint. ``pods`` are the group's unscheduled pods; ``pod_group_scheduling_func()`` reruns
    the group's algorithm, without PostFilter, on the snapshot as the plugin changed it (its
    NodeInfos, which the cycle backs up before the call and restores after it) and returns the
    group's status. Success: victims are being evicted and the group waits for them;
    Unschedulable or UnschedulableAndUnresolvable: its message joins the group's; Error: the
    group fails with it.

    Example::

        @hookimpl
        def pod_group_post_filter(self, pod_group, pods, pod_group_scheduling_func):
            evicted = []
            for node_info in self.handle.snapshot.node_infos():
                for victim in list(node_info.pods):
                    if victim.effective_priority < (pod_group.priority or 0):
                        node_info.remove_pod(victim)
                        evicted.append(victim)
                        status = pod_group_scheduling_func()
                        if status is None or status.is_success():
                            for pod in evicted:
                                self.handle.client.delete_pod(pod)
                            return None
            return Status.unschedulable("no victims make room for the group")
    """


# --------------------------------------------------------------------------- whole-list forms

class WholeListFilter(Protocol):
    """:func:`filter` for many nodes at once. The runtime calls it, when Filter runs over at
    least a handful of nodes, with those of a chunk that passed the plugins before this one
    (every one a node the per-node loop would visit). Return one ``filter`` result per node, in
    ``nodes`` order, or None to have this call's nodes filtered by ``filter`` one by one."""

    def filter_nodes(self, state: "CycleState", pod: "Pod", nodes: "list[NodeInfo]"
                     ) -> "Sequence[Status | None] | None": ...


class WholeListScore(Protocol):
    """:func:`score` for every node of a cycle at once: one ``score`` result per node, in
    ``nodes`` order, or None to have this cycle score with ``score`` per node."""

    def score_nodes(self, state: "CycleState", pod: "Pod", nodes: "list[NodeInfo]"
                    ) -> "Sequence[int | Status] | None": ...


class WholeListNormalizeScore(Protocol):
    """:func:`normalize_score` over plain ints: a new list of the scores ``normalize_score``
    would leave in a NodeScore list holding ``values`` (node order), or None to take the
    NodeScore path. Used only with the plugin's ``normalize_score`` in the profile."""

    def normalize_score_values(self, state: "CycleState", pod: "Pod", values: list[int]
                               ) -> "Sequence[int] | None": ...
