"""A pod group's placement selection, as upstream's placement algorithm
(schedule_one_podgroup_test.go: TestPodGroupSchedulingPlacementAlgorithm and its _Scoring
table), with the group's attempt in each placement given as the cycle gives it."""

from __future__ import annotations

import random
from typing import Any, Sequence

import attrs
import pytest

from kschedfw import hookimpl
from kschedfw.config.expand import PluginEntry, ResolvedProfile
from kschedfw.framework.placements import select_placement
from kschedfw.framework.registry import Registry
from kschedfw.framework.runtime import Framework
from kschedfw.fwk.cycle_state import CycleState
from kschedfw.fwk.podgroup import GeneratePlacementsResult, Placement, PodGroupAssignments, PodGroupInfo
from kschedfw.fwk.status import Code, Status
from kschedfw.fwk.types import NodeInfo
from kschedfw.testing import make_node, make_pod

NODES = [NodeInfo(node=make_node(name)) for name in ("node1", "node2")]
POD = make_pod("foo")
GROUP = PodGroupInfo("pg", unscheduled_pods=(POD,))


@attrs.frozen
class Assignment:
    pod: Any
    node_name: str


@attrs.frozen
class Outcome:
    """What the cycle's default algorithm gave for the group in one placement."""

    status: Status | None
    pod_results: Sequence[Assignment] = ()
    waiting_on_preemption: bool = False


def attempt_with(filter_status: dict[str, Status] | None = None, calls: list[str] | None = None) -> Any:
    """The group's one pod tried in a placement: the first of its nodes Filter lets through,
    else "pod group is unschedulable" (upstream's default algorithm for a group that does not fit)."""
    rejected = filter_status or {}

    def attempt(placement: Placement) -> Outcome:
        if calls is not None:
            calls.append(placement.name)
        fits = [ni.name for ni in placement.nodes if ni.name not in rejected]
        if fits:
            return Outcome(None, (Assignment(POD, fits[0]),))
        return Outcome(Status.unschedulable("pod group is unschedulable"), (Assignment(POD, ""),))
    return attempt


def fake_placement_plugin(name: str, placements: dict[str, list[str]] | None = None,
                          scores: dict[str, int | Status] | None = None,
                          generate_status: Status | None = None) -> type:
    """upstream's fakePlacementPlugin: placements by name (node names), a score per placement."""
    by_name = {ni.name: ni for ni in NODES}
    body: dict[str, Any] = {"name": name, "__init__": lambda self, args, handle: None, "seen": []}
    if placements is not None or generate_status is not None:
        def generate_placements(self: Any, state: Any, pod_group: Any, parent_placement: Placement) -> Any:
            if generate_status is not None:
                return None, generate_status
            return GeneratePlacementsResult([Placement(p, [by_name[n] for n in nodes])
                                             for p, nodes in (placements or {}).items()]), None
        body["generate_placements"] = hookimpl(generate_placements)
    if scores is not None:
        def score_placement(self: Any, state: Any, pod_group: Any, placement: PodGroupAssignments) -> Any:
            type(self).seen.append((placement.name, [(a.pod.name, a.node_name) for a in placement.proposed_assignments]))
            return scores.get(placement.name, 0)
        body["score_placement"] = hookimpl(score_placement)
    return type(name, (), body)


def framework(generate: type | None, score: list[tuple[type, int]] = ()) -> Framework:  # type: ignore[assignment]
    classes = [*([generate] if generate is not None else []), *(cls for cls, _ in score if cls is not generate)]
    profile = ResolvedProfile(
        scheduler_name="test-scheduler", percentage_of_nodes_to_score=None,
        plugins={"generate_placements": (PluginEntry(generate.name),) if generate is not None else (),
                 "score_placement": tuple(PluginEntry(cls.name, weight) for cls, weight in score)},
        plugin_args={cls.name: {} for cls in classes})
    return Framework(profile, Registry.from_classes(classes))


def select(fw: Framework, attempt: Any, *, seed: int = 0, ties: str = "random", state: CycleState | None = None
           ) -> Any:
    return select_placement(fw, state if state is not None else CycleState(), GROUP, NODES, attempt,
                            rng=random.Random(seed), ties=ties)


TWO = {"placement1": ["node1"], "placement2": ["node2"]}


@pytest.mark.parametrize(("scores", "host"), [
    ({"placement1": 2, "placement2": 1}, "node1"),
    ({"placement1": 1, "placement2": 2}, "node2"),
], ids=["respects higher score of placement1", "respects higher score of placement2"])
def test_the_best_scored_placement_is_chosen(scores: dict[str, int | Status], host: str) -> None:
    """Two feasible placements: the one PlacementScore ranks higher, with its attempt's results."""
    plugin = fake_placement_plugin("FakePlacementPlugin", TWO, scores)
    selection = select(framework(plugin, [(plugin, 1)]), attempt_with())
    assert selection.status is None
    assert [(a.pod.name, a.node_name) for a in selection.outcome.pod_results] == [("foo", host)]
    assert selection.placement.nodes[0].name == host


def test_when_no_placements_are_generated_the_group_is_unschedulable() -> None:
    plugin = fake_placement_plugin("FakePlacementPlugin", {})
    selection = select(framework(plugin), attempt_with())
    assert selection.outcome is None and selection.placement is None
    assert (selection.status.code, selection.status.message(), selection.status.plugin) == \
        (Code.Unschedulable, "no feasible placements found", "FakePlacementPlugin")


def test_when_all_placements_are_infeasible_the_first_ones_outcome_is_unschedulable() -> None:
    """No placement fits: the first placement's outcome, with the status "0/N placements are
    available, first placement status: <its status>"."""
    plugin = fake_placement_plugin("FakePlacementPlugin", TWO, {"placement1": 1, "placement2": 2})
    rejected = {"node1": Status.unschedulable(), "node2": Status.unschedulable()}
    selection = select(framework(plugin, [(plugin, 1)]), attempt_with(rejected))
    assert selection.placement is None
    assert selection.outcome.status.message() == "pod group is unschedulable"
    assert [(a.pod.name, a.node_name) for a in selection.outcome.pod_results] == [("foo", "")]
    assert (selection.status.code, selection.status.message()) == \
        (Code.Unschedulable, "0/2 placements are available, first placement status: pod group is unschedulable")
    assert plugin.seen == []  # nothing to score


def test_infeasible_placements_are_filtered_out() -> None:
    """One feasible placement: it, without scoring."""
    plugin = fake_placement_plugin("FakePlacementPlugin", TWO, {"placement1": 1})
    selection = select(framework(plugin, [(plugin, 1)]), attempt_with({"node2": Status.unschedulable()}))
    assert selection.status is None and selection.placement.name == "placement1"
    assert [(a.pod.name, a.node_name) for a in selection.outcome.pod_results] == [("foo", "node1")]
    assert plugin.seen == []


def test_when_the_generate_plugin_fails_the_error_is_returned() -> None:
    plugin = fake_placement_plugin("FakePlacementPlugin", generate_status=Status.as_status("error for test"))
    selection = select(framework(plugin), attempt_with())
    assert selection.outcome is None
    assert (selection.status.code, selection.status.message(), selection.status.plugin) == \
        (Code.Error, "error for test", "FakePlacementPlugin")


def test_when_the_score_plugin_fails_the_error_is_returned() -> None:
    plugin = fake_placement_plugin("FakePlacementPlugin", TWO,
                                   {"placement1": 1, "placement2": Status.as_status("error for test")})
    selection = select(framework(plugin, [(plugin, 1)]), attempt_with())
    assert selection.outcome is None and selection.placement is None
    assert (selection.status.code, selection.status.message(), selection.status.plugin) == \
        (Code.Error, 'running PlacementScore plugins: plugin "FakePlacementPlugin" failed with: error for test',
         "FakePlacementPlugin")


@pytest.mark.parametrize(("data", "want"), [
    ([(1, {"placement1": 50, "placement2": 75}), (2, {"placement1": 25, "placement2": 10})], "placement1"),
    ([(1, {"placement1": 75, "placement2": 50}), (2, {"placement1": 10, "placement2": 25})], "placement2"),
], ids=["respects higher score of placement1", "respects higher score of placement2"])
def test_weighted_scores_of_several_plugins_decide(data: list[tuple[int, dict[str, int | Status]]], want: str) -> None:
    """_Scoring: each plugin's score times its weight, summed, ranks the placements (50 + 2*25
    beats 75 + 2*10)."""
    generator = fake_placement_plugin("FakeGeneratorPlugin", TWO)
    scorers = [(fake_placement_plugin(f"FakeScorePlugin{i}", scores=scores), weight)
               for i, (weight, scores) in enumerate(data)]
    selection = select(framework(generator, scorers), attempt_with())
    assert selection.placement.name == want
    assert selection.outcome.pod_results[0].node_name == TWO[want][0]


def test_no_generate_plugin_tries_all_nodes_as_one_placement() -> None:
    """Without PlacementGenerate the group is tried once, over every node."""
    calls: list[str] = []
    selection = select(framework(None), attempt_with(calls=calls))
    assert calls == [""] and selection.status is None
    assert [ni.name for ni in selection.placement.nodes] == ["node1", "node2"]


def test_an_attempts_error_stops_the_selection() -> None:
    """An Error in one placement's attempt is the result at once; later placements are not tried."""
    plugin = fake_placement_plugin("Gen", {"a": ["node1"], "b": ["node2"]})
    calls: list[str] = []

    def attempt(placement: Placement) -> Outcome:
        calls.append(placement.name)
        return Outcome(Status.as_status("failed to assume pod group placement"))
    selection = select(framework(plugin), attempt)
    assert calls == ["a"]
    assert (selection.status.code, selection.status.message()) == (Code.Error, "failed to assume pod group placement")


def test_a_placement_waiting_on_preemption_is_feasible() -> None:
    """An attempt that waits on preemption counts as a feasible placement."""
    plugin = fake_placement_plugin("Gen", {"a": ["node1"], "b": ["node2"]})

    def attempt(placement: Placement) -> Outcome:
        if placement.name == "a":
            return Outcome(Status.unschedulable("pod group is unschedulable"))
        return Outcome(Status.unschedulable("waiting"), (Assignment(POD, "node2"),), waiting_on_preemption=True)
    selection = select(framework(plugin), attempt)
    assert selection.placement.name == "b" and selection.status.message() == "waiting"


def test_the_scorers_see_only_the_pods_that_found_a_node() -> None:
    """PodGroupAssignments hold each feasible placement and the pods of its attempt that got a
    node (upstream makePodGroupAssignments)."""
    plugin = fake_placement_plugin("Gen", TWO, {"placement1": 1, "placement2": 2})
    other = make_pod("bar")

    def attempt(placement: Placement) -> Outcome:
        return Outcome(None, (Assignment(POD, placement.nodes[0].name), Assignment(other, "")))
    select(framework(plugin, [(plugin, 1)]), attempt)
    assert plugin.seen == [("placement1", [("foo", "node1")]), ("placement2", [("foo", "node2")])]


def test_the_group_cycle_records_plugin_metrics() -> None:
    """Upstream's placement algorithm records plugin metrics for every placement cycle."""
    state = CycleState()
    select(framework(None), attempt_with(), state=state)
    assert state.record_plugin_metrics is True


THREE = {"a": ["node1"], "b": ["node2"], "c": ["node1", "node2"]}


def test_equal_totals_go_to_the_highest_randomizer() -> None:
    """Ties between the best totals are broken by a randomizer drawn per placement from the
    scheduler's seeded randomness; a lower total never wins, whatever its draw. Over seeds,
    each tied placement wins sometimes."""
    plugin = fake_placement_plugin("Gen", THREE, {"a": 5, "b": 5, "c": 4})
    fw = framework(plugin, [(plugin, 1)])
    chosen = set()
    for seed in range(40):
        selection = select(fw, attempt_with(), seed=seed)
        by_name = {s.placement.name: s for s in selection.scores}
        best = max(("a", "b"), key=lambda n: by_name[n].randomizer)
        assert selection.placement.name == best
        chosen.add(best)
        again = select(fw, attempt_with(), seed=seed)
        assert again.placement.name == best  # the same seed, the same choice
    assert chosen == {"a", "b"}


def test_ties_by_name_take_the_smallest_placement_name() -> None:
    """``ties="name"`` (a kschedfw option, as the node cycle's): the smallest name among the best."""
    plugin = fake_placement_plugin("Gen", {"b": ["node2"], "a": ["node1"], "0": ["node1"]}, {"a": 5, "b": 5, "0": 1})
    fw = framework(plugin, [(plugin, 1)])
    rng = random.Random(0)
    before = rng.getstate()
    selection = select_placement(fw, CycleState(), GROUP, NODES, attempt_with(), rng=rng, ties="name")
    assert selection.placement.name == "a"
    assert rng.getstate() == before  # no randomness drawn


def test_an_unknown_ties_option_is_refused() -> None:
    with pytest.raises(ValueError, match="ties: 'first' is not one of random, name"):
        select(framework(None), attempt_with(), ties="first")
