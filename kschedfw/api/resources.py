"""Resource lists (``requests``, ``limits``, ``allocatable``...) as ``{name: int}`` dicts.

Amounts are canonical integers: ``cpu`` in millicores, everything else in whole units
(see :func:`kschedfw.api.quantity.resource_amount`).
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping

from kschedfw.api import _parse
from kschedfw.api.quantity import resource_amount

__all__ = ["Resources", "CPU", "MEMORY", "EPHEMERAL_STORAGE", "PODS", "DEFAULT_MILLI_CPU_REQUEST",
           "DEFAULT_MEMORY_REQUEST", "parse_resource_list", "add_resources", "max_resources",
           "is_scalar_resource", "is_hugepages", "is_extended_resource"]

Resources = dict[str, int]

CPU = "cpu"
MEMORY = "memory"
EPHEMERAL_STORAGE = "ephemeral-storage"
PODS = "pods"

# What scoring counts for a container that does not request cpu / memory (100m and 200Mi).
DEFAULT_MILLI_CPU_REQUEST = 100
DEFAULT_MEMORY_REQUEST = 200 * 1024 * 1024


def parse_resource_list(mapping: Any, *, field: str) -> dict[str, int]:
    """``{cpu: 100m, memory: 1Gi}`` -> ``{"cpu": 100, "memory": 1073741824}``.

    Raises :class:`~kschedfw.api.field.ManifestError` naming ``field.<resource>`` for a bad amount.
    """
    if not mapping:
        if mapping is None or isinstance(mapping, dict):
            return {}
    d = _parse.mapping(mapping, field)
    out: dict[str, int] = {}
    for name, raw in d.items():
        if not isinstance(name, str) or not name:
            raise _parse.fail(field, f"resource names must be non-empty strings, got {name!r}")
        try:
            out[name] = resource_amount(name, raw)
        except ValueError as exc:
            raise _parse.fail(f"{field}.{name}", str(exc)) from None
    return out


def add_resources(*lists: Mapping[str, int]) -> dict[str, int]:
    """Sum resource lists key by key."""
    out: dict[str, int] = {}
    for lst in lists:
        for k, v in lst.items():
            out[k] = out.get(k, 0) + v
    return out


def max_resources(lists: Iterable[Mapping[str, int]]) -> dict[str, int]:
    """Key-by-key maximum of resource lists."""
    out: dict[str, int] = {}
    for lst in lists:
        for k, v in lst.items():
            if k not in out or v > out[k]:
                out[k] = v
    return out


def is_hugepages(name: str) -> bool:
    return name.startswith("hugepages-")


def is_extended_resource(name: str) -> bool:
    """A name outside the ``kubernetes.io/`` namespace with a domain prefix (``example.com/gpu``)."""
    return "/" in name and "kubernetes.io/" not in name and not name.startswith("requests.")


def is_scalar_resource(name: str) -> bool:
    """Tracked by the scheduler as a "scalar": extended, hugepages or attachable-volumes-*."""
    return (is_hugepages(name) or is_extended_resource(name)
            or name.startswith("attachable-volumes-"))
