"""One run of the FGD paper's experiment, as its simulator does it.

The order of operations and every random draw follow the simulator's ``Simulate``: the pods are
sorted by name, then ``Seed(seed)``, one ``Int()`` (the simulator logs one), ``Shuffle``; pods
are resampled from the name-sorted original trace and appended until the GPU ask reaches 130% of
capacity (or removed at random while it exceeds that); the nodes, sorted by name, get a
``%04d-`` prefix from ``Perm``, which decides every score tie (the scheduler takes the smallest
name). Go's generator is replayed exactly (:mod:`.gorand`), except that the simulator's informers
also draw from it just before ``Perm`` (a varying number of times); the port draws ``Perm`` right
after the tuning instead. Then every pod gets one scheduling attempt, in arrival order.
"""

from __future__ import annotations

from typing import Any, Callable, Iterable

import attrs
import yaml

from kschedfw_gpushare.experiment.gorand import GoRand
from kschedfw_gpushare.experiment.trace import GPU_COUNT, GPU_MILLI

#: The paper inflates every workload to this multiple of the cluster's GPU capacity.
TUNE_RATIO = 1.3

OPEN_GPU_SHARE = "Open-Gpu-Share"


@attrs.frozen
class Policy:
    """A scheduling policy of the paper: one Score plugin at weight 1000, how Open-Gpu-Share picks
    devices in the chosen node, and the arguments the simulator's run script passes."""

    label: str  # as in the result CSV's sc_policy column
    plugin: str
    gpu_sel_method: str
    args: dict[str, Any] = attrs.field(factory=dict)
    pre_score: bool = False  # the run script enables the plugin's PreScore too
    seeded: bool = False  # the plugin draws random numbers: it gets the run's seed
    typical: bool = False  # the plugin needs the typical pods of the trace


POLICIES: dict[str, Policy] = {p.label.split("-", 1)[1]: p for p in (
    Policy("01-Random", "RandomScore", "random", pre_score=True, seeded=True),
    Policy("02-DotProd", "DotProductScore", "best", {"dimExtMethod": "merge", "normMethod": "max"}),
    Policy("03-GpuClustering", "GpuClusteringScore", "best"),
    Policy("04-GpuPacking", "GpuPackingScore", "best"),
    Policy("05-BestFit", "BestFitScore", "best"),
    Policy("06-FGD", "FGDScore", "FGDScore", {"dimExtMethod": "share", "normMethod": "max"}, typical=True),
)}


def policy_named(name: str) -> Policy:
    """A policy by its short name (``FGD``) or its CSV label (``06-FGD``)."""
    for short, policy in POLICIES.items():
        if name in (short, policy.label):
            return policy
    raise KeyError(f"unknown policy {name!r}: one of {', '.join(POLICIES)}")


# ---------------------------------------------------------------------------- arrival sequence
def gpu_ask(pod: dict[str, Any]) -> tuple[int, int]:
    """(milli per GPU, GPU count) from the trace's annotations; (0, 0) for a CPU-only pod."""
    annotations = pod.get("metadata", {}).get("annotations") or {}
    milli = int(annotations.get(GPU_MILLI, 0) or 0)
    count = int(annotations.get(GPU_COUNT, 0) or 0)
    return milli, count


def total_gpu_milli(pod: dict[str, Any]) -> int:
    milli, count = gpu_ask(pod)
    return milli * count


def node_gpu_milli(node: dict[str, Any]) -> int:
    capacity = node.get("status", {}).get("capacity") or {}
    return int(capacity.get(GPU_MILLI, 0) or 0)


def _by_name(items: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    return sorted(items, key=lambda o: o["metadata"]["name"].encode())  # Go compares bytes


def _renamed(pod: dict[str, Any], name: str) -> dict[str, Any]:
    clone = dict(pod)
    clone["metadata"] = {**pod["metadata"], "name": name}
    return clone


def tune(pods: list[dict[str, Any]], originals: list[dict[str, Any]], capacity_milli: int,
         rng: GoRand, ratio: float = TUNE_RATIO) -> list[dict[str, Any]]:
    """Inflate (or deflate) ``pods`` to ``ratio`` × the cluster's GPU milli, as the simulator does.

    Up: draw a pod of ``originals`` (the name-sorted trace), stop at the first whose *per-GPU*
    milli would take the total past the target (that draw is made), else append a clone named
    ``<name>-tuned-<i>`` at the end (the total grows by its whole ask, so multi-GPU pods may
    overshoot). Down: remove pods at random positions until the total is at most the target.
    """
    total = sum(total_gpu_milli(p) for p in pods)
    target = ratio * capacity_milli
    pods = list(pods)
    if ratio <= 0 or float(total) == target:
        return pods
    if total > target:
        while total > target:
            removed = pods.pop(rng.intn(len(pods)))
            total -= total_gpu_milli(removed)
        return pods
    i = 0
    while True:
        drawn = originals[rng.intn(len(originals))]
        if float(total + gpu_ask(drawn)[0]) > target:
            return pods
        total += total_gpu_milli(drawn)
        pods.append(_renamed(drawn, f"{drawn['metadata']['name']}-tuned-{i}"))
        i += 1


@attrs.frozen
class Arrivals:
    """What one seed decides before scheduling: the pods in arrival order and the nodes renamed."""

    pods: list[dict[str, Any]]
    nodes: list[dict[str, Any]]


def arrivals(pods: list[dict[str, Any]], nodes: list[dict[str, Any]], seed: int,
             ratio: float = TUNE_RATIO, tie_draws: int = 0) -> Arrivals:
    """The simulator's draws for ``seed``, in its order (see the module docstring);
    ``tie_draws``: values drawn and dropped before ``Perm``, standing in for the draws the
    simulator's informers make there (a number no run records), so that one seed can be run
    under several of the node tie orders the simulator may have had."""
    originals = _by_name(pods)
    rng = GoRand(seed)
    rng.int_()  # the simulator evaluates one Int() for a debug log line
    shuffled = rng.shuffled(originals)
    capacity = sum(node_gpu_milli(n) for n in nodes)
    arrived = tune(shuffled, originals, capacity, rng, ratio)
    for _ in range(tie_draws):
        rng.int63()
    ordered_nodes = _by_name(nodes)
    perm = rng.perm(len(ordered_nodes))
    renamed = []
    for prefix, node in zip(perm, ordered_nodes):
        renamed.append(_renamed(node, "%04d-" % prefix + node["metadata"]["name"]))
    return Arrivals(arrived, renamed)


# ---------------------------------------------------------------------------- configuration
def scheduler_config(policy: Policy, seed: int, typical_pods: list[dict[str, Any]] | None = None
                     ) -> dict[str, Any]:
    """The KubeSchedulerConfiguration of a run: every node scored, the default filters plus
    Open-Gpu-Share (at every point it extends: Filter, Reserve, PreBind), every default Score
    plugin off and the policy's plugin alone at weight 1000.

    Three changes make the run faster without changing where any pod goes. Open-Gpu-Share
    filters first (naming it under ``filter`` too puts it before the defaults): a node must pass
    every filter, so the order only decides which plugin a rejection names, and Open-Gpu-Share
    rejects most nodes of a filling cluster for the least work. The default PreScore plugins
    only prepare for their Score, which is off. DefaultPreemption is off: every pod of the trace
    has priority 0, so it can never find a victim, and with one attempt per pod it would
    search every node for each pod that does not fit."""
    pre_score: dict[str, Any] = {"disabled": [{"name": "*"}]}
    if policy.pre_score:
        pre_score["enabled"] = [{"name": policy.plugin}]
    gpu_share_args: dict[str, Any] = {"gpuSelMethod": policy.gpu_sel_method}
    policy_args = dict(policy.args)
    if policy.gpu_sel_method == "random":
        gpu_share_args["seed"] = seed
    if policy.seeded:
        policy_args["seed"] = seed
    if policy.typical:
        if typical_pods is None:
            raise ValueError(f"{policy.label} needs the typical pods of the trace")
        policy_args["typicalPods"] = typical_pods
        gpu_share_args["typicalPods"] = typical_pods
    plugin_config = [{"name": OPEN_GPU_SHARE, "args": gpu_share_args}]
    if policy_args:
        plugin_config.append({"name": policy.plugin, "args": policy_args})
    return {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "percentageOfNodesToScore": 100,
        "profiles": [{
            "schedulerName": "default-scheduler",
            "plugins": {
                "multiPoint": {"enabled": [{"name": OPEN_GPU_SHARE}]},
                "filter": {"enabled": [{"name": OPEN_GPU_SHARE}]},
                "postFilter": {"disabled": [{"name": "DefaultPreemption"}]},
                "preScore": pre_score,
                "score": {"disabled": [{"name": "*"}], "enabled": [{"name": policy.plugin, "weight": 1000}]},
            },
            "pluginConfig": plugin_config,
        }],
    }


def registry() -> Any:
    """The installed plugins, with this package's own classes added (so a source checkout runs
    without being installed)."""
    from kschedfw.framework.registry import Registry
    return Registry.discover(plugin_classes())


def plugin_classes() -> list[type]:
    import kschedfw_gpushare as package
    return [getattr(package, name) for name in package.__all__ if isinstance(getattr(package, name), type)]


def load_scheduler_config(config: dict[str, Any], reg: Any) -> Any:
    from kschedfw.config.validate import load_config_text
    loaded, diagnostics = load_config_text(yaml.safe_dump(config, sort_keys=False), "<gpushare-experiment>", reg)
    if loaded is None:
        raise ValueError("the experiment's configuration is not valid:\n"
                         + "\n".join(d.render() for d in diagnostics if d.is_error))
    return loaded


# ---------------------------------------------------------------------------- one run
@attrs.frozen
class RunOutcome:
    """Each arrived pod, in arrival order: its whole GPU ask and whether it was bound."""

    asks: list[int]
    bound: list[bool]
    nodes: int


def simulate(arrived: Arrivals, policy: Policy, seed: int, typical_pods: list[dict[str, Any]] | None,
             reg: Any = None, parse: Callable[[dict[str, Any]], Any] | None = None) -> RunOutcome:
    """Schedule ``arrived`` once through kschedfw's embedded cluster: one attempt per pod
    (``once``), score ties to the smallest node name (``ties="name"``)."""
    from kschedfw.api.load import parse_object
    from kschedfw.simulation import Simulation
    parse = parse or parse_object
    reg = reg if reg is not None else registry()
    config = load_scheduler_config(scheduler_config(policy, seed, typical_pods), reg)
    objects = [parse(n) for n in arrived.nodes] + [parse(p) for p in arrived.pods]
    result = Simulation(config, reg, objects, seed=seed, once=True, ties="name").run()
    status = {o.key: o.status for o in result.pods}
    bound = [status.get(f"{p['metadata'].get('namespace', 'default')}/{p['metadata']['name']}") == "Bound"
             for p in arrived.pods]
    return RunOutcome([total_gpu_milli(p) for p in arrived.pods], bound, len(arrived.nodes))
