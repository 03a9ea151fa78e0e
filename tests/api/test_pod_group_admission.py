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


# upstream's TestAdmitPodGroup (plugin/pkg/admission/priority): a class default1 (1000, global
# default) and nondefault1 (2000); (classes, priorityClassName, priority set, WorkloadAwarePreemption,
# expected (class, priority) or the refusal)
DEFAULT1 = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "default1"},
            "value": 1000, "globalDefault": True}
NONDEFAULT1 = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "nondefault1"},
               "value": 2000}
REFUSED = 'podgroups.scheduling.k8s.io "pg1" is forbidden: '
PRIORITY_CASES = [
    pytest.param((DEFAULT1, NONDEFAULT1), "", None, True, ("default1", 1000), id="empty class: the global default"),
    pytest.param((DEFAULT1, NONDEFAULT1), "nondefault1", None, True, ("nondefault1", 2000), id="explicit class"),
    pytest.param((DEFAULT1, NONDEFAULT1), "non-existent", None, True,
                 REFUSED + "no PriorityClass with name non-existent was found", id="missing class refused"),
    pytest.param((DEFAULT1, NONDEFAULT1), "non-existent", None, False, ("non-existent", None),
                 id="gate off: not resolved"),
    pytest.param((NONDEFAULT1,), "", None, True, ("", 0), id="no class, no global default: priority 0"),
    pytest.param((DEFAULT1, NONDEFAULT1), "nondefault1", 2000, True, ("nondefault1", 2000),
                 id="priority set to the computed value"),
    pytest.param((DEFAULT1, NONDEFAULT1), "nondefault1", 9999, True,
                 REFUSED + "priority set in the pod group (9999) must match the priority computed (2000) "
                 "based on the priority class set in the spec", id="priority set to another value refused"),
]


@pytest.mark.parametrize("classes, class_name, priority, wap, expected", PRIORITY_CASES)
def test_the_priority_plugin_resolves_a_pod_groups_priority_with_workload_aware_preemption(
        classes, class_name, priority, wap, expected):
    gates = {**GENERIC_WORKLOAD, "GangScheduling": True, "WorkloadAwarePreemption": wap}
    cluster = MemoryCluster(feature_gates=gates)
    for pc in classes:
        cluster.create(parse_object(pc))
    manifest = pod_group(None)
    if class_name:
        manifest["spec"]["priorityClassName"] = class_name
    if priority is not None:
        manifest["spec"]["priority"] = priority
    try:
        created = cluster.create(parse_object(manifest))
    except AdmissionError as exc:
        assert str(exc) == expected
        return
    assert (created.priority_class_name, created.priority) == expected
    assert created.raw["spec"].get("priority") == expected[1]
