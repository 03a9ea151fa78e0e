"""scheduler_perf for kschedfw: run upstream's scheduler benchmark workloads
(``test/integration/scheduler_perf`` ``performance-config.yaml`` test cases and their templates) on
the embedded cluster and measure scheduling throughput.

- :mod:`benchmarks.perf.workload`: read test cases, unroll a workload into ops, build objects;
- :mod:`benchmarks.perf.runner`: run the ops on a fresh cluster + scheduler and measure.

``benchmarks/scheduler_perf.py`` is the command-line front end.
"""

from benchmarks.perf.runner import (ConfigProblem, Measurement, RunOptions, WorkloadResult,
                                    WorkloadRunner, build_config, run_workload,
                                    upstream_sampled_average)
from benchmarks.perf.workload import (TestCase, Workload, WorkloadError, default_workload,
                                      find_test_case, load_test_cases, render_template, unroll)

__all__ = [
    "TestCase", "Workload", "WorkloadError", "load_test_cases", "find_test_case", "unroll",
    "default_workload", "render_template", "RunOptions", "Measurement", "WorkloadResult",
    "WorkloadRunner", "run_workload", "build_config", "ConfigProblem", "upstream_sampled_average",
]
