"""What kube-apiserver refuses when a DeviceClass, ResourceClaim, ResourceClaimTemplate or
ResourceSlice is created, in its words.

Two stages, as the server has them: strict decoding (a field the ``resource.k8s.io/v1`` types do
not have is ``unknown field``, which ``kubectl create`` asks for), then the subset of
``pkg/apis/resource/validation`` that matters to scheduling: names, requests (``exactly`` or
``firstAvailable``, counts and allocation modes, list sizes, duplicates), selectors (CEL that
does not compile), constraint and config request references, and a slice's device count. A
claim naming a DeviceClass that does not exist is accepted, as by the server: the scheduler
reports it. Compiling CEL is the plugin's job, so the caller passes a compiler in; without one
expressions are not compiled here. Texts were compared with a v1.36.2 API server.
"""

from __future__ import annotations

from typing import Any, Callable

from kschedfw.api.validation import is_dns1123_subdomain
from kschedfw.cluster.apiserver.apivalidation import _dict, _list, _metadata, is_dns1123_label
from kschedfw.api.field import DUPLICATE, INVALID, REQUIRED, TOO_MANY, UNSUPPORTED, FieldError

#: an expression's compile error (upstream's ``Error.Detail``), or None when it compiles
CELCompiler = Callable[[str], "str | None"]

GROUP = "resource.k8s.io"
DEVICE_REQUESTS_MAX = 32
DEVICE_CONSTRAINTS_MAX = 32
DEVICE_CONFIG_MAX = 32
DEVICE_SELECTORS_MAX = 32
FIRST_AVAILABLE_MAX = 8
SLICE_DEVICES_MAX = 128
CEL_EXPRESSION_MAX_LENGTH = 10 * 1024
ALLOCATION_MODES = ("All", "ExactCount")
REQUEST_REF_ERR = "must be the name of a request in the claim or the name of a request and a subrequest separated by '/'"

Path = tuple[Any, ...]

# ------------------------------------------------------------------------------ strict decoding

_ANY = None  # a field whose content is free (maps of names, opaque parameters, status)
_OBJECT_META = {k: _ANY for k in (
    "name", "generateName", "namespace", "selfLink", "uid", "resourceVersion", "generation", "creationTimestamp",
    "deletionTimestamp", "deletionGracePeriodSeconds", "labels", "annotations", "ownerReferences", "finalizers",
    "managedFields")}
_SELECTOR = {"cel": {"expression": _ANY}}
_TOLERATION = {k: _ANY for k in ("key", "operator", "value", "effect", "tolerationSeconds")}
_EXACT = {"deviceClassName": _ANY, "selectors": [_SELECTOR], "allocationMode": _ANY, "count": _ANY,
          "adminAccess": _ANY, "tolerations": [_TOLERATION], "capacity": {"requests": _ANY}}
_SUB_REQUEST = {**{k: v for k, v in _EXACT.items() if k != "adminAccess"}, "name": _ANY}
_OPAQUE = {"opaque": {"driver": _ANY, "parameters": _ANY}}
_CLAIM_SPEC = {"devices": {
    "requests": [{"name": _ANY, "exactly": _EXACT, "firstAvailable": [_SUB_REQUEST]}],
    "constraints": [{"requests": _ANY, "matchAttribute": _ANY, "distinctAttribute": _ANY}],
    "config": [{"requests": _ANY, **_OPAQUE}]}}
_TOP = {"apiVersion": _ANY, "kind": _ANY, "metadata": _OBJECT_META, "status": _ANY}
_DEVICE = {k: _ANY for k in (
    "name", "attributes", "capacity", "consumesCounters", "nodeName", "nodeSelector", "allNodes", "taints",
    "bindsToNode", "bindingConditions", "bindingFailureConditions", "allowMultipleAllocations")}
SCHEMAS: dict[str, Any] = {
    "DeviceClass": {**_TOP, "spec": {"selectors": [_SELECTOR], "config": [_OPAQUE], "extendedResourceName": _ANY}},
    "ResourceClaim": {**_TOP, "spec": _CLAIM_SPEC},
    "ResourceClaimTemplate": {**_TOP, "spec": {"metadata": _OBJECT_META, "spec": _CLAIM_SPEC}},
    "ResourceSlice": {**_TOP, "spec": {
        "driver": _ANY, "pool": {"name": _ANY, "generation": _ANY, "resourceSliceCount": _ANY}, "nodeName": _ANY,
        "nodeSelector": _ANY, "allNodes": _ANY, "perDeviceNodeSelection": _ANY, "devices": [_DEVICE],
        "sharedCounters": _ANY}},
}


def _field_path(path: Path) -> str:
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else ("." if out else "") + part
    return out


def unknown_fields(value: Any, schema: Any, path: Path = ()) -> list[str]:
    """Each field of ``value`` the schema does not have, as the strict decoder names it."""
    if schema is _ANY:
        return []
    if isinstance(schema, list):
        return [f for i, item in enumerate(_list(value)) for f in unknown_fields(item, schema[0], (*path, i))]
    out: list[str] = []
    for key, item in _dict(value).items():
        if key not in schema:
            out.append(_field_path((*path, str(key))))
        else:
            out.extend(unknown_fields(item, schema[key], (*path, key)))
    return out


def strict_decoding_message(kind: str, raw: dict[str, Any]) -> str | None:
    """The server's 400 for a manifest with unknown fields, or None."""
    unknown = unknown_fields(raw, SCHEMAS[kind])
    if not unknown:
        return None
    fields = ", ".join(f'unknown field "{f}"' for f in unknown)
    return f'{kind} in version "v1" cannot be handled as a {kind}: strict decoding error: {fields}'


# ------------------------------------------------------------------------------ validation

def _too_many(path: Path, items: list[Any], limit: int) -> list[FieldError]:
    if len(items) > limit:
        return [FieldError(path, TOO_MANY, f"must have at most {limit} items", len(items))]
    return []


def _duplicates(path: Path, keys: list[Any]) -> list[FieldError]:
    seen: set[Any] = set()
    errs = []
    for i, key in enumerate(keys):
        if key in seen:
            errs.append(FieldError((*path, i), DUPLICATE, "", key))
        seen.add(key)
    return errs


def _label(value: Any, path: Path) -> list[FieldError]:
    """A request or device name: a DNS label (empty is invalid, not required, as upstream)."""
    value = value if isinstance(value, str) else ""
    return [FieldError(path, INVALID, m, value) for m in is_dns1123_label(value)]


def _selectors(selectors: list[Any], path: Path, compile_cel: CELCompiler | None) -> list[FieldError]:
    if len(selectors) > DEVICE_SELECTORS_MAX:
        return _too_many(path, selectors, DEVICE_SELECTORS_MAX)
    errs: list[FieldError] = []
    for i, selector in enumerate(selectors):
        cel = _dict(selector).get("cel")
        if not isinstance(cel, dict):
            errs.append(FieldError((*path, i, "cel"), REQUIRED))
            continue
        here = (*path, i, "cel", "expression")
        written = cel.get("expression")
        expression = written if isinstance(written, str) else ""
        if len(expression) > CEL_EXPRESSION_MAX_LENGTH:
            errs.append(FieldError(here, "Too long", f"may not be more than {CEL_EXPRESSION_MAX_LENGTH} bytes"))
        elif compile_cel is not None:
            error = compile_cel(expression)
            if error is not None:
                errs.append(FieldError(here, INVALID, error, expression))
    return errs


def _allocation(body: dict[str, Any], path: Path) -> list[FieldError]:
    """The allocation mode and count after defaulting (no mode is ExactCount, no count is 1)."""
    mode = body.get("allocationMode") or "ExactCount"
    count = body.get("count")
    if mode == "All":
        if count:
            return [FieldError((*path, "count"), INVALID, "must not be specified when allocationMode is 'All'", count)]
    elif mode == "ExactCount":
        count = 1 if count is None or count == 0 else count
        if isinstance(count, int) and count <= 0:
            return [FieldError((*path, "count"), INVALID, "must be greater than zero", count)]
    else:
        return [FieldError((*path, "allocationMode"), UNSUPPORTED,
                           "supported values: " + ", ".join(f'"{m}"' for m in ALLOCATION_MODES), mode)]
    return []


def _device_request_body(body: dict[str, Any], path: Path, compile_cel: CELCompiler | None) -> list[FieldError]:
    errs: list[FieldError] = []
    cls = body.get("deviceClassName")
    if not cls:
        errs.append(FieldError((*path, "deviceClassName"), REQUIRED))
    elif isinstance(cls, str):
        errs.extend(FieldError((*path, "deviceClassName"), INVALID, m, cls) for m in is_dns1123_subdomain(cls))
    errs.extend(_selectors(_list(body.get("selectors")), (*path, "selectors"), compile_cel))
    errs.extend(_allocation(body, path))
    return errs


def _request(request: dict[str, Any], path: Path, compile_cel: CELCompiler | None) -> list[FieldError]:
    errs = _label(request.get("name"), (*path, "name"))
    exactly, first = request.get("exactly"), _list(request.get("firstAvailable"))
    if exactly is None and not first:
        errs.append(FieldError(path, REQUIRED, "exactly one of `exactly` or `firstAvailable` is required"))
    elif exactly is not None and first:
        errs.append(FieldError(path, INVALID, "exactly one of `exactly` or `firstAvailable` is required, "
                                              "but multiple fields are set", None))
    elif first:
        here = (*path, "firstAvailable")
        if len(first) > FIRST_AVAILABLE_MAX:
            return errs + _too_many(here, first, FIRST_AVAILABLE_MAX)
        for i, sub in enumerate(first):
            sub = _dict(sub)
            errs.extend(_label(sub.get("name"), (*here, i, "name")))
            errs.extend(_device_request_body(sub, (*here, i), compile_cel))
        errs.extend(_duplicates(here, [_dict(sub).get("name") for sub in first]))
    else:
        errs.extend(_device_request_body(_dict(exactly), (*path, "exactly"), compile_cel))
    return errs


def _request_names(requests: list[Any]) -> dict[str, set[str] | None]:
    names: dict[str, set[str] | None] = {}
    for request in requests:
        request = _dict(request)
        first = _list(request.get("firstAvailable"))
        names[str(request.get("name"))] = {str(_dict(s).get("name")) for s in first} if first else None
    return names


def _request_refs(refs: list[Any], path: Path, names: dict[str, set[str] | None]) -> list[FieldError]:
    if len(refs) > DEVICE_REQUESTS_MAX:
        return _too_many(path, refs, DEVICE_REQUESTS_MAX)
    errs: list[FieldError] = []
    for i, ref in enumerate(refs):
        ref = str(ref)
        segments = ref.split("/")
        if len(segments) > 2:
            errs.append(FieldError((*path, i), INVALID, REQUEST_REF_ERR, ref))
            continue
        for segment in segments:
            errs.extend(_label(segment, (*path, i)))
        known = segments[0] in names and (len(segments) == 1 or segments[1] in (names[segments[0]] or ()))
        if not known:
            errs.append(FieldError((*path, i), INVALID, REQUEST_REF_ERR, ref))
    return errs + _duplicates(path, [str(r) for r in refs])


def _claim_spec(spec: dict[str, Any], path: Path, compile_cel: CELCompiler | None) -> list[FieldError]:
    devices = _dict(spec.get("devices"))
    here = (*path, "devices")
    requests = _list(devices.get("requests"))
    errs: list[FieldError] = []
    if len(requests) > DEVICE_REQUESTS_MAX:
        errs.extend(_too_many((*here, "requests"), requests, DEVICE_REQUESTS_MAX))
    else:
        for i, request in enumerate(requests):
            errs.extend(_request(_dict(request), (*here, "requests", i), compile_cel))
        errs.extend(_duplicates((*here, "requests"), [_dict(r).get("name") for r in requests]))
    names = _request_names(requests)
    for section, limit in (("constraints", DEVICE_CONSTRAINTS_MAX), ("config", DEVICE_CONFIG_MAX)):
        items = _list(devices.get(section))
        if len(items) > limit:
            errs.extend(_too_many((*here, section), items, limit))
            continue
        for i, item in enumerate(items):
            item = _dict(item)
            errs.extend(_request_refs(_list(item.get("requests")), (*here, section, i, "requests"), names))
            if section == "constraints" and not item.get("matchAttribute") and not item.get("distinctAttribute"):
                errs.append(FieldError((*here, section, i), REQUIRED, 'exactly one of "matchAttribute" or '
                                                                     '"distinctAttribute" is required, but multiple '
                                                                     'fields are set'))
    return errs


def validate_device_class(raw: dict[str, Any], compile_cel: CELCompiler | None) -> list[FieldError]:
    """ValidateDeviceClass: name, selectors."""
    spec = _dict(raw.get("spec"))
    return _metadata(raw, namespaced=False) + _selectors(_list(spec.get("selectors")), ("spec", "selectors"),
                                                          compile_cel)


def validate_resource_claim(raw: dict[str, Any], compile_cel: CELCompiler | None) -> list[FieldError]:
    """ValidateResourceClaim: name, namespace, the device requests."""
    return _metadata(raw, namespaced=True) + _claim_spec(_dict(raw.get("spec")), ("spec",), compile_cel)


def validate_resource_claim_template(raw: dict[str, Any], compile_cel: CELCompiler | None) -> list[FieldError]:
    """ValidateResourceClaimTemplate: name, namespace, the claim spec under ``spec.spec``."""
    spec = _dict(raw.get("spec"))
    return _metadata(raw, namespaced=True) + _claim_spec(_dict(spec.get("spec")), ("spec", "spec"), compile_cel)


def validate_resource_slice(raw: dict[str, Any], compile_cel: CELCompiler | None) -> list[FieldError]:
    """ValidateResourceSlice, as far as scheduling reads it: name, driver, pool name, device count
    and names (each a DNS label, no two alike)."""
    spec = _dict(raw.get("spec"))
    errs = _metadata(raw, namespaced=False)
    if not spec.get("driver"):
        errs.append(FieldError(("spec", "driver"), REQUIRED))
    if not _dict(spec.get("pool")).get("name"):
        errs.append(FieldError(("spec", "pool", "name"), REQUIRED))
    devices = _list(spec.get("devices"))
    if len(devices) > SLICE_DEVICES_MAX:
        return errs + _too_many(("spec", "devices"), devices, SLICE_DEVICES_MAX)
    for i, device in enumerate(devices):
        errs.extend(_label(_dict(device).get("name"), ("spec", "devices", i, "name")))
    return errs + _duplicates(("spec", "devices"), [_dict(d).get("name") for d in devices])


VALIDATORS: dict[str, Callable[[dict[str, Any], CELCompiler | None], list[FieldError]]] = {
    "DeviceClass": validate_device_class,
    "ResourceClaim": validate_resource_claim,
    "ResourceClaimTemplate": validate_resource_claim_template,
    "ResourceSlice": validate_resource_slice,
}

__all__ = ["CELCompiler", "GROUP", "SCHEMAS", "VALIDATORS", "strict_decoding_message",
           "unknown_fields"]
