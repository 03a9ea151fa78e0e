"""Run plugins the way the scheduler does, on a small cluster, and look at every number.

``PluginHarness(MyPlugin, nodes=[...]).filter(pod)`` gives the per-node Filter status after
PreFilter; ``.score(pod)`` the raw, normalised and weighted Score per plugin and node. Both run
the scheduler's own cycle (:mod:`kschedfw.cycle`) as a dry run over every node, with the same
guards: a plugin that raises or returns the wrong type, or a score outside [0, 100] after
normalising, gives the Error status the scheduler would report.
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping

import attrs

from kschedfw.api import Node, Pod
from kschedfw.cache.snapshot import Snapshot
from kschedfw.fwk.cycle_state import CycleState
from kschedfw.framework.handle import Handle
from kschedfw.cycle import ScheduleAlgorithm
from kschedfw.fwk.status import Code, Status
from kschedfw.framework.recorder import CycleRecord
from kschedfw.testing.profiles import framework_for


@attrs.frozen
class PluginScores:
    raw: dict[str, int]
    normalized: dict[str, int]
    weighted: dict[str, int]


@attrs.frozen
class ScoreReport:
    """Per plugin and node: raw, normalised and weighted scores; ``totals`` per node.

    ``status`` is the Error the scheduler would report (a plugin that failed, raised or
    returned a bad score, a score outside [0, 100] after normalising), None when scoring
    succeeded; the scores recorded up to the failure are kept (including the out-of-range ones)."""

    plugins: dict[str, PluginScores]
    totals: dict[str, int]
    skipped: frozenset[str]
    status: Status | None = None


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
    def __init__(self, *plugin_classes: type, nodes: Iterable[Node] = (), pods: Iterable[Pod] = (),
                 objects: Iterable[Any] = (), args: Mapping[str, Mapping] | None = None,
                 weights: Mapping[str, int] | None = None, fast_paths: bool = True) -> None:
        nodes, pods = list(nodes), list(pods)
        self.snapshot = Snapshot.from_objects(nodes, pods)
        handle = Handle(snapshot=self.snapshot, lister=_Objects([*nodes, *pods, *objects]))
        self.framework = framework_for(plugin_classes, handle=handle, args=args, weights=weights,
                                       fast_paths=fast_paths)
        self.plugins = self.framework.plugins
        self._algorithm = ScheduleAlgorithm(percentage_of_nodes_to_score=100)

    def cycle(self, pod: Pod) -> CycleRecord:
        """One dry-run scheduling cycle over every node; the record holds every fact of it."""
        record = CycleRecord()
        self._algorithm.schedule_pod(self.framework, CycleState(), pod, record, dry_run=True)
        return record

    def pre_filter(self, pod: Pod, state: CycleState | None = None) -> tuple[CycleState, Status | None]:
        """Run PreFilter alone; returns the state it filled and its status."""
        state = state or CycleState()
        _, status, _ = self.framework.run_pre_filter_plugins(state, pod, self.snapshot.node_infos())
        return state, status

    def filter(self, pod: Pod) -> dict[str, Status]:
        """Node name -> Status (Success when it fits), PreFilter first, as a scheduling cycle does.
        Nodes a PreFilter result excluded carry the scheduler's ``node(s) didn't satisfy
        plugin(s) [...]`` status naming the plugin. When PreFilter or Filter fails with an
        Error (which aborts a real cycle), every node gets that Error."""
        record = self.cycle(pod)
        if record.diagnosis is None and record.status is not None:
            return {ni.name: record.status for ni in self.snapshot.node_infos()}
        return {ni.name: record.node_status(ni.name) or Status(Code.Success) for ni in self.snapshot.node_infos()}

    def feasible(self, pod: Pod) -> list[str]:
        return [name for name, status in self.filter(pod).items() if status.is_success()]

    def score(self, pod: Pod, nodes: Iterable[str] | None = None) -> ScoreReport:
        """PreFilter, then PreScore, Score and NormalizeScore of every score plugin over ``nodes``
        (default: the feasible ones), through the scheduler's code; see :class:`ScoreReport`."""
        names = list(nodes) if nodes is not None else self.feasible(pod)
        state, status = self.pre_filter(pod)
        if status is not None and not status.is_success():
            raise AssertionError(f"PreFilter failed: {status.message()}")
        infos = [self.snapshot.get(n) for n in names]
        missing = [n for n, ni in zip(names, infos) if ni is None]
        if missing:
            raise AssertionError(f"no such node(s): {', '.join(missing)}")
        record = CycleRecord()
        _, status = self._algorithm.prioritize_nodes(self.framework, state, pod, infos, record)  # type: ignore[arg-type]
        plugins = {name: PluginScores(dict(s.raw), dict(s.normalized), dict(s.weighted))
                   for name, s in record.plugin_scores.items()}
        totals = dict(record.node_totals) if status is None else {}
        return ScoreReport(plugins, totals, frozenset(state.skip_score_plugins), status)
