"""Builders shared by the DefaultPreemption tests (the upstream ``st.MakePod()`` / ``tf`` helpers).

No tests here. Pods, nodes and PDBs are built as manifests and parsed, like real input.
"""

from __future__ import annotations

import datetime as dt
from typing import Any, Iterable

from kschedfw import hookimpl
from kschedfw import testing as kit
from kschedfw.cache.snapshot import Snapshot
from kschedfw.cluster.memory import MemoryCluster
from kschedfw.fwk.cycle_state import CycleState
from kschedfw.framework.handle import Handle
from kschedfw.fwk.status import Code, Status
from kschedfw.fwk.types import NodeToStatus
from kschedfw.plugins.defaultpreemption import DefaultPreemption
from kschedfw.queue.nominator import Nominator
from kschedfw.testing import framework_for

NEG, LOW, MID, HIGH, VERY_HIGH = -100, 0, 100, 1000, 10000

SMALL = {"cpu": "100m", "memory": "100"}
MEDIUM = {"cpu": "200m", "memory": "200"}
LARGE = {"cpu": "300m", "memory": "300"}
VERY_LARGE = {"cpu": "500m", "memory": "500"}
ONE_POD = {"pods": "1"}

#: upstream's ErrReasonFake
ERR_REASON_FAKE = "Nodes failed the fake plugin"


def epoch(n: int) -> str:
    """Upstream ``epochTimeN`` (n units after the Unix epoch); seconds here, as datetimes are
    microsecond-precise."""
    return (dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc) + dt.timedelta(seconds=n)).strftime(
        "%Y-%m-%dT%H:%M:%SZ")


def exists(key: str) -> dict:
    return {"matchExpressions": [{"key": key, "operator": "Exists"}]}


def make_pod(name: str, *, uid: str | None = None, ns: str = "default", node: str = "",
             priority: int | None = None, req: dict | None = None, labels: dict | None = None,
             start: str | None = None, policy: str | None = None, nominated: str = "",
             terminating: bool = False, conditions: Iterable[tuple[str, str, str]] = (),
             spread: Iterable[tuple[int, str]] = (), spread_selector: dict | None = None,
             anti_affinity_exists: tuple[str, str] | None = None, containers: int | None = None,
             scheduler: str | None = None, grace: int | None = None) -> Any:
    """Upstream ``st.MakePod()`` as these tests use it: uid = name, one ``pause`` container with
    ``req``, or ``containers`` request-less ones, or none."""
    if req is not None:
        pod_containers = [kit.container("pause", requests=req)]
    else:
        pod_containers = [kit.container(f"container{i + 1}") for i in range(containers or 0)]
    affinity = None
    if anti_affinity_exists is not None:
        key, topology = anti_affinity_exists
        affinity = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            kit.pod_affinity_term(topology, exists(key))]}}
    extra = {} if grace is None else {"terminationGracePeriodSeconds": grace}
    return kit.make_pod(
        name, uid=uid or name, namespace=ns, node_name=node, priority=priority, labels=labels,
        start_time=start, preemption_policy=policy, nominated_node_name=nominated, terminating=terminating,
        conditions=[{"type": t, "status": s, "reason": r} for t, s, r in conditions],
        topology_spread_constraints=[kit.spread_constraint(skew, key, "DoNotSchedule", spread_selector or exists("foo"))
                                     for skew, key in spread],
        affinity=affinity, containers=pod_containers, scheduler_name=scheduler or "default-scheduler", **extra)


def make_node(name: str, capacity: dict | None = None, labels: dict | None = None) -> Any:
    """Upstream ``st.MakeNode().Capacity(...)``: pods default to 32, no hostname label."""
    return kit.make_node(name, capacity={"pods": "32", **(capacity or {})}, labels=labels, hostname_label=False)


def topology_node(spec: str, capacity: dict | None = None) -> Any:
    """``"node-a/zone1"`` -> node ``node-a`` labelled hostname=node-a, zone=zone1 (upstream)."""
    parts = spec.split("/")
    labels = dict(zip(("hostname", "zone", "region"), parts))
    return make_node(parts[0], capacity, labels)


def make_pdb(name: str = "pdb", *, ns: str = "default", match_labels: dict | None = None,
             allowed: int = 0, disrupted: Iterable[str] = (), selector: dict | None = None) -> Any:
    return kit.make_pdb(name, namespace=ns, match_labels=match_labels, selector=selector,
                        disruptions_allowed=allowed, disrupted_pods=disrupted)


# --------------------------------------------------------------------------- fake plugins (tf.*)

class FakeFilter:
    """``tf.FakeFilterPlugin``: counts Filter calls, fails nodes listed in ``failed``."""

    name = "FakeFilter"

    def __init__(self, args: Any = None, handle: Any = None) -> None:
        self.num_filter_called = 0
        self.failed: dict[str, Code] = {}

    @hookimpl
    def filter(self, state, pod, node_info):
        self.num_filter_called += 1
        code = self.failed.get(node_info.name, Code.Success)
        if code is Code.Success:
            return None
        return Status(code, (f"injecting failure for pod {pod.name}",))


class FalseFilter:
    name = "FalseFilter"

    def __init__(self, args: Any = None, handle: Any = None) -> None:
        pass

    @hookimpl
    def filter(self, state, pod, node_info):
        return Status.unschedulable(ERR_REASON_FAKE)


class TrueFilter:
    name = "TrueFilter"

    def __init__(self, args: Any = None, handle: Any = None) -> None:
        pass

    @hookimpl
    def filter(self, state, pod, node_info):
        return None


class MatchFilter:
    """Fits only the node named like the pod."""

    name = "MatchFilter"

    def __init__(self, args: Any = None, handle: Any = None) -> None:
        pass

    @hookimpl
    def filter(self, state, pod, node_info):
        return None if pod.name == node_info.name else Status.unschedulable(ERR_REASON_FAKE)


class ErrorExtensionPlugin:
    """Upstream's ``TestPlugin``: AddPod/RemovePod fail on nodes labelled ``error=true``."""

    name = "test-plugin"

    def __init__(self, args: Any = None, handle: Any = None) -> None:
        pass

    @hookimpl
    def pre_filter(self, state, pod, nodes):
        return None, None

    @hookimpl
    def pre_filter_add_pod(self, state, pod_to_schedule, pod_to_add, node_info):
        if node_info.node.labels.get("error") == "true":
            return Status.as_status(f"failed to add pod: {pod_to_schedule.name}")
        return None

    @hookimpl
    def pre_filter_remove_pod(self, state, pod_to_schedule, pod_to_remove, node_info):
        if node_info.node.labels.get("error") == "true":
            return Status.as_status(f"failed to remove pod: {pod_to_schedule.name}")
        return None


# --------------------------------------------------------------------------- environment

class Env:
    """A cluster, a snapshot of it, a framework with the given filter plugins and the plugin."""

    def __init__(self, nodes: list, pods: list, *, plugins: list[type], preemptors: Iterable = (),
                 pdbs: Iterable = (), args: dict | None = None, features: dict | None = None,
                 scheduler_name: str = "default-scheduler") -> None:
        self.cluster = MemoryCluster(admission_plugins=())  # a fake client, as in the upstream tests
        for n in nodes:
            self.cluster.create(n)
        self.pods = [self.cluster.create(p) for p in pods]
        self.preemptors = [self.cluster.create(p) for p in preemptors]
        for pdb in pdbs:
            self.cluster.create(pdb)
        self.nodes = nodes
        self.nominator = Nominator()
        self.framework = framework_for(plugins, handle=Handle.factory(
            backend=self.cluster, snapshot=Snapshot.from_objects(nodes, self.pods), nominator=self.nominator,
            waiting_pods={}), scheduler_name=scheduler_name)
        self.handle = self.framework.handle
        self.plugin = DefaultPreemption(args, self.handle, features=features)

    def refresh_snapshot(self) -> None:
        live = [p for p in self.cluster.list("Pod") if p.node_name]
        self.handle.snapshot = Snapshot.from_objects(self.nodes, live)

    def node_infos(self, sort: bool = True) -> list:
        infos = list(self.handle.snapshot.node_infos())
        return sorted(infos, key=lambda ni: ni.name) if sort else infos

    def pre_filtered_state(self, pod) -> CycleState:
        state = CycleState()
        _, status, _ = self.framework.run_pre_filter_plugins(state, pod, self.handle.snapshot.node_infos())
        assert status is None or status.is_success(), status
        return state

    def pod(self, name: str, ns: str = "default"):
        return self.cluster.get("Pod", name, ns)


def all_unschedulable(names: Iterable[str]) -> NodeToStatus:
    return NodeToStatus({n: Status.unschedulable() for n in names})


def victims_by_node(candidates) -> dict[str, tuple[list[str], int]]:
    """candidate node -> (sorted victim names, PDB violations), as upstream's tests compare."""
    return {c.name: (sorted(p.name for p in c.victims.pods), c.victims.num_pdb_violations)
            for c in candidates}
