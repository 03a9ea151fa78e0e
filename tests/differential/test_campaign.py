"""Campaigns: generated scenarios per (kind, seed), and replaying a reproduction folder.

``pytest tests/differential --seeds 0-29 --kind all --budget 60``; CI plays the default seeds
(conftest ``CI_SEEDS``). A mismatch is shrunk, written as a
reproduction folder, and the test fails with the diffs and the commands that replay it."""

from __future__ import annotations

import pytest

from tests.differential.generate import generate
from tests.differential.harness import read_reproduction, replay_commands, write_reproduction
from tests.differential.shrink import shrink


def test_campaign(campaign_case, within_budget, harness, tally, request):
    kind, seed = campaign_case
    scenario = generate(seed, kind)
    result, folder = harness.check(scenario)
    tally.add(result)
    if folder is None:
        return
    report = [f"{kind} seed {seed}: {result.summary()}", *result.diffs]
    budget_s = request.config.getoption("shrink_budget")
    if budget_s > 0:  # the smallest scenario that still differs, with its own diffs
        small = shrink(scenario, harness.differs, budget_s)
        small_result = harness.play(small)
        folder = write_reproduction(small, folder.with_name(folder.name + "-min"), small_result)
        report += [f"shrunk to {len(small.objects)} objects and {len(small.pods)} pods:", *small_result.diffs]
    pytest.fail("\n".join([*report, f"reproduction in {folder}", replay_commands(folder)]), pytrace=False)


@pytest.mark.skipif("not config.getoption('replay')", reason="no --replay DIR given")
def test_replay(replay_dir, harness, tally):
    result = harness.play(read_reproduction(replay_dir))
    tally.add(result)
    if not result.identical:
        pytest.fail("\n".join([result.summary(), *result.diffs]), pytrace=False)
