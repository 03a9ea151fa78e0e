"""Every hook a plugin implements, called on sample inputs and checked as the runtime checks it.

The second half of :func:`kschedfw.testing.check_plugin`. The plugin runs in a profile of its
own (a :class:`~kschedfw.testing.harness.PluginHarness`) over a few nodes of varied capacity,
labels and taints, and pods with and without requests and affinity; each extension point runs
through the runtime's own code (``Framework.run_*``), whose guard
(:mod:`kschedfw.framework.plugin_results`) turns a wrong type, an exception or a score out of
range into the Error a real cycle would end with. Every such Error, and every fault the runtime
only logs (Unreserve, PostBind, SignPod), is a problem, named by its input: the extension point,
the pod and the node, then the runtime's words.

The profile runs twice, with the fast paths on (whole-list forms, the plugins' memos) and off;
the two must give the same statuses and scores, as the runtime assumes. The queue's hooks are
called as the queue calls them: ``less`` (and ``sort_key``) on pairs of queued pods,
``events_to_register`` once, and each registered hint on an event of its kind. The pod-group
hooks are not called here.

Score and the binding cycle get only the nodes the pod fits on (a profile's NodeResourcesFit has
filtered the others out), PostFilter only pods no node fits (and the too large one), as in a
cycle.
"""

from __future__ import annotations

from functools import partial
from typing import Any, Callable, Iterable, TypeVar

from kschedfw.api import Node, Pod
from kschedfw.fwk.cycle_state import CycleState
from kschedfw.fwk.events import ActionType, ClusterEvent, EventResource, QueueingHint
from kschedfw.fwk.status import Code, Status
from kschedfw.fwk.types import NodeInfo, NodeToStatus, QueuedPodInfo
from kschedfw.framework.columnar import declared_with, whole_list_filter
from kschedfw.framework.guard import PluginFaults, bad_return
from kschedfw.framework.plugin_results import events_problem, filter_raised, filter_returned, not_one_per_node
from kschedfw.framework.recorder import CycleRecord
from kschedfw.framework.registry import implemented_hooks
from kschedfw.framework.runtime import Framework
from kschedfw.plugins.noderesources.fit import fits
from kschedfw.testing.builders import (ZONE, make_csi_node, make_namespace, make_node, make_pod, make_pv, make_pvc,
                                       make_storage_class, node_affinity, pod_affinity_term, spread_constraint,
                                       taint, toleration)
from kschedfw.testing.harness import PluginHarness

__all__ = ["exercise_problems", "sample_nodes", "sample_pods", "sample_objects"]

_T = TypeVar("_T")


def sample_nodes() -> list[Node]:
    """A small node, a large one with an image, a tainted one and a cordoned one, in two zones."""
    return [make_node("small", cpu="2", memory="4Gi", zone="a", labels={"disktype": "hdd"}),
            make_node("large", cpu="16", memory="64Gi", zone="b", labels={"disktype": "ssd"},
                      images=[(["registry.k8s.io/pause:3.10"], 300_000)]),
            make_node("tainted", cpu="8", memory="16Gi", zone="b", taints=[taint("dedicated", "gpu")]),
            make_node("cordoned", cpu="4", memory="8Gi", zone="a", unschedulable=True)]


#: a disk only one node may mount (VolumeRestrictions): "running-db" on "large" has it
_DISK = {"name": "disk", "gcePersistentDisk": {"pdName": "disk-1"}}


def _running_pods() -> list[Pod]:
    return [make_pod("running-web", cpu="500m", memory="512Mi", node_name="small", labels={"app": "web"}),
            make_pod("running-db", cpu="4", memory="8Gi", node_name="large", labels={"app": "db"}, priority=100,
                     volumes=[_DISK])]


def sample_pods() -> list[Pod]:
    """Pods to schedule: none, some and too many requests; required and preferred affinity,
    tolerations, spreading and a host port; volumes (claims :func:`sample_objects` holds, a
    disk a running pod has)."""
    web = {"matchLabels": {"app": "web"}}
    return [make_pod("no-requests"),
            make_pod("requests", cpu="1", memory="1Gi", labels={"app": "web"}, priority=10),
            make_pod("affinity", cpu="500m", memory="256Mi", labels={"app": "web"}, host_ports=[8080],
                     tolerations=[toleration("dedicated", "gpu", "NoSchedule")],
                     affinity={**node_affinity([{"key": "disktype", "operator": "In", "values": ["ssd", "hdd"]}],
                                               preferred=[(10, [{"key": "disktype", "operator": "In",
                                                                 "values": ["ssd"]}])]),
                               "podAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
                                   {"weight": 5, "podAffinityTerm": pod_affinity_term(ZONE, web)}]},
                               "podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
                                   pod_affinity_term("kubernetes.io/hostname", {"matchLabels": {"app": "db"}})]}},
                     topology_spread_constraints=[spread_constraint(1, ZONE, "DoNotSchedule", web),
                                                  spread_constraint(1, "kubernetes.io/hostname", "ScheduleAnyway",
                                                                    web)]),
            make_pod("volumes", cpu="250m", memory="128Mi", pvcs=["data", "scratch"], volumes=[_DISK]),
            make_pod("too-large", cpu="64", memory="256Gi", priority=1000)]


def sample_objects() -> list[Any]:
    """What the lister holds besides nodes and pods: the namespace, a (ReadWriteOncePod) claim
    bound to a volume in zone a, a claim waiting for its first consumer and a volume for it."""
    return [make_namespace("default"),
            make_storage_class("standard"),
            make_storage_class("local", binding_mode="WaitForFirstConsumer"),
            make_pvc("data", storage_class="standard", volume_name="data-volume", phase="Bound",
                     access_modes=("ReadWriteOncePod",), annotations={"pv.kubernetes.io/bind-completed": "yes"}),
            make_pv("data-volume", storage_class="standard", claim=("default", "data"), phase="Bound",
                    access_modes=("ReadWriteOncePod",), labels={ZONE: "a"}),
            make_pvc("scratch", storage_class="local"),
            make_pv("scratch-volume", storage_class="local", phase="Available"),
            make_csi_node("small", {"csi.example.com": 8})]


class _RecordedFaults(PluginFaults):
    """The runtime's fault reports, kept in order instead of logged."""

    def __init__(self) -> None:
        super().__init__()
        self.messages: list[str] = []

    def report(self, plugin: str, point: str, cause: str, message: str, exc: BaseException | None = None) -> None:
        self.messages.append(message)


class _Binds:
    """A client that takes every bind (the Bind plugins' calls) and writes nothing."""

    def bind(self, pod: Pod, node_name: str) -> None:
        pass

    def patch_pod_scheduling_failure(self, pod: Pod, reason: str, message: str,
                                     nominated_node_name: str | None = None) -> None:
        pass

    def set_nominated_node_name(self, pod: Pod, node_name: str) -> None:
        pass

    def add_pod_condition(self, pod: Pod, type_: str, status: str, reason: str, message: str) -> Pod | None:
        return pod

    def delete_pod(self, pod: Pod, grace_period_seconds: int | None = None) -> None:
        pass


def _describe(status: Status | None) -> str:
    return "Success" if status is None or status.is_success() else f"{status.code.name} {status.message()!r}"


class _Exercise:
    """One plugin's run over the samples; ``problems`` in the order found, each message once
    (with its first input and how many others gave it)."""

    def __init__(self, cls: type, args: dict[str, Any], nodes: Iterable[Node] = (), pods: Iterable[Pod] = (),
                 objects: Iterable[Any] = ()) -> None:
        self.cls, self.args = cls, args
        self.name = str(getattr(cls, "name"))
        self.hooks = implemented_hooks(cls)
        self._found: dict[str, dict[str, None]] = {}  # message -> its inputs, in order
        pods = list(pods)
        self.running = _merged(_running_pods(), [p for p in pods if p.node_name])
        self.pods = _merged(sample_pods(), [p for p in pods if not p.node_name])
        # pending pods are in the informers' cache (the lister), not in the snapshot
        self.harnesses = [PluginHarness(cls, nodes=_merged(sample_nodes(), nodes), pods=self.running,
                                        objects=[*_merged(sample_objects(), objects), *self.pods],
                                        args={self.name: args},
                                        fast_paths=fast, client=_Binds(), faults=_RecordedFaults())
                          for fast in (False, True)]

    def add(self, where: str, message: str) -> None:
        """A problem, named by its first input; the same message from other inputs is counted."""
        self._found.setdefault(message, {})[where] = None

    @property
    def problems(self) -> list[str]:
        out = []
        for message, wheres in self._found.items():
            more = len(wheres) - 1
            out.append(f"{next(iter(wheres))}: {message}"
                       + (f" (and {more} more input{'s' if more > 1 else ''})" if more else ""))
        return out

    def run(self, fw: Framework, where: str, call: Callable[[], Any],
            status_of: Callable[[Any], Status | None] = lambda out: out) -> Any:
        """``call`` (a runtime ``run_*``); its Error, or the faults the runtime only logged, are
        problems of ``where``."""
        faults = fw.faults
        assert isinstance(faults, _RecordedFaults)
        before = len(faults.messages)
        try:
            out = call()
        except Exception as exc:  # noqa: BLE001 - the runtime's guard did not hold: the plugin broke it
            self.add(where, f"{type(exc).__name__}: {exc}")
            return None
        status = status_of(out)
        if status is not None and status.code is Code.Error:
            self.add(where, status.message())
        else:
            for message in faults.messages[before:]:
                self.add(where, message)
        return out

    # ------------------------------------------------------------------ queue
    def queue_hooks(self) -> None:
        fw = self.harnesses[0].framework
        plugin = fw.plugins.get(self.name)
        if "less" in self.hooks and plugin is not None:
            self._less(fw)
        if "events_to_register" in self.hooks:
            self._events(plugin)

    def _less(self, fw: Framework) -> None:
        less: Callable[[QueuedPodInfo, QueuedPodInfo], object] = fw.less
        infos = [QueuedPodInfo(pod, timestamp=float(i)) for i, pod in enumerate(self.pods)]
        for a in infos:
            for b in infos:
                where = f'Less of pods "{a.pod.name}" and "{b.pod.name}"'
                try:
                    out = less(a, b)
                except Exception as exc:  # noqa: BLE001 - reported
                    self.add(where, f'plugin "{self.name}" Less raised {type(exc).__name__}: {exc}')
                    continue
                if not isinstance(out, bool):
                    self.add(where, bad_return(self.name, 'Less', out, 'bool'))
                    continue
                key = fw.queue_sort_key
                if key is not None and a is not b:
                    try:
                        by_key = key(a) < key(b)
                    except Exception as exc:  # noqa: BLE001 - reported
                        self.add(where, f'plugin "{self.name}" sort_key raised {type(exc).__name__}: {exc}')
                        continue
                    if by_key != out:
                        self.add(where, f"sort_key orders them {by_key}, less {out}; they must agree")

    def _events(self, plugin: Any) -> None:
        if plugin is None:  # no configurable extension point: the profile did not build it
            plugin = self.cls(self.args, self.harnesses[0].framework.handle)
        try:
            registered = plugin.events_to_register()
        except Exception as exc:  # noqa: BLE001 - reported
            self.add("EventsToRegister", f'plugin "{self.name}" failed to register events: '
                     f"{type(exc).__name__}: {exc}")
            return
        wrong = events_problem(self.name, registered)
        if wrong is not None:
            self.add("EventsToRegister", wrong)
            return
        for item in registered or ():
            fn = item.queueing_hint_fn
            if fn is None and "queueing_hint" in self.hooks:
                event = item.event
                fn = (lambda ev: lambda pod, old, new: plugin.queueing_hint(ev, pod, old, new))(event)
            if fn is not None:
                self._hint(item.event, fn)

    def _hint(self, event: ClusterEvent, fn: Callable[..., Any]) -> None:
        for old, new in _event_objects(event, self.running):
            for pod in self.pods:
                where = f'QueueingHint for event {event.label} ({_what(old, new)}), pod "{pod.name}"'
                try:
                    out = fn(pod, old, new)
                except Exception as exc:  # noqa: BLE001 - the queue logs it and queues the pod
                    self.add(where, f'QueueingHintFn of plugin "{self.name}" returned an error: '
                             f"{type(exc).__name__}: {exc}")
                    continue
                if not isinstance(out, QueueingHint):
                    self.add(where, bad_return(self.name, 'QueueingHint', out, 'QueueingHint'))

    # ------------------------------------------------------------------ one pod
    def pod(self, pod: Pod) -> None:
        if self.name not in self.harnesses[0].plugins:
            return
        runs = [self._cycle(harness, pod) for harness in self.harnesses]
        if all(r is not None for r in runs):
            self._same(pod, runs[0], runs[1])  # type: ignore[arg-type]

    def _cycle(self, harness: PluginHarness, pod: Pod) -> tuple[dict[str, str], dict[str, Any]] | None:
        """One pod through every point of the profile; (statuses, scores) for comparing."""
        fw = harness.framework
        of = f'pod "{pod.name}"'
        self.run(fw, f"PreEnqueue of {of}", lambda: fw.run_pre_enqueue_plugins(pod))
        if "sign_pod" in self.hooks:
            self.run(fw, f"SignPod of {of}", lambda: fw.sign_pod(pod), lambda _: None)
        state = CycleState()
        infos = harness.snapshot.node_infos()
        out = self.run(fw, f"PreFilter of {of}", lambda: fw.run_pre_filter_plugins(state, pod, infos),
                       lambda out: out[1])
        if out is None or out[1] is not None and not out[1].is_success():
            return None
        result = out[0]
        nodes = [ni for ni in infos if result is None or result.node_names is None or ni.name in result.node_names]
        self._extensions(fw, state, pod, nodes)
        statuses: dict[str, Status | None] = {}
        for ni in nodes:
            statuses[ni.name] = self.run(fw, f'Filter of {of} on node "{ni.name}"',
                                         partial(fw.run_filter_plugins, state, pod, ni))
        if any(s is not None and s.code is Code.Error for s in statuses.values()):
            return None
        if fw.fast_paths:
            self._filter_form(fw, state, pod, nodes, statuses)
        else:
            self._verdict_key(fw, state, pod)
        feasible = [ni for ni in nodes if statuses[ni.name] is None]
        # Score and the binding cycle see nodes the pod fits on: every real profile's
        # NodeResourcesFit has filtered out the others
        fitting = [ni for ni in feasible if not fits(pod, ni)]
        if "post_filter" in self.hooks and (not feasible or pod.name == "too-large"):
            # the nodes this plugin did not reject count as rejected by others, unresolvably
            rejected = NodeToStatus({n: s for n, s in statuses.items() if s is not None})
            self.run(fw, f"PostFilter of {of}", lambda: fw.run_post_filter_plugins(state, pod, rejected),
                     lambda out: out[1])
        scores: dict[str, Any] = {}
        if len(fitting) >= 2:
            scores = self._score(fw, state, pod, fitting)
        if fitting and not fw.fast_paths:
            self._binding(fw, state, pod, fitting[0].name)
        return {n: _describe(s) for n, s in statuses.items()}, scores

    def _extensions(self, fw: Framework, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> None:
        """AddPod of a pod on each node, RemovePod of each running pod, on clones of the state."""
        if "pre_filter_add_pod" in self.hooks:
            for ni in nodes:
                added = make_pod("added", cpu="100m", memory="64Mi", node_name=ni.name, labels={"app": "web"})
                self.run(fw, f'AddPod of pod "added" on node "{ni.name}" for pod "{pod.name}"',
                         partial(fw.run_pre_filter_extension_add_pod, state.clone(), pod, added, ni))
        if "pre_filter_remove_pod" in self.hooks:
            by_name = {ni.name: ni for ni in nodes}
            for running in self.running:
                on = by_name.get(running.node_name)
                if on is not None:
                    self.run(fw, f'RemovePod of pod "{running.name}" on node "{on.name}" for pod "{pod.name}"',
                             partial(fw.run_pre_filter_extension_remove_pod, state.clone(), pod, running, on))

    def _filter_form(self, fw: Framework, state: CycleState, pod: Pod, nodes: list[NodeInfo],
                     statuses: dict[str, Status | None]) -> None:
        """The whole-list Filter form (which the runtime uses on larger clusters) on the same
        nodes: its values checked as the runtime checks them, each the per-node hook's."""
        form = whole_list_filter(fw.plugins[self.name])
        if form is None or not nodes:
            return
        where = f'Filter (filter_nodes) of pod "{pod.name}"'
        try:
            out = form(state, pod, nodes)
        except Exception as exc:  # noqa: BLE001 - reported
            self.add(where, filter_raised(fw.faults, self.name, exc).message())
            return
        if out is None:
            return
        wrong = not_one_per_node(fw.faults, self.name, "Filter", out, len(nodes))
        if wrong is not None:
            self.add(where, wrong.message())
            return
        for ni, value in zip(nodes, out):
            status = None if value is None else filter_returned(fw.faults, self.name, value)
            if status is not None and status.code is Code.Error:
                self.add(f'{where} on node "{ni.name}"', status.message())
            elif _describe(status) != _describe(statuses[ni.name]):
                self.add(f'{where} on node "{ni.name}"', f"filter_nodes gives {_describe(status)}, filter "
                         f"{_describe(statuses[ni.name])}; the form must give what the hook gives")

    def _verdict_key(self, fw: Framework, state: CycleState, pod: Pod) -> None:
        verdict_key = declared_with(fw.plugins[self.name], "filter_verdict_key", "filter")
        if verdict_key is None:
            return
        where = f'FilterVerdictKey of pod "{pod.name}"'
        try:
            key = verdict_key(state, pod)
        except Exception as exc:  # noqa: BLE001 - the runtime keeps nothing then; still a plugin bug
            self.add(where, f'plugin "{self.name}" filter_verdict_key raised {type(exc).__name__}: {exc}')
            return
        try:
            hash(key)
        except TypeError:
            self.add(where, bad_return(self.name, 'FilterVerdictKey', key, 'a hashable key or None'))

    def _score(self, fw: Framework, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> dict[str, Any]:
        of = f'pod "{pod.name}" on nodes {", ".join(ni.name for ni in nodes)}'
        status = self.run(fw, f"PreScore of {of}", lambda: fw.run_pre_score_plugins(state, pod, nodes))
        if status is not None and status.code is Code.Error:
            return {}
        record = CycleRecord()
        out = self.run(fw, f"Score of {of}", lambda: fw.run_score_plugins_totals(state, pod, nodes, record),
                       lambda out: out[1])
        if out is None or out[1] is not None:
            return {}
        scores = record.plugin_scores.get(self.name)
        return {} if scores is None else {"raw": dict(scores.raw), "normalized": dict(scores.normalized)}

    def _binding(self, fw: Framework, state: CycleState, pod: Pod, node: str) -> None:
        """Reserve, Permit, PreBindPreFlight, PreBind, Bind, PostBind, then Unreserve (which must
        be idempotent), on the pod's first feasible node."""
        on = f'pod "{pod.name}" on node "{node}"'
        self.run(fw, f"Reserve of {on}", lambda: fw.run_reserve_plugins_reserve(state, pod, node))
        self.run(fw, f"Permit of {on}", lambda: fw.run_permit_plugins(state, pod, node, 0.0), lambda out: out[0])
        self.run(fw, f"PreBindPreFlight of {on}", lambda: fw.run_pre_bind_pre_flights(state, pod, node))
        self.run(fw, f"PreBind of {on}", lambda: fw.run_pre_bind_plugins(state, pod, node))
        self.run(fw, f"Bind of {on}", lambda: fw.run_bind_plugins(state, pod, node))
        self.run(fw, f"PostBind of {on}", lambda: fw.run_post_bind_plugins(state, pod, node))
        self.run(fw, f"Unreserve of {on}", lambda: fw.run_reserve_plugins_unreserve(state, pod, node))

    def _same(self, pod: Pod, plain: tuple[dict[str, str], dict[str, Any]],
              fast: tuple[dict[str, str], dict[str, Any]]) -> None:
        """The fast paths (whole-list forms, memos) give what the plain path gives."""
        for what, a, b in (("Filter", plain[0], fast[0]), ("Score", plain[1], fast[1])):
            if a != b:
                self.add(f'{what} of pod "{pod.name}"', f"with fast paths {b}, without {a}; whole-list forms "
                         "and memos must give what the per-node hooks give")


def _what(old: Any, new: Any) -> str:
    if old is None:
        return f"{new.name} added"
    if new is None:
        return f"{old.name} deleted"
    return f"{new.name} updated"


def _event_objects(event: ClusterEvent, running: list[Pod]) -> Iterable[tuple[Any, Any]]:
    """(old, new) pairs of the event's kind for its actions: None old for an add, None new for a
    delete; resources the kit cannot build (custom ones, DRA) get none."""
    resource = getattr(event.resource, "value", event.resource)
    old: Any
    new: Any
    if resource == EventResource.Node.value:
        old, new = sample_nodes()[0], make_node("small", cpu="4", memory="8Gi", zone="a",
                                                 labels={"disktype": "ssd"})
    elif resource in (EventResource.Pod.value, EventResource.AssignedPod.value):
        old = running[0]
        new = make_pod(old.name, cpu="250m", memory="512Mi", node_name=old.node_name, labels={"app": "api"})
    elif resource == EventResource.UnschedulablePod.value:
        old, new = make_pod("waiting", cpu="1"), make_pod("waiting", cpu="500m", labels={"app": "web"})
    else:
        makers: dict[str, Callable[[], Any]] = {
            EventResource.PersistentVolumeClaim.value: lambda: make_pvc("claim", storage_class="standard"),
            EventResource.PersistentVolume.value: lambda: make_pv("volume", storage_class="standard"),
            EventResource.StorageClass.value: lambda: make_storage_class("standard"),
            EventResource.CSINode.value: lambda: make_csi_node("small", {"csi.example.com": 8}),
        }
        maker = makers.get(resource)
        if maker is None:
            return []
        old, new = maker(), maker()
    action = event.action_type
    pairs: list[tuple[Any, Any]] = []
    if action & ActionType.Add:
        pairs.append((None, new))
    if action & ActionType.Update:
        pairs.append((old, new))
    if action & ActionType.Delete:
        pairs.append((old, None))
    return pairs


def _merged(samples: list[_T], given: Iterable[_T]) -> list[_T]:
    """``samples`` and ``given``; a given object replaces the sample of its kind and name."""
    def key(obj: Any) -> tuple[str, str, str]:
        return getattr(obj, "kind", None) or type(obj).__name__, getattr(obj, "namespace", "") or "", obj.name
    given = list(given)
    replaced = {key(obj) for obj in given}
    return [obj for obj in samples if key(obj) not in replaced] + given


def exercise_problems(cls: type, args: dict[str, Any], *, nodes: Iterable[Node] = (), pods: Iterable[Pod] = (),
                      objects: Iterable[Any] = ()) -> list[str]:
    """Every problem the runtime would find in ``cls``'s hooks on the sample inputs, with
    ``nodes``, ``pods`` (those with a ``node_name`` run there, the others are scheduled) and
    ``objects`` (for the lister) added to them."""
    try:
        exercise = _Exercise(cls, args, nodes, pods, objects)
    except Exception as exc:  # noqa: BLE001 - reported, not raised
        return [f"cannot be built from its defaulted args: {type(exc).__name__}: {exc}"]
    exercise.queue_hooks()
    for pod in exercise.pods:
        exercise.pod(pod)
    return exercise.problems
