"""Testing kit for plugin authors: builders, a harness, a contract checker, the CLI in-process.

Plain functions work anywhere; as an opt-in pytest plugin (``pytest_plugins =
["kschedfw.testing"]`` in a conftest) it also gives the fixtures ``make_pod``, ``make_node`` and
``kschedfw_cli``.
"""

from __future__ import annotations

from kschedfw.testing.builders import make_cluster, make_node, make_pod
from kschedfw.testing.cli import CliResult, run_cli
from kschedfw.testing.contract import ContractError, check_plugin, contract_hints, contract_problems
from kschedfw.testing.harness import PluginHarness, PluginScores, ScoreReport
from kschedfw.testing.profiles import (PluginArgsError, config_for, framework_for, plugin_args, profile_for,
                                       simulate_with)

__all__ = [
    "make_pod", "make_node", "make_cluster", "PluginHarness", "ScoreReport", "PluginScores",
    "check_plugin", "contract_problems", "contract_hints", "ContractError", "run_cli", "CliResult",
    "profile_for", "framework_for", "config_for", "simulate_with", "plugin_args", "PluginArgsError",
]

try:
    import pytest
except ImportError:  # the kit works without pytest; only the fixtures need it
    pytest = None

if pytest is not None:
    @pytest.fixture(name="make_pod")
    def _make_pod_fixture():
        return make_pod

    @pytest.fixture(name="make_node")
    def _make_node_fixture():
        return make_node

    @pytest.fixture
    def kschedfw_cli():
        return run_cli
