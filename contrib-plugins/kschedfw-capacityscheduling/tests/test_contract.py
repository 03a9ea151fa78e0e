"""The plugin keeps kschedfw's plugin contract (kschedfw.testing.check_plugin)."""

from kschedfw.testing import check_plugin

from kschedfw_capacityscheduling.plugin import CapacityScheduling


def test_keeps_the_plugin_contract():
    check_plugin(CapacityScheduling)
