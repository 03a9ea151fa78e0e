"""The one ``--feature-gates`` option: parsed once per command into a :class:`FeatureGates`
that the command passes explicitly to config loading, validation and the scheduler."""

from __future__ import annotations

import argparse
import sys

from kschedfw.fwk.features import FeatureGateError, FeatureGates


def add_feature_gates_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--feature-gates", default="", metavar="NAME=true|false,...",
                        help="kube-scheduler feature gates (v1.36 defaults otherwise), e.g. "
                             "TaintTolerationComparisonOperators=true")


def feature_gates_of(args: argparse.Namespace, command: str) -> FeatureGates | None:
    """The gates named on the command line; None (after a message on stderr) if they are bad."""
    return parse_gates_or_report(getattr(args, "feature_gates", "") or "", command)


def parse_gates_or_report(text: str, command: str) -> FeatureGates | None:
    """One ``--feature-gates`` value; None (after a message on stderr) if it is bad."""
    try:
        return FeatureGates.parse(text)
    except FeatureGateError as exc:
        print(f"kschedfw {command}: --feature-gates: {exc}", file=sys.stderr)
        return None
