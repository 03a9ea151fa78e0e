"""Shrink a scenario on which kschedfw and kube-scheduler disagree to a small one that still does.

Delta debugging (Zeller's ddmin) over *units*: a unit is something that can be taken out of the
scenario (a pod; a node with the pods bound to it; an object nothing else needs; a profile; a
plugin's args; an affinity term, a toleration, a container, a label...). A candidate is the
scenario without some units; it is kept when ``differs`` still says yes. Passes run coarse to
fine (pods, nodes, objects, profiles, then the fields of config, pods and nodes), and again while
one of them removed something, until the time budget is spent.

``differs`` is a real scheduler run (seconds), so calls are saved where possible: every
candidate is first tried without any of a pass's units (most are unrelated to a difference),
identical candidates are asked once, and a call that raises (say the API server refused a
candidate) counts as "no longer differs".
"""

from __future__ import annotations

import copy
import json
import time
from typing import Any, Callable, Iterable, Sequence

import attrs

from tests.differential.scenario import Scenario

Path = tuple[Any, ...]  # keys and indices from the scenario's root {"config", "objects", "pods"}
Unit = tuple[Path, ...]  # paths removed together
_GONE = object()


class _NoProfile(Exception):
    """A candidate without any profile: not a configuration, never asked about."""

#: resources whose requests must equal their limits (the API server's rule for extended resources)
_OVERCOMMITTABLE = {"cpu", "memory", "ephemeral-storage"}


def shrink(scenario: Scenario, differs: Callable[[Scenario], bool], budget_s: float) -> Scenario:
    """The smallest scenario found within ``budget_s`` seconds that ``differs`` (``scenario``
    itself is assumed to differ and is not asked again)."""
    return _Shrinker(scenario, differs, time.monotonic() + budget_s).run()


class _Shrinker:
    def __init__(self, scenario: Scenario, differs: Callable[[Scenario], bool], deadline: float) -> None:
        self.best = scenario
        self.differs = differs
        self.deadline = deadline
        self.answers: dict[str, bool] = {_key(scenario): True}
        self.calls = 0

    def run(self) -> Scenario:
        passes = (_pod_units, _node_units, _object_units, _profile_units, _config_field_units,
                  _pod_field_units, _object_field_units)
        changed = True
        while changed and not self.out_of_time():
            changed = False
            for units_of in passes:
                before = self.best
                units = list(units_of(_tree(self.best)))
                if units:
                    self.ddmin(units)
                changed |= self.best is not before
        return self.best

    def out_of_time(self) -> bool:
        return time.monotonic() >= self.deadline

    def ask(self, candidate: Scenario) -> bool:
        """Whether ``candidate`` still differs (once per distinct candidate; False after the deadline)."""
        key = _key(candidate)
        if key not in self.answers:
            if self.out_of_time():
                return False
            self.calls += 1
            try:
                self.answers[key] = bool(self.differs(candidate))
            except Exception:  # noqa: BLE001 - an invalid candidate reproduces nothing
                self.answers[key] = False
        return self.answers[key]

    def ddmin(self, units: list[Unit]) -> None:
        """Remove as many of ``units`` from ``self.best`` as keeps it differing."""
        base = self.best

        def holds(kept: Sequence[Unit]) -> bool:
            keep = set(kept)
            try:
                candidate = _without(base, [u for u in units if u not in keep])
            except _NoProfile:
                return False
            if self.ask(candidate):
                if _size(candidate) < _size(self.best):
                    self.best = candidate
                return True
            return False

        if holds([]):
            return
        kept, n = list(units), 2
        while len(kept) >= 2 and not self.out_of_time():
            chunks = _split(kept, n)
            for chunk in chunks:
                if holds(chunk):
                    kept, n = chunk, 2
                    break
            else:
                for i in range(len(chunks)):
                    complement = [u for j, c in enumerate(chunks) if j != i for u in c]
                    if n > 2 and holds(complement):
                        kept, n = complement, max(n - 1, 2)
                        break
                else:
                    if n >= len(kept):
                        return
                    n = min(len(kept), 2 * n)


def _split(items: list[Unit], n: int) -> list[list[Unit]]:
    size, extra = divmod(len(items), n)
    out, start = [], 0
    for i in range(n):
        end = start + size + (1 if i < extra else 0)
        out.append(items[start:end])
        start = end
    return [c for c in out if c]


# ---------------------------------------------------------------------- applying removals
def _tree(s: Scenario) -> dict[str, Any]:
    return {"config": s.config, "objects": list(s.objects), "pods": list(s.pods)}


def _without(s: Scenario, units: Iterable[Unit]) -> Scenario:
    """``s`` without what ``units`` name. Lists and maps emptied by the removal go too (an
    affinity with no terms left is no affinity), and pods of a removed profile move to the
    first one left."""
    tree = copy.deepcopy(_tree(s))
    for path in (path for unit in units for path in unit):
        parent: Any = tree
        for step in path[:-1]:
            parent = parent[step]
            if parent is _GONE:  # inside something already removed
                break
        else:
            parent[path[-1]] = _GONE
    config = _compact(tree["config"])
    if "profiles" not in config:
        raise _NoProfile
    objects, pods = ([] if (c := _compact(tree[part])) is _GONE else c for part in ("objects", "pods"))
    names = {p["schedulerName"] for p in config["profiles"]}
    for pod in pods:
        if pod["spec"].get("schedulerName") not in names:
            pod["spec"]["schedulerName"] = config["profiles"][0]["schedulerName"]
    return attrs.evolve(s, config=config, objects=tuple(objects), pods=tuple(pods))


def _compact(x: Any) -> Any:
    if isinstance(x, dict):
        kept_map = {k: c for k, v in x.items() if v is not _GONE and (c := _compact(v)) is not _GONE}
        return _GONE if x and not kept_map else kept_map
    if isinstance(x, list):
        kept_list = [c for v in x if v is not _GONE and (c := _compact(v)) is not _GONE]
        return _GONE if x and not kept_list else kept_list
    return x


def _key(s: Scenario) -> str:
    return json.dumps([s.config, s.objects, s.pods], sort_keys=True)


def _size(s: Scenario) -> int:
    return len(_key(s))


# ---------------------------------------------------------------------- units, coarse to fine
def _pod_units(tree: dict[str, Any]) -> Iterable[Unit]:
    return [(("pods", i),) for i in range(len(tree["pods"]))]


def _node_units(tree: dict[str, Any]) -> Iterable[Unit]:
    """A node, with the pods bound to it (they would refer to a node that is not there)."""
    for k, obj in enumerate(tree["objects"]):
        if obj["kind"] == "Node":
            bound = [("pods", i) for i, p in enumerate(tree["pods"])
                     if p["spec"].get("nodeName") == obj["metadata"]["name"]]
            yield (("objects", k), *bound)


def _object_units(tree: dict[str, Any]) -> Iterable[Unit]:
    """Objects the pods can do without: owners, Services and PDBs (they only change scores and
    victims), classes no pod names, namespaces no pod is in."""
    pods = [p["spec"] for p in tree["pods"]]
    named = {s.get("priorityClassName") for s in pods} | {s.get("runtimeClassName") for s in pods}
    used_namespaces = {p["metadata"]["namespace"] for p in tree["pods"]}
    for k, obj in enumerate(tree["objects"]):
        kind, name = obj["kind"], obj["metadata"]["name"]
        if (kind in ("ReplicaSet", "Service", "PodDisruptionBudget")
                or kind in ("PriorityClass", "RuntimeClass") and name not in named
                or kind == "Namespace" and name not in used_namespaces):
            yield (("objects", k),)


def _profile_units(tree: dict[str, Any]) -> Iterable[Unit]:
    profiles = tree["config"]["profiles"]
    return [(("config", "profiles", i),) for i in range(len(profiles))] if len(profiles) > 1 else []


def _config_field_units(tree: dict[str, Any]) -> Iterable[Unit]:
    for i, profile in enumerate(tree["config"]["profiles"]):
        at: Path = ("config", "profiles", i)
        for j, entry in enumerate(profile.get("pluginConfig", [])):
            yield ((*at, "pluginConfig", j),)
            args = entry.get("args", {})
            for r in range(1, len(args.get("scoringStrategy", {}).get("resources", []))):
                yield ((*at, "pluginConfig", j, "args", "scoringStrategy", "resources", r),)
            if len(args.get("addedAffinity", {})) > 1:
                yield from (((*at, "pluginConfig", j, "args", "addedAffinity", key),)
                            for key in args["addedAffinity"])
        for point in ("enabled", "disabled"):
            for j in range(len(profile.get("plugins", {}).get("score", {}).get(point, []))):
                yield ((*at, "plugins", "score", point, j),)


def _pod_field_units(tree: dict[str, Any]) -> Iterable[Unit]:
    for i, pod in enumerate(tree["pods"]):
        at: Path = ("pods", i)
        meta, spec = pod["metadata"], pod["spec"]
        yield from (((*at, "metadata", "labels", k),) for k in meta.get("labels", {}))
        if "ownerReferences" in meta:
            yield ((*at, "metadata", "ownerReferences"),)
        for field in ("runtimeClassName", "priorityClassName", "hostNetwork", "resources"):
            if field in spec:
                yield ((*at, "spec", field),)
        yield from (((*at, "spec", "nodeSelector", k),) for k in spec.get("nodeSelector", {}))
        for field in ("tolerations", "topologySpreadConstraints", "initContainers"):
            yield from (((*at, "spec", field, j),) for j in range(len(spec.get(field, []))))
        for j, constraint in enumerate(spec.get("topologySpreadConstraints", [])):
            yield from (((*at, "spec", "topologySpreadConstraints", j, field),) for field in
                        ("minDomains", "nodeAffinityPolicy", "nodeTaintsPolicy", "matchLabelKeys")
                        if field in constraint)
        yield from (((*at, "spec", "containers", j),) for j in range(1, len(spec["containers"])))
        for j, container in enumerate(spec["containers"]):
            yield from _container_units((*at, "spec", "containers", j), container)
        yield from _affinity_units((*at, "spec", "affinity"), spec.get("affinity", {}))


def _container_units(at: Path, container: dict[str, Any]) -> Iterable[Unit]:
    if "ports" in container:
        yield ((*at, "ports"),)
    resources = container.get("resources", {})
    requests, limits = resources.get("requests", {}), resources.get("limits", {})
    for name in {**requests, **limits}:
        both = tuple((*at, "resources", part, name) for part, given in (("requests", requests),
                                                                         ("limits", limits)) if name in given)
        yield both
        if name in limits and name in requests and name in _OVERCOMMITTABLE:
            yield ((*at, "resources", "limits", name),)


def _affinity_units(at: Path, affinity: dict[str, Any]) -> Iterable[Unit]:
    node = affinity.get("nodeAffinity", {})
    required = node.get("requiredDuringSchedulingIgnoredDuringExecution", {})
    for j in range(len(required.get("nodeSelectorTerms", []))):
        yield ((*at, "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution", "nodeSelectorTerms", j),)
    for j in range(len(node.get("preferredDuringSchedulingIgnoredDuringExecution", []))):
        yield ((*at, "nodeAffinity", "preferredDuringSchedulingIgnoredDuringExecution", j),)
    for kind in ("podAffinity", "podAntiAffinity"):
        terms = affinity.get(kind, {})
        for j, term in enumerate(terms.get("requiredDuringSchedulingIgnoredDuringExecution", [])):
            term_at: Path = (*at, kind, "requiredDuringSchedulingIgnoredDuringExecution", j)
            yield (term_at,)
            yield from _pod_term_units(term_at, term)
        for j, weighted in enumerate(terms.get("preferredDuringSchedulingIgnoredDuringExecution", [])):
            term_at = (*at, kind, "preferredDuringSchedulingIgnoredDuringExecution", j)
            yield (term_at,)
            yield from _pod_term_units((*term_at, "podAffinityTerm"), weighted["podAffinityTerm"])


def _pod_term_units(at: Path, term: dict[str, Any]) -> Iterable[Unit]:
    return [((*at, field),) for field in ("namespaces", "namespaceSelector", "matchLabelKeys",
                                          "mismatchLabelKeys") if field in term]


def _object_field_units(tree: dict[str, Any]) -> Iterable[Unit]:
    """Node labels (but the hostname), taints, images, extended resources; namespace labels."""
    for k, obj in enumerate(tree["objects"]):
        at: Path = ("objects", k)
        if obj["kind"] == "Namespace":
            yield from (((*at, "metadata", "labels", key),) for key in obj["metadata"].get("labels", {}))
        if obj["kind"] != "Node":
            continue
        yield from (((*at, "metadata", "labels", key),) for key in obj["metadata"]["labels"]
                    if key != "kubernetes.io/hostname")
        spec, status = obj.get("spec", {}), obj["status"]
        yield from (((*at, "spec", "taints", j),) for j in range(len(spec.get("taints", []))))
        if "unschedulable" in spec:
            yield ((*at, "spec", "unschedulable"),)
        yield from (((*at, "status", "images", j),) for j in range(len(status.get("images", []))))
        yield from (tuple((*at, "status", part, name) for part in ("capacity", "allocatable")
                          if name in status.get(part, {}))
                    for name in status.get("capacity", {}) if "/" in name)  # extended resources
