"""A PodDisruptionBudget's status as the disruption controller computes it (upstream
``pkg/controller/disruption``, ``trySync``) from the pods it selects, for the objects a run
writes out. The embedded cluster runs no such controller during the run: the scheduler reads
each budget's status as the input gave it.

- the pods: those of the budget's namespace its selector matches (a missing selector matches
  none, an empty one every pod);
- ``expectedPods`` and ``desiredHealthy``: an integer ``minAvailable`` is ``desiredHealthy``
  and the pods are expected; a percentage ``minAvailable``, or ``maxUnavailable``, scales to the
  replicas of the pods' controllers (rounded up; ``desiredHealthy`` is ``expectedPods`` less
  ``maxUnavailable``, at least 0). Pods without a controller count for none. No workload
  controller runs in a simulation, so their replicas are what the input status said
  (``expectedPods``), or, without it, the controlled pods selected;
- ``currentHealthy``: the pods not being deleted, not in ``disruptedPods`` (an entry older than
  the two-minute deletion timeout no longer counts) and Ready. kschedfw runs no kubelet: a pod
  on a node with no Ready condition (one this run bound) counts as started and Ready;
- ``disruptionsAllowed``: ``currentHealthy - desiredHealthy``, 0 when negative or when no pod
  is expected; the ``DisruptionAllowed`` condition says whether it is above 0.
"""

from __future__ import annotations

import datetime as _dt
import math
from typing import TYPE_CHECKING, Any, Iterable

import attrs

from kschedfw.api.timestamps import rfc3339

if TYPE_CHECKING:
    from kschedfw.api import Pod, PodDisruptionBudget

__all__ = ["DELETION_TIMEOUT", "budget_status", "with_status_after"]

#: how long a pod in ``disruptedPods`` is expected to take to be deleted (upstream DeletionTimeout)
DELETION_TIMEOUT = _dt.timedelta(minutes=2)


def with_status_after(pdb: "PodDisruptionBudget", pods: Iterable["Pod"], now: _dt.datetime) -> "PodDisruptionBudget":
    """``pdb`` with the status the disruption controller writes for ``pods`` at ``now``."""
    raw = dict(pdb.raw)
    raw["status"] = budget_status(pdb, pods, now)
    return attrs.evolve(pdb, raw=raw, disruptions_allowed=raw["status"]["disruptionsAllowed"],
                        disrupted_pods=dict(raw["status"].get("disruptedPods") or {}))


def budget_status(pdb: "PodDisruptionBudget", pods: Iterable["Pod"], now: _dt.datetime) -> dict[str, Any]:
    """The ``status`` manifest (see the module docstring)."""
    selected = [p for p in pods if p.namespace == pdb.namespace and _selects(pdb, p)]
    given = pdb.raw.get("status")
    old: dict[str, Any] = given if isinstance(given, dict) else {}
    generation = (pdb.raw.get("metadata") or {}).get("generation") or 1
    try:
        expected, desired = _expected_and_desired(pdb, selected, old.get("expectedPods"))
    except ValueError as exc:  # upstream's failSafe: no disruption allowed, and why
        return {**old, "disruptionsAllowed": 0,
                "conditions": _conditions(old, 0, old.get("observedGeneration") or 0, now, failure=str(exc))}
    disrupted = _disrupted(pdb, selected, now)
    healthy = sum(1 for p in selected if p.deletion_timestamp is None and p.name not in disrupted and _ready(p))
    allowed = healthy - desired
    if expected <= 0 or allowed <= 0:
        allowed = 0
    status: dict[str, Any] = {"observedGeneration": generation}
    if disrupted:
        status["disruptedPods"] = disrupted
    status.update(disruptionsAllowed=allowed, currentHealthy=healthy, desiredHealthy=desired,
                  expectedPods=expected, conditions=_conditions(old, allowed, generation, now))
    return status


def _selects(pdb: "PodDisruptionBudget", pod: "Pod") -> bool:
    selector = pdb.selector
    return selector is not None and (selector.is_empty or selector.matches(pod.labels))


def _expected_and_desired(pdb: "PodDisruptionBudget", pods: list["Pod"], old_expected: Any) -> tuple[int, int]:
    min_available, max_unavailable = pdb.min_available, pdb.max_unavailable
    if max_unavailable is not None:
        expected = _scale(pods, old_expected)
        return expected, max(expected - _scaled(max_unavailable, expected), 0)
    if isinstance(min_available, int):
        return len(pods), min_available
    if min_available is not None:
        expected = _scale(pods, old_expected)
        return expected, _scaled(min_available, expected)
    return 0, 0


def _scale(pods: list["Pod"], old_expected: Any) -> int:
    """The replicas of the pods' controllers (see the module docstring)."""
    controlled = [p for p in pods if any(ref.get("controller") for ref in _owners(p))]
    if not controlled:
        return 0
    if isinstance(old_expected, int) and not isinstance(old_expected, bool) and old_expected > 0:
        return old_expected
    return len(controlled)


def _owners(pod: "Pod") -> list[dict[str, Any]]:
    refs = (pod.raw.get("metadata") or {}).get("ownerReferences") or ()
    return [r for r in refs if isinstance(r, dict)]


def _scaled(value: int | str, total: int) -> int:
    """An int-or-percent against ``total``, a percentage rounded up (GetScaledValueFromIntOrPercent)."""
    if isinstance(value, int):
        return value
    if not value.endswith("%") or not value[:-1].isdigit():
        raise ValueError("invalid value for IntOrString: invalid type: string is not a percentage")
    return math.ceil(int(value[:-1]) * total / 100)


def _disrupted(pdb: "PodDisruptionBudget", pods: list["Pod"], now: _dt.datetime) -> dict[str, str]:
    """The ``disruptedPods`` entries still pending: their pod is here, not being deleted, and
    the deletion timeout has not passed (upstream buildDisruptedPodMap)."""
    out = {}
    for pod in pods:
        since = pdb.disrupted_pods.get(pod.name)
        if since is None or pod.deletion_timestamp is not None:
            continue
        when = _dt.datetime.fromisoformat(since.replace("Z", "+00:00"))
        if when.tzinfo is None:
            when = when.replace(tzinfo=_dt.timezone.utc)
        if when + DELETION_TIMEOUT >= now:
            out[pod.name] = since
    return out


def _ready(pod: "Pod") -> bool:
    condition = pod.condition("Ready")
    if condition is not None:
        return condition.status == "True"
    return bool(pod.node_name) and pod.phase not in ("Succeeded", "Failed")


def _conditions(old: dict[str, Any], allowed: int, generation: int, now: _dt.datetime, *,
                failure: str = "") -> list[dict[str, Any]]:
    """The old conditions with ``DisruptionAllowed`` set (its transition time kept when its
    status does not change, as apimeta.SetStatusCondition keeps it)."""
    status, reason = ("True", "SufficientPods") if allowed > 0 else ("False", "InsufficientPods")
    message = ""
    if failure:
        status, reason, message = "False", "SyncFailed", failure
    conditions = [c for c in old.get("conditions") or () if isinstance(c, dict)]
    previous = next((c for c in conditions if c.get("type") == "DisruptionAllowed"), None)
    since = previous.get("lastTransitionTime") if previous is not None and previous.get("status") == status else None
    entry = {"type": "DisruptionAllowed", "status": status, "observedGeneration": generation,
             "lastTransitionTime": since or rfc3339(now), "reason": reason, "message": message}
    if previous is None:
        return conditions + [entry]
    return [entry if c is previous else c for c in conditions]
