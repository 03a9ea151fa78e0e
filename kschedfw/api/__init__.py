"""The Kubernetes objects the scheduler reads, parsed from manifests.

Objects are frozen ``attrs`` classes (change them with ``attrs.evolve`` or their ``with_*``
helpers); each top-level object keeps the manifest it came from in ``raw``. Resource amounts are
integers: cpu in millicores, everything else in whole units.
"""

from kschedfw.api.quantity import format_quantity, milli_value, parse_quantity, resource_amount, value
from kschedfw.api.resources import (CPU, DEFAULT_MEMORY_REQUEST, DEFAULT_MILLI_CPU_REQUEST,
                                    EPHEMERAL_STORAGE, MEMORY, PODS, Resources, add_resources,
                                    is_extended_resource, is_hugepages, is_scalar_resource,
                                    max_resources, parse_resource_list)
from kschedfw.api.selectors import (LabelSelector, LabelSelectorRequirement, NodeSelector,
                                    NodeSelectorRequirement, NodeSelectorTerm,
                                    PreferredSchedulingTerm, label_selector_matches,
                                    parse_label_selector, parse_label_selector_requirement,
                                    parse_node_selector, parse_node_selector_requirement,
                                    parse_node_selector_term, parse_preferred_scheduling_term)
from kschedfw.api.pod import (DEFAULT_SCHEDULER_NAME, Affinity, Container, ContainerPort,
                              NodeAffinity, Pod, PodAffinity, PodAffinityTerm, PodCondition,
                              Toleration, TopologySpreadConstraint, Volume,
                              WeightedPodAffinityTerm, compute_pod_request, parse_pod)
from kschedfw.api.node import ContainerImage, Node, NodeCondition, Taint, parse_node
from kschedfw.api.other import (CSINode, GenericObject, Namespace, PersistentVolume,
                                PersistentVolumeClaim, PodDisruptionBudget, PriorityClass,
                                RuntimeClass, StorageClass)
from kschedfw.api.load import load_manifests, parse_manifests, parse_object

__all__ = [
    # quantities and resource lists
    "parse_quantity", "milli_value", "value", "resource_amount", "format_quantity",
    "Resources", "parse_resource_list", "add_resources", "max_resources", "is_hugepages",
    "is_extended_resource", "is_scalar_resource", "CPU", "MEMORY", "EPHEMERAL_STORAGE", "PODS",
    "DEFAULT_MILLI_CPU_REQUEST", "DEFAULT_MEMORY_REQUEST",
    # selectors
    "LabelSelectorRequirement", "LabelSelector", "label_selector_matches",
    "NodeSelectorRequirement", "NodeSelectorTerm", "NodeSelector", "PreferredSchedulingTerm",
    "parse_label_selector", "parse_label_selector_requirement", "parse_node_selector",
    "parse_node_selector_term", "parse_node_selector_requirement",
    "parse_preferred_scheduling_term",
    # pods
    "ContainerPort", "Container", "Toleration", "PodAffinityTerm", "WeightedPodAffinityTerm",
    "NodeAffinity", "PodAffinity", "Affinity", "TopologySpreadConstraint", "Volume",
    "PodCondition", "Pod", "parse_pod", "compute_pod_request", "DEFAULT_SCHEDULER_NAME",
    # nodes
    "Taint", "ContainerImage", "NodeCondition", "Node", "parse_node",
    # other kinds
    "PriorityClass", "PodDisruptionBudget", "Namespace", "PersistentVolumeClaim",
    "PersistentVolume", "StorageClass", "CSINode", "RuntimeClass", "GenericObject",
    # loading
    "parse_object", "load_manifests", "parse_manifests",
]
