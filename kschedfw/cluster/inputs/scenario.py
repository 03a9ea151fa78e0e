"""Timed scenarios: pods and nodes arriving, changing and leaving on a simulated clock.

    kind: Scenario
    steps:
    - at: 0s
      create: [<manifest>, ...]        # or a single manifest
    - at: 30s
      removeSchedulingGate: {pod: default/web-0, gate: example.com/quota}   # gate omitted: all
    - at: 1m
      update: <manifest>
    - at: 2m
      delete: {kind: Pod, namespace: default, name: web-1}
    - advance: 5m                      # then let time run on

``at`` is absolute simulated time, ``advance`` moves it on from the previous step. Durations
are seconds (number) or Go-style strings (``1m30s``).
"""

from __future__ import annotations

import re
from typing import Any

import attrs

from kschedfw.api import parse_object
from kschedfw.api.field import ManifestError

_DURATION = re.compile(r"(\d+(?:\.\d+)?)(h|ms|m|s)")
_UNITS = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 0.001}
ACTIONS = ("create", "update", "delete", "removeSchedulingGate")


@attrs.frozen
class Step:
    at: float
    action: str  # create | update | delete | removeSchedulingGate | advance
    objects: tuple[Any, ...] = ()
    target: dict[str, Any] = attrs.field(factory=dict)
    line: int | None = None


def parse_duration(value: Any, *, source: str, line: int | None, field: str) -> float:
    if isinstance(value, bool):
        raise ManifestError("must be a duration like 30s or 1m30s", source=source, line=line, field=field)
    if isinstance(value, (int, float)):
        if value < 0:
            raise ManifestError("must not be negative", source=source, line=line, field=field)
        return float(value)
    if isinstance(value, str):
        text = value.strip()
        pos, total = 0, 0.0
        for match in _DURATION.finditer(text):
            if match.start() != pos:
                break
            total += float(match.group(1)) * _UNITS[match.group(2)]
            pos = match.end()
        if text and pos == len(text):
            return total
    raise ManifestError(f"invalid duration {value!r}: use seconds or a Go duration like 1m30s",
                        source=source, line=line, field=field)


def parse_scenario(document: dict[str, Any], *, source: str = "", lines: list[int | None] | None = None) -> list[Step]:
    """Steps in time order; ``lines`` gives each step's line in the file, for messages."""
    raw_steps = document.get("steps")
    if not isinstance(raw_steps, list):
        raise ManifestError("a Scenario needs a list of steps", source=source, field="steps")
    steps: list[Step] = []
    now = 0.0
    for i, raw in enumerate(raw_steps):
        line = lines[i] if lines and i < len(lines) else None
        field = f"steps[{i}]"
        if not isinstance(raw, dict):
            raise ManifestError("each step must be a mapping", source=source, line=line, field=field)
        if "at" in raw:
            at = parse_duration(raw["at"], source=source, line=line, field=f"{field}.at")
            if at < now:
                raise ManifestError(f"steps must be in time order ({at:g}s is before {now:g}s)",
                                    source=source, line=line, field=f"{field}.at")
            now = at
        if "advance" in raw:
            now += parse_duration(raw["advance"], source=source, line=line, field=f"{field}.advance")
            steps.append(Step(now, "advance", line=line))
        actions = [a for a in ACTIONS if a in raw]
        unknown = sorted(set(raw) - set(ACTIONS) - {"at", "advance"})
        if unknown:
            raise ManifestError(f"unknown field {unknown[0]!r}; a step has at/advance and one of "
                                f"{', '.join(ACTIONS)}", source=source, line=line, field=field)
        if len(actions) > 1:
            raise ManifestError(f"one action per step, found {', '.join(actions)}", source=source,
                                line=line, field=field)
        if not actions:
            if "advance" not in raw:
                raise ManifestError(f"a step needs one of {', '.join(ACTIONS)} or advance",
                                    source=source, line=line, field=field)
            continue
        action = actions[0]
        body = raw[action]
        if action in ("create", "update"):
            manifests = body if isinstance(body, list) else [body]
            objects = tuple(_parse(m, source, line, f"{field}.{action}") for m in manifests)
            steps.append(Step(now, action, objects=objects, line=line))
        else:
            if not isinstance(body, dict):
                raise ManifestError("must be a mapping", source=source, line=line, field=f"{field}.{action}")
            if action == "removeSchedulingGate" and not isinstance(body.get("pod"), str):
                raise ManifestError("needs pod: <namespace>/<name>", source=source, line=line,
                                    field=f"{field}.{action}.pod")
            if action == "delete" and not (isinstance(body.get("kind"), str) and isinstance(body.get("name"), str)):
                raise ManifestError("needs kind and name", source=source, line=line, field=f"{field}.delete")
            steps.append(Step(now, action, target=dict(body), line=line))
    return steps


def _parse(manifest: Any, source: str, line: int | None, field: str) -> Any:
    if not isinstance(manifest, dict):
        raise ManifestError("must be a Kubernetes object", source=source, line=line, field=field)
    try:
        return parse_object(manifest, source=source, line=line)
    except ManifestError:
        raise
    except (TypeError, ValueError) as exc:
        raise ManifestError(str(exc), source=source, line=line, field=field) from None
