"""A profile's plans are one immutable object compiled once (upstream frameworkImpl's typed
per-point plugin lists); a cycle that records plugin metrics runs a timed copy of the same type,
and the Handle a plugin's constructor gets is already complete: the runtime builds it from a
factory, nothing is written to it later."""

from __future__ import annotations

import dataclasses

import pytest

from kschedfw import hookimpl
from kschedfw.cache.snapshot import Snapshot
from kschedfw.framework.handle import Handle
from kschedfw.framework.plans import Plans
from kschedfw.plugins.noderesources.fit import NodeResourcesFit
from kschedfw.plugins.tainttoleration import TaintToleration
from kschedfw.queue.nominator import Nominator
from kschedfw.testing import framework_for


class _Clock:
    def now(self) -> float:
        return 0.0

    def plugin_observer(self, plugin, point):
        return lambda code, seconds: None

    def extension_point_observer(self, point, profile):
        return lambda code, seconds: None


def test_the_plans_cannot_be_changed_once_compiled():
    plans = framework_for([NodeResourcesFit, TaintToleration]).plans
    with pytest.raises(dataclasses.FrozenInstanceError):
        plans.filter = ()  # type: ignore[misc]
    assert [name for name, _ in plans.filter] == ["NodeResourcesFit", "TaintToleration"]
    assert [entry[0] for entry in plans.score] == ["NodeResourcesFit", "TaintToleration"]


def test_the_timed_plans_are_a_copy_without_whole_list_forms():
    """Every per-node call of a sampled cycle is timed, so the timed copy drops the whole-list
    forms; its Filter entries wrap the plain ones, plugin for plugin."""
    fwk = framework_for([NodeResourcesFit, TaintToleration])
    plain = fwk.plans
    assert plain.filter_forms and any(entry[4] for entry in plain.score)
    timed = plain.timed(_Clock())  # type: ignore[arg-type]
    assert type(timed) is Plans and timed is not plain
    assert not timed.filter_forms and not any(entry[4] or entry[5] for entry in timed.score)
    assert [name for name, _ in timed.filter] == [name for name, _ in plain.filter]
    assert all(t is not p for (_, t), (_, p) in zip(timed.filter, plain.filter))
    assert timed.verdict_keys == plain.verdict_keys and timed.signers == plain.signers


def test_a_hand_built_profile_gives_its_plugins_a_complete_handle():
    """A test or a tool gives facets; the runtime adds itself, its profile name and fast_paths
    before any plugin constructor runs."""
    seen = {}

    class Looks:
        name = "Looks"

        def __init__(self, args, handle):
            seen.update(framework=handle.framework, profile=handle.profile_name, fast=handle.fast_paths,
                        nominator=handle.nominator, snapshot=handle.snapshot)

        @hookimpl
        def filter(self, state, pod, node_info):
            return None

    nominator, snapshot = Nominator(), Snapshot()
    fwk = framework_for([Looks], handle=Handle.factory(nominator=nominator, snapshot=snapshot),
                        fast_paths=False, scheduler_name="other")
    assert seen == dict(framework=fwk, profile="other", fast=False, nominator=nominator, snapshot=snapshot)
    assert fwk.handle.framework is fwk


def test_the_runtime_alone_gives_a_handle_its_framework():
    with pytest.raises(TypeError, match="framework"):
        Handle.factory(framework=None)


def test_a_built_handle_is_refused_with_the_factory_named():
    """A Handle built before its runtime would be completed by writing to it afterwards."""
    with pytest.raises(TypeError, match=r"Handle\.factory"):
        framework_for([NodeResourcesFit], handle=Handle())  # type: ignore[arg-type]
