"""Kinds upstream only lists (the Services, ReplicationControllers, ReplicaSets and StatefulSets
behind PodTopologySpread's default selector; Namespaces, PriorityClasses, PDBs): the kube backend
watches them, with the RBAC rights for it, and the scheduler raises no cluster event for them and
observes no event-handling time, as upstream has no handler (kube-scheduler's /metrics has no
NamespaceAdd or PriorityClassAdd sample)."""

from __future__ import annotations

from pathlib import Path

import yaml

from kschedfw.api import parse_object
from kschedfw.cluster.kube.resources import BY_KIND, RESOURCES
from kschedfw.config.validate import default_config
from kschedfw.fwk.interface import WatchEvent
from kschedfw.framework.registry import default_registry
from kschedfw.metrics import SchedulerMetrics
from kschedfw.scheduler.event_labels import LISTED_ONLY_KINDS
from kschedfw.simulation import Simulation

RBAC = Path(__file__).resolve().parents[2] / "deploy" / "rbac.yaml"


def test_every_kind_a_plugin_lists_is_watched_with_rights_to():
    # PodTopologySpread's default selector, NodeVolumeLimits' attachments, VolumeBinding's capacities
    for kind in (*LISTED_ONLY_KINDS, "VolumeAttachment", "CSIStorageCapacity"):
        assert kind in BY_KIND, kind
    role = next(d for d in yaml.safe_load_all(RBAC.read_text()) if d and d["kind"] == "ClusterRole")
    for resource in RESOURCES:
        group = resource.group_version.rpartition("/")[0] if "/" in resource.group_version else ""
        assert any(group in rule["apiGroups"] and resource.plural in rule["resources"]
                   and {"list", "watch"} <= set(rule["verbs"]) for rule in role["rules"]), resource.plural


def test_listed_only_kinds_raise_no_cluster_event():
    registry = default_registry()
    metrics = SchedulerMetrics()
    sim = Simulation(default_config(registry), registry, [], metrics=metrics)
    moved: list = []
    sim.scheduler.queue.move_all_to_active_or_backoff_queue = lambda event, *a, **k: moved.append(event.label)
    handle = sim.scheduler.handlers.callback()  # the timed handler the backend calls, metrics being kept
    for d in ({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web", "namespace": "d"},
               "spec": {"selector": {"app": "web"}}},
              {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "d"}},
              {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "hi"}, "value": 9},
              {"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass", "metadata": {"name": "kata"}, "handler": "kata"}):
        handle(WatchEvent("ADDED", d["kind"], None, parse_object(d)))
    assert moved == []
    assert b'scheduler_event_handling_duration_seconds_count{event="' not in metrics.render()
    pv = parse_object({"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "pv"},
                       "spec": {"capacity": {"storage": "1Gi"}}})
    handle(WatchEvent("ADDED", "PersistentVolume", None, pv))
    assert moved == ["PersistentVolumeAdd"]
