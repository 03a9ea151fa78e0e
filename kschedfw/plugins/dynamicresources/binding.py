"""Binding conditions of allocated devices (DRADeviceBindingConditions, beta and on in v1.36):
a claim whose devices are still being prepared, failed, or waited too long (upstream
``isClaimReadyForBinding`` and ``isClaimTimeout``)."""

from __future__ import annotations

import datetime as _dt
from typing import Any, Mapping

from kschedfw.api.accessors import name_of, status_of


class BindingFailed(Exception):
    """A binding failure condition of a device is true (upstream ErrDeviceBindingFailed)."""


class BindingTimeout(Exception):
    """Devices waited for their binding conditions past ``bindingTimeout`` (upstream
    ErrDeviceBindingTimeout)."""


def _results(claim: Any) -> list[Mapping[str, Any]]:
    allocation = status_of(claim).get("allocation") or {}
    return list((allocation.get("devices") or {}).get("results") or ())


def _device_status(claim: Any, result: Mapping[str, Any]) -> Mapping[str, Any] | None:
    devices: list[Mapping[str, Any]] = list(status_of(claim).get("devices") or ())
    return next((d for d in devices if all(d.get(k) == result.get(k) for k in ("driver", "pool", "device"))),
                None)


def _condition(device: Mapping[str, Any], type_: str) -> Mapping[str, Any] | None:
    return next((c for c in device.get("conditions") or () if c.get("type") == type_), None)


def has_binding_conditions(allocation: Mapping[str, Any] | None) -> bool:
    """Whether a device of an allocation result has binding conditions (upstream
    ``hasBindingConditions``, per claim)."""
    results = ((allocation or {}).get("devices") or {}).get("results") or ()
    return any(r.get("bindingConditions") for r in results)


def ready_for_binding(claim: Any) -> bool:
    """Whether every device with binding conditions has them all true; raises BindingFailed when
    a failure condition is true."""
    if status_of(claim).get("allocation") is None:
        return False
    for result in _results(claim):
        if not result.get("bindingConditions"):
            continue
        device = _device_status(claim, result)
        if device is None:
            return False
        for type_ in result.get("bindingFailureConditions") or ():
            failed = _condition(device, type_)
            if failed is not None and failed.get("status") == "True":
                raise BindingFailed(f"device binding failed: claim={name_of(claim)}, reason={failed.get('reason', '')}, "
                                    f"message={failed.get('message', '')!r}")
        for type_ in result["bindingConditions"]:
            met = _condition(device, type_)
            if met is None or met.get("status") != "True":
                return False
    return True


def timed_out(claim: Any, binding_timeout_seconds: float, now: _dt.datetime) -> bool:
    """Whether a device with binding conditions was allocated longer than the binding timeout ago."""
    allocation = status_of(claim).get("allocation") or {}
    stamp = allocation.get("allocationTimestamp")
    if not stamp or not any(r.get("bindingConditions") is not None for r in _results(claim)):
        return False
    allocated = _dt.datetime.fromisoformat(str(stamp).replace("Z", "+00:00"))
    if allocated.tzinfo is None:
        allocated = allocated.replace(tzinfo=_dt.timezone.utc)
    if now.tzinfo is None:
        now = now.replace(tzinfo=_dt.timezone.utc)
    return allocated + _dt.timedelta(seconds=binding_timeout_seconds) < now
