"""kschedfw: the Kubernetes scheduler framework for Python plugins.

Write a plugin as a class with a ``name`` and ``@kschedfw.hookimpl`` methods named after the
extension points in :mod:`kschedfw.hookspecs`, then register it in your package::

    [project.entry-points."kschedfw.plugins"]
    MyPlugin = "my_package.plugin:MyPlugin"

enable it in a KubeSchedulerConfiguration profile, and check the file with
``kschedfw validate config.yaml``. ``kschedfw plugins`` lists what is installed.
"""

import pluggy

from kschedfw.framework.cycle_state import CycleState
from kschedfw.framework.events import (ActionType, ClusterEvent, ClusterEventWithHint, EventResource,
                                       QueueingHint)
from kschedfw.framework.status import Code, Status
from kschedfw.framework.types import (MAX_NODE_SCORE, MIN_NODE_SCORE, NodeInfo, NodeScore,
                                      NodeToStatus, NominatingInfo, NominatingMode, PostFilterResult,
                                      PreFilterResult, QueuedPodInfo)

hookimpl = pluggy.HookimplMarker("kschedfw")

__all__ = [
    "hookimpl", "Code", "Status", "CycleState", "ActionType", "ClusterEvent", "ClusterEventWithHint",
    "EventResource", "QueueingHint", "NodeInfo", "NodeScore", "NodeToStatus", "NominatingInfo",
    "NominatingMode", "PostFilterResult", "PreFilterResult", "QueuedPodInfo",
    "MAX_NODE_SCORE", "MIN_NODE_SCORE",
]
