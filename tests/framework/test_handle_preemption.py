"""What a preempting plugin asks of its Handle (upstream framework.Handle's
RunFilterPluginsWithNominatedPods, PreFilter extensions and PodNominator), answered for the
profile the Handle belongs to and the cycle a CycleState stands for."""

from __future__ import annotations

from kschedfw import hookimpl
from kschedfw.fwk.cycle_state import CycleState
from kschedfw.framework.handle import Handle
from kschedfw.fwk.status import Status
from kschedfw.fwk.types import NominatingInfo, NominatingMode
from kschedfw.queue.nominator import Nominator
from kschedfw.testing import framework_for, make_pod


class First:
    name = "First"

    def __init__(self, args, handle):
        pass

    @hookimpl
    def filter(self, state, pod, node_info):
        return None


class Skipper:
    """A PreFilter with an AddPod extension that skips its own Filter when the pod says so."""

    name = "Skipper"

    def __init__(self, args, handle):
        pass

    @hookimpl
    def pre_filter(self, state, pod, nodes):
        if pod.labels.get("skip") == "yes":
            state.skip_filter_plugins.add(self.name)
        return None, None

    @hookimpl
    def pre_filter_add_pod(self, state, pod_to_schedule, pod_to_add, node_info):
        return None

    @hookimpl
    def filter(self, state, pod, node_info):
        return Status.unschedulable("no")


def test_filter_plugins_to_run_are_the_plan_in_order_less_the_skipped_ones():
    fwk = framework_for([First, Skipper])
    handle = fwk.handle
    kept, skipped = CycleState(), CycleState()
    fwk.run_pre_filter_plugins(kept, make_pod("a"), [])
    fwk.run_pre_filter_plugins(skipped, make_pod("b", labels={"skip": "yes"}), [])
    assert [name for name, _ in handle.filter_plugins_to_run(kept)] == ["First", "Skipper"]
    assert [name for name, _ in handle.filter_plugins_to_run(skipped)] == ["First"]
    # the functions are those the runtime calls: here each plugin's own bound filter
    first, skipper = (fn for _, fn in handle.filter_plugins_to_run(kept))
    assert first.__self__ is fwk.plugins["First"] and skipper.__self__ is fwk.plugins["Skipper"]


def test_without_pre_filter_the_recorded_skips_hold():
    handle = framework_for([First, Skipper]).handle
    state = CycleState()
    state.skip_filter_plugins.add("First")
    assert [name for name, _ in handle.filter_plugins_to_run(state)] == ["Skipper"]


def test_pre_filter_extensions_to_run_leave_out_the_skipped_plugins():
    fwk = framework_for([First, Skipper])
    kept, skipped = CycleState(), CycleState()
    fwk.run_pre_filter_plugins(kept, make_pod("a"), [])
    fwk.run_pre_filter_plugins(skipped, make_pod("b", labels={"skip": "yes"}), [])
    assert fwk.handle.pre_filter_extensions_to_run(kept) == ("Skipper",)
    assert fwk.handle.pre_filter_extensions_to_run(skipped) == ()


def test_a_handle_of_no_profile_runs_no_plugins():
    handle = Handle()
    assert handle.filter_plugins_to_run(CycleState()) == ()
    assert handle.pre_filter_extensions_to_run(CycleState()) == ()


def _nominated(nominator: Nominator, name: str, priority: int, node: str):
    pod = make_pod(name, priority=priority)
    nominator.add_nominated_pod(pod, NominatingInfo(node, NominatingMode.Override))
    return pod


def test_nominated_pods_to_add_are_those_of_higher_or_equal_priority_but_the_pod_itself():
    for attached in (True, False):
        nominator = Nominator()
        if attached:
            handle = framework_for([First], handle=Handle.factory(nominator=nominator)).handle
        else:
            handle = Handle(nominator=nominator)
        low = _nominated(nominator, "low", 1, "n1")
        same = _nominated(nominator, "same", 5, "n1")
        high = _nominated(nominator, "high", 9, "n1")
        pod = _nominated(nominator, "pod", 5, "n1")
        _nominated(nominator, "elsewhere", 9, "n2")
        assert list(handle.nominated_pods_to_add(CycleState(), pod, "n1")) == [same, high], attached
        assert low not in handle.nominated_pods_to_add(CycleState(), pod, "n1")
        assert set(handle.nominated_node_names()) == {"n1", "n2"}


def test_a_handle_without_a_nominator_has_no_nominations():
    handle = Handle()
    assert list(handle.nominated_node_names()) == []
    assert list(handle.nominated_pods_to_add(CycleState(), make_pod("p"), "n1")) == []
