"""The runtime's guard covers the queue-side returns too: EventsToRegister and SignPod values of
the wrong type are named (plugin, extension point, value) instead of crashing the runtime."""

from __future__ import annotations

import pytest

from kschedfw import Status, hookimpl
from kschedfw.framework.runtime import FrameworkError
from kschedfw.fwk.types import SignFragment
from kschedfw.testing import framework_for, make_pod


class _Base:
    def __init__(self, args, handle):
        pass

    @hookimpl
    def filter(self, state, pod, node_info):
        return None


class StringEvents(_Base):
    name = "StringEvents"

    @hookimpl
    def events_to_register(self):
        return ["Node/Add"]


def test_events_of_the_wrong_type_are_a_framework_error_naming_them():
    # upstream EventsToRegister returns []ClusterEventWithHint; anything else cannot build the profile
    with pytest.raises(FrameworkError) as caught:
        framework_for([StringEvents])
    assert str(caught.value) == ('plugin "StringEvents" EventsToRegister returned str \'Node/Add\'; '
                                 "want ClusterEventWithHint in the list")


class TupleFragments(_Base):
    name = "TupleFragments"

    @hookimpl
    def sign_pod(self, pod):
        return [("key", "value")], None


class GoodFragments(_Base):
    name = "GoodFragments"

    @hookimpl
    def sign_pod(self, pod):
        return [SignFragment("key", pod.name)], Status()


def test_fragments_that_are_not_sign_fragments_refuse_the_pod_and_are_reported():
    # a plugin that cannot sign a pod makes it unbatchable (upstream SignPod's non-Success)
    fwk = framework_for([TupleFragments])
    assert fwk.sign_pod(make_pod("p")) is None
    assert fwk.faults.summary() == ['plugin "TupleFragments" Sign: returned tuple (1 times)']


def test_sign_fragments_make_the_signature():
    assert framework_for([GoodFragments]).sign_pod(make_pod("p")) == {"v1.Pod.Spec.SchedulerName": "default-scheduler",
                                                                     "key": "p"}
