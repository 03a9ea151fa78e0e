"""The PodGroup admission table (``tests/admission_table.py``, upstream's TestPodGroupAdmission)
against a real kube-apiserver v1.36.2 serving ``scheduling.k8s.io/v1alpha2`` with GenericWorkload
on: the same refusals (HTTP 403 and the message) and, for an admitted group, the protection
finalizer that ``tests/api/test_pod_group_admission.py`` expects of the embedded cluster."""

from __future__ import annotations

import itertools
from typing import Any, Iterator

import pytest

from kschedfw.testing.controlplane import APIError, ControlPlane, find_assets, missing_assets_reason
from tests.admission_table import POD_GROUP, POD_GROUP_PROTECTION_FINALIZER, PodGroupCase

_namespaces = itertools.count(1)


@pytest.fixture(scope="module")
def server() -> Iterator[ControlPlane]:
    assets = find_assets()
    if assets is None:
        pytest.skip(missing_assets_reason())
    with ControlPlane(assets, extra_apiserver_flags=[
            "--feature-gates=GenericWorkload=true", "--runtime-config=scheduling.k8s.io/v1alpha2=true"]) as cp:
        yield cp


def answer(cp: ControlPlane, case: PodGroupCase) -> tuple[int, str | None, list[str]]:
    """(HTTP status, refusal message or None, the created group's finalizers)."""
    ns = f"pg-admission-{next(_namespaces)}"
    cp.api("POST", "/api/v1/namespaces", {"metadata": {"name": ns}})
    base = f"/apis/scheduling.k8s.io/v1alpha2/namespaces/{ns}"
    if case.workload is not None:
        cp.api("POST", f"{base}/workloads", case.workload)
        if case.delete_workload:
            cp.api("DELETE", f"{base}/workloads/{case.workload['metadata']['name']}")
    try:
        created: Any = cp.api("POST", f"{base}/podgroups", case.subject)
    except APIError as exc:
        message = exc.body.get("message") if isinstance(exc.body, dict) else str(exc.body)
        return exc.status, message, []
    return 201, None, list(created["metadata"].get("finalizers") or ())


@pytest.mark.parametrize("case", POD_GROUP, ids=[c.id for c in POD_GROUP])
def test_pod_group_admission_of_the_server(server: ControlPlane, case: PodGroupCase):
    status, message, finalizers = answer(server, case)
    if case.expected is None:
        assert (status, message, finalizers) == (201, None, [POD_GROUP_PROTECTION_FINALIZER])
    else:
        assert (status, message) == (403, case.expected)
