"""The plugin keeps kschedfw's plugin contract (kschedfw.testing.check_plugin)."""

from kschedfw.testing import check_plugin

from kschedfw_nodemetadata.plugin import NodeMetadata


def test_keeps_the_plugin_contract():
    check_plugin(NodeMetadata, args={"metadataKey": "example.com/priority", "metadataSource": "Label",
                               "metadataType": "Number", "scoringStrategy": "Highest"})
