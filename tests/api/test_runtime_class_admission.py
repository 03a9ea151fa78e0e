"""RuntimeClasses are validated, and pods naming one admitted, as kube-apiserver v1.36 does.

Upstream: ``pkg/apis/node/validation`` (ValidateRuntimeClass) and the RuntimeClass admission
plugin (``plugin/pkg/admission/runtimeclass/admission.go``: Admit sets the overhead and merges
the scheduling, Validate refuses an overhead no class defines). Every expected text and merged
spec below was produced by a v1.36.2 API server (a create with ``dryRun=All``).
"""

from __future__ import annotations

import pytest

from kschedfw.api import Toleration, parse_object
from kschedfw.cluster.apiserver.admission import AdmissionError, validate_create
from kschedfw.cluster.memory import MemoryCluster
from kschedfw.cluster.apiserver.runtimeclass import admit_runtime_class, merge_tolerations
from kschedfw.testing import make_pod

SUBDOMAIN = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, "
             "'-' or '.', and must start and end with an alphanumeric character (e.g. "
             "'example.com', regex used for validation is "
             "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")
NAME_PART = ("name part must consist of alphanumeric characters, '-', '_' or '.', and must start "
             "and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or "
             "'123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')")


def runtime_class(name, **fields):
    return parse_object({"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass",
                         "metadata": {"name": name}, **fields})


# ------------------------------------------------------------------------------ validation

@pytest.mark.parametrize("rc, message", [
    pytest.param(runtime_class("Bad_Name", handler="x"),
                 f'RuntimeClass.node.k8s.io "Bad_Name" is invalid: metadata.name: Invalid value: '
                 f'"Bad_Name": {SUBDOMAIN}', id="name not a DNS subdomain"),
    pytest.param(runtime_class("nohandler"),
                 'RuntimeClass.node.k8s.io "nohandler" is invalid: handler: Required value',
                 id="handler required"),
    pytest.param(runtime_class("badhandler", handler="a.b"),
                 'RuntimeClass.node.k8s.io "badhandler" is invalid: handler: Invalid value: "a.b": '
                 "must not contain dots", id="handler a DNS label: no dots"),
    pytest.param(runtime_class("neg", handler="neg", overhead={"podFixed": {"cpu": "-1"}}),
                 'RuntimeClass.node.k8s.io "neg" is invalid: overhead.limits[cpu]: Invalid value: '
                 '"-1": must be greater than or equal to 0', id="negative overhead, upstream's path"),
    pytest.param(runtime_class("badsel", handler="h", scheduling={"nodeSelector": {"a b": "c"}}),
                 f'RuntimeClass.node.k8s.io "badsel" is invalid: scheduling.nodeSelector: Invalid '
                 f'value: "a b": {NAME_PART}', id="node selector key not a qualified name"),
    pytest.param(runtime_class("badtol", handler="h", scheduling={"tolerations": [
        {"operator": "Equal", "value": "x"}, {"key": "k", "operator": "Exists"},
        {"key": "k", "operator": "Exists"}]}),
        'RuntimeClass.node.k8s.io "badtol" is invalid: [scheduling.tolerations[0].operator: Invalid '
        'value: "Equal": operator must be Exists when `key` is empty, which means "match all values '
        'and all keys", scheduling.tolerations[2]: Duplicate value: {"Key":"k","Operator":"Exists",'
        '"Value":"","Effect":"","TolerationSeconds":null}]', id="toleration shape, then duplicates"),
])
def test_invalid_runtime_class_is_refused(rc, message):
    with pytest.raises(AdmissionError) as info:
        validate_create(rc)
    assert str(info.value) == message


def test_valid_runtime_class_passes():
    validate_create(runtime_class("kata", handler="kata", overhead={"podFixed": {"cpu": "250m"}},
                                  scheduling={"nodeSelector": {"zone": "a"},
                                              "tolerations": [{"key": "k", "operator": "Exists"}]}))


# ------------------------------------------------------------------------------ admission

CLASSES = [
    runtime_class("oh", handler="oh", overhead={"podFixed": {"cpu": "250m", "memory": "64Mi"}}),
    runtime_class("plain", handler="plain"),
    runtime_class("sched", handler="sched", scheduling={
        "nodeSelector": {"zone": "a"},
        "tolerations": [{"key": "k", "operator": "Equal", "value": "v"},
                        {"key": "e", "operator": "Exists", "effect": "NoSchedule"}]}),
    runtime_class("sched2", handler="sched2", scheduling={"tolerations": [{"key": "k", "value": "v"}]}),
    runtime_class("emptyoh", handler="h", overhead={}),
    runtime_class("emptysched", handler="h", scheduling={}),
]
OVERHEAD = {"cpu": "250m", "memory": "64Mi"}
#: DefaultTolerationSeconds runs before RuntimeClass: the class's tolerations merge with these
DTS = [{"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
       {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}]
SCHED_TOLERATIONS = [{"key": "k", "operator": "Equal", "value": "v"},
                     {"key": "e", "operator": "Exists", "effect": "NoSchedule"}]


def admitted(p):
    cluster = MemoryCluster()
    for rc in CLASSES:
        cluster.create(rc)
    return cluster.create(p)


@pytest.mark.parametrize("p, message", [
    pytest.param(make_pod("missing", runtimeClassName="nope"),
                 'pods "missing" is forbidden: pod rejected: RuntimeClass "nope" not found',
                 id="class not found"),
    pytest.param(make_pod("missing-and-pc", runtimeClassName="nope", priorityClassName="nopc"),
                 'pods "missing-and-pc" is forbidden: no PriorityClass with name nopc was found',
                 id="Priority admission runs first"),
    pytest.param(make_pod("oh-diff", runtimeClassName="oh", overhead={"cpu": "100m"}),
                 'pods "oh-diff" is forbidden: pod rejected: Pod\'s Overhead doesn\'t match '
                 "RuntimeClass's defined Overhead", id="overhead differs from the class's"),
    pytest.param(make_pod("emptyoh-with", runtimeClassName="emptyoh", overhead={"cpu": "100m"}),
                 'pods "emptyoh-with" is forbidden: pod rejected: Pod\'s Overhead doesn\'t match '
                 "RuntimeClass's defined Overhead", id="overhead, class with an empty overhead"),
    pytest.param(make_pod("plain-overhead", runtimeClassName="plain", overhead={"cpu": "100m"}),
                 'pods "plain-overhead" is forbidden: pod rejected: Pod Overhead set without '
                 "corresponding RuntimeClass defined Overhead", id="overhead, class without one"),
    pytest.param(make_pod("plain-emptyoverhead", runtimeClassName="plain", overhead={}),
                 'pods "plain-emptyoverhead" is forbidden: pod rejected: Pod Overhead set without '
                 "corresponding RuntimeClass defined Overhead", id="empty overhead is set too"),
    pytest.param(make_pod("none-overhead", overhead={"cpu": "100m"}),
                 'pods "none-overhead" is forbidden: pod rejected: Pod Overhead set without '
                 "corresponding RuntimeClass defined Overhead", id="overhead, no class named"),
    pytest.param(make_pod("sched-conflict", runtimeClassName="sched", nodeSelector={"zone": "b"}),
                 'pods "sched-conflict" is forbidden: conflict: runtimeClass.scheduling.nodeSelector'
                 "[zone] = a; pod.spec.nodeSelector[zone] = b", id="node selector conflict"),
])
def test_pod_is_refused(p, message):
    with pytest.raises(AdmissionError) as info:
        admitted(p)
    assert str(info.value) == message


@pytest.mark.parametrize("p, overhead, node_selector, tolerations", [
    pytest.param(make_pod("oh", runtimeClassName="oh"), OVERHEAD, None, DTS, id="overhead set"),
    pytest.param(make_pod("oh-same", runtimeClassName="oh", overhead={"cpu": "0.25", "memory": "64Mi"}),
                 OVERHEAD, None, DTS, id="same overhead written otherwise"),
    pytest.param(make_pod("oh-empty", runtimeClassName="oh", overhead={}), OVERHEAD, None, DTS,
                 id="empty overhead replaced"),
    pytest.param(make_pod("plain", runtimeClassName="plain"), None, None, DTS, id="class without overhead"),
    pytest.param(make_pod("emptyoh-emptyoverhead", runtimeClassName="emptyoh", overhead={}), None, None, DTS,
                 id="class with an empty overhead clears an empty one"),
    pytest.param(make_pod("emptysched-dups", runtimeClassName="emptysched", tolerations=[
        {"key": "a", "operator": "Exists"}, {"key": "a", "operator": "Equal", "value": "v"}]),
        None, None, [{"key": "a", "operator": "Exists"}, *DTS], id="empty scheduling still merges tolerations"),
    pytest.param(make_pod("sched-nosel", runtimeClassName="sched"), None, {"zone": "a"}, [*DTS, *SCHED_TOLERATIONS],
                 id="scheduling copied"),
    pytest.param(make_pod("sched-sel", runtimeClassName="sched", nodeSelector={"zone": "a", "x": "y"}),
                 None, {"zone": "a", "x": "y"}, [*DTS, *SCHED_TOLERATIONS], id="node selectors merged"),
    pytest.param(make_pod("sched-emptysel", runtimeClassName="sched", nodeSelector={}),
                 None, {"zone": "a"}, [*DTS, *SCHED_TOLERATIONS], id="empty node selector merged"),
    pytest.param(make_pod("sched-tols", runtimeClassName="sched", tolerations=[
        {"key": "k", "value": "v"}, {"key": "e", "operator": "Exists"}, {"key": "z", "operator": "Exists"}]),
        None, {"zone": "a"},
        [{"key": "k", "value": "v"}, {"key": "e", "operator": "Exists"}, {"key": "z", "operator": "Exists"}, *DTS],
        id="the pod's wider tolerations cover the class's"),
    pytest.param(make_pod("sched2-tols", runtimeClassName="sched2", tolerations=[
        {"key": "k", "operator": "Equal", "value": "v"}]), None, None, [*DTS, {"key": "k", "value": "v"}],
        id="an unset operator covers Equal, not the reverse"),
])
def test_pod_is_admitted(p, overhead, node_selector, tolerations):
    created = admitted(p)
    spec = created.raw["spec"]
    assert spec.get("overhead") == overhead
    assert spec.get("nodeSelector") == node_selector
    assert spec.get("tolerations") == tolerations
    assert created.overhead == ({"cpu": 250, "memory": 64 * 2**20} if overhead else {})
    assert created.node_selector == (node_selector or {})
    assert created.tolerations == tuple(Toleration(t.get("key", ""), t.get("operator", "Equal"),
                                                   t.get("value", ""), t.get("effect", ""), t.get("tolerationSeconds"))
                                        for t in tolerations)


def test_overhead_counts_in_the_pods_requests():
    created = admitted(make_pod("oh", runtimeClassName="oh", containers=[
        {"name": "c", "image": "x", "resources": {"requests": {"cpu": "900m"}}}]))
    assert created.request()["cpu"] == 1150


def test_pod_without_class_or_overhead_is_unchanged():
    p = make_pod("bare", tolerations=[{"key": "k", "operator": "Exists"}, {"key": "k", "operator": "Exists"}])
    assert admit_runtime_class(p, lambda name: None) is p


@pytest.mark.parametrize("first, second, merged", [
    pytest.param([{"key": "a", "operator": "Exists"}], [{"key": "a", "operator": "Equal", "value": "v"}],
                 [{"key": "a", "operator": "Exists"}], id="Exists covers Equal"),
    pytest.param([{"key": "a", "operator": "Equal", "value": "v"}], [{"key": "a", "operator": "Exists"}],
                 [{"key": "a", "operator": "Exists"}], id="a later wider one wins"),
    pytest.param([{"operator": "Exists"}], [{"key": "a", "operator": "Exists", "effect": "NoSchedule"}],
                 [{"operator": "Exists"}], id="empty key Exists covers every key"),
    pytest.param([{"key": "a", "operator": "Exists", "effect": "NoSchedule"}], [{"key": "a", "operator": "Exists"}],
                 [{"key": "a", "operator": "Exists"}], id="empty effect covers every effect"),
    pytest.param([{"key": "a", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 10}],
                 [{"key": "a", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 20}],
                 [{"key": "a", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 20}],
                 id="the longer NoExecute time covers the shorter"),
    pytest.param([{"key": "a", "operator": "Exists"}], [{"key": "a", "operator": "Exists"}],
                 [{"key": "a", "operator": "Exists"}], id="of two equal ones, one stays"),
    pytest.param([{"key": "a", "operator": "Equal", "value": "v"}], [{"key": "a", "operator": "Equal", "value": "w"}],
                 [{"key": "a", "operator": "Equal", "value": "v"}, {"key": "a", "operator": "Equal", "value": "w"}],
                 id="different values both stay"),
])
def test_merge_tolerations(first, second, merged):
    assert merge_tolerations(first, second) == merged
