"""In-tree Filter plugins whose verdict on a node cannot change when pods leave it, for
preemption's dry run.

:data:`NODE_ONLY_FILTERS` read the Node and the pod, never the pods on the node, and write nothing
to the CycleState: NodeUnschedulable, NodeName, TaintToleration, NodeAffinity, VolumeZone.
Out-of-tree plugins are never assumed to be. (What Filter outcomes the runtime may keep between
cycles is each plugin's own ``filter_verdict_key``: see ``hookspecs.FilterVerdictKey``.)
"""

from __future__ import annotations

from kschedfw.plugins.nodeaffinity import NodeAffinity
from kschedfw.plugins.nodename import NodeName
from kschedfw.plugins.nodeunschedulable import NodeUnschedulable
from kschedfw.plugins.tainttoleration import TaintToleration
from kschedfw.plugins.volumezone import VolumeZone

__all__ = ["NODE_ONLY_FILTERS"]

#: Filter plugins whose verdict reads the Node and the pod only (see the module docstring).
NODE_ONLY_FILTERS: frozenset[type] = frozenset({NodeUnschedulable, NodeName, TaintToleration, NodeAffinity,
                                                VolumeZone})
