"""Node fragmentation F_n(M): the simulator's unit vectors (pkg/utils/frag_test.go), and the
memoised form against the plain one."""

from __future__ import annotations

import random

import pytest

from kschedfw_gpushare.frag import TypicalPod, Workload, node_frag
from kschedfw_gpushare.resources import PodShape

# (cpu milli, gpu milli, gpu count, card model, percent): frag_test.go's two distributions
TYPED = [
    (6000, 465, 1, "", 9.33), (8000, 440, 1, "2080", 9.15), (8000, 475, 1, "T4", 8.76), (8000, 440, 1, "P100", 8.72),
    (2000, 465, 1, "", 8.68), (12000, 900, 1, "", 8.65), (4000, 900, 1, "", 8.43), (16000, 678, 1, "T4", 8.36),
    (8000, 500, 1, "", 8.29), (6000, 511, 1, "", 8.11), (14000, 1000, 2, "2080", 0.54), (4000, 1000, 1, "2080", 0.43),
    (32000, 1000, 2, "T4", 0.43), (16000, 1000, 1, "V100M16", 0.40), (64000, 1000, 2, "", 0.40),
    (10000, 1000, 2, "", 0.40), (11400, 1000, 1, "T4", 0.36), (16000, 1000, 1, "T4", 0.36), (4000, 1000, 2, "", 0.36),
    (14000, 1000, 2, "V100M16", 0.36), (8000, 1000, 4, "", 0.36), (16000, 1000, 2, "", 0.32),
    (2000, 1000, 1, "T4", 0.32), (6000, 1000, 1, "", 0.32), (4000, 1000, 1, "", 0.32), (5000, 1000, 1, "", 0.32),
    (32000, 1000, 4, "V100M16", 0.32), (32000, 1000, 2, "", 0.32), (24000, 1000, 8, "2080", 0.32),
    (40000, 1000, 4, "", 0.29), (32000, 1000, 8, "", 0.29), (32000, 1000, 1, "T4", 0.29), (16000, 1000, 1, "", 0.25),
    (7000, 1000, 1, "V100M16", 0.25), (24000, 1000, 1, "T4", 0.25),
]
WITH_CPU_ONLY = [
    (15700, 1000, 1, "", 28.69), (11900, 1000, 1, "", 18.93), (11400, 1000, 1, "", 12.27), (1000, 0, 0, "", 7.36),
    (18710, 1000, 1, "", 4.85), (8200, 1000, 1, "", 3.79), (16400, 1000, 1, "", 3.31), (9810, 1000, 1, "", 1.97),
    (15200, 1000, 1, "", 1.87), (11200, 1000, 1, "", 1.81), (14200, 1000, 1, "", 1.76), (12000, 0, 0, "", 1.65),
    (14900, 1000, 1, "", 1.39), (60200, 1000, 4, "", 1.23), (64200, 1000, 8, "", 1.07), (32200, 1000, 4, "", 1.01),
    (17400, 1000, 2, "", 0.91), (30200, 1000, 2, "", 0.69), (16000, 1000, 1, "", 0.64), (15000, 1000, 1, "", 0.59),
    (64000, 1000, 8, "", 0.53), (15000, 0, 0, "", 0.53), (11910, 1000, 1, "", 0.53), (120200, 1000, 8, "", 0.48),
    (11300, 1000, 1, "", 0.37), (30000, 1000, 2, "", 0.32), (9800, 1000, 1, "", 0.32), (8000, 1000, 1, "", 0.32),
    (2000, 1000, 1, "", 0.27), (2000, 80, 1, "", 0.27), (1000, 1000, 1, "", 0.27),
]


def typical(rows):
    return [TypicalPod(PodShape(cpu, milli, count, model), percent / 100) for cpu, milli, count, model, percent in rows]


@pytest.mark.parametrize("cpu_left, idle, model, rows, expected", [
    pytest.param(1000, [200, 1000, 1000, 500], "1080", TYPED, 2566.62, id="4x1080-used"),
    pytest.param(1000, [1000] * 4, "1080", TYPED, 3802.40, id="4x1080-free"),
    pytest.param(1000, [1000] * 8, "1080", TYPED, 7604.80, id="8x1080-free"),
    pytest.param(1000, [200, 1000, 1000, 500], "1080", TYPED[:1], 251.91, id="lacks-cpu-one-pod"),
    pytest.param(64000, [1000] * 8, "P100", WITH_CPU_ONLY, 887.20, id="8xP100-empty"),
    pytest.param(32000, [1000] * 4 + [0] * 4, "P100", WITH_CPU_ONLY, 554.4, id="8xP100-halved"),
    pytest.param(0, [1000] * 4 + [0] * 4, "P100", WITH_CPU_ONLY, 4000, id="8xP100-no-cpu"),
])
def test_simulator_vectors(cpu_left, idle, model, rows, expected):
    pods = typical(rows)
    assert node_frag(cpu_left, idle, model, pods) == pytest.approx(expected, abs=0.01)
    assert Workload(pods).frag(cpu_left, idle, model) == pytest.approx(expected, abs=0.01)


def test_cpu_only_tasks_count_all_idle_gpu():
    pods = [TypicalPod(PodShape(1000, 0, 0, ""), 1.0)]
    assert node_frag(64000, [1000, 300], "G2", pods) == 1300
    assert node_frag(0, [1000, 300], "G2", pods) == 1300


def test_only_devices_too_small_count_when_the_task_fits():
    pods = [TypicalPod(PodShape(1000, 500, 1, ""), 1.0)]
    assert node_frag(4000, [1000, 300, 200], "G2", pods) == 500  # 300 + 200 too small for 500
    assert node_frag(500, [1000, 300, 200], "G2", pods) == 1500  # lacks cpu: all of it
    assert node_frag(4000, [400, 300], "G2", pods) == 700  # lacks GPU: all of it
    assert node_frag(4000, [1000], "T4", [TypicalPod(PodShape(1000, 500, 1, "G2"), 1.0)]) == 1000  # no access


def test_memoised_frag_is_the_plain_frag_bit_for_bit():
    rng = random.Random(7)
    pods = [TypicalPod(PodShape(rng.choice([500, 4000, 12000, 64000]), rng.choice([0, 100, 250, 500, 810, 1000]),
                                rng.choice([0, 1, 1, 2, 4, 8]), rng.choice(["", "T4", "G2|T4", "V100M16|V100M32"])),
                       rng.random() / 20) for _ in range(40)]
    workload = Workload(pods)
    for _ in range(3000):
        idle = [rng.choice([0, 100, 300, 500, 700, 1000]) for _ in range(rng.choice([0, 1, 2, 4, 8]))]
        cpu_left, model = rng.choice([0, 500, 3000, 20000, 90000]), rng.choice(["G2", "T4", "V100M16", ""])
        assert workload.frag(cpu_left, idle, model) == node_frag(cpu_left, idle, model, pods)
