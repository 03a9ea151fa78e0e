"""Kubernetes ``resource.Quantity`` values (``100m``, ``1Gi``, ``1e3``, ``0.5``...).

A quantity is an optionally signed decimal number followed by at most one suffix:

* a decimal SI suffix: ``n`` (1e-9), ``u`` (1e-6), ``m`` (1e-3), none, ``k``, ``M``, ``G``, ``T``,
  ``P``, ``E`` (1e18);
* a binary suffix: ``Ki``, ``Mi``, ``Gi``, ``Ti``, ``Pi``, ``Ei`` (powers of 1024);
* a decimal exponent: ``e``/``E`` followed by an optionally signed integer (``1e3``, ``1.5E-3``).

Values are kept exact (:class:`fractions.Fraction`, or ``int`` when whole). The scheduler works
with integers: :func:`milli_value` and :func:`value` round up (away from zero), as the API
machinery does.
"""

from __future__ import annotations

import math
import re
from fractions import Fraction
from functools import lru_cache
from typing import Any

__all__ = ["parse_quantity", "milli_value", "value", "resource_amount", "format_quantity"]

_DECIMAL_SUFFIX: dict[str, Fraction | int] = {
    "n": Fraction(1, 10**9), "u": Fraction(1, 10**6), "m": Fraction(1, 1000), "": 1,
    "k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12, "P": 10**15, "E": 10**18,
}
_BINARY_SUFFIX = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}

_QUANTITY_RE = re.compile(
    r"(?P<sign>[+-]?)(?P<int>[0-9]*)(?:\.(?P<frac>[0-9]*))?"
    r"(?:(?P<exp>[eE][+-]?[0-9]+)|(?P<suffix>[KMGTPE]i|[numkMGTPE])?)"
)

_HELP = ("expected a number with an optional suffix: n, u, m, k, M, G, T, P, E (powers of 1000), "
         "Ki, Mi, Gi, Ti, Pi, Ei (powers of 1024) or an exponent such as 1e3")


def _invalid(text: Any) -> ValueError:
    return ValueError(f"invalid quantity {text!r}: {_HELP}")


@lru_cache(maxsize=8192)
def _parse_text(text: str) -> Fraction | int:
    m = _QUANTITY_RE.fullmatch(text)
    if m is None:
        raise _invalid(text)
    whole, frac = m.group("int"), m.group("frac")
    if not whole and not frac:
        raise _invalid(text)
    number: Fraction | int = int(whole or "0")
    if frac:
        number = number + Fraction(int(frac), 10 ** len(frac))
    exp = m.group("exp")
    if exp is not None:
        power = int(exp[1:])
        if abs(power) > 1000:
            raise ValueError(f"invalid quantity {text!r}: exponent out of range")
        number = number * (Fraction(10) ** power)
    else:
        suffix = m.group("suffix") or ""
        number = number * (_BINARY_SUFFIX.get(suffix) or _DECIMAL_SUFFIX[suffix])
    if m.group("sign") == "-":
        number = -number
    if isinstance(number, Fraction) and number.denominator == 1:
        return int(number)
    return number


def parse_quantity(value: Any) -> Fraction | int:
    """Parse a quantity given as a string, an int or a float (as YAML delivers ``cpu: 2``).

    Raises :class:`ValueError` with a message saying what is accepted.
    """
    if isinstance(value, str):
        return _parse_text(value.strip())
    if isinstance(value, bool) or value is None:
        raise _invalid(value)
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise _invalid(value)
        # repr() gives the shortest decimal that round-trips: the number the user wrote.
        number = Fraction(repr(value))
        return int(number) if number.denominator == 1 else number
    if isinstance(value, Fraction):
        return int(value) if value.denominator == 1 else value
    raise _invalid(value)


def _round_up(q: Fraction | int) -> int:
    """Round away from zero, as the API machinery does when it drops precision."""
    if isinstance(q, int):
        return q
    n, d = q.numerator, q.denominator
    return -((-n) // d) if n >= 0 else n // d  # ceil above zero, floor below


def value(q: Fraction | int) -> int:
    """The quantity in whole units, rounded up (away from zero): ``0.5`` -> 1, ``100m`` -> 1,
    ``-100m`` -> -1."""
    return _round_up(q)


def milli_value(q: Fraction | int) -> int:
    """The quantity in thousandths, rounded up (away from zero): ``100m`` -> 100, ``0.5`` -> 500,
    ``1n`` -> 1."""
    if isinstance(q, int):
        return q * 1000
    return _round_up(q * 1000)


@lru_cache(maxsize=16384)
def _amount_cached(name: str, raw: str | int | float) -> int:
    q = parse_quantity(raw)
    return milli_value(q) if name == "cpu" else value(q)


def resource_amount(name: str, raw: Any) -> int:
    """The integer the scheduler uses for ``raw`` of resource ``name``.

    ``cpu`` is counted in millicores; every other resource (memory, ephemeral-storage, pods,
    hugepages-*, extended resources) in whole units.
    """
    if isinstance(raw, bool):
        raise _invalid(raw)
    if isinstance(raw, (str, int, float)):
        return _amount_cached(name, raw)
    q = parse_quantity(raw)
    return milli_value(q) if name == "cpu" else value(q)


def format_quantity(name: str, amount: int) -> str:
    """Render a canonical amount back as a quantity string (``cpu`` 1500 -> ``1500m``)."""
    if name == "cpu":
        return f"{amount // 1000}" if amount % 1000 == 0 else f"{amount}m"
    for suffix, factor in (("Ei", 2**60), ("Pi", 2**50), ("Ti", 2**40), ("Gi", 2**30),
                           ("Mi", 2**20), ("Ki", 2**10)):
        if amount and amount % factor == 0:
            return f"{amount // factor}{suffix}"
    return str(amount)
