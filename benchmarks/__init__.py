"""Benchmarks and the scheduler_perf harness (``benchmarks.perf``): kept out of the kschedfw wheel."""
