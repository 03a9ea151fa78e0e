"""What kube-apiserver's validation refuses when a Pod, Node or RuntimeClass is created, in its
words.

The subset of ``pkg/apis/core/validation`` (``ValidatePodCreate``, ``ValidateNode``) and of
``pkg/apis/node/validation`` (``ValidateRuntimeClass``) that matters for scheduling input: object names and labels, required container fields, resource
quantities (non-negative; requests within limits; extended resources and hugepages equal to
their limit), toleration and taint shape. Checked on the manifest (``raw``) so that what was
written, not what a parser defaulted, is judged; objects built in code without a manifest are
not checked. Texts were compared with a v1.36.2 API server (``kubectl create --dry-run=server``).
Unparseable quantities never get here: the manifest reader refuses them, as the API server's
decoder does.
"""

from __future__ import annotations

import re
from fractions import Fraction
from typing import Any

from kschedfw.api.quantity import parse_quantity
from kschedfw.api.labelsyntax import regex_error
from kschedfw.api.validation import (DNS1123_SUBDOMAIN_FMT, GoValue, is_dns1123_subdomain, is_qualified_name,
                                     is_valid_label_value, max_len_error)
from kschedfw.api.field import DUPLICATE, INVALID, REQUIRED, UNSUPPORTED, FieldError

DNS1123_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
DNS1123_LABEL_MAX_LENGTH = 63
_DNS1123_LABEL_RE = re.compile("^" + DNS1123_LABEL_FMT + "$")
_DNS1123_SUBDOMAIN_RE = re.compile("^" + DNS1123_SUBDOMAIN_FMT + "$")
_DNS1123_LABEL_ERR = ("a lowercase RFC 1123 label must consist of lower case alphanumeric "
                      "characters or '-', and must start and end with an alphanumeric character")
NEGATIVE = "must be greater than or equal to 0"
TOO_LONG = "Too long"
#: apimachinery's TotalAnnotationSizeLimitB: keys plus values, in bytes
TOTAL_ANNOTATION_SIZE_LIMIT = 256 * 1024
TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")

Path = tuple[Any, ...]


def is_dns1123_label(value: str) -> list[str]:
    errs = []
    if len(value) > DNS1123_LABEL_MAX_LENGTH:
        errs.append(max_len_error(DNS1123_LABEL_MAX_LENGTH))
    if _DNS1123_LABEL_RE.fullmatch(value) is None:  # (Go's $: no final newline)
        if _DNS1123_SUBDOMAIN_RE.fullmatch(value) is not None:  # a subdomain: its dots are what is wrong
            errs.append("must not contain dots")
        else:
            errs.append(regex_error(_DNS1123_LABEL_ERR, DNS1123_LABEL_FMT, "my-name", "123-abc"))
    return errs


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _shown(value: Any) -> str:
    """A quantity as written (``2``, ``500m``, ``1Gi``)."""
    return value if isinstance(value, str) else str(value)


# ------------------------------------------------------------------------------ metadata

def _metadata(raw: dict[str, Any], *, namespaced: bool) -> list[FieldError]:
    """ValidateObjectMeta: name (a DNS subdomain), namespace (a DNS label), labels,
    annotations."""
    meta = _dict(raw.get("metadata"))
    errs: list[FieldError] = []
    name = meta.get("name")
    if isinstance(name, str) and name:
        errs.extend(FieldError(("metadata", "name"), INVALID, m, name)
                    for m in is_dns1123_subdomain(name))
    namespace = meta.get("namespace")
    if namespaced and isinstance(namespace, str) and namespace:
        errs.extend(FieldError(("metadata", "namespace"), INVALID, m, namespace)
                    for m in is_dns1123_label(namespace))
    errs.extend(_labels(meta.get("labels"), ("metadata", "labels")))
    errs.extend(validate_annotations(meta.get("annotations")))
    return errs


def _labels(labels: Any, path: Path) -> list[FieldError]:
    """ValidateLabels: each key a qualified name, each value a label value."""
    errs: list[FieldError] = []
    for key, value in _dict(labels).items():
        errs.extend(FieldError(path, INVALID, m, key) for m in is_qualified_name(str(key)))
        if isinstance(value, str):
            errs.extend(FieldError(path, INVALID, m, value) for m in is_valid_label_value(value))
    return errs


def validate_annotations(annotations: Any) -> list[FieldError]:
    """ValidateAnnotations: each key a qualified name (case does not matter), and keys plus
    values at most 256 KiB in all, counted in UTF-8 bytes as Go's ``len`` counts them."""
    errs: list[FieldError] = []
    total = 0
    for key, value in _dict(annotations).items():
        key = str(key)
        errs.extend(FieldError(("metadata", "annotations"), INVALID, m, key)
                    for m in is_qualified_name(key.lower()))
        total += len(key.encode()) + (len(value.encode()) if isinstance(value, str) else 0)
    if total > TOTAL_ANNOTATION_SIZE_LIMIT:
        errs.append(FieldError(("metadata", "annotations"), TOO_LONG,
                               f"may not be more than {TOTAL_ANNOTATION_SIZE_LIMIT} bytes"))
    return errs


# ------------------------------------------------------------------------------ pods

def validate_pod_manifest(raw: dict[str, Any]) -> list[FieldError]:
    """ValidatePodCreate's findings for the pod manifest ``raw``, in upstream's order."""
    if not raw:
        return []
    errs = _metadata(raw, namespaced=True)
    spec = _dict(raw.get("spec"))
    containers = _list(spec.get("containers"))
    if not containers:
        errs.append(FieldError(("spec", "containers"), REQUIRED))
    names: set[str] = set()
    errs.extend(_containers(containers, ("spec", "containers"), names))
    errs.extend(_containers(_list(spec.get("initContainers")), ("spec", "initContainers"), names))
    errs.extend(_tolerations(_list(spec.get("tolerations")), ("spec", "tolerations")))
    return errs


def _containers(containers: list[Any], path: Path, names: set[str]) -> list[FieldError]:
    errs: list[FieldError] = []
    for i, c in enumerate(containers):
        c = _dict(c)
        here = (*path, i)
        name = c.get("name")
        if not isinstance(name, str) or not name:
            errs.append(FieldError((*here, "name"), REQUIRED))
        elif name in names:
            errs.append(FieldError((*here, "name"), DUPLICATE, "", name))
        else:
            names.add(name)
            errs.extend(FieldError((*here, "name"), INVALID, m, name) for m in is_dns1123_label(name))
        if not c.get("image"):
            errs.append(FieldError((*here, "image"), REQUIRED))
        errs.extend(_resources(_dict(c.get("resources")), (*here, "resources")))
    return errs


def _amounts(values: dict[str, Any]) -> dict[str, tuple[Any, Fraction | int]]:
    out = {}
    for name, value in values.items():
        try:
            out[str(name)] = (value, parse_quantity(value))
        except ValueError:  # refused when the manifest was read
            continue
    return out


def _overcommit_allowed(name: str) -> bool:
    """v1helper.IsOvercommitAllowed: native resources other than hugepages."""
    native = "/" not in name or "kubernetes.io/" in name
    return native and not name.startswith("hugepages-")


def _resources(resources: dict[str, Any], path: Path) -> list[FieldError]:
    """ValidateContainerResourceRequirements: limits, then requests against them."""
    errs: list[FieldError] = []
    limits = _amounts(_dict(resources.get("limits")))
    requests = _amounts(_dict(resources.get("requests")))
    for name in sorted(limits):
        shown, amount = limits[name]
        if amount < 0:
            errs.append(FieldError((*path, f"limits[{name}]"), INVALID, NEGATIVE, _shown(shown)))
    for name in sorted(requests):
        shown, amount = requests[name]
        if amount < 0:
            errs.append(FieldError((*path, f"requests[{name}]"), INVALID, NEGATIVE, _shown(shown)))
        if name in limits:
            limit_shown, limit = limits[name]
            if amount != limit and not _overcommit_allowed(name):
                errs.append(FieldError((*path, "requests"), INVALID,
                                       f"must be equal to {name} limit of {_shown(limit_shown)}",
                                       _shown(shown)))
            elif amount > limit:
                errs.append(FieldError((*path, "requests"), INVALID,
                                       f"must be less than or equal to {name} limit of "
                                       f"{_shown(limit_shown)}", _shown(shown)))
        elif not _overcommit_allowed(name):
            errs.append(FieldError((*path, "limits"), REQUIRED,
                                   "Limit must be set for non overcommitable resources"))
    return errs


def _tolerations(tolerations: list[Any], path: Path) -> list[FieldError]:
    """validateTolerations: the checks that do not depend on a feature gate (Gt/Lt operators
    are checked in :func:`kschedfw.cluster.apiserver.admission.validate_pod`)."""
    errs: list[FieldError] = []
    for i, t in enumerate(tolerations):
        t = _dict(t)
        here = (*path, i)
        key, operator, value = t.get("key") or "", t.get("operator") or "Equal", t.get("value")
        if key:
            errs.extend(FieldError((*here, "key"), INVALID, m, key) for m in is_qualified_name(key))
        elif operator != "Exists":
            errs.append(FieldError((*here, "operator"), INVALID,
                                   'operator must be Exists when `key` is empty, which means '
                                   '"match all values and all keys"', operator))
        if operator == "Exists" and value:
            errs.append(FieldError((*here, "operator"), INVALID,
                                   "value must be empty when `operator` is 'Exists'", value))
        effect = t.get("effect")
        if effect and effect not in TAINT_EFFECTS:
            errs.append(FieldError((*here, "effect"), UNSUPPORTED,
                                   "supported values: " + ", ".join(f'"{e}"' for e in TAINT_EFFECTS),
                                   effect))
    return errs


# ------------------------------------------------------------------------------ nodes

def validate_node_manifest(raw: dict[str, Any]) -> list[FieldError]:
    """ValidateNode's findings for the node manifest ``raw``, in upstream's order."""
    if not raw:
        return []
    errs = _metadata(raw, namespaced=False)
    seen: set[tuple[str, str]] = set()
    for i, t in enumerate(_list(_dict(raw.get("spec")).get("taints"))):
        t = _dict(t)
        here = ("metadata", "taints", i)  # upstream's path, not spec.taints
        key, value, effect = t.get("key") or "", t.get("value") or "", t.get("effect") or ""
        errs.extend(FieldError((*here, "key"), INVALID, m, key) for m in is_qualified_name(key))
        if value:
            errs.extend(FieldError((*here, "value"), INVALID, m, value)
                        for m in is_valid_label_value(value))
        if not effect:
            errs.append(FieldError((*here, "effect"), REQUIRED))
        elif effect not in TAINT_EFFECTS:
            errs.append(FieldError((*here, "effect"), UNSUPPORTED,
                                   "supported values: " + ", ".join(f'"{e}"' for e in TAINT_EFFECTS),
                                   effect))
        elif (key, effect) in seen:
            shown = ('{"Key":"%s","Value":"%s","Effect":"%s","TimeAdded":null}'
                     % (key, value, effect))
            errs.append(FieldError(here, DUPLICATE, "taints must be unique by key and effect pair",
                                   GoValue(shown)))
        seen.add((key, effect))
    status = _dict(raw.get("status"))
    for section in ("capacity", "allocatable"):
        amounts = _amounts(_dict(status.get(section)))
        for name in sorted(amounts):
            shown, amount = amounts[name]
            if amount < 0:
                errs.append(FieldError(("status", section, name), INVALID, NEGATIVE,
                                       _shown(shown)))
    return errs


# ------------------------------------------------------------------------------ runtime classes

def validate_runtime_class_manifest(raw: dict[str, Any]) -> list[FieldError]:
    """ValidateRuntimeClass's findings for the manifest ``raw``, in upstream's order: name,
    handler (a DNS label), overhead (as container limits, under upstream's path
    ``overhead.limits``), scheduling's node selector and tolerations (no two alike)."""
    if not raw:
        return []
    errs = _metadata(raw, namespaced=False)
    handler = raw.get("handler")
    if not handler:
        errs.append(FieldError(("handler",), REQUIRED))
    elif isinstance(handler, str):
        errs.extend(FieldError(("handler",), INVALID, m, handler) for m in is_dns1123_label(handler))
    overhead = raw.get("overhead")
    if isinstance(overhead, dict):
        errs.extend(_resources({"limits": _dict(overhead.get("podFixed"))}, ("overhead",)))
    scheduling = raw.get("scheduling")
    if isinstance(scheduling, dict):
        errs.extend(_labels(scheduling.get("nodeSelector"), ("scheduling", "nodeSelector")))
        tolerations = _list(scheduling.get("tolerations"))
        errs.extend(_tolerations(tolerations, ("scheduling", "tolerations")))
        seen: set[tuple[str, str, str, str]] = set()
        for i, t in enumerate(tolerations):
            t = _dict(t)
            key = tuple(str(t.get(f) or "") for f in ("key", "operator", "value", "effect"))
            if key in seen:
                seconds = t.get("tolerationSeconds")
                shown = ('{"Key":"%s","Operator":"%s","Value":"%s","Effect":"%s","TolerationSeconds":%s}'
                         % (*key, "null" if seconds is None else seconds))
                errs.append(FieldError(("scheduling", "tolerations", i), DUPLICATE, "", GoValue(shown)))
            seen.add(key)  # type: ignore[arg-type]
    return errs


def invalid_message(kind: str, name: str, errs: list[FieldError]) -> str:
    """apierrors.NewInvalid's text: ``Pod "x" is invalid: <error>`` or ``[<e1>, <e2>]``."""
    body = str(errs[0]) if len(errs) == 1 else "[" + ", ".join(str(e) for e in errs) + "]"
    return f'{kind} "{name}" is invalid: {body}'
