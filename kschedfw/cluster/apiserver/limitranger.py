"""LimitRanger admission: what the API server does to a pod created in a namespace with LimitRanges.

Upstream's LimitRanger plugin (``plugin/pkg/admission/limitranger``) first gives every container
the ``default`` limits and ``defaultRequest`` requests of the namespace's ``Container`` limits
that it does not set (a LimitRange's own defaulting fills ``default`` from ``max`` and
``defaultRequest`` from ``default``, then from ``min``), and records what it set in the
``kubernetes.io/limit-ranger`` annotation. Once the pod is validated it refuses one outside a
``min``, ``max`` or ``maxLimitRequestRatio`` of a ``Container`` or ``Pod`` limit. The scheduler
sees the result: defaulted requests count in every fit and score.
"""

from __future__ import annotations

import copy
from fractions import Fraction
from typing import TYPE_CHECKING, Any, Iterable

from kschedfw.api import parse_object
from kschedfw.api.quantity import milli_value, parse_quantity, value

if TYPE_CHECKING:
    from kschedfw.api import Pod

ANNOTATION = "kubernetes.io/limit-ranger"
#: resource.MaxMilliValue: above it, amounts are compared in whole units
_MAX_MILLI_VALUE = (2**63 - 1) // 1000
_DECIMAL_SUFFIXES = {-9: "n", -6: "u", -3: "m", 0: "", 3: "k", 6: "M", 9: "G", 12: "T", 15: "P", 18: "E"}
_BINARY_SUFFIXES = ("", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei")


class LimitViolation(ValueError):
    """Upstream's reasons for refusing the pod (already aggregated)."""


# ------------------------------------------------------------------------------ quantities

class Quantity:
    """A quantity as Go's ``resource.Quantity`` prints it (``String()``: canonical, in the
    format it was written in: binary, decimal SI or decimal exponent)."""

    __slots__ = ("amount", "format")

    def __init__(self, amount: Fraction | int, format: str) -> None:
        self.amount = amount
        self.format = format

    @classmethod
    def of(cls, raw: Any) -> "Quantity":
        text = raw.strip() if isinstance(raw, str) else ""
        if text.endswith("i"):
            fmt = "binary"
        elif "e" in text or ("E" in text and not text.endswith("E")):
            fmt = "exponent"
        else:
            fmt = "decimal"
        return cls(_round_to_nano(parse_quantity(raw)), fmt)

    def plus(self, other: "Quantity") -> "Quantity":
        return Quantity(self.amount + other.amount, self.format)

    def __str__(self) -> str:
        amount = Fraction(self.amount)
        if self.format == "binary" and abs(amount) >= 1024 and amount.denominator == 1:
            n, k = int(amount), 0
            while n % 1024 == 0 and k < len(_BINARY_SUFFIXES) - 1:
                n, k = n // 1024, k + 1
            return f"{n}{_BINARY_SUFFIXES[k]}"
        exponent = -9
        mantissa = amount * 10**9
        while exponent < 18 and mantissa % 1000 == 0 and mantissa != 0:
            mantissa, exponent = mantissa / 1000, exponent + 3
        if mantissa == 0:
            exponent = 0
        suffix = (f"e{exponent}" if exponent else "") if self.format == "exponent" else _DECIMAL_SUFFIXES[exponent]
        return f"{int(mantissa)}{suffix}"


def _round_to_nano(amount: Fraction | int) -> Fraction | int:
    """Go keeps at most nine decimals, rounding up (away from zero)."""
    if isinstance(amount, int) or (amount * 10**9).denominator == 1:
        return amount
    return Fraction(milli_value(amount * 10**6), 10**9)


def _mapping(raw: Any) -> dict[str, Any]:
    return raw if isinstance(raw, dict) else {}


def _resource_list(raw: Any) -> dict[str, Quantity]:
    return {str(k): Quantity.of(v) for k, v in raw.items()} if isinstance(raw, dict) else {}


# ------------------------------------------------------------------------------ LimitRanges

def _limits(limit_range: Any) -> list[dict[str, Any]]:
    """The LimitRange's items, defaulted as the API server stores them (SetDefaults_LimitRangeItem)."""
    spec = limit_range.raw.get("spec") if isinstance(limit_range.raw, dict) else None
    items = spec.get("limits") if isinstance(spec, dict) else None
    out = []
    for item in items if isinstance(items, list) else ():
        if not isinstance(item, dict):
            continue
        item = {k: item.get(k) for k in ("type", "min", "max", "default", "defaultRequest", "maxLimitRequestRatio")}
        if item["type"] == "Container":
            default = dict(item["default"] or {})
            for k, v in (item["max"] or {}).items():
                default.setdefault(k, v)
            request = dict(item["defaultRequest"] or {})
            for k, v in (*default.items(), *(item["min"] or {}).items()):
                request.setdefault(k, v)
            item["default"], item["defaultRequest"] = default, request
        out.append(item)
    return out


def _in_order(limit_ranges: Iterable[Any]) -> list[Any]:
    return sorted(limit_ranges, key=lambda lr: lr.name)


# ------------------------------------------------------------------------------ Admit: defaults

def set_defaults(pod: "Pod", limit_ranges: Iterable[Any]) -> "Pod":
    """The pod with each LimitRange's container defaults (upstream PodMutateLimitFunc)."""
    raw = pod.raw
    changed = False
    for limit_range in _in_order(limit_ranges):
        limits: dict[str, Any] = {}
        requests: dict[str, Any] = {}
        for item in _limits(limit_range):
            if item["type"] == "Container":
                limits.update(item["default"])
                requests.update(item["defaultRequest"])
        if not limits and not requests:
            continue
        raw = copy.deepcopy(raw) if not changed else raw
        changed = True
        spec = raw.setdefault("spec", {})
        notes: list[str] = []
        for field, what in (("containers", "container"), ("initContainers", "init container")):
            for container in spec.get(field) or ():
                if isinstance(container, dict):
                    notes.extend(_merge_container(container, limits, requests, what))
        if notes:
            meta = raw.setdefault("metadata", {})
            meta["annotations"] = {**(meta.get("annotations") or {}),
                                   ANNOTATION: "LimitRanger plugin set: " + "; ".join(notes)}
    if not changed:
        return pod
    created: Pod = parse_object(raw)
    return created


def _merge_container(container: dict[str, Any], limits: dict[str, Any], requests: dict[str, Any],
                     what: str) -> list[str]:
    resources = container["resources"] = dict(container.get("resources") or {})
    have_limits = dict(resources.get("limits") or {})
    # the API server's defaulting, before admission: a resource with a limit requests it
    have_requests = {**have_limits, **(resources.get("requests") or {})}
    set_requests = sorted(k for k in requests if k not in have_requests)
    set_limits = sorted(k for k in limits if k not in have_limits)
    have_requests.update({k: requests[k] for k in set_requests})
    have_limits.update({k: limits[k] for k in set_limits})
    if have_requests:
        resources["requests"] = have_requests
    if have_limits:
        resources["limits"] = have_limits
    name = container.get("name")
    notes = []
    if set_requests:
        notes.append(f"{', '.join(set_requests)} request for {what} {name}")
    if set_limits:
        notes.append(f"{', '.join(set_limits)} limit for {what} {name}")
    return notes


# ------------------------------------------------------------------------------ Validate: bounds

def check_limits(pod: "Pod", limit_ranges: Iterable[Any]) -> None:
    """Raise :class:`LimitViolation` for the first LimitRange the pod violates (upstream
    PodValidateLimitFunc), with upstream's messages."""
    spec = pod.raw.get("spec") if isinstance(pod.raw, dict) else None
    spec = spec if isinstance(spec, dict) else {}
    containers = [c for c in spec.get("containers") or () if isinstance(c, dict)]
    init_containers = [c for c in spec.get("initContainers") or () if isinstance(c, dict)]
    for limit_range in _in_order(limit_ranges):
        errors: list[str] = []
        for item in _limits(limit_range):
            kind = item["type"]
            if kind == "Container":
                for c in (*containers, *init_containers):
                    requests, limits = _container_resources(c)
                    errors.extend(_violations(item, kind, requests, limits))
            elif kind == "Pod":
                requests, limits = _pod_resources(spec, containers, init_containers)
                errors.extend(_violations(item, kind, requests, limits))
        errors = list(dict.fromkeys(errors))
        if len(errors) == 1:
            raise LimitViolation(errors[0])
        if errors:
            raise LimitViolation("[" + ", ".join(errors) + "]")


def _container_resources(c: dict[str, Any]) -> tuple[dict[str, Quantity], dict[str, Quantity]]:
    resources = _mapping(c.get("resources"))
    limits = _resource_list(resources.get("limits"))
    return {**limits, **_resource_list(resources.get("requests"))}, limits


def _pod_resources(spec: dict[str, Any], containers: list[dict[str, Any]], init_containers: list[dict[str, Any]]
                   ) -> tuple[dict[str, Quantity], dict[str, Quantity]]:
    """The pod's requests and limits as upstream's podRequests/podLimits add them: containers and
    sidecars summed, each other init container with the sidecars before it, the larger of the
    two; ``spec.resources`` replaces cpu and memory."""
    out = []
    for index in (0, 1):
        total: dict[str, Quantity] = {}
        sidecars: dict[str, Quantity] = {}
        init_max: dict[str, Quantity] = {}
        for c in containers:
            _add(total, _container_resources(c)[index])
        for c in init_containers:
            own = _container_resources(c)[index]
            if c.get("restartPolicy") == "Always":
                _add(total, own)
                _add(sidecars, own)
                own = dict(sidecars)
            else:
                own = dict(own)
                _add(own, sidecars)
            _max(init_max, own)
        _max(total, init_max)
        level = _resource_list(_mapping(spec.get("resources")).get(("requests", "limits")[index]))
        total.update({k: v for k, v in level.items() if k in ("cpu", "memory")})
        out.append(total)
    return out[0], out[1]


def _add(into: dict[str, Quantity], more: dict[str, Quantity]) -> None:
    for k, q in more.items():
        into[k] = into[k].plus(q) if k in into else q


def _max(into: dict[str, Quantity], other: dict[str, Quantity]) -> None:
    for k, q in other.items():
        if k not in into or q.amount > into[k].amount:
            into[k] = q


def _compared(*amounts: Fraction | int) -> list[int]:
    """Upstream requestLimitEnforcedValues: in thousandths unless one is too large for it."""
    whole = [value(a) for a in amounts]
    if all(w <= _MAX_MILLI_VALUE for w in whole):
        return [milli_value(a) for a in amounts]
    return whole


def _violations(item: dict[str, Any], kind: str, requests: dict[str, Quantity],
                limits: dict[str, Quantity]) -> list[str]:
    errors = []
    zero = Quantity(0, "decimal")
    for name, raw in sorted((item["min"] or {}).items()):
        enforced = Quantity.of(raw)
        req, lim = requests.get(name), limits.get(name)
        r, l_, e = _compared((req or zero).amount, (lim or zero).amount, enforced.amount)
        if req is None:
            errors.append(f"minimum {name} usage per {kind} is {enforced}.  No request is specified")
        elif r < e:
            errors.append(f"minimum {name} usage per {kind} is {enforced}, but request is {req}")
        elif lim is not None and l_ < e:
            errors.append(f"minimum {name} usage per {kind} is {enforced}, but limit is {lim}")
    for name, raw in sorted((item["max"] or {}).items()):
        enforced = Quantity.of(raw)
        req, lim = requests.get(name), limits.get(name)
        r, l_, e = _compared((req or zero).amount, (lim or zero).amount, enforced.amount)
        if lim is None:
            errors.append(f"maximum {name} usage per {kind} is {enforced}.  No limit is specified")
        elif l_ > e:
            errors.append(f"maximum {name} usage per {kind} is {enforced}, but limit is {lim}")
        elif req is not None and r > e:
            errors.append(f"maximum {name} usage per {kind} is {enforced}, but request is {req}")
    for name, raw in sorted((item["maxLimitRequestRatio"] or {}).items()):
        enforced = Quantity.of(raw)
        req, lim = requests.get(name), limits.get(name)
        r, l_, _ = _compared((req or zero).amount, (lim or zero).amount, enforced.amount)
        if req is None or r == 0:
            errors.append(f"{name} max limit to request ratio per {kind} is {enforced}, "
                          "but no request is specified or request is 0")
        elif lim is None or l_ == 0:
            errors.append(f"{name} max limit to request ratio per {kind} is {enforced}, "
                          "but no limit is specified or limit is 0")
        else:
            ratio = l_ / r
            whole = value(enforced.amount)
            if whole <= _MAX_MILLI_VALUE:
                exceeded = ratio * 1000 > milli_value(enforced.amount)
            else:
                exceeded = ratio > whole
            if exceeded:
                errors.append(f"{name} max limit to request ratio per {kind} is {enforced}, "
                              f"but provided ratio is {ratio:f}")
    return errors
