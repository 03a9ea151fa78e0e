"""The differential fuzzer's session: one etcd + kube-apiserver, the campaign options, the summary.

Options: ``--seeds 0-29`` (ranges and comma lists), ``--kind default|variants|dra|gang|all``, ``--budget
MIN`` (no new seed is started after MIN minutes), ``--replay DIR`` (play a reproduction folder),
``--repro-dir DIR`` (where reproductions go)."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Iterator

import pytest

from kschedfw.testing.controlplane import ControlPlane, find_assets, missing_assets_reason

from tests.differential import harness as harness_module
from tests.differential.decision import Tally
from tests.differential.gangs import APISERVER_FLAGS

#: the seeds CI plays on every run (each kind), bounded to a few minutes on two cores
CI_SEEDS = "0-4"
#: a kind's own CI seeds: for gangs, five in which upstream preempts for a group (about 30 s)
CI_SEEDS_OF_KIND = {"gang": "5,6,9,10,14"}
KINDS = ("default", "variants", "dra", "gang")

_TALLY = pytest.StashKey[Tally]()
_STARTED = pytest.StashKey[float]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("differential", "differential fuzzing against kube-scheduler")
    group.addoption("--seeds", default=None,
                    help=f"seeds to play: 0-29, 3,7,9-12 (default {CI_SEEDS}; gang {CI_SEEDS_OF_KIND['gang']})")
    group.addoption("--kind", default="all", choices=(*KINDS, "all"), help="scenario kind (default all)")
    group.addoption("--budget", type=float, default=None, metavar="MIN",
                    help="start no new seed after MIN minutes")
    group.addoption("--shrink-budget", type=float, default=120.0, metavar="S",
                    help="seconds the shrinker may spend on one differing seed (0: do not shrink; default 120)")
    group.addoption("--replay", metavar="DIR", default=None, help="play one reproduction folder again")
    group.addoption("--repro-dir", metavar="DIR", default=None,
                    help="where reproductions and kube-scheduler logs go (default: pytest's temporary folder)")


def parse_seeds(text: str) -> list[int]:
    """``0-3,7`` -> [0, 1, 2, 3, 7]"""
    seeds: list[int] = []
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        low, dash, high = part.partition("-")
        if dash:
            if int(high) < int(low):
                raise pytest.UsageError(f"--seeds {text}: {part} is an empty range")
            seeds.extend(range(int(low), int(high) + 1))
        else:
            seeds.append(int(low))
    return list(dict.fromkeys(seeds))


def pytest_configure(config: pytest.Config) -> None:
    config.stash[_TALLY] = Tally()


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "campaign_case" in metafunc.fixturenames:
        option = metafunc.config.getoption
        kinds = KINDS if option("kind") == "all" else (option("kind"),)
        cases = [(kind, seed) for kind in kinds
                 for seed in parse_seeds(option("seeds") or CI_SEEDS_OF_KIND.get(kind, CI_SEEDS))]
        metafunc.parametrize("campaign_case", cases, ids=[f"{k}-{s}" for k, s in cases])


@pytest.fixture(scope="session")
def harness(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
            ) -> Iterator[harness_module.Harness]:
    assets = find_assets()
    if assets is None:
        pytest.skip(missing_assets_reason())
    if not os.access(assets / "kube-scheduler", os.X_OK):
        pytest.skip(f"no executable kube-scheduler beside the control plane binaries in {assets}")
    chosen = request.config.getoption("repro_dir")
    workdir = Path(chosen) if chosen else tmp_path_factory.mktemp("differential")
    workdir.mkdir(parents=True, exist_ok=True)
    # the workload API served and admitted for the gang kind; the other kinds never use it
    with ControlPlane(assets, extra_apiserver_flags=list(APISERVER_FLAGS)) as cp:
        h = harness_module.Harness(cp, workdir.resolve())
        harness_module.use(h)
        try:
            yield h
        finally:
            harness_module.use(None)


@pytest.fixture
def tally(request: pytest.FixtureRequest) -> Tally:
    """The session's counts: what a test adds here is in the summary at the end."""
    return request.config.stash[_TALLY]


@pytest.fixture
def within_budget(request: pytest.FixtureRequest) -> None:
    """Skip once ``--budget`` minutes have passed since the first campaign seed started."""
    config = request.config
    started = config.stash.setdefault(_STARTED, time.monotonic())
    budget = config.getoption("budget")
    if budget is not None and time.monotonic() - started > budget * 60:
        pytest.skip(f"--budget {budget:g} min spent")


@pytest.fixture
def replay_dir(request: pytest.FixtureRequest) -> Path:
    return Path(request.config.getoption("replay"))


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, config: pytest.Config) -> None:
    total = config.stash.get(_TALLY, None)
    if total is None or not total.pods:
        return
    terminalreporter.section("differential: kube-scheduler v1.36 vs kschedfw")
    terminalreporter.write_line(total.summary())
    terminalreporter.write_line(f"{total.seconds:.1f} s playing scenarios")
