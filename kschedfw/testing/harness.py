"""Run plugins the way the scheduler does, on a small cluster, and look at every number.

``PluginHarness(MyPlugin, nodes=[...]).filter(pod)`` gives the per-node Filter status after
PreFilter; ``.score(pod)`` the raw, normalised and weighted Score per plugin and node.
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping

import attrs

from kschedfw.api import Node, Pod
from kschedfw.cache.snapshot import Snapshot
from kschedfw.framework.cycle_state import CycleState
from kschedfw.framework.handle import Handle
from kschedfw.framework.status import Code, Status
from kschedfw.framework.types import NodeScore
from kschedfw.testing.profiles import framework_for


@attrs.frozen
class PluginScores:
    raw: dict[str, int]
    normalized: dict[str, int]
    weighted: dict[str, int]


@attrs.frozen
class ScoreReport:
    """Per plugin and node: raw, normalised and weighted scores; ``totals`` per node."""

    plugins: dict[str, PluginScores]
    totals: dict[str, int]
    skipped: frozenset[str]


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
                 weights: Mapping[str, int] | None = None) -> None:
        nodes, pods = list(nodes), list(pods)
        self.snapshot = Snapshot.from_objects(nodes, pods)
        handle = Handle(snapshot=self.snapshot, lister=_Objects([*nodes, *pods, *objects]))
        self.framework = framework_for(plugin_classes, handle=handle, args=args, weights=weights)
        self.plugins = self.framework.plugins

    def pre_filter(self, pod: Pod, state: CycleState | None = None) -> tuple[CycleState, Status | None]:
        state = state or CycleState()
        result, status, _ = self.framework.run_pre_filter_plugins(state, pod, self.snapshot.node_infos())
        if (status is None or status.is_success()) and result is not None and not result.all_nodes():
            state.write("kschedfw.testing/pre-filter-nodes", result.node_names)
        return state, status

    def filter(self, pod: Pod) -> dict[str, Status]:
        """Node name -> Status (Success when it fits), PreFilter first, as a scheduling cycle does."""
        state, status = self.pre_filter(pod)
        if status is not None and not status.is_success():
            return {ni.name: status for ni in self.snapshot.node_infos()}
        allowed = state.get("kschedfw.testing/pre-filter-nodes")
        out = {}
        for ni in self.snapshot.node_infos():
            if allowed is not None and ni.name not in allowed:
                out[ni.name] = Status.unresolvable("node(s) didn't satisfy plugin(s) PreFilter result")
                continue
            out[ni.name] = self.framework.run_filter_plugins(state, pod, ni) or Status(Code.Success)
        return out

    def feasible(self, pod: Pod) -> list[str]:
        return [name for name, status in self.filter(pod).items() if status.is_success()]

    def score(self, pod: Pod, nodes: Iterable[str] | None = None) -> ScoreReport:
        """Run PreScore, Score and NormalizeScore of every score plugin over ``nodes`` (default:
        the feasible ones); raises AssertionError when a plugin fails."""
        state, status = self.pre_filter(pod)
        names = list(nodes) if nodes is not None else self.feasible(pod)
        infos = [self.snapshot.get(n) for n in names]
        status = self.framework.run_pre_score_plugins(state, pod, infos)
        if status is not None:
            raise AssertionError(f"PreScore failed: {status}")
        plugins: dict[str, PluginScores] = {}
        totals = {n: 0 for n in names}
        for name, fn, weight, normalize in self.framework.score_plugins:
            if name in state.skip_score_plugins:
                continue
            raw = {}
            for ni in infos:
                value = fn(state, pod, ni)
                if isinstance(value, tuple):
                    value, st = value
                    if st is not None and not st.is_success():
                        raise AssertionError(f"Score of {name} on {ni.name} failed: {st}")
                raw[ni.name] = int(value)
            scores = [NodeScore(n, v) for n, v in raw.items()]
            if normalize is not None:
                st = normalize(state, pod, scores)
                if st is not None and not st.is_success():
                    raise AssertionError(f"NormalizeScore of {name} failed: {st}")
            normalized = {s.name: s.score for s in scores}
            weighted = {n: v * weight for n, v in normalized.items()}
            for n, v in weighted.items():
                totals[n] += v
            plugins[name] = PluginScores(raw, normalized, weighted)
        return ScoreReport(plugins, totals, frozenset(state.skip_score_plugins))
