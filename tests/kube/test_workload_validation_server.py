"""The workload API's validation tables (``tests/api/test_workload_validation.py``) against a real
kube-apiserver v1.36.2 serving ``scheduling.k8s.io/v1alpha2``, with the workload gates off and
on: every create (``dryRun=All``) and update is refused with exactly the findings kschedfw's
pipeline (parse with defaults, the strategy's drops, validation) gives, or accepted by both.

Cases the server answers before validation are left out: a namespace or a name that differs
from the request's URL, and, with WorkloadAwarePreemption on, the Priority admission plugin's
check of a PodGroup's priority against its class (admission, not validation).
"""

from __future__ import annotations

import itertools
from typing import Any, Iterator

import pytest

from kschedfw.api.pod import parse_pod
from kschedfw.api.workload import (parse_pod_group, parse_workload, pod_group_manifest,
                                   workload_manifest)
from kschedfw.api.workload_validation import (WorkloadGates, drop_disabled_scheduling_group,
                                              drop_disabled_workload_fields,
                                              prepare_pod_group_for_create,
                                              prepare_pod_group_for_update, validate_pod_group,
                                              validate_pod_group_update,
                                              validate_pod_scheduling_group, validate_workload,
                                              validate_workload_update)
from kschedfw.testing.controlplane import APIError, ControlPlane, find_assets, missing_assets_reason
from tests.api import test_workload_validation as tables

BASE = "/apis/scheduling.k8s.io/v1alpha2/namespaces/ns"
_names = itertools.count(1)
GATE_SETS = {
    "gates off": (WorkloadGates(), "GenericWorkload=true"),
    "gates on": (WorkloadGates(True, True, True),
                 "GenericWorkload=true,GangScheduling=true,TopologyAwareWorkloadScheduling=true,"
                 "WorkloadAwarePreemption=true,DRAWorkloadResourceClaims=true"),
}


@pytest.fixture(scope="module", params=list(GATE_SETS))
def server(request: pytest.FixtureRequest) -> Iterator[tuple[ControlPlane, WorkloadGates]]:
    assets = find_assets()
    if assets is None:
        pytest.skip(missing_assets_reason())
    gates, flag = GATE_SETS[request.param]
    with ControlPlane(assets, extra_apiserver_flags=[
            f"--feature-gates={flag}", "--runtime-config=scheduling.k8s.io/v1alpha2=true"]) as cp:
        cp.api("POST", "/api/v1/namespaces", {"metadata": {"name": "ns"}})
        cp.api("POST", f"{BASE}/workloads", {  # what the tables' PodGroups are made from
            "apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "Workload",
            "metadata": {"name": "workload"},
            "spec": {"podGroupTemplates": [{"name": "template", "schedulingPolicy": {"basic": {}}}]}})
        yield cp, gates


def _findings(exc: APIError) -> list[str] | None:
    """The causes of a validation refusal; None when the server refused for another reason."""
    body = exc.body
    if not isinstance(body, dict) or body.get("reason") != "Invalid":
        return None
    return sorted(f"{c['field']}: {c['message']}" for c in body["details"]["causes"])


def _send(cp: ControlPlane, method: str, path: str, manifest: dict[str, Any]) -> list[str] | None:
    try:
        cp.api(method, path, manifest)
        return []
    except APIError as exc:
        return _findings(exc)


def _manifest(obj: Any, dump: Any, name: str) -> dict[str, Any]:
    m = dump(obj)
    m["metadata"] = {"name": name, "namespace": "ns"}
    return m


KINDS = {
    "workloads": (workload_manifest, parse_workload,
                  lambda obj, gates: validate_workload(
                      drop_disabled_workload_fields(obj, None, gates), gates),
                  lambda new, old, gates: validate_workload_update(
                      drop_disabled_workload_fields(new, old, gates), old, gates)),
    "podgroups": (pod_group_manifest, parse_pod_group,
                  lambda obj, gates: validate_pod_group(prepare_pod_group_for_create(obj, gates), gates),
                  lambda new, old, gates: validate_pod_group_update(
                      prepare_pod_group_for_update(new, old, gates), old, gates)),
}
CREATES = [("workloads", c[0], tables.workload, c[1]) for c in tables.WORKLOAD_CREATE] + \
          [("podgroups", c[0], tables.pod_group, c[1]) for c in tables.POD_GROUP_CREATE]
UPDATES = [("workloads", c[0], tables.workload, c[1], c[2]) for c in tables.WORKLOAD_UPDATE] + \
          [("podgroups", c[0], tables.pod_group, c[1], c[2]) for c in tables.PG_UPDATE]


@pytest.mark.parametrize("plural,name,build,tweaks", CREATES, ids=[f"{c[0]}: {c[1]}" for c in CREATES])
def test_create_as_the_server_decides(server, plural, name, build, tweaks):
    cp, gates = server
    obj = build(*tweaks)
    if obj.namespace not in ("ns", "default") or not obj.name:
        pytest.skip("the server checks the namespace against the URL, and the parser refuses a "
                    "manifest without a name, first")
    dump, parse, validate, _ = KINDS[plural]
    manifest = dump(obj)
    manifest["metadata"] = {k: v for k, v in manifest["metadata"].items()
                            if k in ("name", "generateName")} | {"namespace": "ns"}
    theirs = _send(cp, "POST", f"{BASE}/{plural}?dryRun=All", manifest)
    if theirs is None:
        pytest.skip("refused by admission before validation")
    assert sorted(str(e) for e in validate(parse(manifest), gates)) == theirs


@pytest.mark.parametrize("plural,name,build,old,new", UPDATES, ids=[f"{u[0]}: {u[1]}" for u in UPDATES])
def test_update_as_the_server_decides(server, plural, name, build, old, new):
    cp, gates = server
    before, after = build(*old), build(*new)
    if (before.name, before.namespace) != (after.name, after.namespace):
        pytest.skip("the server checks the name and namespace against the URL first")
    dump, parse, _, validate_update = KINDS[plural]
    object_name = f"u{next(_names)}"
    try:
        stored = cp.api("POST", f"{BASE}/{plural}", _manifest(before, dump, object_name))
    except APIError:
        pytest.skip("the old object is refused by admission")
    try:
        manifest = _manifest(after, dump, object_name)
        manifest["metadata"] = stored["metadata"]
        theirs = _send(cp, "PUT", f"{BASE}/{plural}/{object_name}", manifest)
        if theirs is None:
            pytest.skip("refused by admission before validation")
        assert sorted(str(e) for e in validate_update(parse(manifest), parse(stored), gates)) == theirs
    finally:
        cp.api("DELETE", f"{BASE}/{plural}/{object_name}")


POD_GROUPS = [None, {}, {"podGroupName": "pg"}, {"podGroupName": ""},
              {"podGroupName": ".podGroup"}, {"podGroupName": "w" * 254}]


@pytest.mark.parametrize("group", POD_GROUPS, ids=repr)
def test_pod_scheduling_group_as_the_server_decides(server, group):
    """With GenericWorkload on (both servers here), a pod's spec.schedulingGroup is refused
    with the server's findings, or stored as sent."""
    cp, _ = server
    spec: dict[str, Any] = {"containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10"}]}
    if group is not None:
        spec["schedulingGroup"] = group
    manifest = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": spec}
    pod = parse_pod(manifest)
    mine = sorted(str(e) for e in validate_pod_scheduling_group(
        drop_disabled_scheduling_group(pod, None, generic_workload=True)))
    try:
        stored = cp.api("POST", "/api/v1/namespaces/ns/pods?dryRun=All", manifest)
    except APIError as exc:
        assert mine == _findings(exc)
        return
    assert mine == []
    assert stored["spec"].get("schedulingGroup") == group


def test_pod_scheduling_group_dropped_without_the_gate(control_plane: ControlPlane):
    """The session's server runs without GenericWorkload: it stores a pod without the field."""
    control_plane.api("POST", "/api/v1/namespaces", {"metadata": {"name": "wl-no-gate"}})
    manifest = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
                "spec": {"containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10"}],
                         "schedulingGroup": {"podGroupName": ".not-checked"}}}
    stored = control_plane.api("POST", "/api/v1/namespaces/wl-no-gate/pods?dryRun=All", manifest)
    assert "schedulingGroup" not in stored["spec"]
    mine = drop_disabled_scheduling_group(parse_pod(manifest), None, generic_workload=False)
    assert mine.scheduling_group is None and validate_pod_scheduling_group(mine) == []
