"""The node-resources plugins: NodeResourcesFit and NodeResourcesBalancedAllocation.

``resource_allocation`` holds what their scorers share; ``least_allocated``, ``most_allocated``
and ``requested_to_capacity_ratio`` are NodeResourcesFit's scoring strategies.
"""

from kschedfw.plugins.noderesources.balanced_allocation import NodeResourcesBalancedAllocation
from kschedfw.plugins.noderesources.fit import NodeResourcesFit

__all__ = ["NodeResourcesFit", "NodeResourcesBalancedAllocation"]
