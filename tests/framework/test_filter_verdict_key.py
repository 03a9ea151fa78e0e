"""A profile's Filter verdict key (what the nominated-pods pass keeps its outcomes under, see
kschedfw/fwk/hookspecs.py FilterVerdictKey): composed from every Filter plugin's own key, and
none at all when one plugin declares none or overrides the filter its key describes. That the kept
outcomes change no result is checked with the fast paths off in test_fast_paths_agree."""

from __future__ import annotations

from kschedfw.fwk.cycle_state import CycleState
from kschedfw.testing import make_pod, toleration


def _plan_key(classes, pod):
    from kschedfw.testing import framework_for
    fwk = framework_for(classes)
    state = CycleState()
    fwk.run_pre_filter_plugins(state, pod, [])
    return fwk.filter_verdict_key(state, pod)


def test_a_verdict_key_is_composed_only_when_every_filter_plugin_declares_one():
    from kschedfw import hookimpl
    from kschedfw.plugins.nodename import NodeName
    from kschedfw.plugins.tainttoleration import TaintToleration

    class NoKey:
        name = "NoKey"

        def __init__(self, args, handle):
            pass

        @hookimpl
        def filter(self, state, pod, node_info):
            return None

    class StrictNodeName(NodeName):
        """Overrides filter: NodeName's verdict key does not describe it."""
        name = "StrictNodeName"

        @hookimpl
        def filter(self, state, pod, node_info):
            return None

    pod = make_pod("p", node_name="n1", tolerations=[toleration("gpu", operator="Exists")])
    assert _plan_key([NodeName, TaintToleration], pod) == (("NodeName", "n1"), ("TaintToleration", pod.tolerations))
    assert _plan_key([NodeName, NoKey], pod) is None
    assert _plan_key([StrictNodeName], pod) is None
