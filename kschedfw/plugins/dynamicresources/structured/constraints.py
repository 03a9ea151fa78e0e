"""Claim constraints: ``matchAttribute`` (all devices share a value) and ``distinctAttribute``
(no two devices share one), upstream ``matchAttributeConstraint`` and ``constraint.go``.

Constraints are monotonic: once a device breaks one, adding more devices cannot repair it, so the
search backtracks at once. Only the devices of the named requests count (all when none are named;
a request name also covers its subrequests, ``req/sub`` only that subrequest).
"""

from __future__ import annotations

from typing import Any, Mapping

from kschedfw.plugins.dynamicresources.structured.types import DeviceID

_VALUE_KINDS = ("string", "int", "bool", "version")


def lookup_attribute(attributes: Mapping[str, Mapping[str, Any]], device_id: DeviceID,
                     name: str) -> Mapping[str, Any] | None:
    """A fully qualified attribute; the driver's own attributes may also be stored without domain."""
    attr = attributes.get(name)
    if attr is not None:
        return attr
    domain, sep, ident = name.partition("/")
    if not sep or domain != device_id.driver:
        return None
    return attributes.get(ident)


def _kind(attr: Mapping[str, Any]) -> str | None:
    for kind in _VALUE_KINDS:
        if attr.get(kind) is not None:
            return kind
    return None


class _Constraint:
    def __init__(self, request_names: list[str], attribute: str) -> None:
        self.request_names = frozenset(request_names)
        self.attribute = attribute
        self.num_devices = 0

    def applies(self, request: str, sub_request: str) -> bool:
        if not self.request_names:
            return True
        if request in self.request_names:
            return True
        return bool(sub_request) and f"{request}/{sub_request}" in self.request_names


class MatchAttributeConstraint(_Constraint):
    def __init__(self, request_names: list[str], attribute: str) -> None:
        super().__init__(request_names, attribute)
        self.value: tuple[str, Any] | None = None

    def add(self, request: str, sub_request: str, attributes: Mapping[str, Mapping[str, Any]], device_id: DeviceID) -> bool:
        if not self.applies(request, sub_request):
            return True
        attr = lookup_attribute(attributes, device_id, self.attribute)
        if attr is None:
            return False
        kind = _kind(attr)
        if self.num_devices == 0:
            self.value = (kind, attr.get(kind)) if kind else None
            self.num_devices = 1
            return True
        if kind is None or self.value is None or self.value != (kind, attr[kind]):
            return False
        self.num_devices += 1
        return True

    def remove(self, request: str, sub_request: str) -> None:
        if self.applies(request, sub_request):
            self.num_devices -= 1


class DistinctAttributeConstraint(_Constraint):
    def __init__(self, request_names: list[str], attribute: str) -> None:
        super().__init__(request_names, attribute)
        # upstream keys the values by request name: a later device of the same request replaces
        # the value of the earlier one (and removing one drops it)
        self.values: dict[str, tuple[str, Any]] = {}

    def add(self, request: str, sub_request: str, attributes: Mapping[str, Mapping[str, Any]], device_id: DeviceID) -> bool:
        if not self.applies(request, sub_request):
            return True
        attr = lookup_attribute(attributes, device_id, self.attribute)
        if attr is None:
            return False
        kind = _kind(attr)
        if self.num_devices == 0:
            self.values[request] = (kind or "", attr.get(kind) if kind else None)
            self.num_devices = 1
            return True
        if kind is None:
            if self.values:
                return False
        elif any(v == (kind, attr[kind]) for v in self.values.values()):
            return False
        self.values[request] = (kind or "", attr.get(kind) if kind else None)
        self.num_devices += 1
        return True

    def remove(self, request: str, sub_request: str) -> None:
        if self.applies(request, sub_request):
            self.values.pop(request, None)
            self.num_devices -= 1
