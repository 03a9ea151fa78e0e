"""The scheduling cycle's calls into extenders, at the points upstream makes them.

* ``scheduler.go`` ``buildExtenders``: :func:`build_extenders` and
  :func:`with_extender_ignored_resources`, when the scheduler is created;
* ``schedule_one.go`` ``findNodesThatPassExtenders``: :func:`find_nodes_that_pass_extenders`,
  after the Filter plugins (and on the nominated-node fast path);
* ``prioritizeNodes``: :func:`extender_scores` (or :func:`prioritize_with_extenders` for the
  per-extender detail), added to the plugins' weighted totals;
* ``extendersBinding``: :func:`extenders_binding`, before the Bind plugins;
(preemption's ``callExtenders`` is the preemption library's, :mod:`kschedfw.preemption.extenders`,
reaching the extenders through ``Handle.extenders``).
"""

from __future__ import annotations

import logging
from concurrent.futures import ThreadPoolExecutor

import attrs
from typing import TYPE_CHECKING, Any, Iterable, Mapping, Sequence

from kschedfw.extenders.http_extender import ExtenderConfigError, HTTPExtender
from kschedfw.extenders.transport import ExtenderError
from kschedfw.extenders.wire import MAX_EXTENDER_PRIORITY
from kschedfw.fwk.status import Status
from kschedfw.fwk.types import MAX_NODE_SCORE

if TYPE_CHECKING:
    from kschedfw.api import Pod
    from kschedfw.config import SchedulerConfig
    from kschedfw.fwk.types import NodeToStatus

__all__ = [
    "EXTENDER_NAME", "build_extenders", "ignored_extended_resources", "with_extender_ignored_resources",
    "close_extenders", "has_extender_filters",
    "has_prioritizing_extenders", "find_nodes_that_pass_extenders", "prioritize_with_extenders",
    "extender_scores", "extender_binder", "extenders_binding",
]

log = logging.getLogger(__name__)

FIT_PLUGIN = "NodeResourcesFit"

#: upstream ``framework.ExtenderName``: put in UnschedulablePlugins when extenders removed nodes,
#: so that any cluster event requeues the pod
EXTENDER_NAME = "Extender"


def _entries(config: Any) -> list[Any]:
    if hasattr(config, "document"):
        return list(config.document.get("extenders") or [])
    if isinstance(config, Mapping):
        return list(config.get("extenders") or [])
    return list(config or [])


def build_extenders(config: Any) -> list[HTTPExtender]:
    """One :class:`HTTPExtender` per ``extenders:`` entry: the non-ignorable ones in config
    order, then the ignorable ones (upstream ``buildExtenders`` puts them at the tail).
    ``config`` is a :class:`~kschedfw.config.SchedulerConfig`, its ``document``, or the list of
    entries. :class:`ExtenderConfigError` (naming ``extenders[i].field``) when an entry cannot be
    used, as kube-scheduler refuses to start."""
    built: list[HTTPExtender] = []
    try:
        for i, entry in enumerate(_entries(config)):
            if not isinstance(entry, Mapping):
                raise ExtenderConfigError(f"extenders[{i}]: must be an object")
            built.append(HTTPExtender.from_config(entry, i))
    except ExtenderConfigError:
        close_extenders(built)
        raise
    return [e for e in built if not e.is_ignorable()] + [e for e in built if e.is_ignorable()]


def ignored_extended_resources(config: Any) -> list[str]:
    """The ``managedResources`` marked ``ignoredByScheduler``, in config order."""
    return [str(r.get("name", "")) for entry in _entries(config) if isinstance(entry, Mapping)
            for r in entry.get("managedResources") or () if isinstance(r, Mapping) and r.get("ignoredByScheduler")]


def with_extender_ignored_resources(config: "SchedulerConfig") -> "SchedulerConfig":
    """``config`` with NodeResourcesFit's ``ignoredResources`` in every profile *replaced* by the
    extenders' ignored resources, when there are any (upstream ``buildExtenders``: the
    extenders take precedence over the plugin args). A profile without NodeResourcesFit args
    is refused as upstream refuses it."""
    ignored = ignored_extended_resources(config)
    if not ignored:
        return config
    profiles = []
    for profile in config.profiles:
        args = profile.plugin_args.get(FIT_PLUGIN)
        if args is None:
            raise ExtenderConfigError("can't find NodeResourcesFitArgs in plugin config")
        plugin_args = {**profile.plugin_args, FIT_PLUGIN: {**args, "ignoredResources": list(ignored)}}
        profiles.append(attrs.evolve(profile, plugin_args=plugin_args))
    return attrs.evolve(config, profiles=tuple(profiles))


def close_extenders(extenders: Iterable[HTTPExtender]) -> None:
    """Release the connection pools."""
    for extender in extenders:
        extender.close()


def has_extender_filters(extenders: Sequence[HTTPExtender]) -> bool:
    """Any filtering extender: then Filter may not stop at the first feasible node."""
    return any(e.is_filter() for e in extenders)


def has_prioritizing_extenders(extenders: Sequence[HTTPExtender]) -> bool:
    """Any prioritizing extender: counts as scoring for ``numNodesToFind``."""
    return any(e.is_prioritizer() for e in extenders)


def find_nodes_that_pass_extenders(extenders: Sequence[HTTPExtender], pod: "Pod", feasible_nodes: Sequence[Any],
                                   node_to_status: "NodeToStatus", *,
                                   unschedulable_plugins: set[str] | None = None
                                   ) -> tuple[list[Any], Status | None]:
    """Run the interested filtering extenders one after another on what the previous ones kept.

    Nodes an extender rejects get ``UnschedulableAndUnresolvable`` (``failedAndUnresolvableNodes``,
    which wins) or ``Unschedulable`` (``failedNodes``) with the extender's message in
    ``node_to_status``. An ignorable extender's failure is skipped; any other failure ends the
    search with an Error status (feasible list empty). ``feasible_nodes`` may hold NodeInfos or
    Nodes; the kept ones are returned. Pass the diagnosis' ``unschedulable_plugins`` on the
    main path (not the nominated-node one) to get ``Extender`` added when nodes were removed.
    """
    feasible = list(feasible_nodes)
    before = len(feasible)
    for extender in extenders:
        if not feasible:
            break
        if not extender.is_interested(pod):
            continue
        try:
            kept, failed, unresolvable = extender.filter(pod, feasible)
        except ExtenderError as exc:
            if extender.is_ignorable():
                log.info("Skipping extender as it returned error and has ignorable flag set: extender=%s err=%s",
                         extender.name, exc)
                continue
            return [], Status.as_status(exc)
        for name, message in unresolvable.items():
            node_to_status.set(name, Status.unresolvable(message))
        for name, message in failed.items():
            if name not in unresolvable:
                node_to_status.set(name, Status.unschedulable(message))
        feasible = kept
    if unschedulable_plugins is not None and len(feasible) != before:
        unschedulable_plugins.add(EXTENDER_NAME)
    return feasible, None


def prioritize_with_extenders(extenders: Sequence[HTTPExtender], pod: "Pod", nodes: Sequence[Any]
                              ) -> dict[str, list[tuple[str, int]]]:
    """Node name -> ``[(extender name, final score)]`` for the interested extenders, each score
    ``score × weight × (MaxNodeScore / MaxExtenderPriority)``. The extenders are asked in
    parallel, as upstream does; a failing one gives no score (errors are ignored). Only nodes of
    ``nodes`` are kept; the per-node list follows the config order of the extenders."""
    interested = [e for e in extenders if e.is_interested(pod)]
    if not interested or not nodes:
        return {}

    def ask(extender: HTTPExtender) -> tuple[list[tuple[str, int]], int] | None:
        try:
            return extender.prioritize(pod, nodes)
        except ExtenderError as exc:
            log.debug("Failed to run extender's priority function. No score given by this extender: "
                      "extender=%s err=%s", extender.name, exc)
            return None

    asked = sum(1 for e in interested if e.is_prioritizer())
    if asked > 1:
        with ThreadPoolExecutor(max_workers=asked) as pool:
            answers = list(pool.map(ask, interested))
    else:
        answers = [ask(e) for e in interested]
    names = {getattr(n, "name", "") for n in nodes}
    scale = MAX_NODE_SCORE // MAX_EXTENDER_PRIORITY
    out: dict[str, list[tuple[str, int]]] = {}
    for extender, answer in zip(interested, answers):
        if answer is None:
            continue
        scores, weight = answer
        for host, score in scores:
            if host in names:
                out.setdefault(host, []).append((extender.name, score * weight * scale))
    return out


def extender_scores(extenders: Sequence[HTTPExtender], pod: "Pod", nodes: Sequence[Any]) -> dict[str, int]:
    """Node name -> the extenders' weighted, scaled sum, to add to the framework's total score
    (nodes no extender scored are absent)."""
    return {node: sum(s for _, s in parts)
            for node, parts in prioritize_with_extenders(extenders, pod, nodes).items()}


def extender_binder(extenders: Sequence[HTTPExtender], pod: "Pod") -> HTTPExtender | None:
    """The first binding extender interested in ``pod`` (validation allows at most one binder)."""
    for extender in extenders:
        if extender.is_binder() and extender.is_interested(pod):
            return extender
    return None


def extenders_binding(extenders: Sequence[HTTPExtender], pod: "Pod", node_name: str
                      ) -> tuple[bool, Status | None]:
    """Upstream ``extendersBinding``: ``(handled, status)``. ``handled`` False means no extender
    bound the pod and the Bind plugins run; otherwise ``status`` is the binding's result (None
    for success, Error when the extender failed). An ignorable binder's failure falls through."""
    for extender in extenders:
        if not extender.is_binder() or not extender.is_interested(pod):
            continue
        try:
            extender.bind(pod, node_name)
        except ExtenderError as exc:
            if extender.is_ignorable():
                log.info("Skipping extender in bind as it returned error and has ignorable flag set: "
                         "extender=%s err=%s", extender.name, exc)
                continue
            return True, Status.as_status(exc)
        return True, None
    return False, None
