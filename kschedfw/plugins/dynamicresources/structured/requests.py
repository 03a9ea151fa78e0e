"""One device request or ``firstAvailable`` subrequest, read the same way (upstream
``requestAccessor``), with the API server's defaults for fields a hand-written object may omit."""

from __future__ import annotations

from typing import Any, Mapping

from kschedfw.plugins.dynamicresources.structured.capacity import parse_requests

EXACT_COUNT = "ExactCount"
ALL = "All"


class Request:
    __slots__ = ("name", "class_name", "allocation_mode", "count", "admin_access", "has_admin_access",
                 "selectors", "tolerations", "capacity", "capacity_requests")

    def __init__(self, name: str, body: Mapping[str, Any] | None, *, sub_request: bool) -> None:
        body = body or {}
        self.name = name
        self.class_name: str = body.get("deviceClassName") or ""
        self.allocation_mode: str = body.get("allocationMode") or EXACT_COUNT
        count = body.get("count")
        self.count = int(count) if count is not None else (1 if self.allocation_mode == EXACT_COUNT else 0)
        admin = None if sub_request else body.get("adminAccess")
        self.has_admin_access = admin is not None
        self.admin_access = bool(admin)
        self.selectors: list[Mapping[str, Any]] = list(body.get("selectors") or ())
        self.tolerations: list[Mapping[str, Any]] = list(body.get("tolerations") or ())
        self.capacity: Mapping[str, Any] | None = body.get("capacity")
        self.capacity_requests = parse_requests(self.capacity)


def exact_request(request: Mapping[str, Any]) -> Request:
    return Request(request.get("name", ""), request.get("exactly"), sub_request=False)


def sub_requests(request: Mapping[str, Any]) -> list[Request]:
    return [Request(s.get("name", ""), s, sub_request=True) for s in request.get("firstAvailable") or ()]


def tolerates(toleration: Mapping[str, Any], taint: Mapping[str, Any]) -> bool:
    """upstream resourceclaim.ToleratesTaint."""
    key = toleration.get("key") or ""
    if key and key != taint.get("key"):
        return False
    effect = toleration.get("effect") or ""
    if effect and effect != taint.get("effect"):
        return False
    operator = toleration.get("operator") or "Equal"
    if operator == "Exists":
        return True
    if operator == "Equal":
        return (toleration.get("value") or "") == (taint.get("value") or "")
    return False


def taint_prevents_allocation(taints: list[Mapping[str, Any]], request: Request) -> bool:
    """A NoSchedule or NoExecute taint the request does not tolerate (other effects are ignored)."""
    for taint in taints:
        if taint.get("effect") in ("NoSchedule", "NoExecute"):
            if not any(tolerates(t, taint) for t in request.tolerations):
                return True
    return False
