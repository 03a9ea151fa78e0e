"""Consumable capacity of devices that allow multiple allocations (upstream
``consumable_capacity.go``, DRAConsumableCapacity, beta and on in v1.36).

A request's ``capacity.requests`` is rounded up by the device capacity's ``requestPolicy``
(``validRange`` min/step, or the next of ``validValues``); a missing request consumes the policy's
``default`` (else the whole capacity). A device can be shared while the sum of what its
allocations consume stays within each capacity and every amount obeys the policy.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any, Mapping

from kschedfw.api.quantity import parse_quantity

# one amount of capacity: (value, canonical text) so results carry upstream's quantity text
Amount = tuple[Fraction, str]
ConsumedCapacity = dict[str, Fraction]

_BINARY = ((2**60, "Ei"), (2**50, "Pi"), (2**40, "Ti"), (2**30, "Gi"), (2**20, "Mi"), (2**10, "Ki"))
_DECIMAL = ((10**18, "E"), (10**15, "P"), (10**12, "T"), (10**9, "G"), (10**6, "M"), (10**3, "k"))
_SMALL = ((Fraction(1, 1000), "m"), (Fraction(1, 10**6), "u"), (Fraction(1, 10**9), "n"))


def canonical(value: Fraction, binary: bool) -> str:
    """resource.Quantity's canonical text in the given format (BinarySI or DecimalSI)."""
    if value.denominator == 1:
        n = value.numerator
        if n == 0:
            return "0"
        for factor, suffix in _BINARY if binary else _DECIMAL:
            if n % factor == 0:
                return f"{n // factor}{suffix}"
        if binary and abs(n) >= 1024:
            for factor, suffix in _DECIMAL:
                if n % factor == 0:
                    return f"{n // factor}{suffix}"
        return str(n)
    for fraction, suffix in _SMALL:
        scaled = value / fraction
        if scaled.denominator == 1:
            return f"{scaled.numerator}{suffix}"
    return str(math.ceil(value * 10**9)) + "n"


def amount(raw: Any) -> Amount:
    value = Fraction(parse_quantity(raw))
    return value, canonical(value, isinstance(raw, str) and raw.strip().endswith("i"))


class Capacity:
    """One entry of a device's ``capacity`` map with its request policy, parsed."""

    __slots__ = ("value", "default", "valid_min", "valid_max", "valid_step", "valid_values", "has_policy",
                 "has_range")

    def __init__(self, raw: Mapping[str, Any]) -> None:
        self.value = amount(raw.get("value", 0))
        policy = raw.get("requestPolicy")
        self.has_policy = policy is not None
        policy = policy or {}
        self.default = amount(policy["default"]) if policy.get("default") is not None else None
        valid_range = policy.get("validRange")
        self.has_range = valid_range is not None
        valid_range = valid_range or {}
        self.valid_min = amount(valid_range["min"]) if valid_range.get("min") is not None else None
        self.valid_max = amount(valid_range["max"]) if valid_range.get("max") is not None else None
        self.valid_step = amount(valid_range["step"]) if valid_range.get("step") is not None else None
        self.valid_values = [amount(v) for v in policy.get("validValues") or ()]

    def consumed(self, requested: Amount | None) -> Amount:
        """upstream calculateConsumedCapacity."""
        if requested is None:
            return self.default if self.default is not None else self.value
        if not self.has_policy:
            return requested
        if self.valid_min is not None:
            return self._round_up_range(requested)
        if self.valid_values:
            for valid in self.valid_values:
                if requested[0] <= valid[0]:
                    return valid
        return requested

    def _round_up_range(self, requested: Amount) -> Amount:
        assert self.valid_min is not None
        if requested[0] < self.valid_min[0]:
            return self.valid_min
        if self.valid_step is None:
            return requested
        lowest, step = math.ceil(self.valid_min[0]), math.ceil(self.valid_step[0])
        added = math.ceil(requested[0]) - lowest
        n = added // step + (1 if added % step else 0)
        value = Fraction(lowest + step * n)
        return value, canonical(value, True)

    def violates_policy(self, consumed: Amount) -> bool:
        if not self.has_policy:
            return False
        if self.default is not None and consumed[0] == self.default[0]:
            return False
        if self.has_range:
            if self.valid_max is not None and consumed[0] > self.valid_max[0]:
                return True
            if self.valid_step is not None:
                lowest = math.ceil(self.valid_min[0]) if self.valid_min is not None else 0
                if (math.ceil(consumed[0]) - lowest) % math.ceil(self.valid_step[0]):
                    return True
            return False
        if self.valid_values:
            return all(consumed[0] != v[0] for v in self.valid_values)
        return False


def parse_requests(capacity: Mapping[str, Any] | None) -> dict[str, Amount] | None:
    """A request's ``capacity.requests``, or None without requests."""
    if capacity is None or capacity.get("requests") is None:
        return None
    return {name: amount(raw) for name, raw in capacity["requests"].items()}


def fits(current: Mapping[str, Fraction], requests: dict[str, Amount] | None, capacities: Mapping[str, Capacity],
         allocating: Mapping[str, Fraction]) -> bool:
    """upstream CmpRequestOverCapacity; raises KeyError when a requested capacity does not exist."""
    if requests is not None:
        for name in requests:
            if name not in capacities:
                raise KeyError("some requested capacity has not been defined")
    for name, cap in capacities.items():
        consumed = cap.consumed(requests.get(name) if requests is not None else None)
        if cap.violates_policy(consumed):
            return False
        total = current.get(name, 0) + consumed[0] + allocating.get(name, 0)
        if total > cap.value[0]:
            return False
    return True


def consumed_from_request(requests: dict[str, Amount] | None, capacities: Mapping[str, Capacity]) -> dict[str, Amount]:
    """upstream GetConsumedCapacityFromRequest."""
    return {name: cap.consumed(requests.get(name) if requests is not None else None)
            for name, cap in capacities.items()}
