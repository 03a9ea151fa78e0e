"""The plugin keeps kschedfw's plugin contract (kschedfw.testing.contract_problems)."""

from kschedfw.testing import contract_problems

from kschedfw_noderesources_allocatable.plugin import NodeResourcesAllocatable


def test_keeps_the_plugin_contract():
    assert contract_problems(NodeResourcesAllocatable) == []
