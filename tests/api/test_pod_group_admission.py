"""PodGroupWorkloadExists and PodGroupProtection on the embedded cluster, from the PodGroup table
of ``tests/admission_table.py`` (upstream's TestPodGroupAdmission; ``tests/kube`` asserts the same
table on a real kube-apiserver v1.36.2). With GenericWorkload off both plugins do nothing."""

from __future__ import annotations

import pytest

from kschedfw.api.load import parse_object
from kschedfw.api.workload import POD_GROUP_KIND, WORKLOAD_KIND
from kschedfw.cluster.apiserver.admission import AdmissionError
from kschedfw.cluster.memory import MemoryCluster
from tests.admission_table import POD_GROUP, POD_GROUP_PROTECTION_FINALIZER, PodGroupCase, pod_group

GENERIC_WORKLOAD = {"GenericWorkload": True}


def finalizers(obj) -> list[str]:
    return list(obj.raw["metadata"].get("finalizers") or ())


def answer(case: PodGroupCase, cluster: MemoryCluster) -> str | None:
    """The refusal of the case's PodGroup (None when it is created), after its Workload."""
    if case.workload is not None:
        cluster.create(parse_object(case.workload))
        if case.delete_workload:
            cluster.delete(WORKLOAD_KIND, case.workload["metadata"]["name"], "default")
            assert cluster.get(WORKLOAD_KIND, case.workload["metadata"]["name"], "default") is not None
    try:
        created = cluster.create(parse_object(case.subject))
    except AdmissionError as exc:
        return str(exc)
    assert finalizers(created) == [POD_GROUP_PROTECTION_FINALIZER]
    return None


@pytest.mark.parametrize("case", POD_GROUP, ids=[c.id for c in POD_GROUP])
def test_pod_group_admission_as_the_api_server(case: PodGroupCase):
    assert answer(case, MemoryCluster(feature_gates=GENERIC_WORKLOAD)) == case.expected


def test_without_generic_workload_neither_plugin_runs():
    created = MemoryCluster().create(parse_object(pod_group("worker", "non-existent-workload")))
    assert finalizers(created) == []


def test_a_workload_without_finalizers_is_deleted_at_once():
    cluster = MemoryCluster(feature_gates=GENERIC_WORKLOAD)
    cluster.create(parse_object(POD_GROUP[2].workload))
    cluster.delete(WORKLOAD_KIND, "test-workload", "default")
    assert cluster.get(WORKLOAD_KIND, "test-workload", "default") is None


def test_the_protection_finalizer_does_not_hold_a_deleted_pod_group():
    """No PodGroupProtection controller runs here to release it, so a deleted group goes at once."""
    cluster = MemoryCluster(feature_gates=GENERIC_WORKLOAD)
    cluster.create(parse_object(pod_group(None)))
    cluster.delete(POD_GROUP_KIND, "pg1", "default")
    assert cluster.get(POD_GROUP_KIND, "pg1", "default") is None


def test_a_file_naming_the_pod_group_before_its_workload_loads_the_workload_first():
    """Like ``kubectl create -f``, but kinds others depend on come first: a Workload before its PodGroups."""
    cluster = MemoryCluster(feature_gates=GENERIC_WORKLOAD)
    cluster.load([parse_object(pod_group()), parse_object(POD_GROUP[2].workload)])
    assert cluster.rejected == [] and cluster.get(POD_GROUP_KIND, "pg1", "default") is not None
