"""Run plugins the way the scheduler does, on a small cluster, and look at every number.

:class:`PluginHarness` runs the scheduler's own code (:mod:`kschedfw.cycle`, the runtime's
extension points) as a dry run over every node, with the same guards: a plugin that raises or
returns the wrong type, or a score outside [0, 100] after normalising, gives the Error status the
scheduler would report. Every extension point it runs answers with one shape, a
:class:`PointReport`.
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping

import attrs

from kschedfw.api import Node, Pod
from kschedfw.cache.snapshot import Snapshot
from kschedfw.fwk.cycle_state import CycleState
from kschedfw.fwk.interface import Client
from kschedfw.framework.guard import PluginFaults
from kschedfw.framework.handle import Handle
from kschedfw.cycle import ScheduleAlgorithm
from kschedfw.fwk.status import Code, Status
from kschedfw.framework.recorder import CycleRecord
from kschedfw.testing.profiles import framework_for

__all__ = ["PluginHarness", "PointReport", "PluginScores"]


@attrs.frozen
class PluginScores:
    """One Score plugin's scores per node: as it returned them, after NormalizeScore, weighted."""

    raw: dict[str, int]
    normalized: dict[str, int]
    weighted: dict[str, int]


@attrs.frozen
class PointReport:
    """What an extension point (after the points a cycle runs before it) gave, node by node.

    ``statuses``: node name -> Status for every node the point looked at (Success when it passed
    or was scored; the rejection otherwise). ``status``: the point's own outcome, None when it
    succeeded: PreFilter's rejection, or the Error a real cycle would abort with (every node then
    carries it too). ``scores`` (Score only): per plugin its raw, normalised and weighted scores,
    kept up to a failure, out-of-range ones included; ``totals`` (Score only): node -> sum of the
    weighted scores. ``skipped``: the plugins that returned Skip (at PreFilter their Filter is
    skipped, at PreScore their Score). ``state``: the CycleState the run filled."""

    point: str
    statuses: dict[str, Status]
    status: Status | None = None
    scores: dict[str, PluginScores] = attrs.field(factory=dict)
    totals: dict[str, int] = attrs.field(factory=dict)
    skipped: frozenset[str] = frozenset()
    state: CycleState = attrs.field(factory=CycleState)

    @property
    def feasible(self) -> list[str]:
        """The nodes whose status is Success, in node order."""
        return [name for name, status in self.statuses.items() if status.is_success()]

    @property
    def ok(self) -> bool:
        """True when the point succeeded (it may still have rejected nodes)."""
        return self.status is None or self.status.is_success()


class _Objects:
    """A lister over the objects the test gives (Namespaces, PVCs, PodGroups, ...)."""

    def __init__(self, objects: Iterable[Any]) -> None:
        self._objects: dict[tuple[str, str, str], Any] = {}
        for obj in objects:
            kind = getattr(obj, "kind", None) or type(obj).__name__
            self._objects[(kind, getattr(obj, "namespace", "") or "", obj.name)] = obj

    def get(self, kind: str, name: str, namespace: str = "") -> Any:
        return self._objects.get((kind, namespace or "", name))

    def list(self, kind: str, namespace: str | None = None) -> list[Any]:
        return [o for (k, ns, _), o in self._objects.items() if k == kind and (namespace is None or ns == namespace)]


class PluginHarness:
    """A profile of ``plugin_classes`` (every point each implements, in this order) over a
    snapshot of ``nodes`` and ``pods``; ``objects`` are what the lister gives (Namespaces, PVCs,
    PodGroups...), ``client`` what the Handle writes through (none by default) and ``faults``
    where the runtime's guard reports plugin faults (logged by default).

    ``pre_filter``, ``filter`` and ``score`` each give a :class:`PointReport`::

        h = PluginHarness(MyPlugin, nodes=[make_node("a"), make_node("b", cpu="1")])
        report = h.filter(make_pod("web", cpu="2"))
        report.feasible                   # ["a"]
        report.statuses["b"].message()    # "Insufficient cpu": one Status per node
        report.status                     # None, or the Error a real cycle would abort with
        h.score(make_pod("web")).scores["MyPlugin"].normalized   # {"a": 100, "b": 0}
    """

    def __init__(self, *plugin_classes: type, nodes: Iterable[Node] = (), pods: Iterable[Pod] = (),
                 objects: Iterable[Any] = (), args: Mapping[str, Mapping] | None = None,
                 weights: Mapping[str, int] | None = None, fast_paths: bool = True,
                 client: Client | None = None, faults: PluginFaults | None = None) -> None:
        nodes, pods = list(nodes), list(pods)
        self.snapshot = Snapshot.from_objects(nodes, pods)
        handle = Handle.factory(snapshot=self.snapshot, lister=_Objects([*nodes, *pods, *objects]), client=client)
        self.framework = framework_for(plugin_classes, handle=handle, args=args, weights=weights,
                                       fast_paths=fast_paths, faults=faults)
        self.plugins = self.framework.plugins
        self._algorithm = ScheduleAlgorithm(percentage_of_nodes_to_score=100)

    def _names(self) -> list[str]:
        return [ni.name for ni in self.snapshot.node_infos()]

    def cycle(self, pod: Pod, state: CycleState | None = None) -> CycleRecord:
        """One dry-run scheduling cycle over every node; the record holds every fact of it."""
        record = CycleRecord()
        self._algorithm.schedule_pod(self.framework, state or CycleState(), pod, record, dry_run=True)
        return record

    def pre_filter(self, pod: Pod, state: CycleState | None = None) -> PointReport:
        """PreFilter alone. A rejection (``status``) is every node's status; nodes a
        PreFilterResult left out carry the scheduler's ``node(s) didn't satisfy plugin(s) [...]``."""
        state = state or CycleState()
        infos = self.snapshot.node_infos()
        result, status, plugins = self.framework.run_pre_filter_plugins(state, pod, infos)
        skipped = frozenset(state.skip_filter_plugins)
        if status is not None and not status.is_success():
            return PointReport("PreFilter", {ni.name: status for ni in infos}, status, skipped=skipped, state=state)
        left_out = Status(Code.UnschedulableAndUnresolvable,
                          (f"node(s) didn't satisfy plugin(s) [{' '.join(sorted(plugins))}]",))
        kept = result.node_names if result is not None else None
        statuses = {ni.name: Status(Code.Success) if kept is None or ni.name in kept else left_out for ni in infos}
        return PointReport("PreFilter", statuses, None, skipped=skipped, state=state)

    def filter(self, pod: Pod) -> PointReport:
        """PreFilter, then Filter on every node, as a scheduling cycle does. When PreFilter
        rejects, or PreFilter or Filter fails with an Error (which aborts a real cycle), every
        node gets that status and ``status`` is it."""
        state = CycleState()
        record = self.cycle(pod, state)
        skipped = frozenset(state.skip_filter_plugins)
        if record.diagnosis is None and record.status is not None:  # an Error aborted the cycle
            return PointReport("Filter", {name: record.status for name in self._names()}, record.status,
                               skipped=skipped, state=state)
        statuses = {name: record.node_status(name) or Status(Code.Success) for name in self._names()}
        pre = record.pre_filter_status
        status = pre if pre is not None and not pre.is_success() else None
        return PointReport("Filter", statuses, status, skipped=skipped, state=state)

    def feasible(self, pod: Pod) -> list[str]:
        """``filter(pod).feasible``."""
        return self.filter(pod).feasible

    def score(self, pod: Pod, nodes: Iterable[str] | None = None) -> PointReport:
        """PreFilter, then PreScore, Score and NormalizeScore of every score plugin over ``nodes``
        (default: the feasible ones), through the scheduler's code. A PreFilter that does not
        succeed is ``status`` (nothing is scored)."""
        names = list(nodes) if nodes is not None else self.feasible(pod)
        infos = [self.snapshot.get(n) for n in names]
        missing = [n for n, ni in zip(names, infos) if ni is None]
        if missing:
            raise AssertionError(f"no such node(s): {', '.join(missing)}")
        pre = self.pre_filter(pod)
        state = pre.state
        if not pre.ok:
            return PointReport("Score", {n: pre.statuses[n] for n in names}, pre.status, state=state)
        record = CycleRecord()
        _, status = self._algorithm.prioritize_nodes(self.framework, state, pod, infos, record)  # type: ignore[arg-type]
        scores = {name: PluginScores(dict(s.raw), dict(s.normalized), dict(s.weighted))
                  for name, s in record.plugin_scores.items()}
        totals = dict(record.node_totals) if status is None else {}
        statuses = {n: status if status is not None else Status(Code.Success) for n in names}
        return PointReport("Score", statuses, status, scores, totals, frozenset(state.skip_score_plugins), state)
