"""Each policy's formula on hand-made node states, with the simulator's truncations and tie
rules (gpu_packing_score_test.go's vectors among them)."""

from __future__ import annotations

import math
import random

import pytest

from kschedfw_gpushare.bestfit import best_fit_score, min_max
from kschedfw_gpushare.dotproduct import dot_product_score
from kschedfw_gpushare.fgdscore import fgd_choice
from kschedfw_gpushare.frag import TypicalPod, Workload, node_frag
from kschedfw_gpushare.gpuclustering import clustering_score
from kschedfw_gpushare.gpupacking import packing_score
from kschedfw_gpushare.nodestate import NodeGpu
from kschedfw_gpushare.randomscore import RandomScore
from kschedfw_gpushare.resources import PodShape
from kschedfw_gpushare.scoring import go_quo


def node(idle, cpu_left=64000, model="G2", affinity=None, cpu_capacity=96000):
    return NodeGpu("n", cpu_left, cpu_capacity, tuple(idle), model, dict(affinity or {}))


def share(milli, cpu=4000, model=""):
    return PodShape(cpu, milli, 1, model)


def whole(count, cpu=8000, model=""):
    return PodShape(cpu, 1000, count, model)


CPU_ONLY = PodShape(8000, 0, 0, "")


# --------------------------------------------------------------------------- GpuPacking
@pytest.mark.parametrize("idle, pod, expected", [
    pytest.param([200, 1000, 1000, 500], PodShape(100, 1000, 2, "1080"), 48, id="free-gpus-of-a-used-node"),
    pytest.param([1000] * 4, PodShape(100, 1000, 2, "1080"), 29, id="free-4-gpu-node"),
    pytest.param([1000] * 8, PodShape(100, 1000, 2, "1080"), 25, id="free-8-gpu-node"),
    pytest.param([200, 1000, 1000, 500], PodShape(100, 200, 2, "1080"), 93, id="used-gpus"),
    pytest.param([1000] * 2, share(500), 31, id="free-2-gpu-node: max(33-free, free)"),
    pytest.param([1000], share(500), 32, id="free-1-gpu-node"),
    pytest.param([300, 1000], share(250), 97, id="tightest-shared-device"),
    pytest.param([900, 1000], share(250), 91, id="looser-shared-device"),
])
def test_packing(idle, pod, expected):
    assert packing_score(node(idle, model="1080"), pod) == expected


def test_packing_without_room_on_the_devices():
    assert packing_score(node([200, 1000]), whole(2)) is None


# --------------------------------------------------------------------------- DotProduct
def test_dot_product_prefers_the_smaller_product():
    pod = whole(1)
    # free vectors [0.5, 0.25] and [0.25, 0.125] against [0.0625, 0.125]: products 0.0625, 0.03125
    assert dot_product_score(node([1000, 1000], cpu_left=64000), pod, "merge", "max") == 96
    assert dot_product_score(node([1000, 0], cpu_left=32000), pod, "merge", "max") == 98


def test_dot_product_node_and_pod_norms():
    pod = share(500, cpu=8000)
    n = node([1000, 500], cpu_left=48000, cpu_capacity=96000)
    # by node: [0.5, 0.75] . [0.0833, 0.25] = 0.229 -> 1 - 0.1146 -> 88
    assert dot_product_score(n, pod, "merge", "node") == 88
    # by pod: [6, 3] . [1, 1] = 9 -> tanh(0.45) = 0.4218 -> 57
    assert dot_product_score(n, pod, "merge", "pod") == int(100 * (1 - math.tanh(4.5 / 10)))


def test_dot_product_share_keeps_the_best_virtual_node():
    pod = share(300, cpu=8000)
    n = node([1000, 400, 800], cpu_left=64000)
    # virtual nodes: device 1 (400), device 2 (800), the free device (1000); the smallest
    # product is device 1's
    expected = int(100.0 * (1 - (64000 / 128000 * 8000 / 128000 + 400 / 8000 * 300 / 8000) / 2))
    assert dot_product_score(n, pod, "share", "max") == expected


def test_dot_product_without_cpu_is_zero():
    assert dot_product_score(node([1000], cpu_left=1000), whole(1), "merge", "max") == 0


# --------------------------------------------------------------------------- GpuClustering
@pytest.mark.parametrize("affinity, idle, pod, expected", [
    pytest.param({"share-gpu": 2}, [500, 700, 1000, 1000], share(200), 15 + 75, id="only-its-class"),
    pytest.param({"share-gpu": 1, "1-gpu": 1}, [0, 500, 1000, 1000], share(200), 17 + 50, id="its-class-among-others"),
    pytest.param({}, [1000] * 8, share(200), 0 + 25, id="no-gpu-pods"),
    pytest.param({"2-gpu": 1}, [0, 0, 1000, 1000], share(200), 18 + 0, id="other-classes"),
    pytest.param({"share-gpu": 3}, [1000] * 8, CPU_ONLY, 0, id="cpu-only-pod"),
    pytest.param({"2-gpu": 1}, [0, 0, 1000, 1000], whole(2), 18 + 75, id="whole-gpu-class"),
])
def test_clustering(affinity, idle, pod, expected):
    """fill = 25 * (8000 - idle milli) / 8000, truncated, plus the band."""
    assert clustering_score(node(idle, affinity=affinity), pod) == expected


def test_go_division_truncates_toward_zero():
    assert go_quo(25 * (8000 - 9000), 8000) == -3
    assert go_quo(25 * 7000, 8000) == 21


# --------------------------------------------------------------------------- BestFit
def test_best_fit_formula():
    n = node([1000, 500], cpu_left=64000)
    pod = share(500, cpu=32000)
    raw = 0.5 * (64000 - 32000) / 128000 + 0.5 * (1500 - 500) / 8000
    assert best_fit_score(n, pod) == int((1 - raw) * 100) == 81
    assert best_fit_score(node([200], cpu_left=64000), pod) is None


def test_best_fit_min_max_is_integer_and_keeps_the_order():
    assert min_max([81, 90, 85]) == [0, 100, 44]
    assert min_max([70, 70]) == [0, 0]


# --------------------------------------------------------------------------- FGD
SHARE_HEAVY = [TypicalPod(PodShape(4000, 500, 1, ""), 0.6), TypicalPod(PodShape(8000, 1000, 1, ""), 0.3),
               TypicalPod(PodShape(2000, 0, 0, ""), 0.1)]


def sigmoid_score(before, after):
    return int(100 / (1 + math.exp(-(before - after) / 1000)))


def test_fgd_share_pod_tries_every_device_and_keeps_the_best():
    workload = Workload(SHARE_HEAVY)
    n = node([1000, 600, 1000, 300], cpu_left=32000)
    pod = share(300)
    before = node_frag(32000, n.idle, "G2", SHARE_HEAVY)
    scores = []
    for i, g in enumerate(n.idle):
        idle = list(n.idle)
        idle[i] -= 300
        scores.append(sigmoid_score(before, node_frag(28000, idle, "G2", SHARE_HEAVY)))
    best = max(scores)
    assert fgd_choice(workload, n, pod) == (best, (scores.index(best),))
    assert scores.index(best) == 3  # filling the 300 left of device 3 leaves no fragment


def test_fgd_device_ties_go_to_the_lowest_index():
    workload = Workload(SHARE_HEAVY)
    assert fgd_choice(workload, node([600, 1000, 600, 1000]), share(100))[1] == (0,)
    assert fgd_choice(workload, node([1000, 1000, 1000, 1000]), share(100))[1] == (0,)


def test_fgd_whole_gpu_pod_takes_the_lowest_free_devices():
    workload = Workload(SHARE_HEAVY)
    n = node([500, 1000, 0, 1000, 1000], cpu_left=32000)
    score, devices = fgd_choice(workload, n, whole(2))
    after = node_frag(24000, [500, 0, 0, 0, 1000], "G2", SHARE_HEAVY)
    assert devices == (1, 3)
    assert score == sigmoid_score(node_frag(32000, n.idle, "G2", SHARE_HEAVY), after)


def test_fgd_score_is_truncated():
    workload = Workload(SHARE_HEAVY)
    # a CPU-only pod on a node with no idle GPU changes nothing: sigmoid(0) = 0.5 -> 50
    assert fgd_choice(workload, node([0, 0], cpu_left=32000), CPU_ONLY)[0] == 50


# --------------------------------------------------------------------------- Random
def test_random_score_is_seeded_and_uniform():
    from kschedfw.fwk.cycle_state import CycleState
    from kschedfw.fwk.types import NodeInfo
    from kschedfw.testing import make_node

    infos = [NodeInfo(node=make_node(f"n{i}")) for i in range(4)]
    picks = []
    plugin = RandomScore({"seed": 3})
    for _ in range(400):
        state = CycleState()
        plugin.pre_score(state, None, infos)
        scores = plugin.score_nodes(state, None, infos)
        assert sorted(scores) == [0, 0, 0, 100]
        assert [plugin.score(state, None, i) for i in infos] == scores
        picks.append(scores.index(100))
    again = RandomScore({"seed": 3})
    state = CycleState()
    again.pre_score(state, None, infos)
    assert state.read("PreScore-RandomScore") == f"n{picks[0]}"
    counts = [picks.count(i) for i in range(4)]
    assert min(counts) > 60, counts
    assert random.Random(3).randrange(4) == picks[0]


def reference_fgd(typical, n, shape):
    """The spec's loop, plainly: every device that holds a sharing pod, strict > keeps the
    first best; whole-GPU pods on the ascending-idle devices, recorded on the lowest free ones."""
    before = node_frag(n.cpu_left, n.idle, n.model, typical)
    if shape.gpus == 1 and shape.milli < 1000:
        best = None
        for i, g in enumerate(n.idle):
            if g >= shape.milli:
                idle = list(n.idle)
                idle[i] -= shape.milli
                s = sigmoid_score(before, node_frag(n.cpu_left - shape.cpu, idle, n.model, typical))
                if best is None or s > best[0]:
                    best = (s, (i,))
        return best or (0, None)
    idle = list(n.idle)
    need = shape.gpus
    for i in sorted(range(len(idle)), key=lambda j: idle[j]):
        if need and idle[i] >= shape.milli:
            idle[i] -= shape.milli
            need -= 1
    free = [i for i, g in enumerate(n.idle) if g == 1000][:shape.gpus]
    if n.cpu_left < shape.cpu:  # the simulator's Sub fails and leaves the node as it was
        return 50, tuple(free)
    return sigmoid_score(before, node_frag(n.cpu_left - shape.cpu, idle, n.model, typical)), tuple(free)


def test_memoised_fgd_matches_the_plain_loop_on_shuffled_nodes():
    from kschedfw_gpushare.fgdscore import memo_fgd_choice

    rng = random.Random(11)
    workload = Workload(SHARE_HEAVY)
    for _ in range(1500):
        idle = [rng.choice([0, 100, 200, 500, 700, 1000]) for _ in range(rng.choice([1, 2, 4, 8]))]
        cpu_left = rng.choice([4000, 10000, 30000])
        pod = rng.choice([share(100), share(200, cpu=2000), share(500), whole(1), whole(2)])
        if pod.milli == 1000 and sum(g == 1000 for g in idle) < pod.gpus:
            continue  # the Filter removes the node
        for order in (idle, sorted(idle), idle[::-1]):
            n = node(order, cpu_left=cpu_left)
            assert memo_fgd_choice(workload, n, pod) == reference_fgd(SHARE_HEAVY, n, pod), (order, pod)


def test_memoised_fgd_across_cpu_bands_matches_the_plain_loop():
    """Nodes differing only in cpu left share F within a band; a node short of cpu is not
    mistaken for one with a little to spare."""
    from kschedfw_gpushare.fgdscore import memo_fgd_choice

    workload = Workload(SHARE_HEAVY)
    for cpu_left in (0, 100, 1999, 2000, 2001, 3999, 4000, 7999, 8000, 8100, 12000, 16000, 20000):
        for idle in ([1000, 1000], [1000, 300, 1000], [500, 0, 1000, 1000]):
            for pod in (share(300), share(500, cpu=8000), whole(1), whole(2, cpu=2000)):
                n = node(idle, cpu_left=cpu_left)
                assert memo_fgd_choice(workload, n, pod) == reference_fgd(SHARE_HEAVY, n, pod), (cpu_left, idle, pod)
                assert workload.frag(cpu_left, idle, "G2") == node_frag(cpu_left, idle, "G2", SHARE_HEAVY)
