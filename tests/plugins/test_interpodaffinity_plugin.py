"""InterPodAffinity queueing hints, events and signature.

Ported from upstream ``interpodaffinity/plugin_test.go`` (v1.36): every case of
Test_isSchedulableAfterPodChange, Test_isSchedulableAfterNodeChange and TestPodAffinitySignature.
"""

from __future__ import annotations

import itertools

import pytest

from kschedfw import ActionType, ClusterEvent, Code, EventResource, QueueingHint
from kschedfw.api import (Affinity, LabelSelector, LabelSelectorRequirement, Node, Pod, PodAffinity,
                          PodAffinityTerm)
from kschedfw.fwk.types import SignFragment
from kschedfw.framework.handle import Handle
from kschedfw.plugins.interpodaffinity import InterPodAffinity

Q, SKIP = QueueingHint.Queue, QueueingHint.QueueSkip
_uids = itertools.count()


def _term(topology_key, selector):
    return PodAffinityTerm(selector, (), topology_key, None)


def _sel(key, op, *values):
    return LabelSelector({}, (LabelSelectorRequirement(key, op, tuple(values)),))


class P:
    """Fluent pod builder mirroring st.MakePod() (namespace "", uid "" unless set)."""

    def __init__(self) -> None:
        self._kw: dict = {"name": "", "namespace": "", "labels": {}, "uid": ""}
        self._aff: list = []
        self._anti: list = []

    def name(self, v): self._kw["name"] = v; return self  # noqa: E702
    def uid(self, v): self._kw["uid"] = v; return self  # noqa: E702
    def node(self, v): self._kw["node_name"] = v; return self  # noqa: E702
    def nominated(self, v): self._kw["nominated_node_name"] = v; return self  # noqa: E702

    def label(self, k, v):
        self._kw["labels"] = {**self._kw["labels"], k: v}
        return self

    def affinity_in(self, k, tk, vals): self._aff.append(_term(tk, _sel(k, "In", *vals))); return self  # noqa: E702
    def affinity_exists(self, k, tk): self._aff.append(_term(tk, _sel(k, "Exists"))); return self  # noqa: E702
    def anti_in(self, k, tk, vals): self._anti.append(_term(tk, _sel(k, "In", *vals))); return self  # noqa: E702
    def anti(self, tk, selector): self._anti.append(_term(tk, selector)); return self  # noqa: E702

    def obj(self) -> Pod:
        kw = dict(self._kw)
        if self._aff or self._anti:
            kw["affinity"] = Affinity(
                pod_affinity=PodAffinity(tuple(self._aff)) if self._aff else None,
                pod_anti_affinity=PodAffinity(tuple(self._anti)) if self._anti else None)
        return Pod(**kw)


def N(name, **labels):
    return Node(name=name, labels=labels)


def _aff_p():
    return P().uid("p").name("p").affinity_in("service", "region", ["securityscan", "value2"])


def _anti_p():
    return P().uid("p").name("p").anti_in("service", "region", ["securityscan", "value2"])


def _other():
    return P().uid("other")


# --------------------------------------------------------------------------- Test_isSchedulableAfterPodChange

POD_CHANGE_CASES = [
    pytest.param(_aff_p().obj(), None, _other().node("fake-node").label("service", "securityscan").obj(), Q,
                 id="add a pod which matches the pod affinity"),
    pytest.param(_aff_p().obj(), None, _other().label("service", "securityscan").obj(), SKIP,
                 id="add an un-scheduled pod"),
    pytest.param(_aff_p().obj(), None, _other().node("fake-node").label("aaa", "a").obj(), SKIP,
                 id="add a pod which doesn't match the pod affinity"),
    pytest.param(_aff_p().obj(), _other().node("fake-node").label("aaa", "a").obj(),
                 _other().node("fake-node").label("service", "securityscan").obj(), Q,
                 id="update a pod from non-match to match pod affinity"),
    pytest.param(_aff_p().obj(), _other().node("fake-node").label("service", "value2").obj(),
                 _other().node("fake-node").label("service", "securityscan").obj(), SKIP,
                 id="the updating pod matches target pod's affinity both before and after label changes"),
    pytest.param(_aff_p().obj(), _other().label("aaa", "a").obj(),
                 _other().label("service", "securityscan").obj(), SKIP,
                 id="update an un-scheduled pod"),
    pytest.param(_aff_p().obj(), _other().node("fake-node").label("service", "securityscan").obj(),
                 _other().node("fake-node").label("aaa", "a").obj(), SKIP,
                 id="update a pod from match to non-match the pod affinity"),
    pytest.param(P().uid("p").name("p").affinity_exists("aaa", "hostname").affinity_exists("bbb", "hostname").obj(),
                 _other().node("fake-node").label("aaa", "a").obj(),
                 _other().node("fake-node").label("service", "securityscan").obj(), SKIP,
                 id="update a pod from match to non-match pod's affinity - multiple terms case"),
    pytest.param(P().uid("p").name("p").affinity_exists("aaa", "hostname").affinity_exists("bbb", "hostname").obj(),
                 _other().node("fake-node").label("aaa", "a").obj(),
                 _other().node("fake-node").label("aaa", "").label("bbb", "").obj(), Q,
                 id="update a pod from non-match to match pod's affinity - multiple terms case"),
    pytest.param(P().uid("p").name("p").label("foo", "baz").obj(),
                 P().uid("p").name("p").label("foo", "bar").obj(),
                 P().uid("p").name("p").label("foo", "baz").obj(), Q,
                 id="updated pod is the target pod"),
    pytest.param(_anti_p().obj(), _other().node("fake-node").label("service", "securityscan").obj(),
                 _other().node("fake-node").label("service", "aaaa").obj(), Q,
                 id="modify pod label to change it from satisfying pod anti-affinity to not satisfying anti-affinity"),
    pytest.param(_anti_p().obj(), _other().node("fake-node").label("service", "bbb").obj(),
                 _other().node("fake-node").label("service", "securityscan").obj(), SKIP,
                 id="modify pod label to change it from not satisfying pod anti-affinity to satisfying anti-affinity"),
    pytest.param(_anti_p().obj(), _other().node("fake-node").label("aaa", "a").obj(), None, SKIP,
                 id="delete a pod which doesn't match pod's anti-affinity"),
    pytest.param(_anti_p().obj(), _other().node("fake-node").label("service", "securityscan").obj(), None, Q,
                 id="delete a pod which matches pod's anti-affinity"),
    pytest.param(P().name("p").label("service", "securityscan").obj(),
                 P().node("fake-node").anti_in("service", "region", ["securityscan", "value2"]).obj(), None, Q,
                 id="delete a pod with anti-affinity that matches pending pod"),
    pytest.param(P().name("p").label("service", "foo").obj(),
                 P().node("fake-node").anti_in("service", "region", ["securityscan", "value2"]).obj(), None, SKIP,
                 id="delete a pod with anti-affinity that doesn't match pending pod"),
    pytest.param(P().name("p").anti_in("service", "region", ["securityscan", "value2"]).label("service", "foo").obj(),
                 P().node("fake-node").anti_in("service", "region", ["securityscan", "value2"]).label("service", "foo").obj(),
                 None, SKIP,
                 id="delete a pod which doesn't match pending pod's anti-affinity and has anti-affinity that doesn't match pending pod"),
    pytest.param(P().name("p").anti_in("service", "region", ["securityscan", "value2"]).obj(),
                 P().nominated("fake-node").label("aaa", "a").obj(), None, SKIP,
                 id="delete a nominated pod which doesn't match pod's anti-affinity"),
    pytest.param(P().name("p").anti_in("service", "region", ["securityscan", "value2"]).obj(),
                 P().nominated("fake-node").label("service", "securityscan").obj(), None, Q,
                 id="delete a nominated pod which matches pod's anti-affinity"),
]


@pytest.mark.parametrize("pod, old, new, want", POD_CHANGE_CASES)
def test_is_schedulable_after_pod_change(pod, old, new, want):
    assert InterPodAffinity({}, Handle()).is_schedulable_after_pod_change(pod, old, new) is want


# --------------------------------------------------------------------------- Test_isSchedulableAfterNodeChange

def _zone_aff():
    return P().name("p").affinity_in("service", "zone", ["securityscan", "value2"]).obj()


def _zone_anti():
    return P().name("p").anti("zone", LabelSelector({"another": "label"})).obj()


NODE_CHANGE_CASES = [
    pytest.param(_zone_aff(), None, N("node-a", zone="zone1"), Q,
                 id="add a new node with matched pod affinity topologyKey"),
    pytest.param(P().name("p").affinity_in("service", "region", ["securityscan", "value2"]).obj(),
                 None, N("node-a", zone="zone1"), SKIP,
                 id="add a new node without matched topologyKey"),
    pytest.param(_zone_aff(), N("node-a", aaa="a"), N("node-a", aaa="b"), SKIP,
                 id="update node label but not topologyKey"),
    pytest.param(_zone_aff(), N("node-a", zone="zone1"),
                 N("node-a", zone="zone1", **{"unrelated-label": "unrelated"}), SKIP,
                 id="update node label that isn't related to the pod affinity"),
    pytest.param(_zone_aff(), N("node-a", zone="zone1"), N("node-a", zone="zone2"), Q,
                 id="update node with different affinity topologyKey value"),
    pytest.param(_zone_aff(), N("node-a", aaa="a"), N("node-a", zone="zone1"), Q,
                 id="update node to have the affinity topology label"),
    pytest.param(_zone_anti(), None, N("node-a", zone="zone1"), Q,
                 id="add a new node with matched pod anti-affinity topologyKey"),
    pytest.param(_zone_anti(), None, N("node-a"), Q,
                 id="add a new node without matched pod anti-affinity topologyKey"),
    pytest.param(_zone_anti(), N("node-a", zone="zone1"),
                 N("node-a", zone="zone1", **{"unrelated-label": "unrelated"}), SKIP,
                 id="update node label that isn't related to the pod anti-affinity"),
    pytest.param(_zone_anti(), N("node-a", zone="zone1"), N("node-a", zone="zone2"), Q,
                 id="update node with different anti-affinity topologyKey value"),
    pytest.param(_zone_anti(), N("node-a", aaa="a"), N("node-a", zone="zone1"), SKIP,
                 id="update node to have the anti-affinity topology label"),
    pytest.param(_zone_anti(), N("node-a", zone="zone1"), N("node-a", aaa="a"), Q,
                 id="update node label not to have anti-affinity topology label"),
]


@pytest.mark.parametrize("pod, old, new, want", NODE_CHANGE_CASES)
def test_is_schedulable_after_node_change(pod, old, new, want):
    assert InterPodAffinity({}, Handle()).is_schedulable_after_node_change(pod, old, new) is want


# --------------------------------------------------------------------------- TestPodAffinitySignature

SIGNATURE_CASES = [
    pytest.param(Pod(name="", labels={"foo": "bar"}), {},
                 [SignFragment("v1.Pod.Labels", {"foo": "bar"})], True,
                 id="no affinity, default settings"),
    pytest.param(Pod(name="", labels={"foo": "bar"}), {"ignorePreferredTermsOfExistingPods": True},
                 [], True, id="no affinity, ignore setting set"),
    pytest.param(Pod(name="", labels={"foo": "bar"},
                     affinity=Affinity(pod_affinity=PodAffinity((PodAffinityTerm(None),)))),
                 {}, None, False, id="affinity set"),
]


@pytest.mark.parametrize("pod, args, want_signature, signable", SIGNATURE_CASES)
def test_pod_affinity_signature(pod, args, want_signature, signable):
    fragments, status = InterPodAffinity(args, Handle()).sign_pod(pod)
    if signable:
        assert status is None
    else:
        assert status.code is Code.Unschedulable
        assert status.message() == "pods with InterPodAffinity are not signable"
    assert fragments == want_signature


# --------------------------------------------------------------------------- events

def test_events_to_register():
    plugin = InterPodAffinity({}, Handle())
    events = plugin.events_to_register()
    assert [e.event for e in events] == [
        ClusterEvent(EventResource.Pod, ActionType.Add | ActionType.UpdatePodLabel | ActionType.Delete),
        ClusterEvent(EventResource.Node, ActionType.Add | ActionType.UpdateNodeLabel),
    ]
    assert events[0].queueing_hint_fn == plugin.is_schedulable_after_pod_change
    assert events[1].queueing_hint_fn == plugin.is_schedulable_after_node_change


def test_hint_with_unparsable_terms_queues():
    bad = P().name("p").affinity_in("service", "zone", ["{{bad}}"]).obj()
    plugin = InterPodAffinity({}, Handle())
    assert plugin.is_schedulable_after_node_change(bad, None, N("n")) is Q
    assert plugin.is_schedulable_after_pod_change(bad, None, _other().node("n").obj()) is Q
