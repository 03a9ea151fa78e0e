"""Node GPU fragmentation against a target workload (the FGD paper's F_n(M); the simulator's
``NodeGpuShareFragAmount`` summed without its "satisfied" part).

For each typical pod m (probability p): a CPU-only task, or one the node's model does not
accept, finds all the node's idle GPU milli unusable; one the node can host (enough devices with
``m.milli`` idle, enough cpu) finds unusable only the devices with less than ``m.milli`` idle;
one it cannot host finds all of it unusable. F = sum of p times the unusable milli. The sums
follow the simulator's order (per category, then over categories), so the floats are its floats.
"""

from __future__ import annotations

import bisect
import itertools
from functools import lru_cache
from typing import Any, Iterable, Mapping, NamedTuple, Sequence

from kschedfw_gpushare.resources import PodShape, model_matches

# the simulator's categories, in its order; F sums all but Q3 (the satisfied part)
_Q1_LACK_BOTH, _Q2_LACK_GPU, _Q3_SATISFIED, _Q4_LACK_CPU, _XL_SATISFIED, _XR_LACK_CPU, _NO_ACCESS = range(7)

_MEMO_LIMIT = 1_000_000
_SERIALS = itertools.count(1)


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
    """A target workload M with F memoised on (cpu band, idle multiset, model): F reads nothing
    else (:meth:`cpu_band`), and many nodes share a state (every empty node of a type)."""

    def __init__(self, typical: Iterable[Mapping[str, Any] | TypicalPod]) -> None:
        self.typical = typical_pod_list(typical)
        #: unique for the process's life, unlike id(): keys memos shared between workloads
        self.serial = next(_SERIALS)
        self._memo: dict[tuple[int, tuple[int, ...], str], float] = {}
        self._cpus = sorted({t.shape.cpu for t in self.typical})
        self._compiled: dict[str, tuple[tuple[int, int, int, float, int], ...]] = {}

    def cpu_band(self, cpu_left: int) -> int:
        """How many of the typical pods' cpu values ``cpu_left`` reaches: F reads cpu left only
        through ``cpu_left >= cpu``, so nodes in the same band (and with the same devices and
        model) have the same F."""
        return bisect.bisect_right(self._cpus, cpu_left)

    def frag(self, cpu_left: int, idle: Sequence[int], model: str) -> float:
        ordered = tuple(sorted(idle, reverse=True))
        key = (bisect.bisect_right(self._cpus, cpu_left), ordered, model)
        value = self._memo.get(key)
        if value is None:
            if len(self._memo) >= _MEMO_LIMIT:
                self._memo.clear()
            value = self._memo[key] = self._frag(cpu_left, ordered, model)
        return value

    def _compile(self, model: str) -> tuple[tuple[int, int, int, float, int], ...]:
        """The typical pods as (cpu, milli, count, p, kind) for nodes of ``model``: kind 0 is a
        CPU-only pod, 1 one the model cannot run, 2 one it can; out-of-range p dropped."""
        compiled = []
        for (cpu, milli, count, pod_model), p in self.typical:
            if p < 0 or p > 1:
                continue
            kind = 0 if milli == 0 else (2 if model_matches(model, pod_model) else 1)
            compiled.append((cpu, milli, count, p, kind))
        out = self._compiled[model] = tuple(compiled)
        return out

    def _frag(self, cpu_left: int, ordered: tuple[int, ...], model: str) -> float:
        """:func:`node_frag` on the idle milli sorted largest first, with the same float
        operations in the same order."""
        compiled = self._compiled.get(model) or self._compile(model)
        q1 = q2 = q4 = xl = xr = na = 0.0
        total = sum(ordered)
        n = len(ordered)
        for cpu, milli, count, p, kind in compiled:
            if kind == 0:
                if cpu_left >= cpu:
                    xl += p * total
                else:
                    xr += p * total
            elif kind == 1:
                na += p * total
            elif (ordered[count - 1] >= milli if 0 < count <= n else (count <= 0 and n > 0 and ordered[0] >= milli)):
                if cpu_left >= cpu:
                    unusable = 0
                    for g in ordered:
                        if g < milli:
                            unusable += g
                    q2 += p * unusable
                else:
                    q4 += p * total
            elif cpu_left >= cpu:
                q2 += p * total
            else:
                q1 += p * total
        out = 0.0
        out += q1
        out += q2
        out += q4
        out += xl
        out += xr
        out += na
        return out


@lru_cache(maxsize=16)
def shared_workload(typical: tuple[TypicalPod, ...]) -> Workload:
    """One Workload (and memo) per distinct list of typical pods, shared by the plugins."""
    return Workload(typical)
