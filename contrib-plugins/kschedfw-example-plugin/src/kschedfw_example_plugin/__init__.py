"""kschedfw-example-plugin: NodeLabelPreference, a small plugin to start your own from."""

from kschedfw_example_plugin.plugin import NodeLabelPreference

__all__ = ["NodeLabelPreference"]
