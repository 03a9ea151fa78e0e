"""The admission table (``tests/admission_table.py``) on a real kube-apiserver v1.36.2.

The test control plane runs kube-apiserver's default admission plugins but ServiceAccount (there
is no controller-manager to create the ``default`` ServiceAccount; the plugin changes nothing the
scheduler reads). Every case runs in its own namespace; its subject is sent with ``dryRun=All``,
which runs every admission plugin and stores nothing, and its cluster-scoped setup objects are
deleted afterwards. Priority admission reads PriorityClasses from an informer, so a case waits
until admission sees its classes (and no longer sees a deleted global default).
"""

from __future__ import annotations

import copy
import itertools
import re
import time
from typing import Any, Callable

from kschedfw.api import parse_object
from kschedfw.testing.controlplane import APIError, ControlPlane
from tests.admission_table import CASES, Admitted, Case, Refused, admitted_fields, pod

_namespaces = itertools.count(1)

COLLECTIONS = {
    "PriorityClass": "/apis/scheduling.k8s.io/v1/priorityclasses",
    "RuntimeClass": "/apis/node.k8s.io/v1/runtimeclasses",
    "LimitRange": "/api/v1/namespaces/{ns}/limitranges",
    "Pod": "/api/v1/namespaces/{ns}/pods",
}


def _collection(obj: dict[str, Any], namespace: str) -> str:
    return COLLECTIONS[obj["kind"]].format(ns=namespace)


def _dry_run_pod(cp: ControlPlane, namespace: str, **spec: Any) -> dict[str, Any] | APIError:
    try:
        return cp.api("POST", f"/api/v1/namespaces/{namespace}/pods?dryRun=All", pod(**spec))
    except APIError as exc:
        return exc


def _eventually(check: Callable[[], bool], what: str, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"admission did not see {what} within {timeout:.0f}s")
        time.sleep(0.05)


def _default_class(cp: ControlPlane, namespace: str) -> str:
    created = _dry_run_pod(cp, namespace)
    assert not isinstance(created, APIError), created
    return str(created["spec"].get("priorityClassName") or "")


def _wait_until_admission_sees(cp: ControlPlane, namespace: str, pc: dict[str, Any]) -> None:
    name = pc["metadata"]["name"]
    if pc.get("globalDefault"):
        _eventually(lambda: _default_class(cp, namespace) == name, f"the global default {name}")
    _eventually(lambda: not isinstance(_dry_run_pod(cp, namespace, priorityClassName=name), APIError),
                f"PriorityClass {name}")


def run_case(cp: ControlPlane, case: Case) -> Refused | Admitted:
    """The server's answer to the case's subject, after its setup objects."""
    namespace = f"adm{next(_namespaces)}"
    cp.api("POST", "/api/v1/namespaces", {"metadata": {"name": namespace}})
    created: list[dict[str, Any]] = []
    try:
        for obj in case.setup:
            cp.api("POST", _collection(obj, namespace), obj)
            created.append(obj)
            if obj["kind"] == "PriorityClass":
                _wait_until_admission_sees(cp, namespace, obj)
        subject = copy.deepcopy(case.subject)
        try:
            answer = cp.api("POST", _collection(subject, namespace) + "?dryRun=All", subject)
        except APIError as exc:
            return Refused(exc.status, exc.body["message"] if isinstance(exc.body, dict) else str(exc.body))
        return Admitted(admitted_fields(parse_object(answer))) if subject["kind"] == "Pod" else Admitted({})
    finally:
        for obj in reversed(created):
            if obj["kind"] in ("PriorityClass", "RuntimeClass"):
                cp.api("DELETE", f"{_collection(obj, namespace)}/{obj['metadata']['name']}")
        if any(obj.get("globalDefault") for obj in created):
            _eventually(lambda: _default_class(cp, namespace) == "", "the global default deleted")


def test_cluster_scoped_names_are_unique():
    """One control plane runs the whole table: a class name used twice would leak between cases."""
    names = [o["metadata"]["name"] for c in CASES for o in (*c.setup, c.subject)
             if o["kind"] in ("PriorityClass", "RuntimeClass")]
    assert len(names) == len(set(names))


def _loaded_plugins(cp: ControlPlane, phase: str) -> list[str]:
    log = (cp.workdir / "kube-apiserver.log").read_text(errors="replace")
    match = re.search(rf"Loaded \d+ {phase} admission controller\(s\) successfully in the following order: "
                      r"([A-Za-z,]+)", log)
    assert match, f"kube-apiserver logged no {phase} admission plugins"
    return match.group(1).split(",")


def test_admission_plugins_of_the_test_control_plane(control_plane: ControlPlane):
    """kube-apiserver's default plugins run, but ServiceAccount (no controller-manager creates the
    ``default`` ServiceAccount here; it changes nothing the scheduler reads). The mutating ones
    that change pods run in the table's order: LimitRanger, Priority, DefaultTolerationSeconds,
    RuntimeClass; then LimitRanger and RuntimeClass validate."""
    mutating = _loaded_plugins(control_plane, "mutating")
    validating = _loaded_plugins(control_plane, "validating")
    assert "ServiceAccount" not in mutating + validating
    order = ["LimitRanger", "Priority", "DefaultTolerationSeconds", "RuntimeClass"]
    assert [p for p in mutating if p in order] == order
    assert [p for p in validating if p in ("LimitRanger", "RuntimeClass")] == ["LimitRanger", "RuntimeClass"]


def test_the_real_server_admits_as_the_table_says(control_plane: ControlPlane):
    """Every case of the table, on one control plane: refused with the status and message
    given, or admitted with exactly the changes given."""
    failures = []
    for case in CASES:
        got = run_case(control_plane, case)
        if got != case.expected:
            failures.append(f"{case.id}:\n  expected {case.expected}\n  got      {got}")
    assert not failures, "\n".join(failures)
