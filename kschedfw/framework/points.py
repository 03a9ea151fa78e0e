"""The extension points that call each of their plugins once per call: the queue's PreEnqueue
and SignPod, PreFilter and its AddPod/RemovePod extensions, PostFilter, PreScore, and the
Reserve, Permit and binding points (upstream RunXxxPlugins). Filter and Score, which run per
node, are :mod:`~kschedfw.framework.filtering` and :mod:`~kschedfw.framework.scoring`.

Each rule (who stops the loop, which codes are kept, how an Error is worded) is upstream's; every
return value goes through :mod:`~kschedfw.framework.plugin_results` first.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

from kschedfw.framework.batch import PodSignature
from kschedfw.fwk.cycle_state import CycleState
from kschedfw.framework.guard import PluginFaults
from kschedfw.framework.plans import Plan, Plans
from kschedfw.framework.plugin_results import checked_fragments, checked_pair, checked_status, permit_returned, raised
from kschedfw.fwk.status import Code, Status
from kschedfw.fwk.types import (MAX_PERMIT_TIMEOUT_SECONDS, NodeInfo, NodeToStatus, PostFilterResult,
                                PreBindPreFlightResult, PreFilterResult)

if TYPE_CHECKING:
    from kschedfw.api import Pod

__all__ = ["ExtensionPoints", "SCHEDULER_NAME_SIGNER_NAME"]

#: The signature fragment every pod gets (upstream fwk.SchedulerNameSignerName).
SCHEDULER_NAME_SIGNER_NAME = "v1.Pod.Spec.SchedulerName"


class ExtensionPoints:
    """:class:`~kschedfw.framework.runtime.Framework`'s once-per-call extension points, each run
    over the :class:`~kschedfw.framework.plans.Plans` it is given (the plain plans, or their timed
    copy in a cycle that records plugin metrics: the Framework chooses). Keeps which signer
    refused last (:meth:`sign_pod`)."""

    def __init__(self, faults: PluginFaults) -> None:
        self.faults = faults
        self._last_refuser: int | None = None

    def run_pre_enqueue_plugins(self, plans: Plans, pod: "Pod", gating_plugin: str = "") -> Status | None:
        """First non-success; the plugin that gated the pod last time runs first, as upstream."""
        plugins = plans.pre_enqueue
        if gating_plugin and len(plugins) > 1:
            plugins = tuple(sorted(plugins, key=lambda entry: entry[0] != gating_plugin))
        for name, fn in plugins:
            try:
                status = checked_status(self.faults, name, "PreEnqueue", fn(pod))
            except Exception as exc:
                return raised(self.faults, name, "PreEnqueue", exc)
            if status is not None and not status.is_success():
                status.plugin = name
                return status
        return None

    def sign_pod(self, plans: Plans, pod: "Pod") -> PodSignature:
        """Upstream SignPod: the pod's scheduling signature, or None when the profile cannot
        sign (a plugin lacks sign_pod) or a plugin refuses this pod (non-Success, raised, wrong
        type). Equal signatures mean equal Filter and Score results on the same nodes.

        The plugin that refused the previous pod is asked first: if it refuses again the answer
        (None) is the same as upstream's, without asking the plugins before it (with the default
        profile PodTopologySpread refuses every pod, after seven others in profile order)."""
        if plans.unsigned:
            return None
        signers = plans.signers
        refuser = self._last_refuser
        if refuser is not None and self._fragments(*signers[refuser], pod) is None:
            return None
        signature: dict[str, Any] = {SCHEDULER_NAME_SIGNER_NAME: pod.scheduler_name}
        for index, (name, fn) in enumerate(signers):
            fragments = self._fragments(name, fn, pod)
            if fragments is None:
                self._last_refuser = index
                return None
            for fragment in fragments:
                signature[fragment.key] = fragment.value
        return signature

    def _fragments(self, name: str, fn: Callable[..., Any], pod: "Pod") -> list[Any] | tuple[Any, ...] | None:
        """One plugin's fragments (empty when it returned none), None when it refused."""
        try:
            out = fn(pod)
        except Exception as exc:
            raised(self.faults, name, "Sign", exc)
            return None
        return checked_fragments(self.faults, name, out)

    def run_pre_filter_plugins(self, plans: Plans, state: CycleState, pod: "Pod", nodes: list[NodeInfo]
                               ) -> tuple[PreFilterResult | None, Status | None, set[str]]:
        """Upstream RunPreFilterPlugins: (merged result, status, plugins). On a rejection the
        plugins are those that rejected; on success, those whose result narrowed the nodes."""
        result: PreFilterResult | None = None
        rejectors: set[str] = set()
        returned: Status | None = None
        narrowing: list[str] = []
        for name, fn in plans.pre_filter:
            try:
                plugin_result, status = checked_pair(self.faults, name, "PreFilter", fn(state, pod, nodes), PreFilterResult)
            except Exception as exc:
                status = raised(self.faults, name, "PreFilter", exc)
            if status is not None and status.is_skip():
                state.skip_filter_plugins.add(name)
                continue
            if status is not None and not status.is_success():
                status.plugin = name
                if status.code in (Code.Unschedulable, Code.UnschedulableAndUnresolvable):
                    rejectors.add(name)
                    if status.code is Code.UnschedulableAndUnresolvable:
                        return None, status, rejectors
                    returned = status
                    continue
                return None, Status(Code.Error, (f'running PreFilter plugin "{name}": {status.message()}',), plugin=name), rejectors
            if plugin_result is not None and not plugin_result.all_nodes():
                narrowing.append(name)
                result = plugin_result if result is None else result.merge(plugin_result)
                if result.node_names is not None and not result.node_names:
                    if len(narrowing) == 1:
                        msg = f"node(s) didn't satisfy plugin {narrowing[0]}"
                    else:
                        msg = f"node(s) didn't satisfy plugin(s) [{' '.join(narrowing)}] simultaneously"
                    rejectors.update(narrowing)
                    return result, Status(Code.UnschedulableAndUnresolvable, (msg,), plugin=narrowing[0]), rejectors
        skip = state.skip_filter_plugins
        filter_plugins = plans.filter
        state.filter_plan = tuple(p for p in filter_plugins if p[0] not in skip) if skip else filter_plugins
        if returned is not None:
            return result, returned, rejectors
        return result, None, set(narrowing)

    def _run_extension(self, plugins: Plan, state: CycleState, pod: "Pod", other: "Pod",
                       node_info: NodeInfo, what: str) -> Status | None:
        for name, fn in plugins:
            if name in state.skip_filter_plugins:
                continue
            try:
                status = checked_status(self.faults, name, what, fn(state, pod, other, node_info))
            except Exception as exc:
                status = raised(self.faults, name, what, exc)
            if status is not None and not status.is_success():
                return Status(Code.Error, (f'running {what} on PreFilter plugin "{name}": {status.message()}',), plugin=name)
        return None

    def run_pre_filter_extension_add_pod(self, plans: Plans, state: CycleState, pod: "Pod", pod_to_add: "Pod",
                                         node_info: NodeInfo) -> Status | None:
        return self._run_extension(plans.pre_filter_add_pod, state, pod, pod_to_add, node_info, "AddPod")

    def run_pre_filter_extension_remove_pod(self, plans: Plans, state: CycleState, pod: "Pod", pod_to_remove: "Pod",
                                            node_info: NodeInfo) -> Status | None:
        return self._run_extension(plans.pre_filter_remove_pod, state, pod, pod_to_remove, node_info,
                                   "RemovePod")

    def run_post_filter_plugins(self, plans: Plans, state: CycleState, pod: "Pod", node_to_status: NodeToStatus
                                ) -> tuple[PostFilterResult | None, Status]:
        """Upstream RunPostFilterPlugins: first Success or UAU wins; rejections' messages join."""
        reasons: list[str] = []
        rejector = ""
        result: PostFilterResult | None = None
        for name, fn in plans.post_filter:
            try:
                plugin_result, status = checked_pair(self.faults, name, "PostFilter", fn(state, pod, node_to_status),
                                                   PostFilterResult)
            except Exception as exc:
                return None, raised(self.faults, name, "PostFilter", exc)
            if status is None or status.is_success():
                return plugin_result, Status(Code.Success, plugin=name)
            if status.code is Code.UnschedulableAndUnresolvable:
                status.plugin = name
                return plugin_result, status
            if not status.is_rejected():
                return None, Status(Code.Error, (status.message(),), plugin=name)
            if plugin_result is not None and plugin_result.nominating_info is not None \
                    and plugin_result.nominating_info.mode.value != 0:
                result = plugin_result
            reasons.extend(status.reasons)
            rejector = rejector or name
        return result, Status(Code.Unschedulable, tuple(reasons), plugin=rejector)

    def run_pod_group_post_filter(self, name: str, fn: Callable[..., Any], pod_group: Any, pods: list["Pod"],
                                  scheduling_func: Callable[[], "Status | None"]) -> Status:
        """One PodGroupPostFilter plugin's call (workload-aware preemption): Success for None."""
        try:
            status = checked_status(self.faults, name, "PodGroupPostFilter", fn(pod_group, pods, scheduling_func))
        except Exception as exc:
            return raised(self.faults, name, "PodGroupPostFilter", exc)
        return status if status is not None else Status(Code.Success, plugin=name)

    def run_pre_score_plugins(self, plans: Plans, state: CycleState, pod: "Pod", nodes: list[NodeInfo]) -> Status | None:
        for name, fn in plans.pre_score:
            try:
                status = checked_status(self.faults, name, "PreScore", fn(state, pod, nodes))
            except Exception as exc:
                status = raised(self.faults, name, "PreScore", exc)
            if status is None or status.is_success():
                continue
            if status.is_skip():
                state.skip_score_plugins.add(name)
                continue
            return Status(Code.Error, (f'running PreScore plugin "{name}": {status.message()}',), plugin=name)
        return None

    def run_reserve_plugins_reserve(self, plans: Plans, state: CycleState, pod: "Pod", node_name: str) -> Status | None:
        return self._run_until_failure(plans.reserve, "Reserve", state, pod, node_name)

    def run_reserve_plugins_unreserve(self, plans: Plans, state: CycleState, pod: "Pod", node_name: str) -> None:
        for name, fn in plans.unreserve:
            try:
                fn(state, pod, node_name)
            except Exception as exc:
                raised(self.faults, name, "Unreserve", exc)

    def run_permit_plugins(self, plans: Plans, state: CycleState, pod: "Pod", node_name: str, now: float
                           ) -> tuple[Status | None, dict[str, float]]:
        """Returns (status, {plugin: timeout}) — Wait when any plugin asked to wait."""
        waits: dict[str, float] = {}
        wait_status: Status | None = None
        for name, fn in plans.permit:
            timeout: Any = 0.0
            try:
                status, timeout = permit_returned(self.faults, name, fn(state, pod, node_name))
            except Exception as exc:
                status = raised(self.faults, name, "Permit", exc)
            if status is None or status.is_success():
                continue
            if status.is_rejected():
                status.plugin = name
                return status, {}
            if status.is_wait():
                waits[name] = min(float(timeout or 0.0), MAX_PERMIT_TIMEOUT_SECONDS)
                wait_status = status
                continue
            return Status(Code.Error, (f'running Permit plugin "{name}": {status.message()}',), plugin=name), {}
        if wait_status is not None:
            # v1.36: the last waiting plugin's reasons, then the runtime's
            return Status(Code.Wait, (*wait_status.reasons,
                                      "one or more plugins asked to wait and no plugin rejected pod")), waits
        return None, {}

    # ------------------------------------------------------------------ binding cycle
    def run_pre_bind_pre_flights(self, plans: Plans, state: CycleState, pod: "Pod", node_name: str) -> Status | None:
        """Success if any plugin has PreBind work, Skip if none; Skip marks a plugin's PreBind skipped."""
        any_success = False
        plugins_with_pre_bind = {name for name, _ in plans.pre_bind}
        for name, fn in plans.pre_bind_pre_flight:
            try:
                _, status = checked_pair(self.faults, name, "PreBindPreFlight", fn(state, pod, node_name), PreBindPreFlightResult)
            except Exception as exc:
                status = raised(self.faults, name, "PreBindPreFlight", exc)
            if status is None or status.is_success():
                any_success = True
            elif status.is_skip():
                state.skip_pre_bind_plugins.add(name)
            else:
                return Status(Code.Error, (f'running PreBindPreFlight "{name}": {status.message()}',), plugin=name)
        # plugins without a pre-flight hook always have work to do
        if plugins_with_pre_bind - {name for name, _ in plans.pre_bind_pre_flight}:
            any_success = True
        return None if any_success else Status.skip()

    def run_pre_bind_plugins(self, plans: Plans, state: CycleState, pod: "Pod", node_name: str) -> Status | None:
        return self._run_until_failure(plans.pre_bind, "PreBind", state, pod, node_name,
                                       skip=state.skip_pre_bind_plugins)

    def run_bind_plugins(self, plans: Plans, state: CycleState, pod: "Pod", node_name: str) -> Status:
        for name, fn in plans.bind:
            try:
                status = checked_status(self.faults, name, "Bind", fn(state, pod, node_name))
            except Exception as exc:
                status = raised(self.faults, name, "Bind", exc)
            if status is not None and status.is_skip():
                continue
            if status is None or status.is_success():
                return Status(Code.Success, plugin=name)
            if status.is_rejected():
                status.plugin = name
                return status
            return Status(Code.Error, (f'running Bind plugin "{name}": {status.message()}',), plugin=name)
        return Status.skip()

    def run_post_bind_plugins(self, plans: Plans, state: CycleState, pod: "Pod", node_name: str) -> None:
        for name, fn in plans.post_bind:
            try:
                fn(state, pod, node_name)
            except Exception as exc:
                raised(self.faults, name, "PostBind", exc)

    def _run_until_failure(self, plugins: Plan, point: str, state: CycleState, pod: "Pod", node_name: str,
                           skip: set[str] | frozenset[str] = frozenset()) -> Status | None:
        """Reserve and PreBind: stop at the first non-success; rejections keep the plugin, the rest
        become ``running <point> plugin "<name>": ...`` errors."""
        for name, fn in plugins:
            if name in skip:
                continue
            try:
                status = checked_status(self.faults, name, point, fn(state, pod, node_name))
            except Exception as exc:
                status = raised(self.faults, name, point, exc)
            if status is not None and not status.is_success():
                if status.is_rejected():
                    status.plugin = name
                    return status
                return Status(Code.Error, (f'running {point} plugin "{name}": {status.message()}',), plugin=name)
        return None

