"""PodTopologySpread: the in-tree plugin that spreads pods over topology domains.

See :mod:`kschedfw.plugins.podtopologyspread.plugin`.
"""

from kschedfw.plugins.podtopologyspread.plugin import PodTopologySpread

__all__ = ["PodTopologySpread"]
