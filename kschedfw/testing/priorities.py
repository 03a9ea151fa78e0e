"""Pods given a priority as a user gives it: through a PriorityClass.

The API server refuses a pod whose ``spec.priority`` (or ``spec.preemptionPolicy``) differs from
what its PriorityClass gives (no class: 0 and ``PreemptLowerPriority``), and so does the embedded
cluster. :func:`with_priority_classes` turns pods built with ``make_pod(priority=N)`` into pods
naming a class of that value, with the classes; :func:`~kschedfw.testing.simulate_with` does so.
"""

from __future__ import annotations

from typing import Any, Iterable

from kschedfw.api import parse_object
from kschedfw.testing.builders import make_priority_class


def _given(obj: Any) -> tuple[int, str] | None:
    """The priority and policy a pod sets without naming a class."""
    spec = obj.raw.get("spec") or {} if type(obj).__name__ == "Pod" else {}
    if spec.get("priority") is None or spec.get("priorityClassName"):
        return None
    return spec["priority"], spec.get("preemptionPolicy") or "PreemptLowerPriority"


def class_name(priority: int, policy: str = "PreemptLowerPriority") -> str:
    name = f"priority-{priority}" if priority >= 0 else f"priority-minus-{-priority}"
    return name + ("-never" if policy == "Never" else "")


def named(obj: Any) -> Any:
    """The pod naming the class of its priority instead of setting it (anything else unchanged)."""
    given = _given(obj)
    if given is None:
        return obj
    spec = {k: v for k, v in obj.raw["spec"].items() if k not in ("priority", "preemptionPolicy")}
    return parse_object({**obj.raw, "spec": {**spec, "priorityClassName": class_name(*given)}})


def with_priority_classes(objects: Iterable[Any], *later: Iterable[Any]) -> list[Any]:
    """``objects`` with each pod's priority given by a class, those classes first; also the
    classes for the pods of ``later`` (those scenario steps create: pass them through :func:`named`)."""
    objects = list(objects)
    wanted = sorted({g for o in (*objects, *(x for more in later for x in more)) if (g := _given(o)) is not None})
    return [*(make_priority_class(class_name(p, policy), p, preemption_policy=policy) for p, policy in wanted),
            *(named(o) for o in objects)]
