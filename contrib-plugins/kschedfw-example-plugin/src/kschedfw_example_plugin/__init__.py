"""kschedfw-example-plugin: NodeLabelPreference (Filter and Score) and PlacementLabelPreference
(PlacementScore), small plugins to start your own from."""

from kschedfw_example_plugin.placement import PlacementLabelPreference
from kschedfw_example_plugin.plugin import NodeLabelPreference

__all__ = ["NodeLabelPreference", "PlacementLabelPreference"]
