"""Gang scheduling end to end on the embedded cluster, with the installed plugin found through its
entry point and configured by the upstream sample configuration."""

from __future__ import annotations

import collections
import textwrap

import pytest

from cosched_testlib import DATA, make_node, make_pod, make_pod_group
from kschedfw.cluster.inputs.scenario import Step
from kschedfw.config.validate import load_config, load_config_text
from kschedfw.framework.registry import Registry
from kschedfw.simulation import Simulation

GANG = [f"default/gang-{i}" for i in range(8)]
OTHERS = [f"default/other-{i}" for i in range(4)]


@pytest.fixture(scope="module")
def registry():
    return Registry.discover()


def sample_config(registry):
    config, diagnostics = load_config(str(DATA / "coscheduling__scheduler-config.yaml"), registry)
    assert config is not None, [str(d) for d in diagnostics]
    return config


def config_with(registry, **args):
    lines = "\n".join(f"      {k}: {v}" for k, v in args.items())
    text = textwrap.dedent("""\
        apiVersion: kubescheduler.config.k8s.io/v1
        kind: KubeSchedulerConfiguration
        profiles:
        - schedulerName: default-scheduler
          plugins:
            multiPoint:
              enabled:
              - name: Coscheduling
            queueSort:
              enabled:
              - name: Coscheduling
              disabled:
              - name: "*"
          pluginConfig:
          - name: Coscheduling
            args:
        """) + lines + "\n"
    config, diagnostics = load_config_text(text, "test.yaml", registry)
    assert config is not None, [str(d) for d in diagnostics]
    return config


def small_nodes():
    """Room for six 1-cpu pods."""
    return [make_node(f"n{i}", cpu="2") for i in range(3)]


def gang(n=8, min_member=8, **pg):
    return [make_pod_group("gang", "default", min_member=min_member, **pg)] + [
        make_pod(f"gang-{i}", "default", group="gang", cpu="1") for i in range(n)]


def others(prefix="other", n=4, **kwargs):
    return tuple(make_pod(f"{prefix}-{i}", "default", cpu="1", **kwargs) for i in range(n))


def by_key(result):
    return {p.key: p for p in result.pods}


def requested_cpu(sim, nodes):
    return sum(sim.scheduler.cache.node_info(n).requested.get("cpu", 0) for n in nodes)


def test_gang_binds_nobody_until_room_for_all_appears_and_other_pods_run_meanwhile(registry):
    """The issue's Done-when, with the upstream sample configuration (default args)."""
    big = make_node("big", cpu="8")
    sim = Simulation(sample_config(registry), registry, [*small_nodes(), *gang(), *others()],
                     [Step(60.0, "create", objects=(big,))])

    before = by_key(sim.run(until=59))
    assert [before[k].status for k in GANG] == ["Pending"] * 8  # nobody of the gang binds
    assert not sim.scheduler.waiting_pods                      # and it holds no reservation
    assert requested_cpu(sim, ["n0", "n1", "n2"]) == 4000       # only the 4 other pods use the nodes
    assert [before[k].status for k in OTHERS] == ["Bound"] * 4

    after = by_key(sim.run())
    assert [after[k].status for k in GANG] == ["Bound"] * 8
    assert {k: after[k].node for k in OTHERS} == {k: before[k].node for k in OTHERS}
    assert sim.clock.now() == 60.0


def timeout_scenario(registry):
    """PostFilter never gives the group up: members hold their room at Permit until the 10 s timeout;
    the other pods arrive at 2 s, while the gang holds the room; a big node arrives at 60 s."""
    config = config_with(registry, permitWaitingTimeSeconds=10, podGroupRejectPercentage=100)
    steps = [Step(2.0, "create", objects=others()), Step(60.0, "create", objects=(make_node("big", cpu="8"),))]
    return Simulation(config, registry, [*small_nodes(), *gang()], steps)


def test_waiting_members_free_their_reservations_on_permit_timeout(registry):
    sim = timeout_scenario(registry)

    early = by_key(sim.run(until=5))
    statuses = collections.Counter(early[k].status for k in GANG)
    assert statuses == {"Waiting": 6, "Pending": 2}
    assert requested_cpu(sim, ["n0", "n1", "n2"]) == 6000  # the six waiting members hold the room
    assert [early[k].status for k in OTHERS] == ["Pending"] * 4

    timed_out = by_key(sim.run(until=30))
    assert [timed_out[k].status for k in GANG] == ["Pending"] * 8
    assert not sim.scheduler.waiting_pods
    assert requested_cpu(sim, ["n0", "n1", "n2"]) == sum(
        1000 for k in OTHERS if timed_out[k].status == "Bound")  # nothing reserved for the gang

    final = by_key(sim.run())
    assert [final[k].status for k in GANG + OTHERS] == ["Bound"] * 12


def test_other_pods_run_as_soon_as_the_gang_times_out(registry):
    result = by_key(timeout_scenario(registry).run(until=30))
    assert [result[k].status for k in OTHERS] == ["Bound"] * 4


def test_a_gang_waits_for_its_missing_members_without_reserving_anything(registry):
    sim = Simulation(sample_config(registry), registry, [make_node("n", cpu="16"), *gang(n=6)],
                     [Step(30.0, "create", objects=tuple(make_pod(f"gang-{i}", "default", group="gang", cpu="1")
                                                          for i in (6, 7)))])
    before = by_key(sim.run(until=29))
    assert [before[k].status for k in GANG[:6]] == ["Pending"] * 6
    assert not sim.scheduler.waiting_pods and requested_cpu(sim, ["n"]) == 0
    after = by_key(sim.run())
    assert [after[k].status for k in GANG] == ["Bound"] * 8
    assert sim.clock.now() == 30.0  # the last member's arrival released the whole group at once


def test_a_gang_that_cannot_fit_does_not_hold_the_queue(registry):
    """Higher- and lower-priority pods arriving later all run; the gang is not retried in a loop."""
    steps = [Step(5.0, "create", objects=others("high", 2, priority=1000)),
             Step(10.0, "create", objects=others("low", 2, priority=-10)),
             Step(20.0, "create", objects=others("late", 2))]
    sim = Simulation(sample_config(registry), registry, [*small_nodes(), *gang()], steps)
    result = by_key(sim.run())
    assert [result[k].status for k in GANG] == ["Pending"] * 8
    assert all(p.status == "Bound" for key, p in result.items() if key not in GANG)
    attempts = collections.Counter(a.pod for a in sim.scheduler.attempts if a.result != "Scheduled")
    assert max(attempts[k] for k in GANG) <= 2


def test_members_of_two_gangs_are_not_interleaved(registry):
    """Two 3-member gangs on room for 4: one binds whole, the other binds nobody."""
    objects = [make_node("n", cpu="4")]
    for name in ("a", "b"):
        objects.append(make_pod_group(name, "default", min_member=3))
        objects += [make_pod(f"{name}-{i}", "default", group=name, cpu="1") for i in range(3)]
    result = Simulation(sample_config(registry), registry, objects).run()
    bound = collections.Counter(p.key.split("/")[1].split("-")[0] for p in result.pods if p.status == "Bound")
    assert list(bound.values()) == [3]  # one whole gang
    assert all(p.status in ("Bound", "Pending") for p in result.pods)


def test_a_pod_naming_a_missing_pod_group_waits_for_it(registry):
    pod = make_pod("orphan", "default", group="later", cpu="1")
    pg = make_pod_group("later", "default", min_member=1)
    sim = Simulation(sample_config(registry), registry, [make_node("n"), pod], [Step(10.0, "create", objects=(pg,))])
    assert by_key(sim.run(until=9))["default/orphan"].status == "Pending"
    assert not sim.scheduler.waiting_pods
    assert by_key(sim.run())["default/orphan"].status == "Bound"
    assert sim.clock.now() == 10.0
