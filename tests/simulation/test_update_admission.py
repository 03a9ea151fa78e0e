"""A scenario ``update`` of a pod passes the admission plugins that admit updates.

Upstream: DefaultTolerationSeconds admits pod updates as well as creates, so a pod updated
without its not-ready/unreachable tolerations gets them back (Priority keeps the priority it
computed at create; RuntimeClass and LimitRanger admit creates only)."""

from __future__ import annotations

from kschedfw.cluster.inputs.scenario import Step
from kschedfw.config.validate import default_config
from kschedfw.framework.registry import default_registry
from kschedfw.simulation import Simulation
from kschedfw.testing import make_node, make_pod

DEFAULT_KEYS = ["node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable"]


def test_updated_pod_keeps_the_default_tolerations():
    registry = default_registry()
    pod = make_pod("web", cpu="100m", scheduling_gates=["example.com/hold"])
    updated = make_pod("web", cpu="100m", labels={"tier": "front"}, scheduling_gates=["example.com/hold"])
    sim = Simulation(default_config(registry), registry, [make_node("n1"), pod],
                     [Step(5.0, "update", (updated,))])
    sim.run()
    stored = sim.cluster.get("Pod", "web", "default")
    assert stored.labels == {"tier": "front"}
    assert [t.key for t in stored.tolerations] == DEFAULT_KEYS
    assert [t["key"] for t in stored.raw["spec"]["tolerations"]] == DEFAULT_KEYS
