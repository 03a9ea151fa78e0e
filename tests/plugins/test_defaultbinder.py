"""Port of upstream defaultbinder/default_binder_test.go (TestDefaultBinder)."""

import pytest

from kschedfw.api import parse_object
from kschedfw.fwk.cycle_state import CycleState
from kschedfw.framework.handle import Handle
from kschedfw.fwk.status import Code
from kschedfw.plugins.defaultbinder import DefaultBinder

TEST_NODE = "foohost.kubernetes.mydomain.com"


class FakeClient:
    def __init__(self, inject_err=None):
        self.inject_err = inject_err
        self.bindings = []

    def bind(self, pod, node_name):
        if self.inject_err is not None:
            raise self.inject_err
        self.bindings.append((pod.namespace, pod.name, pod.uid, "Node", node_name))


@pytest.mark.parametrize("inject_err,want_binding", [
    pytest.param(None, ("ns", "foo", "Node", TEST_NODE), id="successful"),
    pytest.param(RuntimeError("binding error"), None, id="binding error"),
])
def test_default_binder(inject_err, want_binding):
    pod = parse_object({"kind": "Pod", "metadata": {"name": "foo", "namespace": "ns"}})
    client = FakeClient(inject_err)
    status = DefaultBinder({}, Handle(client=client)).bind(CycleState(), pod, TEST_NODE)
    if inject_err is None:
        assert status is None
        ns, name, uid, kind, node = client.bindings[0]
        assert (ns, name, kind, node) == want_binding
        assert uid == pod.uid
    else:
        assert status.code is Code.Error
        assert status.message() == "binding error"
        assert client.bindings == []
