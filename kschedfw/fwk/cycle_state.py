"""CycleState: per-scheduling-cycle storage that plugins share within one attempt."""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Any, Callable, Protocol

if TYPE_CHECKING:
    from kschedfw.api import Pod


class StateNotFound(KeyError):
    """Raised by :meth:`CycleState.read` for a missing key (upstream ``ErrNotFound``)."""


PODS_TO_ACTIVATE_KEY = "kubernetes.io/pods-to-activate"


class PodsToActivate:
    """The value under :data:`PODS_TO_ACTIVATE_KEY` (upstream framework.PodsToActivate): a plugin
    adds pods to ``map`` (``namespace/name`` -> pod) and the scheduler moves them to the active
    queue after the cycle. Shared, not copied, when the state is cloned."""

    def __init__(self) -> None:
        self.map: dict[str, Pod] = {}

    def clone(self) -> "PodsToActivate":
        return self


#: Written (any true value) by a plugin, in Reserve or Permit, whose PreBind or Bind will wait for
#: the cluster through ``Handle.wait_for``: the embedded cluster then runs that binding cycle where
#: it can wait on the simulated clock (a kschedfw key; upstream's binding goroutine can always block).
BINDING_MAY_WAIT_KEY = "kschedfw.io/binding-may-wait"


class PodGroupCycleState(Protocol):
    """The state of one pod-group cycle, shared by the plugins that work on the group
    (upstream PodGroupCycleState): what the placement hooks are handed. A :class:`CycleState`
    is one."""

    def should_record_plugin_metrics(self) -> bool: ...

    def read(self, key: str) -> Any: ...

    def write(self, key: str, value: Any) -> None: ...

    def delete(self, key: str) -> None: ...


class CycleState:
    """A key/value store for one scheduling cycle.

    Values written here should implement ``clone()`` when a plugin mutates them from
    PreFilterExtensions (preemption dry runs clone the state); otherwise ``copy.copy`` is used.
    """

    __slots__ = ("_data", "skip_filter_plugins", "skip_score_plugins", "skip_pre_bind_plugins",
                 "record_plugin_metrics", "filter_plan", "_pod_group_cycle", "skip_all_post_filter_plugins")

    def __init__(self) -> None:
        self._data: dict[str, Any] = {}
        self.skip_filter_plugins: set[str] = set()
        self.skip_score_plugins: set[str] = set()
        self.skip_pre_bind_plugins: set[str] = set()
        self.record_plugin_metrics = False
        #: Filter plugins to run this cycle (set by the runtime after PreFilter, minus skipped ones)
        self.filter_plan: tuple[tuple[str, Callable[..., Any]], ...] | None = None
        self._pod_group_cycle: PodGroupCycleState | None = None
        #: PostFilter does not run (upstream SkipAllPostFilterPlugins): a pod-group cycle's rerun
        #: inside workload-aware preemption
        self.skip_all_post_filter_plugins = False

    def should_record_plugin_metrics(self) -> bool:
        return self.record_plugin_metrics

    # A pod's cycle inside its group's cycle carries the group's state (upstream
    # IsPodGroupSchedulingCycle and its pair): plugins then read the group from the snapshot.
    def is_pod_group_scheduling_cycle(self) -> bool:
        """Whether this pod is being scheduled within its pod group's cycle."""
        return self._pod_group_cycle is not None

    def get_pod_group_scheduling_cycle(self) -> PodGroupCycleState | None:
        return self._pod_group_cycle

    def set_pod_group_scheduling_cycle(self, state: PodGroupCycleState | None) -> None:
        self._pod_group_cycle = state

    def read(self, key: str) -> Any:
        try:
            return self._data[key]
        except KeyError:
            raise StateNotFound(key) from None

    def get(self, key: str, default: Any = None) -> Any:
        return self._data.get(key, default)

    def write(self, key: str, value: Any) -> None:
        self._data[key] = value

    def delete(self, key: str) -> None:
        self._data.pop(key, None)

    def clone(self) -> "CycleState":
        # HOT PATH (preemption dry runs, nominated-pods filter passes): no __init__, one dict.
        new = CycleState.__new__(CycleState)
        data = {}
        for key, value in self._data.items():
            clone = getattr(value, "clone", None)
            data[key] = clone() if clone is not None and callable(clone) else copy.copy(value)
        new._data = data
        new.skip_filter_plugins = set(self.skip_filter_plugins)
        new.skip_score_plugins = set(self.skip_score_plugins)
        new.skip_pre_bind_plugins = set(self.skip_pre_bind_plugins)
        new.record_plugin_metrics = self.record_plugin_metrics
        new.filter_plan = self.filter_plan
        new._pod_group_cycle = self._pod_group_cycle
        new.skip_all_post_filter_plugins = self.skip_all_post_filter_plugins
        return new
