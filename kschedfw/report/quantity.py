"""Resource amounts as a person reads them (``14.5Gi``, ``500m``, ``4``), not as the cache holds
them (``15604219904`` bytes, ``500`` millicores). The report keeps the exact figure beside each
shown one (a ``title`` or ``data-`` attribute), so nothing is lost by rounding."""

from __future__ import annotations

__all__ = ["format_cpu", "format_bytes", "format_amount", "is_bytes"]

#: binary units, largest first, as Kubernetes quantities write them
_BINARY = (("Pi", 2**50), ("Ti", 2**40), ("Gi", 2**30), ("Mi", 2**20), ("Ki", 2**10))


def _trim(value: float) -> str:
    """One decimal at most, none when it is zero: ``14.5``, ``4``."""
    text = f"{value:.1f}"
    return text[:-2] if text.endswith(".0") else text


def format_cpu(millicores: int) -> str:
    """``500m`` below one core, cores otherwise (``4``, ``1.5``, ``0`` for none)."""
    if millicores == 0:
        return "0"
    if abs(millicores) < 1000:
        return f"{millicores}m"
    return _trim(millicores / 1000)


def format_bytes(amount: int) -> str:
    """The largest binary unit the amount reaches, one decimal: ``14.5Gi``, ``512Mi``, ``900``."""
    for unit, size in _BINARY:
        if abs(amount) >= size:
            return _trim(amount / size) + unit
    return str(amount)


def is_bytes(resource: str) -> bool:
    """Resources counted in bytes: memory, ephemeral storage and huge pages."""
    return resource in ("memory", "ephemeral-storage") or resource.startswith("hugepages-")


def format_amount(resource: str, amount: int) -> str:
    """Any resource in its unit: cpu in cores, byte resources binary, the rest (pods, extended
    resources such as ``nvidia.com/gpu``) as counts."""
    if resource == "cpu":
        return format_cpu(amount)
    if is_bytes(resource):
        return format_bytes(amount)
    return str(amount)
