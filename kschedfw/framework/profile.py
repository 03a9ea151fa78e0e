"""The scheduler's profile factory (upstream ``pkg/scheduler/profile``): one profile's Handle and
Framework built together, every facet given at construction, so a plugin's constructor sees a
complete Handle (nominator, waiting pods, extenders, metrics, the runtime) and nothing is
attached to it afterwards."""

from __future__ import annotations

import random
from typing import TYPE_CHECKING, Callable, Iterable, Mapping, Protocol, Sequence

from kschedfw.framework.batch import BatchMetrics
from kschedfw.framework.handle import Handle
from kschedfw.framework.instrumented import Instrumentation
from kschedfw.framework.runtime import Framework
from kschedfw.fwk.interface import PreemptionMetrics

if TYPE_CHECKING:
    from kschedfw.api import Pod
    from kschedfw.cache.snapshot import Snapshot
    from kschedfw.config.expand import ResolvedProfile
    from kschedfw.framework.registry import Registry
    from kschedfw.fwk.interface import Backend, Extender, Nominator, WaitingPodHandle
    from kschedfw.fwk.podgroup import PodGroupManager

__all__ = ["new_profile", "ProfileMetrics"]


class ProfileMetrics(Instrumentation, PreemptionMetrics, Protocol):
    """Metrics a profile reports to: its timed plans' and its preemption's."""


def new_profile(profile: "ResolvedProfile", registry: "Registry", backend: "Backend", *,
                snapshot: "Snapshot", nominator: "Nominator", waiting_pods: Mapping[str, "WaitingPodHandle"],
                activate: Callable[[Iterable["Pod"]], None], extenders: Sequence["Extender"] = (),
                metrics: ProfileMetrics | None = None, feature_gates: Mapping[str, bool] | None = None,
                fast_paths: bool = True, batch_metrics: BatchMetrics | None = None,
                seed: int = 0, pod_group_manager: "PodGroupManager | None" = None) -> Framework:
    """The runtime of ``profile``: its plugins built with a Handle on ``backend`` holding every
    facet; its batch (gate OpportunisticBatching) breaks ties with a generator seeded from
    ``seed`` and the profile's name, so a run is reproducible. ``pod_group_manager``: the live
    PodGroup states (the scheduler's cache)."""
    handle = Handle.factory(backend=backend, snapshot=snapshot, nominator=nominator, waiting_pods=waiting_pods,
                            event_recorder=backend.recorder_for(profile.scheduler_name), activate=activate,
                            feature_gates=feature_gates, extenders=extenders, metrics=metrics,
                            pod_group_manager=pod_group_manager)
    fwk = Framework(profile, registry, handle=handle, fast_paths=fast_paths, batch_metrics=batch_metrics)
    if metrics is not None:
        fwk.instrument(metrics)
    if fwk.batch is not None:
        fwk.batch.rng = random.Random(f"batch/{seed}/{profile.scheduler_name}")
    return fwk
