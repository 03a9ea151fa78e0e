"""kschedfw-coscheduling: the Coscheduling (gang scheduling) plugin for kschedfw.

Installing this distribution registers ``Coscheduling`` in the ``kschedfw.plugins`` entry-point
group; enable it in a KubeSchedulerConfiguration profile (see the package README).
"""

from kschedfw_coscheduling.core import POD_GROUP_KIND, POD_GROUP_LABEL, PodGroupInfo, PodGroupManager
from kschedfw_coscheduling.plugin import NAME, Coscheduling

__all__ = ["Coscheduling", "NAME", "POD_GROUP_KIND", "POD_GROUP_LABEL", "PodGroupInfo", "PodGroupManager"]
