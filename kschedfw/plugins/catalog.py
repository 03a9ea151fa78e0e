"""The extension points of the in-tree plugins, known without importing them.

Validating a configuration must be fast enough for a pre-commit hook, so the registry answers
"which points does this in-tree plugin extend?" from this table instead of importing every
plugin module. tests/plugins/test_catalog.py keeps it equal to what the classes implement.
"""

IN_TREE_EXTENSION_POINTS: dict[str, frozenset[str]] = {
    "DefaultBinder": frozenset(['bind']),
    "DefaultPreemption": frozenset(['events_to_register', 'post_filter', 'pre_enqueue']),
    "DynamicResources": frozenset(['events_to_register', 'filter', 'normalize_score', 'post_filter', 'pre_bind', 'pre_bind_pre_flight', 'pre_enqueue', 'pre_filter', 'reserve', 'score', 'sign_pod', 'unreserve']),
    "ImageLocality": frozenset(['score', 'sign_pod']),
    "InterPodAffinity": frozenset(['events_to_register', 'filter', 'normalize_score', 'pre_filter', 'pre_filter_add_pod', 'pre_filter_remove_pod', 'pre_score', 'score', 'sign_pod']),
    "NodeAffinity": frozenset(['events_to_register', 'filter', 'normalize_score', 'pre_filter', 'pre_score', 'score', 'sign_pod']),
    "NodeName": frozenset(['events_to_register', 'filter', 'sign_pod']),
    "NodePorts": frozenset(['events_to_register', 'filter', 'pre_filter', 'sign_pod']),
    "NodeResourcesBalancedAllocation": frozenset(['pre_score', 'score', 'sign_pod']),
    "NodeResourcesFit": frozenset(['events_to_register', 'filter', 'pre_filter', 'pre_score', 'score', 'sign_pod']),
    "NodeUnschedulable": frozenset(['events_to_register', 'filter', 'sign_pod']),
    "NodeVolumeLimits": frozenset(['events_to_register', 'filter', 'pre_filter', 'sign_pod']),
    "PodTopologySpread": frozenset(['events_to_register', 'filter', 'normalize_score', 'pre_filter', 'pre_filter_add_pod', 'pre_filter_remove_pod', 'pre_score', 'score', 'sign_pod']),
    "PrioritySort": frozenset(['less']),
    "SchedulingGates": frozenset(['events_to_register', 'pre_enqueue']),
    "TaintToleration": frozenset(['events_to_register', 'filter', 'normalize_score', 'pre_score', 'score', 'sign_pod']),
    "VolumeBinding": frozenset(['events_to_register', 'filter', 'pre_bind', 'pre_bind_pre_flight', 'pre_filter', 'pre_score', 'reserve', 'score', 'sign_pod', 'unreserve']),
    "VolumeRestrictions": frozenset(['events_to_register', 'filter', 'pre_filter', 'pre_filter_add_pod', 'pre_filter_remove_pod', 'sign_pod']),
    "VolumeZone": frozenset(['events_to_register', 'filter', 'pre_filter', 'sign_pod']),
}
