"""Testing kit for plugin authors: builders, a harness, a contract checker, the CLI in-process.

The builders (:mod:`kschedfw.testing.builders`) make Pods, Nodes, PVCs, PVs, StorageClasses,
CSINodes, PDBs, PriorityClasses and Namespaces from manifests; kschedfw's own tests use them too.

Plain functions work anywhere; as an opt-in pytest plugin (``pytest_plugins =
["kschedfw.testing"]`` in a conftest) it also gives the fixtures ``make_pod``, ``make_node`` and
``kschedfw_cli``.
"""

from __future__ import annotations

from typing import Callable

from kschedfw.api import Node, Pod
from kschedfw.testing.builders import (HOSTNAME, REGION, ZONE, container, label_selector, make_cluster,
                                       make_csi_node, make_namespace, make_node, make_pdb, make_pod,
                                       make_priority_class, make_pv, make_pvc, make_storage_class,
                                       node_affinity, owner_reference, pod_affinity_term, pvc_volume,
                                       spread_constraint, taint, toleration)
from kschedfw.testing.cli import CliResult, run_cli
from kschedfw.testing.contract import ContractError, check_plugin, contract_hints, contract_problems
from kschedfw.testing.harness import PluginHarness, PluginScores, PointReport
from kschedfw.testing.hints import assert_hints_sound, audit_hints
from kschedfw.testing.profiles import (PluginArgsError, config_for, framework_for, plugin_args, profile_for,
                                       simulate_with)

__all__ = [
    "make_pod", "make_node", "make_cluster", "make_pvc", "make_pv", "make_storage_class", "make_csi_node",
    "make_pdb", "make_priority_class", "make_namespace", "container", "toleration", "taint", "label_selector",
    "node_affinity", "pod_affinity_term", "spread_constraint", "pvc_volume", "owner_reference",
    "HOSTNAME", "ZONE", "REGION", "PluginHarness", "PointReport", "PluginScores",
    "check_plugin", "contract_problems", "contract_hints", "ContractError", "run_cli", "CliResult",
    "profile_for", "framework_for", "config_for", "simulate_with", "plugin_args", "PluginArgsError",
    "audit_hints", "assert_hints_sound",
]

try:
    import pytest
except ImportError:  # the kit works without pytest; only the fixtures need it
    pytest = None  # type: ignore[assignment]

if pytest is not None:
    @pytest.fixture(name="make_pod")
    def _make_pod_fixture() -> Callable[..., Pod]:
        return make_pod

    @pytest.fixture(name="make_node")
    def _make_node_fixture() -> Callable[..., Node]:
        return make_node

    @pytest.fixture
    def kschedfw_cli() -> Callable[..., CliResult]:
        return run_cli
