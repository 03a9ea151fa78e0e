"""Time (and optionally profile) the GPU plugins on the Alibaba GPU trace: the 1,213 GPU nodes
and a trace's pods in file order, one policy per run, through kschedfw's simulator.

    python profile_cycle.py --traces DIR [--workload default] [--policy FGD] [--pods N] [--profile]

DIR holds ``csv/openb_pod_list_<workload>.csv`` and ``node_yaml/openb_node_list_gpu_node.yaml``
(the layout of alibaba/clusterdata's ``cluster-trace-gpu-v2023``). Prints the wall time per pod.
"""

from __future__ import annotations

import argparse
import cProfile
import csv
import functools
import pstats
import time
from pathlib import Path
from typing import Any, Callable

import yaml

from kschedfw.api import parse_object
from kschedfw.config.validate import load_config_text
from kschedfw.framework.registry import Registry
from kschedfw.simulation import Simulation

import kschedfw_gpushare
from kschedfw_gpushare.resources import GPU_CARD_MODEL, GPU_COUNT, GPU_MILLI
from kschedfw_gpushare.typical import typical_pods

POLICIES = {
    "Random": ("RandomScore", "random", {"seed": 42}),
    "DotProd": ("DotProductScore", "best", {"dimExtMethod": "merge", "normMethod": "max"}),
    "GpuClustering": ("GpuClusteringScore", "best", {}),
    "GpuPacking": ("GpuPackingScore", "best", {}),
    "BestFit": ("BestFitScore", "best", {}),
    "FGD": ("FGDScore", "FGDScore", {}),
}


def pod_manifest(row: dict[str, str]) -> dict:
    """A trace row as the simulator's pod_csv_to_yaml.py writes it."""
    cpu, mem = f"{row['cpu_milli']}m", f"{row['memory_mib']}Mi"
    meta: dict = {"name": row["name"], "namespace": "default"}
    num_gpu, milli = int(row["num_gpu"]), int(row["gpu_milli"])
    if num_gpu != 0:
        per_gpu = milli if 0 < milli <= 1000 else (1000 if milli > 1000 else 0)
        annotations = {GPU_MILLI: str(per_gpu), GPU_COUNT: str(num_gpu)}
        spec = "|".join(t for t in (row.get("gpu_spec") or "").split("|") if t)
        if spec:
            annotations[GPU_CARD_MODEL] = spec
        meta["annotations"] = annotations
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta,
            "spec": {"containers": [{"name": "main", "image": "pause",
                                     "resources": {"requests": {"cpu": cpu, "memory": mem},
                                                   "limits": {"cpu": cpu, "memory": mem}}}]}}


def config(policy: str, typical: list[dict]) -> str:
    plugin, sel, extra = POLICIES[policy]
    args = dict(extra)
    if plugin == "FGDScore":
        args["typicalPods"] = typical
    share_args = {"gpuSelMethod": sel, "seed": 42, "typicalPods": typical if sel == "FGDScore" else []}
    return yaml.safe_dump({
        "apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
        "percentageOfNodesToScore": 100,
        "profiles": [{"schedulerName": "default-scheduler",
                      # as the experiment runs it: Open-Gpu-Share filters first, no preemption (every
                      # pod has priority 0), no default PreScore (their Score is off)
                      "plugins": {"multiPoint": {"enabled": [{"name": "Open-Gpu-Share"}]},
                                  "filter": {"enabled": [{"name": "Open-Gpu-Share"}]},
                                  "postFilter": {"disabled": [{"name": "DefaultPreemption"}]},
                                  "preScore": {"disabled": [{"name": "*"}],
                                               "enabled": [{"name": plugin}] if plugin == "RandomScore" else []},
                                  "score": {"disabled": [{"name": "*"}], "enabled": [{"name": plugin, "weight": 1000}]}},
                      "pluginConfig": [{"name": "Open-Gpu-Share", "args": share_args},
                                       {"name": plugin, "args": args}]}]})


PLUGIN_SECONDS: dict[str, float] = {}
HOT_METHODS = ("filter_nodes", "score_nodes", "pre_score", "normalize_score_values", "reserve", "pre_bind",
               "pre_bind_pre_flight", "unreserve")


def _timed(label: str, method: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(method)
    def timed(*args: Any, **kwargs: Any) -> Any:
        start = time.process_time()
        try:
            return method(*args, **kwargs)
        finally:
            PLUGIN_SECONDS[label] = PLUGIN_SECONDS.get(label, 0.0) + time.process_time() - start
    return timed


def time_plugins() -> None:
    """Count the CPU time of the GPU plugins' calls (the framework calls these forms)."""
    for name in kschedfw_gpushare.__all__:
        cls = getattr(kschedfw_gpushare, name)
        if not isinstance(cls, type):
            continue
        for method in HOT_METHODS:
            if method in vars(cls):
                setattr(cls, method, _timed(f"{cls.name}.{method}", vars(cls)[method]))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--traces", type=Path, required=True)
    ap.add_argument("--workload", default="default")
    ap.add_argument("--policy", default="FGD", choices=sorted(POLICIES))
    ap.add_argument("--pods", type=int, default=0, help="only the first N pods (0: all)")
    ap.add_argument("--profile", action="store_true", help="print the top of a cProfile")
    opts = ap.parse_args()
    with open(opts.traces / "csv" / f"openb_pod_list_{opts.workload}.csv", newline="") as f:
        manifests = [pod_manifest(row) for row in csv.DictReader(f)]
    typical = typical_pods(manifests)
    if opts.pods:
        manifests = manifests[:opts.pods]
    nodes = [d for d in yaml.safe_load_all((opts.traces / "node_yaml" / "openb_node_list_gpu_node.yaml").read_text())
             if d]
    objects = [parse_object(d) for d in nodes] + [parse_object(m) for m in manifests]
    registry = Registry.discover()
    cfg, diagnostics = load_config_text(config(opts.policy, typical), "<profile>", registry)
    if cfg is None:
        raise SystemExit("\n".join(str(d) for d in diagnostics))
    if not opts.profile:
        time_plugins()
    sim = Simulation(cfg, registry, objects, seed=42)
    profiler = cProfile.Profile() if opts.profile else None
    cpu_start = time.process_time()
    start = time.perf_counter()
    if profiler is not None:
        profiler.enable()
    result = sim.run()
    if profiler is not None:
        profiler.disable()
    elapsed = time.perf_counter() - start
    cpu = time.process_time() - cpu_start
    bound = sum(1 for p in result.pods if p.status == "Bound")
    print(f"{opts.policy} on {opts.workload}: {len(manifests)} pods on {len(nodes)} nodes, {bound} bound, "
          f"{elapsed:.2f} s wall, {cpu:.2f} s cpu, {1000 * cpu / max(len(manifests), 1):.3f} ms cpu/pod")
    for label, seconds in sorted(PLUGIN_SECONDS.items(), key=lambda kv: -kv[1]):
        print(f"  {label}: {1000 * seconds / max(len(manifests), 1):.3f} ms cpu/pod")
    if profiler is not None:
        pstats.Stats(profiler).sort_stats("cumulative").print_stats(35)


if __name__ == "__main__":
    main()
