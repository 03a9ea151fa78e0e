"""typical_pods: shapes by popularity with the simulator's tie order, the 95% cut, the
renormalisation; and, when a copy of the trace is at hand (KSCHEDFW_GPUSHARE_TRACES), the
paper's target workload for default."""

from __future__ import annotations

import csv
import os
from pathlib import Path

import pytest

from kschedfw_gpushare.typical import typical_pods
from gpukit import gpu_pod


def pods(*counts):
    """``count`` pods of each (name, milli, gpus, model, cpu)."""
    out = []
    for count, (milli, gpus, model, cpu) in counts:
        out += [gpu_pod(f"p{len(out) + i}", milli, gpus, model=model, cpu=cpu) for i in range(count)]
    return out


def shapes(typical):
    return [(t["cpuMilli"], t["gpuMilli"], t["gpuNumber"], t["gpuType"]) for t in typical]


def test_most_popular_first_and_ties_by_the_largest_key():
    typical = typical_pods(pods((3, (500, 1, "", "4")), (3, (500, 1, "", "8")), (3, (0, 0, "", "2")),
                                (3, (500, 1, "T4", "4")), (5, (1000, 2, "", "16"))))
    assert shapes(typical) == [(16000, 1000, 2, ""), (8000, 500, 1, ""), (4000, 500, 1, "T4"), (4000, 500, 1, ""),
                               (2000, 0, 0, "")]
    assert [t["probability"] for t in typical] == [5 / 17, 3 / 17, 3 / 17, 3 / 17, 3 / 17]


def test_shapes_up_to_95_percent_then_renormalised():
    # 60 + 30 = 90 % < 95 %: the third shape (6 %) is taken and crosses it; the fourth is cut
    typical = typical_pods(pods((60, (500, 1, "", "4")), (30, (1000, 1, "", "8")), (6, (0, 0, "", "2")),
                                (4, (200, 1, "", "1"))))
    assert shapes(typical) == [(4000, 500, 1, ""), (8000, 1000, 1, ""), (2000, 0, 0, "")]
    assert [round(t["probability"], 12) for t in typical] == [round(p / 0.96, 12) for p in (0.6, 0.3, 0.06)]
    assert sum(t["probability"] for t in typical) == pytest.approx(1)


def test_memory_is_not_part_of_the_shape_and_models_are_kept_raw():
    typical = typical_pods([gpu_pod("a", 500, memory="1Gi"), gpu_pod("b", 500, memory="9Gi"),
                            gpu_pod("c", 500, model="V100M16|V100M32"), gpu_pod("d", 500, model="V100M16|V100M32|V100M32")])
    assert shapes(typical) == [(4000, 500, 1, ""), (4000, 500, 1, "V100M16|V100M32|V100M32"),
                               (4000, 500, 1, "V100M16|V100M32")]


def test_manifests_are_read_as_pods():
    manifest = {"metadata": {"name": "m", "annotations": {"alibabacloud.com/gpu-milli": "810",
                                                          "alibabacloud.com/gpu-count": "1"}},
                "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "3152m"}}}]}}
    assert typical_pods([manifest]) == typical_pods([gpu_pod("p", 810, cpu="3152m")]) == [
        {"cpuMilli": 3152, "gpuMilli": 810, "gpuNumber": 1, "gpuType": "", "probability": 1.0}]


TRACES = os.environ.get("KSCHEDFW_GPUSHARE_TRACES")


@pytest.mark.skipif(not TRACES, reason="KSCHEDFW_GPUSHARE_TRACES (cluster-trace-gpu-v2023) not set")
def test_default_trace_target_workload():
    rows = list(csv.DictReader((Path(TRACES) / "csv" / "openb_pod_list_default.csv").open(newline="")))
    manifests = []
    for row in rows:
        annotations = {}
        if int(row["num_gpu"]):
            annotations = {"alibabacloud.com/gpu-milli": str(min(int(row["gpu_milli"]), 1000)),
                           "alibabacloud.com/gpu-count": row["num_gpu"]}
            if row["gpu_spec"]:
                annotations["alibabacloud.com/gpu-card-model"] = row["gpu_spec"]
        manifests.append({"metadata": {"name": row["name"], "annotations": annotations},
                          "spec": {"containers": [{"name": "c", "resources": {"requests": {
                              "cpu": f"{row['cpu_milli']}m"}}}]}})
    typical = typical_pods(manifests)
    assert len(typical) == 35
    assert shapes(typical)[0] == (3152, 810, 1, "") and round(typical[0]["probability"], 4) == 0.1348
    assert (12500, 0, 0, "") in shapes(typical)[:6]
