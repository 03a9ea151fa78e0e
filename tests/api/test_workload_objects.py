"""Reading and writing scheduling.k8s.io/v1alpha2 Workloads and PodGroups, and a pod's
``spec.schedulingGroup``."""

import datetime as dt
import io

import pytest
import yaml

from kschedfw.api.dump import dump_list
from kschedfw.api.field import ManifestError
from kschedfw.api.pod import Pod, PodSchedulingGroup, parse_pod
from kschedfw.api.workload import (POD_GROUP_SCHEDULED, REASON_UNSCHEDULABLE, Condition,
                                   GangSchedulingPolicy, PodGroup, PodGroupResourceClaim,
                                   PodGroupResourceClaimStatus, PodGroupSchedulingConstraints,
                                   PodGroupSchedulingPolicy, PodGroupTemplate,
                                   PodGroupTemplateReference, TopologyConstraint,
                                   TypedLocalObjectReference, Workload,
                                   WorkloadPodGroupTemplateReference, is_workload_api,
                                   parse_pod_group, parse_workload, pod_group_manifest,
                                   workload_manifest)

T0 = dt.datetime(2026, 1, 2, 3, 4, 5, tzinfo=dt.timezone.utc)

WORKLOAD = {
    "apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "Workload",
    "metadata": {"name": "train", "namespace": "ml", "labels": {"team": "a"}},
    "spec": {
        "controllerRef": {"apiGroup": "batch", "kind": "Job", "name": "train"},
        "podGroupTemplates": [
            {"name": "workers", "schedulingPolicy": {"gang": {"minCount": 8}},
             "schedulingConstraints": {"topology": [{"key": "rack"}]},
             "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "gpu-tmpl"}],
             "disruptionMode": "PodGroup", "priorityClassName": "high", "priority": 1000},
            {"name": "driver", "schedulingPolicy": {"basic": {}}},
        ],
    },
}

POD_GROUP = {
    "apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "PodGroup",
    "metadata": {"name": "train-workers-0", "namespace": "ml"},
    "spec": {
        "podGroupTemplateRef": {"workload": {"workloadName": "train",
                                             "podGroupTemplateName": "workers"}},
        "schedulingPolicy": {"gang": {"minCount": 8}},
        "schedulingConstraints": {"topology": [{"key": "rack"}]},
        "resourceClaims": [{"name": "gpu", "resourceClaimName": "gpu-0"}],
        "disruptionMode": "PodGroup", "priorityClassName": "high", "priority": 1000,
    },
    "status": {
        "conditions": [{"type": "PodGroupScheduled", "status": "False",
                        "lastTransitionTime": "2026-01-02T03:04:05Z", "reason": "Unschedulable",
                        "message": "6 of minCount 8 pods fit"}],
        "resourceClaimStatuses": [{"name": "gpu", "resourceClaimName": "gpu-0"}],
    },
}


def test_workload_reads_every_field():
    w = parse_workload(WORKLOAD)
    assert (w.key, w.labels) == ("ml/train", {"team": "a"})
    assert w.controller_ref == TypedLocalObjectReference(kind="Job", name="train", api_group="batch")
    workers, driver = w.pod_group_templates
    assert workers == PodGroupTemplate(
        name="workers", scheduling_policy=PodGroupSchedulingPolicy(gang=GangSchedulingPolicy(8)),
        scheduling_constraints=PodGroupSchedulingConstraints((TopologyConstraint("rack"),)),
        resource_claims=(PodGroupResourceClaim("gpu", resource_claim_template_name="gpu-tmpl"),),
        disruption_mode="PodGroup", priority_class_name="high", priority=1000)
    assert driver.scheduling_policy == PodGroupSchedulingPolicy(basic=True)
    assert driver.disruption_mode is None, "a template's disruptionMode has no default"
    assert w.template("driver") is driver and w.template("nope") is None
    assert (workers.scheduling_policy.min_count, driver.scheduling_policy.min_count) == (8, 1)


def test_pod_group_reads_every_field_and_its_status():
    pg = parse_pod_group(POD_GROUP)
    assert pg.key == "ml/train-workers-0"
    assert pg.pod_group_template_ref == PodGroupTemplateReference(
        WorkloadPodGroupTemplateReference("train", "workers"))
    assert pg.scheduling_policy.gang == GangSchedulingPolicy(8) and pg.topology_key == "rack"
    assert pg.resource_claims == (PodGroupResourceClaim("gpu", resource_claim_name="gpu-0"),)
    assert (pg.disruption_mode, pg.priority_class_name, pg.priority) == ("PodGroup", "high", 1000)
    assert pg.condition(POD_GROUP_SCHEDULED) == Condition(
        "PodGroupScheduled", "False", "Unschedulable", "6 of minCount 8 pods fit", T0)
    assert pg.resource_claim_statuses == (PodGroupResourceClaimStatus("gpu", "gpu-0"),)


def test_pod_group_disruption_mode_defaults_to_pod():
    """Upstream's v1alpha2 defaulting sets a PodGroup's absent disruptionMode to Pod."""
    pg = parse_pod_group({"kind": "PodGroup", "metadata": {"name": "g"},
                          "spec": {"schedulingPolicy": {"basic": {}}}})
    assert pg.disruption_mode == "Pod"
    assert (pg.namespace, pg.topology_key, pg.pod_group_template_ref) == ("default", "", None)


def test_go_presence_is_kept():
    """A pointer field absent is None, a value field absent is its zero, so validation can
    tell ``gang: {}`` (minCount 0) from no gang and ``schedulingConstraints: {}`` from none."""
    w = parse_workload({"kind": "Workload", "metadata": {"name": "w"}, "spec": {
        "podGroupTemplates": [{"name": "a", "schedulingPolicy": {"gang": {}},
                               "schedulingConstraints": {}}]}})
    (t,) = w.pod_group_templates
    assert t.scheduling_policy == PodGroupSchedulingPolicy(gang=GangSchedulingPolicy(0))
    assert t.scheduling_constraints == PodGroupSchedulingConstraints(())
    pg = parse_pod_group({"kind": "PodGroup", "metadata": {"name": "g"},
                          "spec": {"podGroupTemplateRef": {}}})
    assert pg.pod_group_template_ref == PodGroupTemplateReference(None)
    assert pg.scheduling_policy == PodGroupSchedulingPolicy()


@pytest.mark.parametrize("parse,manifest,write", [
    (parse_workload, WORKLOAD, workload_manifest),
    (parse_pod_group, POD_GROUP, pod_group_manifest),
])
def test_round_trip(parse, manifest, write):
    """What is written back reads back as the same object, and as the manifest it came from."""
    obj = parse(manifest)
    out = write(obj)
    assert out == manifest
    assert parse(out) == obj


def test_objects_built_in_code_are_written_with_their_metadata():
    pg = PodGroup(name="g", namespace="ns", uid="u1",
                  scheduling_policy=PodGroupSchedulingPolicy(basic=True), labels={"a": "b"})
    out = pod_group_manifest(pg)
    assert out["metadata"] == {"name": "g", "namespace": "ns", "uid": "u1", "labels": {"a": "b"}}
    assert out["spec"] == {"schedulingPolicy": {"basic": {}}, "disruptionMode": "Pod"}
    assert "status" not in out
    assert parse_pod_group(out) == pg
    w = Workload(name="w", pod_group_templates=(PodGroupTemplate("t"),))
    assert workload_manifest(w)["spec"] == {"podGroupTemplates": [{"name": "t",
                                                                   "schedulingPolicy": {}}]}


def test_with_condition_keeps_the_transition_time_while_the_status_holds():
    """As meta.SetStatusCondition: a condition's lastTransitionTime moves only when its
    status changes; reason and message always follow the new condition."""
    later = T0 + dt.timedelta(minutes=5)
    pg = parse_pod_group(POD_GROUP)
    same = pg.with_condition(Condition(POD_GROUP_SCHEDULED, "False", REASON_UNSCHEDULABLE,
                                       "7 of minCount 8 pods fit"), now=later)
    (c,) = same.conditions
    assert (c.message, c.last_transition_time) == ("7 of minCount 8 pods fit", T0)
    flipped = same.with_condition(Condition(POD_GROUP_SCHEDULED, "True", "Scheduled"), now=later)
    assert flipped.conditions[0].last_transition_time == later
    added = flipped.with_condition(Condition("DisruptionTarget", "True", "PreemptionByScheduler"),
                                   now=later)
    assert [c.type for c in added.conditions] == ["PodGroupScheduled", "DisruptionTarget"]


def test_write_out_carries_the_status_the_scheduler_set():
    """A PodGroup written with ``dump_list`` carries its PodGroupScheduled condition."""
    pg = parse_pod_group({"kind": "PodGroup", "apiVersion": "scheduling.k8s.io/v1alpha2",
                          "metadata": {"name": "g", "namespace": "ns"},
                          "spec": {"schedulingPolicy": {"gang": {"minCount": 4}}}})
    pg = pg.with_condition(Condition(POD_GROUP_SCHEDULED, "False", REASON_UNSCHEDULABLE,
                                     "2 of minCount 4 pods fit"), now=T0)
    text = io.StringIO()
    dump_list([pod_group_manifest(pg)], text)
    (item,) = yaml.safe_load(text.getvalue())["items"]
    assert item["status"] == {"conditions": [{
        "type": "PodGroupScheduled", "status": "False", "lastTransitionTime": "2026-01-02T03:04:05Z",
        "reason": "Unschedulable", "message": "2 of minCount 4 pods fit"}]}


@pytest.mark.parametrize("kind,spec,status,field,message", [
    ("Workload", {"podGroupTemplates": {"name": "a"}}, None, "spec.podGroupTemplates",
     "expected a list, got a mapping"),
    ("Workload", {"podGroupTemplates": [{"name": 3}]}, None, "spec.podGroupTemplates[0].name",
     "expected a string, got an integer (3)"),
    ("Workload", {"podGroupTemplates": [{"name": "a", "schedulingPolicy": {"gang": {
        "minCount": "two"}}}]}, None, "spec.podGroupTemplates[0].schedulingPolicy.gang.minCount",
     "expected an integer, got a string ('two')"),
    ("Workload", {"podGroupTemplates": [{"name": "a", "priority": 2**31}]}, None,
     "spec.podGroupTemplates[0].priority", "expected a 32-bit integer, got 2147483648"),
    ("Workload", {"controllerRef": "job"}, None, "spec.controllerRef",
     "expected a mapping, got a string"),
    ("PodGroup", {"schedulingPolicy": {"basic": True}}, None, "spec.schedulingPolicy.basic",
     "expected a mapping, got a boolean"),
    ("PodGroup", {"schedulingConstraints": {"topology": [{"key": 1}]}}, None,
     "spec.schedulingConstraints.topology[0].key", "expected a string, got an integer (1)"),
    ("PodGroup", {"resourceClaims": [{"name": "c", "resourceClaimName": ["x"]}]}, None,
     "spec.resourceClaims[0].resourceClaimName", "expected a string, got a list (['x'])"),
    ("PodGroup", {"podGroupTemplateRef": {"workload": "w"}}, None,
     "spec.podGroupTemplateRef.workload", "expected a mapping, got a string"),
    ("PodGroup", {}, {"conditions": [{"type": "PodGroupScheduled", "lastTransitionTime": "soon"}]},
     "status.conditions[0].lastTransitionTime", "invalid RFC 3339 time 'soon'"),
])
def test_malformed_manifests_name_file_line_object_and_field(kind, spec, status, field, message):
    d = {"apiVersion": "scheduling.k8s.io/v1alpha2", "kind": kind,
         "metadata": {"name": "x", "namespace": "ns"}, "spec": spec}
    if status is not None:
        d["status"] = status
    cls = Workload if kind == "Workload" else PodGroup
    with pytest.raises(ManifestError) as err:
        cls.from_dict(d, source="groups.yaml", line=7)
    assert (err.value.field, err.value.obj) == (field, f"{kind} ns/x")
    assert str(err.value).startswith(f"groups.yaml:7: {kind} ns/x: {field}: {message}")


def test_name_is_required_unless_a_template():
    with pytest.raises(ManifestError, match="metadata.name: Required value"):
        parse_pod_group({"kind": "PodGroup", "spec": {}})
    assert parse_workload({"kind": "Workload"}, template=True).name == ""


def test_the_two_pod_group_kinds_are_told_apart_by_group():
    """The coscheduling plugin's PodGroup is scheduling.x-k8s.io; only scheduling.k8s.io is
    the workload API."""
    assert is_workload_api("scheduling.k8s.io/v1alpha2")
    assert not is_workload_api("scheduling.x-k8s.io/v1alpha1")
    assert not is_workload_api("v1")


# ------------------------------------------------------------------ pods

def test_pod_scheduling_group_is_read_and_kept_in_raw():
    d = {"metadata": {"name": "p"}, "spec": {"schedulingGroup": {"podGroupName": "train-0"},
                                              "containers": [{"name": "c", "image": "i"}]}}
    pod = parse_pod(d)
    assert pod.scheduling_group == PodSchedulingGroup("train-0")
    assert pod.raw["spec"]["schedulingGroup"] == {"podGroupName": "train-0"}
    assert pod.with_node("n1").scheduling_group == PodSchedulingGroup("train-0")


def test_pod_without_scheduling_group():
    assert parse_pod({"metadata": {"name": "p"}, "spec": {}}).scheduling_group is None
    assert Pod(name="p").scheduling_group is None
    assert parse_pod({"metadata": {"name": "p"}, "spec": {"schedulingGroup": {}}}
                     ).scheduling_group == PodSchedulingGroup(None)


def test_pod_scheduling_group_malformed():
    with pytest.raises(ManifestError) as err:
        Pod.from_dict({"metadata": {"name": "p"}, "spec": {"schedulingGroup": {"podGroupName": 5}}},
                      source="pods.yaml", line=2)
    assert str(err.value) == ("pods.yaml:2: Pod default/p: spec.schedulingGroup.podGroupName: "
                              "expected a string, got an integer (5)")
