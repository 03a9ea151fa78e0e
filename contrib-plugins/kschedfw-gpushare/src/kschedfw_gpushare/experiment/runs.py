"""One experiment run as a picklable unit of work, for kschedfw's sweep executors.

A worker process loads each trace once (pods, nodes, typical pods) and keeps it for the next runs
it is given; what a run returns depends only on its (workload, policy, seed), never on the
worker or the executor.
"""

from __future__ import annotations

import functools
import time
from typing import Any

import attrs

from kschedfw_gpushare.experiment import metric, procedure, trace


@attrs.frozen(order=True)
class RunSpec:
    workload: str
    policy: str  # the CSV label, e.g. "06-FGD"
    seed: int
    traces: str = attrs.field(order=False)
    tie_draws: int = 0  # see procedure.arrivals; the paper's runs had an unknown number

    @property
    def key(self) -> tuple[str, str, int]:
        return (f"openb_pod_list_{self.workload}", self.policy, self.seed)


@attrs.frozen
class RunResult:
    row: list[str]  # the result file's row
    seconds: float  # wall time of the run (the trace is loaded once per process, not counted)
    pods: int  # pod events (arrived pods)
    bound: int


@attrs.frozen
class Workload:
    pods: list[dict[str, Any]]
    nodes: list[dict[str, Any]]
    typical_pods: list[dict[str, Any]]


@functools.lru_cache(maxsize=4)
def load_workload(traces: str, workload: str) -> Workload:
    from kschedfw_gpushare.typical import typical_pods
    pods = trace.load_pods(traces, workload)
    return Workload(pods, trace.load_nodes(traces), typical_pods(pods))


@functools.lru_cache(maxsize=1)
def _registry() -> Any:
    return procedure.registry()


def run(spec: RunSpec) -> RunResult:
    """The run's row of ``analysis_allo_discrete.csv``."""
    loaded = load_workload(spec.traces, spec.workload)
    policy = procedure.policy_named(spec.policy)
    start = time.perf_counter()
    arrived = procedure.arrivals(loaded.pods, loaded.nodes, spec.seed, tie_draws=spec.tie_draws)
    outcome = procedure.simulate(arrived, policy, spec.seed, loaded.typical_pods, _registry())
    gpus = metric.total_gpus(arrived.nodes)
    columns = metric.discrete_allocation(metric.allocation_events(outcome.asks, outcome.bound), gpus)
    row = metric.csv_row(spec.workload, policy.label, spec.seed, gpus, columns)
    return RunResult(row, time.perf_counter() - start, len(outcome.asks), sum(outcome.bound))
