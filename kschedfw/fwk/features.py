"""Feature gates kschedfw honours, with their v1.36 defaults (kube-scheduler ``--feature-gates``).

One :class:`FeatureGates` value is built from the command line and passed explicitly to config
loading and validation, the scheduler and, through ``Handle.feature_gates``, the plugins; there is
no module-level gate state. Plugins read the gates they care about when they are built (upstream
hands each plugin factory a ``feature.Features``).
"""

from __future__ import annotations

from typing import Iterator, Mapping

#: v1.36 defaults of the gates that change what kschedfw does.
DEFAULT_FEATURE_GATES: dict[str, bool] = {
    "TaintTolerationComparisonOperators": False,  # alpha
    "SchedulerAsyncPreemption": True,             # beta
    "StorageCapacityScoring": False,              # alpha
    "VolumeLimitScaling": False,                  # alpha
    "DRASchedulerFilterTimeout": True,            # beta
    "DRADeviceBindingConditions": True,           # beta
    "DRAResourceClaimDeviceStatus": True,         # beta
    "DRADeviceTaints": True,                      # beta: taints on devices keep pods off them
    "DRAExtendedResource": True,                  # beta: extended resources backed by a DeviceClass
    "OpportunisticBatching": True,                # beta: reuse a signature's sorted scored nodes
    # workload-aware scheduling (scheduling.k8s.io/v1alpha2 Workload and PodGroup), all alpha
    "GenericWorkload": False,                     # pods join PodGroups; the pod-group cycle
    "GangScheduling": False,                      # the GangScheduling plugin in the defaults
    "TopologyAwareWorkloadScheduling": False,     # placements: TopologyPlacementGenerator, PodGroupPodsCount
    "WorkloadAwarePreemption": False,             # preemption for a whole PodGroup
    "DRAWorkloadResourceClaims": False,           # ResourceClaims shared by a PodGroup
}

#: Gates that may be on only when all of theirs are (upstream kube_features.go's dependencies).
#: DRAWorkloadResourceClaims also depends on DynamicResourceAllocation, which is GA and locked on.
FEATURE_DEPENDENCIES: dict[str, tuple[str, ...]] = {
    "GangScheduling": ("GenericWorkload",),
    "TopologyAwareWorkloadScheduling": ("GenericWorkload",),
    "WorkloadAwarePreemption": ("GangScheduling",),
    "DRAWorkloadResourceClaims": ("GenericWorkload",),
}


class FeatureGateError(ValueError):
    pass


class FeatureGates(Mapping[str, bool]):
    """An immutable set of gate values: the v1.36 defaults with some gates set."""

    __slots__ = ("_values",)

    def __init__(self, overrides: Mapping[str, bool] | None = None) -> None:
        values = dict(DEFAULT_FEATURE_GATES)
        for name, value in (overrides or {}).items():
            if name not in DEFAULT_FEATURE_GATES:
                known = ", ".join(sorted(DEFAULT_FEATURE_GATES))
                raise FeatureGateError(f"unrecognized feature gate: {name} (kschedfw knows {known})")
            values[name] = bool(value)
        check_dependencies(values)
        self._values = values

    @classmethod
    def parse(cls, text: str) -> "FeatureGates":
        """``"A=true,B=false"`` (kube-scheduler's ``--feature-gates``); unknown gates are errors."""
        return cls(parse_feature_gates(text))

    def enabled(self, name: str) -> bool:
        return self._values.get(name, False)

    def __getitem__(self, name: str) -> bool:
        return self._values[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

    def __repr__(self) -> str:
        changed = {k: v for k, v in self._values.items() if DEFAULT_FEATURE_GATES[k] != v}
        return f"FeatureGates({changed!r})"


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
    check_dependencies(gates)
    return gates


def check_dependencies(gates: Mapping[str, bool]) -> None:
    """Refuse a gate that is on while a gate it depends on is off, with component-base's
    message (one line per such gate, as its aggregated error lists them)."""
    errors = []
    for feature, deps in FEATURE_DEPENDENCIES.items():
        if not gates.get(feature, False):
            continue
        disabled = [dep for dep in deps if not gates.get(dep, False)]
        if disabled:
            errors.append(f"{feature} is enabled, but depends on features that are disabled: [{' '.join(disabled)}]")
    if len(errors) == 1:
        raise FeatureGateError(errors[0])
    if errors:
        raise FeatureGateError(f"[{', '.join(errors)}]")


def enabled(gates: Mapping[str, bool] | None, name: str) -> bool:
    """A gate's value in ``gates`` (a Handle's), else its v1.36 default."""
    if gates is not None and name in gates:
        return bool(gates[name])
    return DEFAULT_FEATURE_GATES.get(name, False)
