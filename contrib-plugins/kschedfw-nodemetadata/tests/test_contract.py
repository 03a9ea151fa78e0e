"""The plugin keeps kschedfw's plugin contract (kschedfw.testing.contract_problems)."""

from kschedfw.testing import contract_problems

from kschedfw_nodemetadata.plugin import NodeMetadata


def test_keeps_the_plugin_contract():
    args = {"metadataKey": "example.com/priority", "metadataSource": "Label", "metadataType": "Number",
            "scoringStrategy": "Highest"}
    assert contract_problems(NodeMetadata, args=args) == []
