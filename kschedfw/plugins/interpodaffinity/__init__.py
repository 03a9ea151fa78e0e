"""InterPodAffinity: schedule pods with, or away from, other pods per topology domain."""

from kschedfw.plugins.interpodaffinity.plugin import InterPodAffinity

__all__ = ["InterPodAffinity"]
