"""Feature gates: the table and :class:`FeatureGates` are part of the plugin contract
(:mod:`kschedfw.fwk.features`, read by plugins through ``Handle.feature_gates``); the engine, the
configuration and the command line import them from here."""

from __future__ import annotations

from kschedfw.fwk.features import (DEFAULT_FEATURE_GATES, FeatureGateError, FeatureGates, enabled,
                                   parse_feature_gates)

__all__ = ["DEFAULT_FEATURE_GATES", "FeatureGateError", "FeatureGates", "enabled", "parse_feature_gates"]
