"""Node GPU fragmentation against a target workload (the FGD paper's F_n(M); the simulator's
``NodeGpuShareFragAmount`` summed without its "satisfied" part).

For each typical pod m (probability p): a CPU-only task, or one the node's model does not
accept, finds all the node's idle GPU milli unusable; one the node can host (enough devices with
``m.milli`` idle, enough cpu) finds unusable only the devices with less than ``m.milli`` idle;
one it cannot host finds all of it unusable. F = sum of p times the unusable milli. The sums
follow the simulator's order (per category, then over categories), so the floats are its floats.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any, Iterable, Mapping, NamedTuple, Sequence

from kschedfw_gpushare.resources import PodShape, model_matches

# the simulator's categories, in its order; F sums all but Q3 (the satisfied part)
_Q1_LACK_BOTH, _Q2_LACK_GPU, _Q3_SATISFIED, _Q4_LACK_CPU, _XL_SATISFIED, _XR_LACK_CPU, _NO_ACCESS = range(7)

_MEMO_LIMIT = 1_000_000


class TypicalPod(NamedTuple):
    shape: PodShape
    probability: float


def typical_pod_list(items: Iterable[Mapping[str, Any] | TypicalPod]) -> tuple[TypicalPod, ...]:
    """Typical pods from the args' dicts (``cpuMilli``, ``gpuMilli``, ``gpuNumber``, ``gpuType``,
    ``probability``)."""
    out = []
    for item in items:
        if isinstance(item, TypicalPod):
            out.append(item)
            continue
        shape = PodShape(int(item.get("cpuMilli", 0)), int(item.get("gpuMilli", 0)), int(item.get("gpuNumber", 0)),
                         str(item.get("gpuType", "") or ""))
        out.append(TypicalPod(shape, float(item["probability"])))
    return tuple(out)


def _can_host_gpus(idle: Sequence[int], milli: int, count: int) -> bool:
    need = count
    for g in idle:
        if g >= milli:
            need -= 1
            if need <= 0:
                return True
    return False


def node_frag(cpu_left: int, idle: Sequence[int], model: str, typical: Sequence[TypicalPod]) -> float:
    """F_n(M) in milli, computed afresh."""
    data = [0.0] * 7
    total = sum(idle)
    for (cpu, milli, count, pod_model), p in typical:
        if p < 0 or p > 1:
            continue
        if milli == 0:
            data[_XL_SATISFIED if cpu_left >= cpu else _XR_LACK_CPU] += p * total
        elif not model_matches(model, pod_model):
            data[_NO_ACCESS] += p * total
        elif _can_host_gpus(idle, milli, count):
            if cpu_left >= cpu:
                unusable = 0
                for g in idle:
                    if g < milli:
                        unusable += g
                data[_Q2_LACK_GPU] += p * unusable
                data[_Q3_SATISFIED] += p * (total - unusable)
            else:
                data[_Q4_LACK_CPU] += p * total
        else:
            data[_Q2_LACK_GPU if cpu_left >= cpu else _Q1_LACK_BOTH] += p * total
    out = 0.0
    for i in (_Q1_LACK_BOTH, _Q2_LACK_GPU, _Q4_LACK_CPU, _XL_SATISFIED, _XR_LACK_CPU, _NO_ACCESS):
        out += data[i]
    return out


class Workload:
    """A target workload M with F memoised on (cpu left, idle multiset, model): F reads nothing
    else, and many nodes share a state (every empty node of a type)."""

    def __init__(self, typical: Iterable[Mapping[str, Any] | TypicalPod]) -> None:
        self.typical = typical_pod_list(typical)
        self._memo: dict[tuple[int, tuple[int, ...], str], float] = {}

    def frag(self, cpu_left: int, idle: Sequence[int], model: str) -> float:
        key = (cpu_left, tuple(sorted(idle)), model)
        value = self._memo.get(key)
        if value is None:
            if len(self._memo) >= _MEMO_LIMIT:
                self._memo.clear()
            value = self._memo[key] = node_frag(cpu_left, idle, model, self.typical)
        return value


@lru_cache(maxsize=16)
def shared_workload(typical: tuple[TypicalPod, ...]) -> Workload:
    """One Workload (and memo) per distinct list of typical pods, shared by the plugins."""
    return Workload(typical)
