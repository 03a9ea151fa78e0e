"""Feature gates kschedfw honours, with their v1.36 defaults (kube-scheduler ``--feature-gates``).

Gates are process-wide, as upstream's are: the scheduler hands them to plugins through
``Handle.feature_gates``; plugins read the gates they care about when they are built.
"""

from __future__ import annotations

from typing import Mapping

#: v1.36 defaults of the gates that change what kschedfw does.
DEFAULT_FEATURE_GATES: dict[str, bool] = {
    "TaintTolerationComparisonOperators": False,  # alpha
    "SchedulerAsyncPreemption": True,             # beta
    "StorageCapacityScoring": False,              # alpha
    "VolumeLimitScaling": False,                  # alpha
    "DRASchedulerFilterTimeout": True,            # beta
    "DRADeviceBindingConditions": True,           # beta
    "DRAResourceClaimDeviceStatus": True,         # beta
}


class FeatureGateError(ValueError):
    pass


def parse_feature_gates(text: str) -> dict[str, bool]:
    """``"A=true,B=false"`` -> the v1.36 defaults with those gates set; unknown gates are errors."""
    gates = dict(DEFAULT_FEATURE_GATES)
    for item in filter(None, (part.strip() for part in text.split(","))):
        name, sep, value = item.partition("=")
        if not sep or value.strip().lower() not in ("true", "false"):
            raise FeatureGateError(f"invalid feature gate {item!r}: expected NAME=true|false")
        name = name.strip()
        if name not in DEFAULT_FEATURE_GATES:
            known = ", ".join(sorted(DEFAULT_FEATURE_GATES))
            raise FeatureGateError(f"unrecognized feature gate: {name} (kschedfw knows {known})")
        gates[name] = value.strip().lower() == "true"
    return gates


def enabled(gates: Mapping[str, bool] | None, name: str) -> bool:
    """A gate's value in ``gates`` (a Handle's), else its v1.36 default."""
    if gates is not None and name in gates:
        return bool(gates[name])
    return DEFAULT_FEATURE_GATES.get(name, False)
