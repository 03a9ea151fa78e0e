"""Open-Gpu-Share: Filter verdicts and messages, Reserve's device choice (ties to the lowest
index), and the node state with reservations, deletions and bindings."""

from __future__ import annotations

import pytest

from kschedfw.fwk.cycle_state import CycleState
from kschedfw.fwk.interface import WatchEvent
from kschedfw.fwk.status import Code
from kschedfw.testing.harness import PluginHarness

from kschedfw_gpushare.opengpushare import (ERR_CARD_MODEL, ERR_INSUFFICIENT_COUNT, ERR_INSUFFICIENT_MILLI, ERR_NO_GPU,
                                            OpenGpuShare)
from gpukit import gpu_node, gpu_pod

TYPICAL = [{"cpuMilli": 4000, "gpuMilli": 500, "gpuNumber": 1, "gpuType": "", "probability": 0.7},
           {"cpuMilli": 8000, "gpuMilli": 1000, "gpuNumber": 1, "gpuType": "", "probability": 0.3}]


def harness(pods=(), nodes=None, **args):
    nodes = nodes if nodes is not None else [gpu_node("g2", 4), gpu_node("t4", 2, "T4"), gpu_node("cpu", 0, "")]
    return PluginHarness(OpenGpuShare, nodes=nodes, pods=list(pods), args={"Open-Gpu-Share": args})


def on_g2(*idle_use):
    """Pods on g2 using (device, milli)."""
    return [gpu_pod(f"on-{i}", milli, index=str(dev), node_name="g2") for i, (dev, milli) in enumerate(idle_use)]


def verdicts(h, pod):
    return {name: (s.code, s.reasons) for name, s in h.filter(pod).statuses.items()}


# --------------------------------------------------------------------------- Filter
def test_cpu_only_pods_pass_everywhere():
    assert harness().feasible(gpu_pod("cpu-only")) == ["g2", "t4", "cpu"]


def test_share_pod_verdicts():
    h = harness(on_g2((0, 800), (1, 800), (2, 800), (3, 800)))
    assert verdicts(h, gpu_pod("p", 300)) == {
        "g2": (Code.Unschedulable, (ERR_INSUFFICIENT_MILLI,)),
        "t4": (Code.Success, ()),
        "cpu": (Code.UnschedulableAndUnresolvable, (ERR_NO_GPU,)),
    }
    assert h.feasible(gpu_pod("q", 200)) == ["g2", "t4"]


def test_card_model_must_match():
    h = harness()
    assert verdicts(h, gpu_pod("p", 1000, model="T4|A10"))["g2"] == (Code.UnschedulableAndUnresolvable,
                                                                     (ERR_CARD_MODEL,))
    assert harness().feasible(gpu_pod("p", 1000, model="T4|A10")) == ["t4"]
    assert harness().feasible(gpu_pod("p", 1000, model="|")) == ["g2", "t4"]  # only separators: any model


def test_multi_gpu_pods_need_enough_free_devices():
    h = harness(on_g2((0, 100), (1, 100)))
    assert h.feasible(gpu_pod("two", 1000, 2)) == ["g2", "t4"]
    assert verdicts(h, gpu_pod("three", 1000, 3))["g2"] == (Code.Unschedulable, (ERR_INSUFFICIENT_COUNT,))


def test_a_pod_that_names_its_devices_needs_them():
    h = harness(on_g2((0, 800)))
    assert h.feasible(gpu_pod("p", 300, index="0")) == ["t4"]
    assert h.feasible(gpu_pod("p", 300, index="1")) == ["g2", "t4"]
    assert h.feasible(gpu_pod("p", 300, index="3")) == ["g2"]  # t4 has devices 0-1 only
    assert harness().feasible(gpu_pod("p", 300, index="2")) == ["g2"]


def test_per_node_filter_agrees_with_the_whole_list_form():
    pods = on_g2((0, 800), (1, 500), (2, 1000))
    h = harness(pods)
    plugin = h.plugins["Open-Gpu-Share"]
    infos = h.snapshot.node_infos()
    for pod in (gpu_pod("a", 300), gpu_pod("b", 600), gpu_pod("c", 1000, 2), gpu_pod("d", 1000, model="T4"),
                gpu_pod("e"), gpu_pod("f", 200, index="1")):
        whole = plugin.filter_nodes(CycleState(), pod, infos)
        single = [plugin.filter(CycleState(), pod, info) for info in infos]
        assert [None if s is None else (s.code, s.reasons) for s in whole] == \
            [None if s is None else (s.code, s.reasons) for s in single]


# --------------------------------------------------------------------------- Reserve
def reserved(h, pod, node="g2"):
    plugin = h.plugins["Open-Gpu-Share"]
    status = plugin.reserve(CycleState(), pod, node)
    assert status is None, status
    return plugin.state.reserved(pod, node)


@pytest.mark.parametrize("method, expected", [("best", (1,)), ("worst", (0,)), ("FGDScore", (1,))])
def test_share_pod_device_choice(method, expected):
    # idle: 1000, 300, 600, 300 -> best fit is the first 300 (ties to the lowest index)
    h = harness(on_g2((1, 700), (2, 400), (3, 700)), gpuSelMethod=method,
                typicalPods=TYPICAL if method == "FGDScore" else [])
    assert reserved(h, gpu_pod("p", 300)) == expected


def test_random_device_choice_is_seeded_and_only_picks_devices_that_fit():
    picks = set()
    for seed in range(40):
        h = harness(on_g2((1, 700), (2, 400), (3, 900)), gpuSelMethod="random", seed=seed)
        picks.add(reserved(h, gpu_pod("p", 300)))
    assert picks == {(0,), (1,), (2,)}
    again = [reserved(harness(on_g2((1, 700)), gpuSelMethod="random", seed=5), gpu_pod("p", 300)) for _ in range(2)]
    assert again[0] == again[1]


@pytest.mark.parametrize("method", ["best", "random", "FGDScore"])
def test_whole_gpu_pods_take_the_lowest_free_devices(method):
    h = harness(on_g2((0, 100), (2, 1000)), gpuSelMethod=method, typicalPods=TYPICAL if method == "FGDScore" else [])
    assert reserved(h, gpu_pod("p", 1000, 1)) == (1,)
    h = harness(on_g2((0, 100)), gpuSelMethod=method, typicalPods=TYPICAL if method == "FGDScore" else [])
    assert reserved(h, gpu_pod("p", 1000, 2)) == (1, 2)


def test_reserve_chooses_on_the_node_without_the_assumed_pod_itself():
    pod = gpu_pod("p", 300, node_name="g2")  # the cache already holds it, assumed, without devices
    h = harness([*on_g2((1, 700)), pod])
    assert reserved(h, pod) == (1,)


# --------------------------------------------------------------------------- node state
def test_reservations_count_for_assumed_pods_and_go_with_unreserve():
    h = harness(on_g2((1, 700)), gpuSelMethod="worst")
    plugin = h.plugins["Open-Gpu-Share"]
    pod = gpu_pod("p", 300)
    assert reserved(h, pod) == (0,)
    info = h.snapshot.get("g2")
    info.add_pod(gpu_pod("p", 300, node_name="g2"))  # the cache assumes it
    assert plugin.state.node(info).idle == (700, 300, 1000, 1000)
    plugin.unreserve(CycleState(), pod, "g2")
    assert plugin.state.reserved(pod, "g2") is None
    # without its reservation the assumed pod is counted on the best-fitting device
    assert plugin.state.node(info).idle == (1000, 0, 1000, 1000)


def test_reservation_goes_when_the_pod_is_deleted_or_bound_elsewhere_and_stays_without_devices_written():
    h = harness(on_g2(), gpuSelMethod="worst")
    state = h.plugins["Open-Gpu-Share"].state
    pod = gpu_pod("p", 300)
    reserved(h, pod)
    state._on_pod_event(WatchEvent("MODIFIED", "Pod", pod, gpu_pod("p", 300, node_name="g2")))
    assert state.reserved(pod, "g2") == (0,)  # bound without the annotation: the reservation says where
    state._on_pod_event(WatchEvent("MODIFIED", "Pod", pod, gpu_pod("p", 300, node_name="g2", index="0")))
    assert pod.uid not in state.reservations
    reserved(h, pod)
    state._on_pod_event(WatchEvent("MODIFIED", "Pod", pod, gpu_pod("p", 300, node_name="t4")))
    assert pod.uid not in state.reservations
    reserved(h, pod)
    state._on_pod_event(WatchEvent("DELETED", "Pod", pod, None))
    assert state.reservations == {}


def test_node_state_is_kept_per_generation():
    h = harness(on_g2((0, 500)))
    state = h.plugins["Open-Gpu-Share"].state
    info = h.snapshot.get("g2")
    first = state.node(info)
    assert state.node(info) is first
    assert first.idle == (500, 1000, 1000, 1000) and first.cpu_left == 92000
    info.add_pod(gpu_pod("x", 1000, 1, index="3", node_name="g2"))
    second = state.node(info)
    assert second is not first and second.idle == (500, 1000, 1000, 0) and second.cpu_left == 88000
    assert second.affinity == {"share-gpu": 1, "1-gpu": 1}


# --------------------------------------------------------------------------- args
@pytest.mark.parametrize("args, message", [
    ({"gpuSelMethod": "first"}, 'gpuSelMethod: Unsupported value: "first"'),
    ({"gpuSelMethod": "FGDScore"}, "typicalPods: Required value"),
    ({"typicalPods": [dict(TYPICAL[0], probability=0.5)]}, "probabilities must sum to 1, they sum to 0.5"),
])
def test_args_are_checked(args, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(")):
        OpenGpuShare(args)
