"""What scheduler_perf's ``updateAny`` writes: an object rendered from a template put over the stored one.

Upstream's harness (``update.go``) sends the rendered object as an Update (of the object, or of the
named ``subresources``, e.g. ``resize``), then the same object as an UpdateStatus. The API server
keeps the stored uid and creationTimestamp; the Update takes metadata and spec from the template
and keeps the stored status, a ``resize`` takes only the containers' resources; the UpdateStatus
then takes the template's status (empty when the template has none). So each call gives the two
states the watchers see, in order; a write that changes nothing is skipped, as the API server
sends no event for it.
"""

from __future__ import annotations

import copy
from typing import Any

__all__ = ["UpdateRefused", "update_states"]

_IGNORED_METADATA = ("resourceVersion", "managedFields", "generation")


class UpdateRefused(ValueError):
    """The API server would refuse the update (the message says why, as upstream's does)."""


def _kept_metadata(template_meta: dict[str, Any], current_meta: dict[str, Any]) -> dict[str, Any]:
    meta = dict(template_meta)
    for key in ("uid", "creationTimestamp", "namespace"):
        if current_meta.get(key):
            meta[key] = current_meta[key]
    if meta.get("name"):
        meta.pop("generateName", None)
    return meta


def _resized(current: dict[str, Any], template: dict[str, Any]) -> dict[str, Any]:
    """``current`` with the containers' resources (and resize policies) of ``template``, matched by
    container name (the ``resize`` subresource changes nothing else)."""
    out = copy.deepcopy(current)
    wanted = {c.get("name"): c for c in (template.get("spec") or {}).get("containers") or ()}
    for container in (out.get("spec") or {}).get("containers") or ():
        new = wanted.get(container.get("name"))
        if new is None:
            continue
        for key in ("resources", "resizePolicy"):
            if key in new:
                container[key] = copy.deepcopy(new[key])
            else:
                container.pop(key, None)
    return out


def _comparable(d: dict[str, Any]) -> dict[str, Any]:
    out = dict(d)
    out["metadata"] = {k: v for k, v in (d.get("metadata") or {}).items() if k not in _IGNORED_METADATA}
    return out


def update_states(kind: str, current: dict[str, Any], template: dict[str, Any],
                  subresources: tuple[str, ...] = ()) -> list[dict[str, Any]]:
    """The manifests the two writes leave (after the Update, after the UpdateStatus), without
    the writes that change nothing."""
    current = copy.deepcopy(current)
    template = copy.deepcopy(template)
    current_meta = current.get("metadata") or {}
    if subresources:
        unknown = [s for s in subresources if not (kind == "Pod" and s == "resize")]
        if unknown:
            raise UpdateRefused(f"the subresource(s) {', '.join(unknown)} of {kind} are not simulated")
        first = _resized(current, template)
    else:
        first = {**template, "metadata": _kept_metadata(template.get("metadata") or {}, current_meta)}
        first.pop("status", None)
        if current.get("status") is not None:
            first["status"] = current["status"]
        if kind == "Pod":
            old_node = (current.get("spec") or {}).get("nodeName") or ""
            new_node = (first.get("spec") or {}).get("nodeName") or ""
            if old_node != new_node:
                raise UpdateRefused(f'Pod "{current_meta.get("name")}" is invalid: spec: Forbidden: pod updates '
                                    f"may not change fields other than the mutable ones (spec.nodeName "
                                    f"{old_node!r} -> {new_node!r})")
    second = {k: v for k, v in first.items() if k != "status"}
    if template.get("status") is not None:
        second["status"] = template["status"]
    states = []
    previous = current
    for state in (first, second):
        if _comparable(state) != _comparable(previous):
            states.append(state)
            previous = state
    return states
