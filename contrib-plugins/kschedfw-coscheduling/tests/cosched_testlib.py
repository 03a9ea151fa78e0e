"""Builders for the Coscheduling tests: manifests as dicts, parsed by kschedfw's own api code, and a
small environment (embedded cluster, simulated clock, waiting pods) to call the plugin's hooks in."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from kschedfw.api import parse_object
from kschedfw.cache.snapshot import Snapshot
from kschedfw.clock import SimulatedClock
from kschedfw.cluster.memory import MemoryCluster
from kschedfw.fwk.cycle_state import CycleState
from kschedfw.framework.handle import Handle
from kschedfw.fwk.types import QueuedPodInfo
from kschedfw.framework.waiting_pods import WaitingPod
from kschedfw import testing as kit

from kschedfw_coscheduling import POD_GROUP_LABEL, Coscheduling

DATA = Path(__file__).parent / "data"


def make_node(name, cpu="4", pods="110", memory="16Gi"):
    return kit.make_node(name, cpu=cpu, pods=pods, memory=memory)


def make_pod(name, namespace="ns", group=None, node=None, priority=None, gates=None, cpu=None, uid=None):
    """A pod of PodGroup ``group`` (its label set) in namespace ``ns``."""
    return kit.make_pod(name, namespace=namespace, labels={POD_GROUP_LABEL: group} if group else {},
                        node_name=node or "", priority=priority, scheduling_gates=gates or (), cpu=cpu, uid=uid)


def pod_group_manifest(name, namespace="ns", min_member=None, min_resources=None, timeout=None,
                       created=None):
    """A PodGroup manifest; ``created`` is a datetime for metadata.creationTimestamp."""
    spec = {}
    if min_member is not None:
        spec["minMember"] = min_member
    if min_resources is not None:
        spec["minResources"] = dict(min_resources)
    if timeout is not None:
        spec["scheduleTimeoutSeconds"] = timeout
    meta = {"name": name, "namespace": namespace}
    if created is not None:
        meta["creationTimestamp"] = created.strftime("%Y-%m-%dT%H:%M:%SZ")
    return {"apiVersion": "scheduling.x-k8s.io/v1alpha1", "kind": "PodGroup", "metadata": meta, "spec": spec}


def make_pod_group(name, namespace="ns", **kwargs):
    return parse_object(pod_group_manifest(name, namespace, **kwargs))


def qpi(pod, initial=None):
    """A queue entry; ``initial`` is the initial attempt time in clock seconds."""
    return QueuedPodInfo(pod=pod, timestamp=initial or 0.0, initial_attempt_timestamp=initial)


class Env:
    """An embedded cluster with a simulated clock, and a Coscheduling plugin reading it."""

    def __init__(self, objects=(), nodes=(), args=None, unreserve_rejected=False):
        self.clock = SimulatedClock()
        self.cluster = MemoryCluster(self.clock)
        self.cluster.load([*nodes, *objects])
        pods = [o for o in objects if type(o).__name__ == "Pod"]
        self.waiting: dict[str, WaitingPod] = {}
        self.resolved: list[tuple[str, str]] = []  # (pod name, message) of waiting pods rejected
        self.handle = Handle(backend=self.cluster, snapshot=Snapshot.from_objects(nodes, pods),
                             waiting_pods=self.waiting)
        self.plugin = Coscheduling(args or {}, self.handle)
        #: run the plugin's Unreserve for a rejected waiting pod, as the scheduler's binding cycle does
        self.unreserve_rejected = unreserve_rejected

    def at(self, seconds: float) -> dt.datetime:
        """The wall-clock time of ``seconds`` on the clock."""
        return self.clock.now_datetime() + dt.timedelta(seconds=seconds - self.clock.now())

    def wait(self, pod, node="node", timeout=10.0):
        """Hold ``pod`` at Permit for Coscheduling, as the scheduler does after a Wait."""
        def on_resolved(wp):
            self.waiting.pop(wp.pod.uid, None)
            if wp.status.is_success():
                self.resolved.append((wp.pod.name, "allowed"))
                return
            self.resolved.append((wp.pod.name, wp.status.message()))
            if self.unreserve_rejected:
                self.plugin.unreserve(CycleState(), wp.pod, wp.node_name)

        wp = WaitingPod(pod, node, {"Coscheduling": self.clock.now() + timeout}, on_resolved)
        self.waiting[pod.uid] = wp
        return wp
