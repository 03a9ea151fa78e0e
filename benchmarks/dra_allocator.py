"""Cost of the DRA structured-parameters allocator per node, and of the CEL engines it could use.

Filter calls the allocator once per node, so what counts is microseconds per node: here one or
two GPUs are allocated on nodes with one ResourceSlice of 8 GPUs each (class selector on the
driver, request selector on memory capacity). "cold" builds a new allocator from the API dicts
for every pod (slices parsed, selectors evaluated again); "warm" reuses the parsed slices and
their CEL results across pods, as a plugin that keeps them while the ResourceSlice is unchanged.

The CEL part evaluates one compiled selector per device with each candidate engine that is
installed (cel-expr-python, the one kschedfw uses; common-expression-language; cel-python).

    python benchmarks/dra_allocator.py --nodes 1000 --pods 20
"""

from __future__ import annotations

import argparse
import time
import timeit
from typing import Any, Callable

from kschedfw.api.node import Node
from kschedfw.plugins.dynamicresources.structured import AllocatedState, Allocator, Slice

DRIVER = "gpu.example.com"
CLASS_SELECTOR = f'device.driver == "{DRIVER}"'
REQUEST_SELECTOR = f'device.capacity["{DRIVER}"].memory.compareTo(quantity("40Gi")) >= 0'
PLAIN_SELECTOR = f'device.driver == "{DRIVER}" && device.attributes["{DRIVER}"].model == "a100"'


def gpu_slice(node: str) -> dict[str, Any]:
    devices = [{"name": f"gpu-{i}", "attributes": {"model": {"string": "a100"}, "index": {"int": i}},
                "capacity": {"memory": {"value": "80Gi"}}} for i in range(8)]
    return {"metadata": {"name": f"{node}-gpus"},
            "spec": {"driver": DRIVER, "nodeName": node, "pool": {"name": node, "generation": 1, "resourceSliceCount": 1},
                     "devices": devices}}


def gpu_claim(name: str, count: int) -> dict[str, Any]:
    return {"metadata": {"name": name, "namespace": "default"},
            "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {
                "deviceClassName": "gpu", "allocationMode": "ExactCount", "count": count,
                "selectors": [{"cel": {"expression": REQUEST_SELECTOR}}]}}]}}}


GPU_CLASS = {"metadata": {"name": "gpu"}, "spec": {"selectors": [{"cel": {"expression": CLASS_SELECTOR}}]}}


def allocator_us_per_node(nodes: int, pods: int, warm: bool) -> tuple[float, float]:
    """(wall, CPU) microseconds per node: CPU time is what to compare on a shared machine."""
    names = [f"node-{i}" for i in range(nodes)]
    node_objs = [Node(name=n) for n in names]
    raw = [gpu_slice(n) for n in names]
    prepared = [Slice(s) for s in raw]
    if warm:  # a first pod sees every device once: selectors evaluated, pools built
        first = Allocator([gpu_claim("warm-up", 1)], AllocatedState(), [GPU_CLASS], prepared)
        for node in node_objs:
            first.allocate(node)
    start, cpu_start = time.perf_counter(), time.process_time()
    for p in range(pods):
        claims = [gpu_claim(f"claim-{p}", 1 + p % 2)]
        allocator = Allocator(claims, AllocatedState(), [GPU_CLASS], prepared if warm else raw)
        for node in node_objs:
            assert allocator.allocate(node) is not None
    calls = nodes * pods
    return (time.perf_counter() - start) / calls * 1e6, (time.process_time() - cpu_start) / calls * 1e6


def one_node_us(count: int) -> float:
    """Best of 5: allocate ``count`` GPUs on one warm node, microseconds per call."""
    prepared = [Slice(gpu_slice("node-0"))]
    node = Node(name="node-0")
    allocator = Allocator([gpu_claim("claim", count)], AllocatedState(), [GPU_CLASS], prepared)
    allocator.allocate(node)
    return min(timeit.repeat(lambda: allocator.allocate(node), number=2000, repeat=5)) / 2000 * 1e6


def _time_per_call(fn: Callable[[], Any], calls: int) -> float:
    """CPU microseconds per call."""
    start = time.process_time()
    for _ in range(calls):
        fn()
    return (time.process_time() - start) / calls * 1e6


def cel_engines(calls: int) -> dict[str, float | str]:
    """µs per evaluation of PLAIN_SELECTOR (compiled once) for a device built per evaluation."""
    device = {"driver": DRIVER, "attributes": {DRIVER: {"model": "a100", "index": 3}}, "capacity": {}}
    out: dict[str, float | str] = {}
    from kschedfw.plugins.dynamicresources.cel import compile_expression, device_matches
    compiled = compile_expression(PLAIN_SELECTOR)
    quantity = compile_expression(REQUEST_SELECTOR)
    from kschedfw.plugins.dynamicresources.cel import device_data
    gpu = device_data(DRIVER, gpu_slice("n")["spec"]["devices"][0])
    out["cel-expr-python"] = _time_per_call(lambda: device_matches(compiled, device), calls)
    out["cel-expr-python, quantity selector"] = _time_per_call(lambda: device_matches(quantity, gpu), calls)
    try:
        import cel as cel_rust  # common-expression-language
        program = cel_rust.compile(PLAIN_SELECTOR)
        out["common-expression-language"] = _time_per_call(
            lambda: program.execute(cel_rust.Context({"device": device})), calls)
    except ImportError:
        out["common-expression-language"] = "not installed"
    try:
        import celpy
        env = celpy.Environment()
        prog = env.program(env.compile(PLAIN_SELECTOR))
        out["cel-python (celpy)"] = _time_per_call(
            lambda: prog.evaluate({"device": celpy.json_to_cel(device)}), max(calls // 20, 1))
    except ImportError:
        out["cel-python (celpy)"] = "not installed"
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=1000)
    parser.add_argument("--pods", type=int, default=20)
    parser.add_argument("--cel-calls", type=int, default=20000)
    args = parser.parse_args()
    for engine, value in cel_engines(args.cel_calls).items():
        print(f"CEL {engine}: " + (f"{value:.1f} µs CPU per evaluation" if isinstance(value, float) else value))
    for count in (1, 2):
        print(f"allocator, one warm node, {count} GPU(s) of 8: {one_node_us(count):.1f} µs per call (best of 5)")
    for warm in (False, True):
        wall, cpu = allocator_us_per_node(args.nodes, args.pods, warm)
        print(f"allocator, {'warm' if warm else 'cold'}: {cpu:.1f} µs CPU per node ({wall:.1f} wall) "
              f"({args.nodes} nodes x 8 GPUs, {args.pods} pods of 1 or 2 GPUs)")


if __name__ == "__main__":
    main()
