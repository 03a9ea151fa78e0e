"""kschedfw's side: one pod's scheduling attempts, in-process, on the state upstream saw.

The state (everything the API server held just before the pod was created) and the pod as the
server stored it (admission filled its priority and overhead) are loaded into the embedded
cluster, and the simulation runs until that pod is decided: bound, unschedulable, or, after a
preemption, its retry. The attempts come from the same recorder ``simulate --explain -o json``
uses, so no scoring is re-implemented here."""

from __future__ import annotations

from typing import Any

import attrs

from kschedfw.api.accessors import raw_of
from kschedfw.config.expand import SchedulerConfig
from kschedfw.explain import DecisionLog
from kschedfw.fwk.features import FeatureGates
from kschedfw.framework.registry import Registry
from kschedfw.simulation import Simulation

from tests.differential.apiserver import allocated_devices, claim_names
from tests.differential.decision import Attempt

#: results of an attempt that placed the pod
_PLACED = ("Scheduled", "Assumed", "Waiting")


def attempts(config: SchedulerConfig, registry: Registry, gates: FeatureGates, state: list[Any],
             pod: Any, horizon: float | None = None) -> list[Attempt]:
    """``pod``'s attempts on ``state`` (parsed objects, the pod last); with ``horizon``, only
    those within that many simulated seconds of the first."""
    simulation = Simulation(config, registry, [*state, pod], seed=0, feature_gates=gates)
    log = DecisionLog(simulation.scheduler, [pod.key]).attach()
    result = simulation.run()
    if result.rejected:  # the state is what the API server accepted: a refusal is kschedfw's fault
        raise AssertionError(f"the embedded cluster refused what the API server holds: {result.rejected}")
    (explained,) = log.explain(result, [pod.key])
    out = []
    victims_seen: set[str] = set()
    explained_attempts = explained["attempts"]
    if horizon is not None and explained_attempts:
        first = explained_attempts[0]["time"]
        explained_attempts = [a for a in explained_attempts if a["time"] - first < horizon]
    for a in explained_attempts:
        placed = a["result"] in _PLACED
        # both attempts of a preemption by victims of 0 s grace share one simulated instant, and
        # the recorder joins victims to attempts by time: keep them on the nominating attempt
        victims = tuple(sorted(v["pod"] for v in a.get("victims", ()) if a.get("nominatedNode")
                               and v["pod"] not in victims_seen))
        victims_seen.update(victims)
        out.append(Attempt(
            feasible=a["feasible"] if placed else 0,
            scores={p: {n: s["weighted"] for n, s in nodes.items()} for p, nodes in a.get("scores", {}).items()},
            totals={n: e["total"] for n, e in a.get("nodes", {}).items() if e.get("total") is not None},
            chosen=(a.get("node") or a.get("chosen") or "") if placed else "",
            message="" if placed else a.get("message", ""),
            nominated=a.get("nominatedNode", ""),
            victims=victims))
    if out and out[-1].chosen:
        out[-1] = attrs.evolve(out[-1], devices=_devices(result.cluster, pod))
    return out


@attrs.frozen
class GroupOutcome:
    """What became of one PodGroup's pods, from either scheduler."""

    #: pod name -> bound node ("" when not bound)
    nodes: dict[str, str]
    #: the group's PodGroupScheduled condition as :func:`first_outcome` picks it: (status,
    #: reason, message); empty when none was written
    condition: tuple[str, ...]
    #: pods (namespace/name) of the state that are gone or terminating afterwards, sorted
    victims: tuple[str, ...]


def group_outcome(config: SchedulerConfig, registry: Registry, gates: FeatureGates, state: list[Any],
                  pods: list[Any], group: Any) -> GroupOutcome:
    """The group's pods and its PodGroup added to ``state`` (pods first, as the harness creates
    them), played until nothing more happens."""
    simulation = Simulation(config, registry, [*state, *pods, group], seed=0, feature_gates=gates)
    written: list[tuple[str, ...]] = []
    cluster = simulation.cluster
    patch = cluster.patch_pod_group_condition

    def recorded(pod_group: Any, condition: Any) -> None:
        if pod_group.name == group.name and pod_group.namespace == group.namespace:
            written.append((condition.status, condition.reason, condition.message))
        patch(pod_group, condition)

    cluster.patch_pod_group_condition = recorded  # type: ignore[method-assign]
    result = simulation.run()
    if result.rejected:
        raise AssertionError(f"the embedded cluster refused what the API server holds: {result.rejected}")
    cluster = result.cluster
    nodes = {}
    for pod in pods:
        placed = cluster.get("Pod", pod.name, pod.namespace)
        nodes[pod.name] = placed.node_name if placed is not None and placed.node_name else ""
    before = {p.key for p in state if type(p).__name__ == "Pod"}
    after = {p.key for p in cluster.list("Pod") if p.deletion_timestamp is None}
    return GroupOutcome(nodes=nodes, condition=first_outcome(written), victims=tuple(sorted(before - after)))


def first_outcome(written: list[tuple[str, ...]]) -> tuple[str, ...]:
    """Of the PodGroupScheduled conditions a scheduler wrote for a group, in order, the one
    compared: the first True (the group scheduled, maybe after its preemption), else the first
    one (its first cycle's failure). Not the last: kube-scheduler's next cycle for pods left
    over can write False after True (its informer had not seen the True yet), and how many such
    cycles ran before the harness looked is a matter of timing."""
    return next((c for c in written if c and c[0] == "True"), written[0] if written else ())


def _devices(cluster: Any, pod: Any) -> tuple[str, ...]:
    """The devices the embedded cluster's claims of ``pod`` hold after the run."""
    placed = cluster.get("Pod", pod.name, pod.namespace)
    if placed is None or not placed.resource_claims:
        return ()
    claims = (cluster.get("ResourceClaim", name, pod.namespace) for name in claim_names(raw_of(placed)))
    return allocated_devices(raw_of(c) for c in claims if c is not None)
