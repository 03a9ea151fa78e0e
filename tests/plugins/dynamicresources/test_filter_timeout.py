"""``filterTimeout`` (upstream ``dynamicresources_test.go`` cases ``timeout``, ``timeout_disabled`` and
``timeout_zero``): with DRASchedulerFilterTimeout on, a Filter call whose device search runs past the
timeout returns the Error ``node <name>: timed out trying to allocate devices`` (so the pod retries after
backoff); with the gate off, or a zero timeout, the same search is not bounded and allocates."""

from __future__ import annotations

import pytest

from kschedfw.framework.handle import Handle
from kschedfw.fwk.cycle_state import CycleState
from kschedfw.fwk.status import Code
from kschedfw.plugins.dynamicresources import DynamicResources

from ..fakes import FakeLister
from .test_plugin import NODE, PENDING, WORKER_SLICE, Client, _Clock, device_class, node, pod, RESOURCE_NAME


def _filter(args, gates=None):
    lister = FakeLister(PENDING, device_class(), WORKER_SLICE)
    plugin = DynamicResources(args, Handle(lister=lister, client=Client(lister), clock=_Clock(),
                                           feature_gates=gates))
    state, p = CycleState(), pod(RESOURCE_NAME)
    _, pre = plugin.pre_filter(state, p, [node(NODE)])
    assert pre is None
    return plugin.filter(state, p, node(NODE))


def test_timeout_is_an_error_naming_the_node():
    status = _filter({"filterTimeout": "1ns"})
    assert (status.code, status.message()) == (Code.Error, f"node {NODE}: timed out trying to allocate devices")


@pytest.mark.parametrize("args,gates", [
    pytest.param({"filterTimeout": "1ns"}, {"DRASchedulerFilterTimeout": False}, id="timeout_disabled"),
    pytest.param({"filterTimeout": "0s"}, None, id="timeout_zero"),
    pytest.param({"filterTimeout": "10s"}, None, id="default"),
])
def test_unbounded_search_allocates(args, gates):
    assert _filter(args, gates) is None
