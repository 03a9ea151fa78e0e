"""The API server's rules for a pod's ``spec.schedulingGroup``: its validation, and the field
dropped while the GenericWorkload gate is off."""

import pytest

from kschedfw.api.pod import parse_pod
from kschedfw.api.workload_validation import (drop_disabled_scheduling_group,
                                              validate_pod_scheduling_group)

SUBDOMAIN = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, "
             "'-' or '.', and must start and end with an alphanumeric character (e.g. "
             "'example.com', regex used for validation is "
             "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")


def pod(group=None, *, absent=False):
    spec = {"containers": [{"name": "c", "image": "i"}]}
    if not absent:
        spec["schedulingGroup"] = group
    return parse_pod({"metadata": {"name": "p"}, "spec": spec})


@pytest.mark.parametrize("name,group,messages", [
    ("no scheduling group", None, []),
    ("correct", {"podGroupName": "group"}, []),
    ("nil pod group name", {}, ["spec.schedulingGroup.podGroupName: Invalid value: null: must "
                                "specify one of: `podGroupName`"]),
    ("empty pod group name", {"podGroupName": ""},
     [f'spec.schedulingGroup.podGroupName: Invalid value: "": {SUBDOMAIN}']),
    ("incorrect pod group name", {"podGroupName": ".podGroup"},
     [f'spec.schedulingGroup.podGroupName: Invalid value: ".podGroup": {SUBDOMAIN}']),
    ("too long pod group name", {"podGroupName": "w" * 254},
     [f'spec.schedulingGroup.podGroupName: Invalid value: "{"w" * 254}": must be no more than '
      f'253 characters']),
])
def test_validate_pod_scheduling_group(name, group, messages):
    assert [str(e) for e in validate_pod_scheduling_group(pod(group))] == messages


WITH = {"podGroupName": "pg"}


@pytest.mark.parametrize("enabled,old,new,kept", [
    (False, WITH, WITH, True),
    (False, None, WITH, False),
    (False, WITH, None, False),
    (False, None, None, False),
    (True, WITH, WITH, True),
    (True, None, WITH, True),
    (True, WITH, None, False),
    (True, None, None, False),
], ids=lambda v: repr(v))
def test_dropped_while_generic_workload_is_off(enabled, old, new, kept):
    """Upstream's table: the field is dropped with the gate off unless the old pod had one."""
    old_pod = None if old is None else pod(old)
    new_pod = pod(new, absent=new is None)
    out = drop_disabled_scheduling_group(new_pod, old_pod, generic_workload=enabled)
    assert (out.scheduling_group is not None) == kept
    assert ("schedulingGroup" in out.raw["spec"]) == kept, "the written manifest agrees"


def test_create_without_the_gate_drops_it():
    out = drop_disabled_scheduling_group(pod(WITH), None, generic_workload=False)
    assert out.scheduling_group is None and "schedulingGroup" not in out.raw["spec"]
    assert out.containers == pod(WITH).containers
