"""The API server's validation of Workloads and PodGroups on create and update, as upstream's
v1.36 tables state it (each case: the gates on, the findings' field paths and kinds).

Objects are built as upstream's tables build them: not defaulted (a PodGroup without
``disruptionMode`` has none), so that a rule's finding shows on its own.
"""

from __future__ import annotations

import datetime as dt

import attrs
import pytest

from kschedfw.api.field import FieldError
from kschedfw.api.workload import (Condition, GangSchedulingPolicy, PodGroup,
                                   PodGroupResourceClaim, PodGroupResourceClaimStatus,
                                   PodGroupSchedulingConstraints, PodGroupSchedulingPolicy,
                                   PodGroupTemplate, PodGroupTemplateReference,
                                   TopologyConstraint, TypedLocalObjectReference, Workload,
                                   WorkloadPodGroupTemplateReference, parse_pod_group)
from kschedfw.api.workload_validation import (WorkloadGates, drop_disabled_pod_group_fields,
                                              drop_disabled_workload_fields,
                                              prepare_pod_group_for_create,
                                              prepare_pod_group_for_update,
                                              prepare_pod_group_status_update, validate_pod_group,
                                              validate_pod_group_status_update,
                                              validate_pod_group_update, validate_workload,
                                              validate_workload_update)

NOW = dt.datetime(2026, 1, 2, tzinfo=dt.timezone.utc)
TAS = WorkloadGates(topology_aware_workload_scheduling=True)
DRA = WorkloadGates(dra_workload_resource_claims=True)
WAP = WorkloadGates(workload_aware_preemption=True)
OFF = WorkloadGates()
GANG = PodGroupSchedulingPolicy(gang=GangSchedulingPolicy(1))
TPL = ("spec", "podGroupTemplates")


def found(errs: list[FieldError]) -> list[tuple[str, str]]:
    return [(".".join(str(p) if isinstance(p, str) else f"[{p}]" for p in e.path).replace(".[", "["),
             e.kind) for e in errs]


# ------------------------------------------------------------------ builders and tweaks

def workload(*tweaks) -> Workload:
    """The valid Workload of upstream's declarative table: one gang template ``main``."""
    w = Workload(name="valid-workload", namespace="default", resource_version="1",
                 pod_group_templates=(PodGroupTemplate("main", GANG),))
    for tweak in tweaks:
        w = tweak(w)
    return w


def on_template(i: int = 0, **changes):
    def tweak(w: Workload) -> Workload:
        templates = list(w.pod_group_templates)
        templates[i] = attrs.evolve(templates[i], **changes)
        return attrs.evolve(w, pod_group_templates=tuple(templates))
    return tweak


def add_topology(key: str, i: int = 0):
    def tweak(w: Workload) -> Workload:
        c = w.pod_group_templates[i].scheduling_constraints or PodGroupSchedulingConstraints()
        return on_template(i, scheduling_constraints=attrs.evolve(
            c, topology=(*c.topology, TopologyConstraint(key))))(w)
    return tweak


def add_claims(*claims: PodGroupResourceClaim):
    def tweak(w: Workload) -> Workload:
        return on_template(0, resource_claims=w.pod_group_templates[0].resource_claims + claims)(w)
    return tweak


def add_template(name: str):
    return lambda w: attrs.evolve(
        w, pod_group_templates=(*w.pod_group_templates, PodGroupTemplate(name, GANG)))


def many_templates(n: int):
    return lambda w: attrs.evolve(w, pod_group_templates=tuple(
        PodGroupTemplate(f"group-{i}", GANG) for i in range(n)))


def controller_ref(api_group: str, kind: str, name: str):
    return lambda w: attrs.evolve(w, controller_ref=TypedLocalObjectReference(kind, name, api_group))


def min_count(n: int):
    return on_template(0, scheduling_policy=PodGroupSchedulingPolicy(gang=GangSchedulingPolicy(n)))


BASIC = on_template(0, scheduling_policy=PodGroupSchedulingPolicy(basic=True))
NEITHER = on_template(0, scheduling_policy=PodGroupSchedulingPolicy())
BOTH = on_template(0, scheduling_policy=PodGroupSchedulingPolicy(True, GangSchedulingPolicy(1)))
EMPTY_CONSTRAINTS = on_template(0, scheduling_constraints=PodGroupSchedulingConstraints())


def claim(name: str, claim_name: str | None = None, template: str | None = None):
    return PodGroupResourceClaim(name, claim_name, template)


# ------------------------------------------------------------------ Workload on create

P0 = "spec.podGroupTemplates[0]"

WORKLOAD_CREATE = [
    ("valid", [], OFF, []),
    ("empty podGroupTemplates", [lambda w: attrs.evolve(w, pod_group_templates=())], OFF,
     [("spec.podGroupTemplates", "Required value")]),
    ("too many podGroupTemplates", [many_templates(9)], OFF,
     [("spec.podGroupTemplates", "Too many")]),
    ("empty podGroupTemplate name", [on_template(0, name="")], OFF,
     [(f"{P0}.name", "Required value")]),
    ("invalid podGroupTemplate name", [on_template(0, name="Invalid_Name")], OFF,
     [(f"{P0}.name", "Invalid value")]),
    ("podGroupTemplate name with a final newline", [on_template(0, name="main\n")], OFF,
     [(f"{P0}.name", "Invalid value")]),
    ("duplicate podGroupTemplate names", [add_template("main")], OFF,
     [("spec.podGroupTemplates[1]", "Duplicate value")]),
    ("gang minCount zero", [min_count(0)], OFF,
     [(f"{P0}.schedulingPolicy.gang.minCount", "Required value")]),
    ("gang minCount negative", [min_count(-1)], OFF,
     [(f"{P0}.schedulingPolicy.gang.minCount", "Invalid value")]),
    ("valid with controllerRef", [controller_ref("apps", "Deployment", "my-deployment")], OFF, []),
    ("controllerRef with empty APIGroup", [controller_ref("", "Pod", "my-pod")], OFF, []),
    ("controllerRef invalid APIGroup", [controller_ref("invalid_api_group", "Deployment", "d")],
     OFF, [("spec.controllerRef.apiGroup", "Invalid value")]),
    ("controllerRef too long APIGroup", [controller_ref("g" * 254, "Deployment", "d")], OFF,
     [("spec.controllerRef.apiGroup", "Invalid value")]),
    ("controllerRef missing kind", [controller_ref("apps", "", "d")], OFF,
     [("spec.controllerRef.kind", "Required value")]),
    ("controllerRef invalid kind with slash", [controller_ref("apps", "Deploy/ment", "d")], OFF,
     [("spec.controllerRef.kind", "Invalid value")]),
    ("controllerRef missing name", [controller_ref("apps", "Deployment", "")], OFF,
     [("spec.controllerRef.name", "Required value")]),
    ("controllerRef invalid name", [controller_ref("apps", "Deployment", "/invalid-name")], OFF,
     [("spec.controllerRef.name", "Invalid value")]),
    ("controllerRef invalid kind with percent", [controller_ref("apps", "Deploy%ment", "d")], OFF,
     [("spec.controllerRef.kind", "Invalid value")]),
    ("controllerRef invalid name with percent", [controller_ref("apps", "Deployment", "my%d")],
     OFF, [("spec.controllerRef.name", "Invalid value")]),
    ("policy with neither basic nor gang", [NEITHER], OFF,
     [(f"{P0}.schedulingPolicy", "Invalid value")]),
    ("policy with both basic and gang", [BOTH], OFF,
     [(f"{P0}.schedulingPolicy", "Invalid value")]),
    ("valid with basic policy", [BASIC], OFF, []),
    ("valid with schedulingConstraints", [add_topology("foo")], TAS, []),
    ("valid with empty schedulingConstraints", [EMPTY_CONSTRAINTS], TAS, []),
    ("with multiple topology constraints", [add_topology("foo"), add_topology("bar")], TAS,
     [(f"{P0}.schedulingConstraints.topology", "Too many")]),
    ("with empty topology key", [add_topology("")], TAS,
     [(f"{P0}.schedulingConstraints.topology[0].key", "Required value")]),
    ("valid with topology key with DNS prefix", [add_topology("example.com/Foo")], TAS, []),
    ("valid with topology key with prefix with max length",
     [add_topology("a" * 253 + "/" + "b" * 63)], TAS, []),
    ("with topology key with prefix exceeding max prefix length", [add_topology("a" * 254 + "/foo")],
     TAS, [(f"{P0}.schedulingConstraints.topology[0].key", "Invalid value")]),
    ("with topology key exceeding max name length", [add_topology("foo/" + "b" * 64)], TAS,
     [(f"{P0}.schedulingConstraints.topology[0].key", "Invalid value")]),
    ("with topology key without prefix exceeding max length", [add_topology("b" * 64)], TAS,
     [(f"{P0}.schedulingConstraints.topology[0].key", "Invalid value")]),
    ("with topology key with invalid characters", [add_topology("Example.com/Foo")], TAS,
     [(f"{P0}.schedulingConstraints.topology[0].key", "Invalid value")]),
    ("with topology key with a final newline", [add_topology("rack\n")], TAS,
     [(f"{P0}.schedulingConstraints.topology[0].key", "Invalid value")]),
    ("pod disruption mode, WAP enabled", [on_template(0, disruption_mode="Pod")], WAP, []),
    ("pod disruption mode, WAP disabled", [on_template(0, disruption_mode="Pod")], OFF,
     [(f"{P0}.disruptionMode", "Forbidden")]),
    ("pod group disruption mode, WAP enabled", [on_template(0, disruption_mode="PodGroup")], WAP,
     []),
    ("pod group disruption mode, WAP disabled", [on_template(0, disruption_mode="PodGroup")], OFF,
     [(f"{P0}.disruptionMode", "Forbidden")]),
    ("invalid disruption mode, WAP enabled", [on_template(0, disruption_mode="Invalid")], WAP,
     [(f"{P0}.disruptionMode", "Unsupported value")]),
    ("invalid disruption mode, WAP disabled", [on_template(0, disruption_mode="Invalid")], OFF,
     [(f"{P0}.disruptionMode", "Forbidden")]),
    ("valid priorityClassName, WAP enabled", [on_template(0, priority_class_name="high-priority")],
     WAP, []),
    ("valid priorityClassName, WAP disabled", [on_template(0, priority_class_name="high-priority")],
     OFF, [(f"{P0}.priorityClassName", "Forbidden")]),
    ("invalid priorityClassName, WAP enabled", [on_template(0, priority_class_name="high/priority")],
     WAP, [(f"{P0}.priorityClassName", "Invalid value")]),
    ("invalid priorityClassName, WAP disabled",
     [on_template(0, priority_class_name="high/priority")], OFF,
     [(f"{P0}.priorityClassName", "Forbidden")]),
    ("valid priority, WAP enabled", [on_template(0, priority=1000)], WAP, []),
    ("valid priority, WAP disabled", [on_template(0, priority=1000)], OFF,
     [(f"{P0}.priority", "Forbidden")]),
    ("valid negative priority, WAP enabled", [on_template(0, priority=-2**31)], WAP, []),
    ("valid negative priority, WAP disabled", [on_template(0, priority=-2**31)], OFF,
     [(f"{P0}.priority", "Forbidden")]),
    ("too high priority, WAP enabled", [on_template(0, priority=1_000_000_001)], WAP,
     [(f"{P0}.priority", "Invalid value")]),
    ("too high priority, WAP disabled", [on_template(0, priority=1_000_000_001)], OFF,
     [(f"{P0}.priority", "Forbidden")]),
    ("ok resourceClaimName reference", [add_claims(claim("claim", "resource-claim"))], OFF, []),
    ("ok resourceClaimTemplateName reference",
     [add_claims(claim("claim", template="resource-claim-template"))], OFF, []),
    ("ok multiple claims", [add_claims(claim("claim-1", "rc-1"), claim("claim-2", "rc-2"))], OFF,
     []),
    ("claim name with prefix", [add_claims(claim("../my-claim", "resource-claim"))], OFF,
     [(f"{P0}.resourceClaims[0].name", "Invalid value")]),
    ("claim name with path", [add_claims(claim("my/claim", "resource-claim"))], OFF,
     [(f"{P0}.resourceClaims[0].name", "Invalid value")]),
    ("duplicate claim entries", [add_claims(claim("my-claim", "rc-1"), claim("my-claim", "rc-2"))],
     OFF, [(f"{P0}.resourceClaims[1]", "Duplicate value")]),
    ("resource claim source empty", [add_claims(claim("my-claim"))], OFF,
     [(f"{P0}.resourceClaims[0]", "Invalid value")]),
    ("resource claim reference and template", [add_claims(claim("my-claim", "rc", "rct"))], OFF,
     [(f"{P0}.resourceClaims[0]", "Invalid value")]),
    ("invalid claim reference name", [add_claims(claim("my-claim", ".foo_bar"))], OFF,
     [(f"{P0}.resourceClaims[0].resourceClaimName", "Invalid value")]),
    ("invalid claim template name", [add_claims(claim("my-claim", template=".foo_bar"))], OFF,
     [(f"{P0}.resourceClaims[0].resourceClaimTemplateName", "Invalid value")]),
    ("too many claims", [add_claims(*(claim(f"my-claim-{i}", "rc") for i in range(5)))], OFF,
     [(f"{P0}.resourceClaims", "Too many")]),
    # the hand-written metadata rules (validation_test.go)
    ("no name", [lambda w: attrs.evolve(w, name="")], OFF, [("metadata.name", "Required value")]),
    ("invalid name", [lambda w: attrs.evolve(w, name=".workload")], OFF,
     [("metadata.name", "Invalid value")]),
    ("too long name", [lambda w: attrs.evolve(w, name="w" * 254)], OFF,
     [("metadata.name", "Invalid value")]),
    ("no namespace", [lambda w: attrs.evolve(w, namespace="")], OFF,
     [("metadata.namespace", "Required value")]),
    ("invalid namespace", [lambda w: attrs.evolve(w, namespace=".ns")], OFF,
     [("metadata.namespace", "Invalid value")]),
    ("too long namespace", [lambda w: attrs.evolve(w, namespace="n" * 64)], OFF,
     [("metadata.namespace", "Invalid value")]),
    ("basic and gang policies with topology", [
        controller_ref("group", "foo", "baz"), add_topology("foo"), add_template("group2"),
        add_topology("foo", 1), BASIC], TAS, []),
]


@pytest.mark.parametrize("name,tweaks,gates,expected", WORKLOAD_CREATE,
                         ids=[c[0] for c in WORKLOAD_CREATE])
def test_workload_create(name, tweaks, gates, expected):
    assert found(validate_workload(workload(*tweaks), gates)) == expected


# ------------------------------------------------------------------ Workload on update

IMMUTABLE_TEMPLATES = [("spec.podGroupTemplates", "Invalid value")]
MY_CLAIM = claim("my-claim", template="my-template")

WORKLOAD_UPDATE = [
    ("valid update", [], [], OFF, []),
    ("valid update with unchanged controllerRef", [controller_ref("apps", "Deployment", "d")],
     [controller_ref("apps", "Deployment", "d")], OFF, []),
    ("set controllerRef", [], [controller_ref("apps", "Deployment", "d")], OFF,
     [("spec.controllerRef", "Invalid value")]),
    ("invalid update controllerRef", [controller_ref("apps", "Deployment", "d")],
     [controller_ref("apps", "Deployment", "other")], OFF, [("spec.controllerRef", "Invalid value")]),
    ("unset controllerRef", [controller_ref("apps", "Deployment", "d")], [], OFF,
     [("spec.controllerRef", "Invalid value")]),
    ("invalid update empty podGroupTemplates", [],
     [lambda w: attrs.evolve(w, pod_group_templates=())], OFF,
     [("spec.podGroupTemplates", "Invalid value"), ("spec.podGroupTemplates", "Required value")]),
    ("change podGroupTemplate name", [add_template("worker1")], [add_template("worker2")], OFF,
     IMMUTABLE_TEMPLATES),
    ("invalid update too many podGroupTemplates", [], [many_templates(9)], OFF,
     [("spec.podGroupTemplates", "Invalid value"), ("spec.podGroupTemplates", "Too many")]),
    ("add podGroupTemplate", [], [add_template("worker1")], OFF, IMMUTABLE_TEMPLATES),
    ("remove podGroupTemplate", [add_template("worker1")], [], OFF, IMMUTABLE_TEMPLATES),
    ("invalid update with neither basic nor gang", [], [NEITHER], OFF, IMMUTABLE_TEMPLATES),
    ("invalid update with both basic and gang", [], [BOTH], OFF, IMMUTABLE_TEMPLATES),
    ("invalid update of gang minCount", [], [min_count(10)], OFF, IMMUTABLE_TEMPLATES),
    ("update from gang to basic policy", [], [BASIC], OFF, IMMUTABLE_TEMPLATES),
    ("valid update with unchanged scheduling constraints", [add_topology("foo")],
     [add_topology("foo")], TAS, []),
    ("invalid update to scheduling constraints", [add_topology("foo")], [EMPTY_CONSTRAINTS], TAS,
     IMMUTABLE_TEMPLATES),
    ("invalid update to topology constraints", [add_topology("foo")],
     [add_topology("foo"), add_topology("bar")], TAS, IMMUTABLE_TEMPLATES),
    ("invalid update to topology key", [add_topology("foo")], [add_topology("bar")], TAS,
     IMMUTABLE_TEMPLATES),
    ("valid update with unchanged scheduling constraints with TAS disabled", [add_topology("foo")],
     [add_topology("foo")], OFF, []),
    ("invalid update to scheduling constraints with TAS disabled", [add_topology("foo")],
     [EMPTY_CONSTRAINTS], OFF, IMMUTABLE_TEMPLATES),
    ("invalid update to topology constraints with TAS disabled", [add_topology("foo")],
     [add_topology("foo"), add_topology("bar")], OFF, IMMUTABLE_TEMPLATES),
    ("invalid update to topology key with TAS disabled", [add_topology("foo")],
     [add_topology("bar")], OFF, IMMUTABLE_TEMPLATES),
    *[(f"invalid {what} of resource claims, DRA {state}", old, new, gates, IMMUTABLE_TEMPLATES)
      for state, gates in (("disabled", OFF), ("enabled", DRA))
      for what, old, new in (
          ("add", [], [add_claims(MY_CLAIM)]),
          ("update", [add_claims(MY_CLAIM)],
           [add_claims(claim("my-other-claim", template="my-template"))]),
          ("remove", [add_claims(MY_CLAIM)], []))],
    *[(f"invalid update of {what}, WAP {state}", [on_template(0, **{field: a})],
       [on_template(0, **{field: b})], gates, IMMUTABLE_TEMPLATES)
      for state, gates in (("enabled", WAP), ("disabled", OFF))
      for what, field, a, b in (("disruption mode", "disruption_mode", "Pod", "PodGroup"),
                                ("priority class name", "priority_class_name", "low", "high"),
                                ("priority", "priority", 1000, 2000))],
    # the hand-written metadata rules (validation_test.go)
    ("change name", [], [lambda w: attrs.evolve(w, name=w.name + "bar")], OFF,
     [("metadata.name", "Invalid value")]),
    ("change namespace", [], [lambda w: attrs.evolve(w, namespace=w.namespace + "bar")], OFF,
     [("metadata.namespace", "Invalid value")]),
]


@pytest.mark.parametrize("name,old,new,gates,expected", WORKLOAD_UPDATE,
                         ids=[c[0] for c in WORKLOAD_UPDATE])
def test_workload_update(name, old, new, gates, expected):
    assert found(validate_workload_update(workload(*new), workload(*old), gates)) == expected


def test_workload_update_needs_a_resource_version():
    old = workload()
    errs = validate_workload_update(attrs.evolve(old, resource_version=""), old, OFF)
    assert [str(e) for e in errs] == [
        'metadata.resourceVersion: Invalid value: "": must be specified for an update']


# ------------------------------------------------------------------ PodGroup on create

def pod_group(*tweaks) -> PodGroup:
    """The valid PodGroup of upstream's declarative table: gang minCount 5, made from template
    ``template`` of Workload ``workload``, no disruptionMode (not defaulted)."""
    pg = PodGroup(name="podgroup", namespace="ns", resource_version="1", disruption_mode=None,
                  scheduling_policy=PodGroupSchedulingPolicy(gang=GangSchedulingPolicy(5)),
                  pod_group_template_ref=PodGroupTemplateReference(
                      WorkloadPodGroupTemplateReference("workload", "template")))
    for tweak in tweaks:
        pg = tweak(pg)
    return pg


def pg_set(**changes):
    return lambda pg: attrs.evolve(pg, **changes)


def template_ref(template: str, workload_name: str):
    return pg_set(pod_group_template_ref=PodGroupTemplateReference(
        WorkloadPodGroupTemplateReference(workload_name, template)))


def pg_topology(key: str):
    def tweak(pg: PodGroup) -> PodGroup:
        c = pg.scheduling_constraints or PodGroupSchedulingConstraints()
        return attrs.evolve(pg, scheduling_constraints=attrs.evolve(
            c, topology=(*c.topology, TopologyConstraint(key))))
    return tweak


def pg_claims(*claims: PodGroupResourceClaim):
    return lambda pg: attrs.evolve(pg, resource_claims=pg.resource_claims + claims)


def pg_min_count(n: int):
    return pg_set(scheduling_policy=PodGroupSchedulingPolicy(gang=GangSchedulingPolicy(n)))


POD_MODE = pg_set(disruption_mode="Pod")
REF = "spec.podGroupTemplateRef"

POD_GROUP_CREATE = [
    ("valid", [], OFF, []),
    ("valid with basic policy", [pg_set(scheduling_policy=PodGroupSchedulingPolicy(basic=True))],
     OFF, []),
    ("gang minCount zero", [pg_min_count(0)], OFF,
     [("spec.schedulingPolicy.gang.minCount", "Required value")]),
    ("gang minCount negative", [pg_min_count(-1)], OFF,
     [("spec.schedulingPolicy.gang.minCount", "Invalid value")]),
    ("no podGroupTemplateRef", [pg_set(pod_group_template_ref=None)], OFF, []),
    ("empty podGroupTemplateRef", [pg_set(pod_group_template_ref=PodGroupTemplateReference())],
     OFF, [(REF, "Invalid value")]),
    ("podGroupTemplateRef with empty template name", [template_ref("", "workload")], OFF,
     [(f"{REF}.workload.podGroupTemplateName", "Required value")]),
    ("podGroupTemplateRef invalid template name", [template_ref("temp/late", "workload")], OFF,
     [(f"{REF}.workload.podGroupTemplateName", "Invalid value")]),
    ("podGroupTemplateRef with empty workload name", [template_ref("template", "")], OFF,
     [(f"{REF}.workload.workloadName", "Required value")]),
    ("podGroupTemplateRef invalid workload name", [template_ref("template", "work/load")], OFF,
     [(f"{REF}.workload.workloadName", "Invalid value")]),
    ("podGroupTemplateRef too long workload name", [template_ref("template", "g" * 254)], OFF,
     [(f"{REF}.workload.workloadName", "Invalid value")]),
    ("podGroupTemplateRef too long template name", [template_ref("g" * 254, "workload")], OFF,
     [(f"{REF}.workload.podGroupTemplateName", "Invalid value")]),
    ("policy with neither basic nor gang", [pg_set(scheduling_policy=PodGroupSchedulingPolicy())],
     OFF, [("spec.schedulingPolicy", "Invalid value")]),
    ("policy with both basic and gang",
     [pg_set(scheduling_policy=PodGroupSchedulingPolicy(True, GangSchedulingPolicy(5)))], OFF,
     [("spec.schedulingPolicy", "Invalid value")]),
    ("with schedulingConstraints and TAS disabled", [pg_topology("foo")], OFF,
     [("spec.schedulingConstraints", "Forbidden")]),
    ("valid with schedulingConstraints", [pg_topology("foo")], TAS, []),
    ("schedulingConstraints with multiple topology constraints",
     [pg_topology("foo"), pg_topology("bar")], TAS,
     [("spec.schedulingConstraints.topology", "Too many")]),
    ("valid with empty schedulingConstraints",
     [pg_set(scheduling_constraints=PodGroupSchedulingConstraints())], TAS, []),
    ("topologyConstraint with empty topology key", [pg_topology("")], TAS,
     [("spec.schedulingConstraints.topology[0].key", "Required value")]),
    ("valid with topology key with DNS prefix", [pg_topology("example.com/Foo")], TAS, []),
    ("valid with topology key with prefix with max length",
     [pg_topology("a" * 253 + "/" + "b" * 63)], TAS, []),
    *[(f"with topology key {what}", [pg_topology(key)], TAS,
       [("spec.schedulingConstraints.topology[0].key", "Invalid value")])
      for what, key in (("with prefix exceeding max prefix length", "a" * 254 + "/foo"),
                        ("exceeding max name length", "foo/" + "b" * 64),
                        ("without prefix exceeding max length", "b" * 64),
                        ("with invalid characters", "Example.com/Foo"))],
    ("pod disruption mode, WAP enabled", [POD_MODE], WAP, []),
    ("pod disruption mode, WAP disabled", [POD_MODE], OFF, [("spec.disruptionMode", "Forbidden")]),
    ("pod group disruption mode, WAP enabled", [pg_set(disruption_mode="PodGroup")], WAP, []),
    ("pod group disruption mode, WAP disabled", [pg_set(disruption_mode="PodGroup")], OFF,
     [("spec.disruptionMode", "Forbidden")]),
    ("invalid disruption mode, WAP enabled", [pg_set(disruption_mode="Invalid")], WAP,
     [("spec.disruptionMode", "Unsupported value")]),
    ("invalid disruption mode, WAP disabled", [pg_set(disruption_mode="Invalid")], OFF,
     [("spec.disruptionMode", "Forbidden")]),
    ("pod group without disruption mode, WAP enabled", [], WAP,
     [("spec.disruptionMode", "Required value")]),
    ("valid priority class name, WAP enabled",
     [POD_MODE, pg_set(priority_class_name="high-priority")], WAP, []),
    ("valid priority class name, WAP disabled", [pg_set(priority_class_name="high-priority")], OFF,
     [("spec.priorityClassName", "Forbidden")]),
    ("invalid priority class name, WAP enabled",
     [POD_MODE, pg_set(priority_class_name="high/priority")], WAP,
     [("spec.priorityClassName", "Invalid value")]),
    ("invalid priority class name, WAP disabled", [pg_set(priority_class_name="high/priority")],
     OFF, [("spec.priorityClassName", "Forbidden")]),
    ("valid priority, WAP enabled", [POD_MODE, pg_set(priority=1000)], WAP, []),
    ("valid priority, WAP disabled", [pg_set(priority=1000)], OFF, [("spec.priority", "Forbidden")]),
    ("valid negative priority, WAP enabled", [POD_MODE, pg_set(priority=-2**31)], WAP, []),
    ("valid negative priority, WAP disabled", [pg_set(priority=-2**31)], OFF,
     [("spec.priority", "Forbidden")]),
    ("too high priority, WAP enabled", [POD_MODE, pg_set(priority=1_000_000_001)], WAP,
     [("spec.priority", "Invalid value")]),
    ("too high priority, WAP disabled", [pg_set(priority=1_000_000_001)], OFF,
     [("spec.priority", "Forbidden")]),
    ("ok resourceClaimName reference", [pg_claims(claim("claim", "resource-claim"))], OFF, []),
    ("ok resourceClaimTemplateName reference", [pg_claims(claim("claim", template="rct"))], OFF,
     []),
    ("ok multiple claims", [pg_claims(claim("claim-1", "rc-1"), claim("claim-2", "rc-2"))], OFF,
     []),
    ("claim name with prefix", [pg_claims(claim("../my-claim", "resource-claim"))], OFF,
     [("spec.resourceClaims[0].name", "Invalid value")]),
    ("claim name with path", [pg_claims(claim("my/claim", "resource-claim"))], OFF,
     [("spec.resourceClaims[0].name", "Invalid value")]),
    ("duplicate claim entries", [pg_claims(claim("my-claim", "rc-1"), claim("my-claim", "rc-2"))],
     OFF, [("spec.resourceClaims[1]", "Duplicate value")]),
    ("resource claim source empty", [pg_claims(claim("my-claim"))], OFF,
     [("spec.resourceClaims[0]", "Invalid value")]),
    ("resource claim reference and template", [pg_claims(claim("my-claim", "rc", "rct"))], OFF,
     [("spec.resourceClaims[0]", "Invalid value")]),
    ("invalid claim reference name", [pg_claims(claim("my-claim", ".foo_bar"))], OFF,
     [("spec.resourceClaims[0].resourceClaimName", "Invalid value")]),
    ("invalid claim template name", [pg_claims(claim("my-claim", template=".foo_bar"))], OFF,
     [("spec.resourceClaims[0].resourceClaimTemplateName", "Invalid value")]),
    ("too many claims", [pg_claims(*(claim(f"my-claim-{i}", "rc") for i in range(5)))], OFF,
     [("spec.resourceClaims", "Too many")]),
    # the hand-written metadata rules (validation_test.go)
    ("no name", [pg_set(name="")], OFF, [("metadata.name", "Required value")]),
    ("invalid name", [pg_set(name=".podGroup")], OFF, [("metadata.name", "Invalid value")]),
    ("too long name", [pg_set(name="w" * 254)], OFF, [("metadata.name", "Invalid value")]),
    ("no namespace", [pg_set(namespace="")], OFF, [("metadata.namespace", "Required value")]),
    ("invalid namespace", [pg_set(namespace=".ns")], OFF, [("metadata.namespace", "Invalid value")]),
    ("too long namespace", [pg_set(namespace="n" * 64)], OFF,
     [("metadata.namespace", "Invalid value")]),
]


@pytest.mark.parametrize("name,tweaks,gates,expected", POD_GROUP_CREATE,
                         ids=[c[0] for c in POD_GROUP_CREATE])
def test_pod_group_create(name, tweaks, gates, expected):
    assert found(validate_pod_group(pod_group(*tweaks), gates)) == expected


# ------------------------------------------------------------------ PodGroup on update

PG_UPDATE = [
    ("valid update", [], [], OFF, []),
    ("invalid update empty podGroupTemplateRef", [],
     [pg_set(pod_group_template_ref=PodGroupTemplateReference())], OFF, [(REF, "Invalid value")]),
    ("invalid update unset podGroupTemplateRef", [], [pg_set(pod_group_template_ref=None)], OFF,
     [(REF, "Invalid value")]),
    ("invalid update change podGroupTemplateRef template name", [],
     [template_ref("other-template", "workload")], OFF, [(REF, "Invalid value")]),
    ("invalid update change podGroupTemplateRef workload name", [],
     [template_ref("template", "other-workload")], OFF, [(REF, "Invalid value")]),
    ("invalid update with neither basic nor gang", [],
     [pg_set(scheduling_policy=PodGroupSchedulingPolicy())], OFF,
     [("spec.schedulingPolicy", "Invalid value")]),
    ("invalid update with both basic and gang", [],
     [pg_set(scheduling_policy=PodGroupSchedulingPolicy(True, GangSchedulingPolicy(5)))], OFF,
     [("spec.schedulingPolicy", "Invalid value")]),
    ("invalid update of gang minCount", [], [pg_min_count(10)], OFF,
     [("spec.schedulingPolicy", "Invalid value")]),
    ("invalid update from gang to basic policy", [],
     [pg_set(scheduling_policy=PodGroupSchedulingPolicy(basic=True))], OFF,
     [("spec.schedulingPolicy", "Invalid value")]),
    ("valid update with unchanged scheduling constraints and TAS disabled", [pg_topology("foo")],
     [pg_topology("foo")], OFF, []),
    ("valid update with unchanged scheduling constraints", [pg_topology("foo")],
     [pg_topology("foo")], TAS, []),
    ("invalid update to scheduling constraints", [pg_topology("foo")],
     [pg_set(scheduling_constraints=PodGroupSchedulingConstraints())], TAS,
     [("spec.schedulingConstraints", "Invalid value")]),
    ("invalid update to topology constraints", [pg_topology("foo")],
     [pg_topology("foo"), pg_topology("bar")], TAS, [("spec.schedulingConstraints", "Invalid value")]),
    ("invalid update to topology key", [pg_topology("foo")], [pg_topology("bar")], TAS,
     [("spec.schedulingConstraints", "Invalid value")]),
    ("invalid update to scheduling constraints with TAS disabled", [pg_topology("foo")],
     [pg_set(scheduling_constraints=PodGroupSchedulingConstraints())], OFF,
     [("spec.schedulingConstraints", "Forbidden")]),
    ("invalid update to topology constraints with TAS disabled", [pg_topology("foo")],
     [pg_topology("foo"), pg_topology("bar")], OFF, [("spec.schedulingConstraints", "Forbidden")]),
    ("invalid update to topology key with TAS disabled", [pg_topology("foo")],
     [pg_topology("bar")], OFF, [("spec.schedulingConstraints", "Forbidden")]),
    *[(f"invalid {what} of resource claims, DRA {state}", old, new, gates,
       [("spec.resourceClaims", "Invalid value")])
      for state, gates in (("disabled", OFF), ("enabled", DRA))
      for what, old, new in (
          ("add", [], [pg_claims(MY_CLAIM)]),
          ("update", [pg_claims(MY_CLAIM)],
           [pg_claims(claim("my-other-claim", template="my-template"))]),
          ("remove", [pg_claims(MY_CLAIM)], []))],
    *[(f"invalid update of {what}, WAP {state}", [pg_set(**{field: a})], [pg_set(**{field: b})],
       gates, [(path, kind)])
      for state, gates, kind in (("enabled", WAP, "Invalid value"), ("disabled", OFF, "Forbidden"))
      for what, field, path, a, b in (
          ("disruption mode", "disruption_mode", "spec.disruptionMode", "Pod", "PodGroup"),
          ("priority class name", "priority_class_name", "spec.priorityClassName", "low-priority",
           "high-priority"),
          ("priority", "priority", "spec.priority", 1000, 2000))],
    # the hand-written metadata rules (validation_test.go)
    ("change name", [], [pg_set(name="podgroupbar")], OFF, [("metadata.name", "Invalid value")]),
    ("change namespace", [], [pg_set(namespace="nsbar")], OFF,
     [("metadata.namespace", "Invalid value")]),
]


@pytest.mark.parametrize("name,old,new,gates,expected", PG_UPDATE, ids=[c[0] for c in PG_UPDATE])
def test_pod_group_update(name, old, new, gates, expected):
    assert found(validate_pod_group_update(pod_group(*new), pod_group(*old), gates)) == expected


def test_pod_group_update_keeps_the_old_status():
    """An update of the main resource cannot change the status (PrepareForUpdate keeps the old
    one), so a status the main update carried raises nothing."""
    old = pod_group(add_condition("PodGroupScheduled"))
    new = prepare_pod_group_for_update(pod_group(), old, OFF)
    assert new.conditions == old.conditions
    assert validate_pod_group_update(new, old, OFF) == []


# ------------------------------------------------------------------ PodGroup status updates

def add_condition(type_: str, status: str = "False", reason: str = "Unschedulable",
                  message: str = "Test status condition message", when=NOW):
    return lambda pg: attrs.evolve(pg, conditions=(*pg.conditions,
                                                   Condition(type_, status, reason, message, when)))


def claim_statuses(*statuses: PodGroupResourceClaimStatus):
    return pg_set(resource_claim_statuses=statuses)


TWO_CLAIMS = pg_claims(MY_CLAIM, claim("my-other-claim", template="my-template"))

STATUS_UPDATE = [
    ("valid noop update", [], [], []),
    ("valid status update", [], [add_condition("PodGroupScheduled")], []),
    ("duplicate condition types", [],
     [add_condition("PodGroupScheduled"), add_condition("PodGroupScheduled")],
     [("status.conditions[1].type", "Duplicate value")]),
    ("valid resource claim status update", [TWO_CLAIMS],
     [TWO_CLAIMS, claim_statuses(PodGroupResourceClaimStatus("my-claim", "foo-my-claim-12345"),
                                 PodGroupResourceClaimStatus("my-other-claim"))], []),
    ("non-existent resource claim in status", [],
     [claim_statuses(PodGroupResourceClaimStatus("no-such-claim", "my-template"))],
     [("status.resourceClaimStatuses[0].name", "Invalid value")]),
    ("invalid resource claim name", [pg_claims(MY_CLAIM)],
     [pg_claims(MY_CLAIM), claim_statuses(PodGroupResourceClaimStatus("my-claim", "%$!#5"))],
     [("status.resourceClaimStatuses[0].resourceClaimName", "Invalid value")]),
    ("duplicate claim name", [TWO_CLAIMS],
     [TWO_CLAIMS, claim_statuses(PodGroupResourceClaimStatus("my-claim", "foo-my-claim-12345"),
                                 PodGroupResourceClaimStatus("my-other-claim"),
                                 PodGroupResourceClaimStatus("my-other-claim"))],
     [("status.resourceClaimStatuses[2]", "Duplicate value")]),
    # validation_test.go
    ("unrecognized condition status", [], [add_condition("PodGroupScheduled", "TrueOrFalse")],
     [("status.conditions[0].status", "Unsupported value")]),
    ("empty condition reason", [], [add_condition("PodGroupScheduled", reason="")],
     [("status.conditions[0].reason", "Required value")]),
    ("improper condition reason format", [], [add_condition("PodGroupScheduled", reason="Sche duled")],
     [("status.conditions[0].reason", "Invalid value")]),
    ("too long condition reason", [], [add_condition("PodGroupScheduled", reason="a" * 1025)],
     [("status.conditions[0].reason", "Too long")]),
    ("too long condition message", [],
     [add_condition("PodGroupScheduled", message="a" * (32 * 1024 + 1))],
     [("status.conditions[0].message", "Too long")]),
    ("condition without a transition time", [], [add_condition("PodGroupScheduled", when=None)],
     [("status.conditions[0].lastTransitionTime", "Required value")]),
]


@pytest.mark.parametrize("name,old,new,expected", STATUS_UPDATE,
                         ids=[c[0] for c in STATUS_UPDATE])
def test_pod_group_status_update(name, old, new, expected):
    assert found(validate_pod_group_status_update(pod_group(*new), pod_group(*old))) == expected


def test_status_update_keeps_the_old_spec():
    """PrepareForUpdate of /status: the spec is the old one; claim statuses are dropped while
    DRAWorkloadResourceClaims is off and the group has no claims."""
    old = pod_group()
    new = pod_group(pg_min_count(9), add_condition("PodGroupScheduled"),
                    claim_statuses(PodGroupResourceClaimStatus("c")))
    kept = prepare_pod_group_status_update(new, old, OFF)
    assert kept.scheduling_policy == old.scheduling_policy
    assert [c.type for c in kept.conditions] == ["PodGroupScheduled"]
    assert kept.resource_claim_statuses == ()
    assert prepare_pod_group_status_update(new, old, DRA).resource_claim_statuses == (
        PodGroupResourceClaimStatus("c"),)


# ------------------------------------------------------------------ messages

@pytest.mark.parametrize("tweaks,gates,message", [
    ([many_templates(9)], OFF, "spec.podGroupTemplates: Too many: 9: must have at most 8 items"),
    ([NEITHER], OFF, 'spec.podGroupTemplates[0].schedulingPolicy: Invalid value: "": must '
                     'specify one of: `basic`, `gang`'),
    ([BOTH], OFF, 'spec.podGroupTemplates[0].schedulingPolicy: Invalid value: "{basic, gang}": '
                  'must specify exactly one of: `basic`, `gang`'),
    ([min_count(-1)], OFF, "spec.podGroupTemplates[0].schedulingPolicy.gang.minCount: Invalid "
                           "value: -1: must be greater than or equal to 1"),
    ([add_topology("foo"), add_topology("bar")], TAS,
     "spec.podGroupTemplates[0].schedulingConstraints.topology: Too many: 2: must have at most "
     "1 item"),
    ([add_topology("foo")], OFF, "spec.podGroupTemplates[0].schedulingConstraints: Forbidden"),
    ([on_template(0, disruption_mode="Invalid")], WAP,
     'spec.podGroupTemplates[0].disruptionMode: Unsupported value: "Invalid": supported values: '
     '"Pod", "PodGroup"'),
    ([on_template(0, priority=1_000_000_001)], WAP, "spec.podGroupTemplates[0].priority: Invalid "
                                                    "value: 1000000001: must be less than or "
                                                    "equal to 1000000000"),
    ([add_template("main")], OFF, 'spec.podGroupTemplates[1]: Duplicate value: {"name":"main",'
                                  '"schedulingPolicy":{"gang":{"minCount":1}},'
                                  '"schedulingConstraints":null}'),
    ([add_claims(claim("my-claim", "a"), claim("my-claim", "b"))], OFF,
     'spec.podGroupTemplates[0].resourceClaims[1]: Duplicate value: {"name":"my-claim",'
     '"resourceClaimName":"b"}'),
    ([add_claims(claim("c", "rc", "rct"))], OFF,
     'spec.podGroupTemplates[0].resourceClaims[0]: Invalid value: "{resourceClaimName, '
     'resourceClaimTemplateName}": must specify exactly one of: `resourceClaimName`, '
     '`resourceClaimTemplateName`'),
    ([controller_ref("apps", "Deploy/ment", "d")], OFF,
     'spec.controllerRef.kind: Invalid value: "Deploy/ment": may not contain \'/\''),
    ([add_topology("b" * 64)], TAS,
     f'spec.podGroupTemplates[0].schedulingConstraints.topology[0].key: Invalid value: '
     f'"{"b" * 64}": name part must be no more than 63 bytes'),
    ([on_template(0, name="a.b")], OFF,
     'spec.podGroupTemplates[0].name: Invalid value: "a.b": must not contain dots'),
    ([on_template(0, name="a.b\n")], OFF,
     'spec.podGroupTemplates[0].name: Invalid value: "a.b\\n": a lowercase RFC 1123 label must '
     "consist of lower case alphanumeric characters or '-', and must start and end with an "
     "alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is "
     "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')"),
])
def test_messages_are_upstreams(tweaks, gates, message):
    assert [str(e) for e in validate_workload(workload(*tweaks), gates)] == [message]


def test_immutable_message():
    errs = validate_workload_update(workload(min_count(2)), workload(), OFF)
    assert [str(e) for e in errs] == ["spec.podGroupTemplates: Invalid value: null: field is "
                                      "immutable"]


# ------------------------------------------------------------------ dropping disabled fields

def test_create_drops_the_fields_of_disabled_gates():
    """PrepareForCreate clears the status and every field whose gate is off, so a manifest
    written for the gates on is accepted, without those fields, with them off."""
    pg = parse_pod_group({"kind": "PodGroup", "metadata": {"name": "g", "namespace": "ns"},
                          "spec": {"schedulingPolicy": {"gang": {"minCount": 2}},
                                   "schedulingConstraints": {"topology": [{"key": "rack"}]},
                                   "resourceClaims": [{"name": "c", "resourceClaimName": "rc"}],
                                   "priorityClassName": "high", "priority": 10},
                          "status": {"conditions": [{"type": "PodGroupScheduled",
                                                     "status": "True"}]}})
    assert pg.disruption_mode == "Pod"
    dropped = prepare_pod_group_for_create(pg, OFF)
    assert (dropped.scheduling_constraints, dropped.resource_claims, dropped.disruption_mode,
            dropped.priority_class_name, dropped.priority, dropped.conditions) == (
        None, (), None, "", None, ())
    assert validate_pod_group(dropped, OFF) == []
    everything = WorkloadGates(True, True, True)
    kept = prepare_pod_group_for_create(pg, everything)
    assert kept == attrs.evolve(pg, conditions=())
    assert validate_pod_group(kept, everything) == []


def test_update_keeps_a_disabled_field_the_old_object_had():
    old = pod_group(pg_topology("rack"), pg_set(priority=5))
    new = pod_group(pg_topology("rack"), pg_set(priority=5, priority_class_name="high"))
    kept = drop_disabled_pod_group_fields(new, old, OFF)
    assert (kept.scheduling_constraints, kept.priority, kept.priority_class_name) == (
        old.scheduling_constraints, 5, "")
    assert validate_pod_group_update(kept, old, OFF) == []


def test_workload_drop_compares_templates_by_index():
    old = workload(add_topology("rack"))
    new = workload(add_topology("rack"), add_template("second"), add_topology("zone", 1),
                   on_template(1, priority=3))
    kept = drop_disabled_workload_fields(new, old, OFF)
    first, second = kept.pod_group_templates
    assert first.scheduling_constraints == old.pod_group_templates[0].scheduling_constraints
    assert (second.scheduling_constraints, second.priority) == (None, None)
    fresh = drop_disabled_workload_fields(new, None, TAS)
    assert fresh.pod_group_templates[1].scheduling_constraints is not None
    assert fresh.pod_group_templates[1].priority is None
