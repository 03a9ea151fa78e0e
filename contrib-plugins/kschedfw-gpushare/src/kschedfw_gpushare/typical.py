"""The FGD target workload ("typical pods") from a trace's pods (the simulator's
``GetTypicalPods`` with the paper's settings: CPU-only pods included, every pod weighs 1, the
most popular shapes taken one at a time until they cover 95% of the pods).

Pods are keyed by (cpu, gpu milli, gpu count, raw card-model string); memory is not part of
the key. Shapes are ordered by count, most first; equal counts by the key, largest first. The
shape that reaches the threshold is included, then the kept probabilities are renormalised.
"""

from __future__ import annotations

from typing import Any, Iterable

from kschedfw_gpushare.resources import PodShape, shape_of

POPULARITY_THRESHOLD = 95


def typical_pods(pods: Iterable[Any], threshold: int = POPULARITY_THRESHOLD) -> list[dict[str, Any]]:
    """``[{cpuMilli, gpuMilli, gpuNumber, gpuType, probability}]`` for Pod objects or manifests,
    as the FGDScore and Open-Gpu-Share args take them."""
    counts: dict[PodShape, float] = {}
    total = 0.0
    for pod in pods:
        shape = shape_of(pod)
        counts[shape] = counts.get(shape, 0.0) + 1.0
        total += 1.0
    if not counts:
        return []
    ordered = sorted(counts.items(), key=lambda kv: (kv[1], kv[0]), reverse=True)
    expected = float(threshold) * total / 100.0
    kept: list[tuple[PodShape, float]] = []
    cumulative = 0.0
    while cumulative < expected and len(kept) < len(ordered):
        shape, count = ordered[len(kept)]
        cumulative += count
        kept.append((shape, count / total))
    if len(kept) < len(ordered):
        kept = [(shape, p / (cumulative / total)) for shape, p in kept]
    return [as_dict(shape, p) for shape, p in kept]


def as_dict(shape: PodShape, probability: float) -> dict[str, Any]:
    return {"cpuMilli": shape.cpu, "gpuMilli": shape.milli, "gpuNumber": shape.gpus, "gpuType": shape.model,
            "probability": probability}

