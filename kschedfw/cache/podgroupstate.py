"""The scheduler's PodGroup states: which pods of each group it knows, and which of them are
unscheduled, assumed or assigned (upstream ``backend/cache/podgroupstate.go``).

The cache keeps one :class:`PodGroupState` per group with a known pod, from pod events and from
its own assume and forget; before each cycle the snapshot gets a copy of every group that
changed since (a generation, drawn from one counter so a group deleted and created again never
reuses one), which a pod-group cycle may then assume and forget pods in without touching the
cache's.
"""

from __future__ import annotations

import itertools
from typing import TYPE_CHECKING

from kschedfw.fwk.interface import NotFound

if TYPE_CHECKING:
    from kschedfw.api import Pod

__all__ = ["PodGroupState", "PodGroupStates", "pod_group_key"]

_generations = itertools.count(1)

PodGroupKey = tuple[str, str]  # (namespace, name)


def pod_group_key(pod: "Pod") -> PodGroupKey | None:
    """The group ``pod`` belongs to, or None (no ``spec.schedulingGroup.podGroupName``)."""
    group = pod.scheduling_group
    if group is None or group.pod_group_name is None:
        return None
    return pod.namespace, group.pod_group_name


class PodGroupState:
    """One group's pods by uid, each unscheduled, assumed or assigned (see
    :class:`kschedfw.fwk.PodGroupState`). Dicts, not sets, so every listing comes out in the
    order the pods arrived."""

    __slots__ = ("generation", "_all", "_unscheduled", "_assumed", "_assigned")

    def __init__(self) -> None:
        #: bumped on every change, so a snapshot copies only the groups that changed
        self.generation = 0
        self._all: dict[str, Pod] = {}
        self._unscheduled: dict[str, None] = {}
        self._assumed: dict[str, Pod] = {}  # as assumed: with the node the cycle chose
        self._assigned: dict[str, None] = {}

    # -- changes
    def add_pod(self, pod: "Pod") -> None:
        """A pod of the group: assigned when it has a node, else unscheduled."""
        self.generation = next(_generations)
        self._all[pod.uid] = pod
        if pod.node_name:
            self._assigned[pod.uid] = None
        else:
            self._unscheduled[pod.uid] = None

    def update_pod(self, old: "Pod", new: "Pod") -> None:
        """The pod changed; bound since ``old``, it is assigned from now on."""
        self.generation = next(_generations)
        self._all[new.uid] = new
        if not old.node_name and new.node_name:
            self._assigned[new.uid] = None
            self._unscheduled.pop(new.uid, None)
            self._assumed.pop(new.uid, None)

    def delete_pod(self, uid: str) -> None:
        self.generation = next(_generations)
        self._all.pop(uid, None)
        self._unscheduled.pop(uid, None)
        self._assumed.pop(uid, None)
        self._assigned.pop(uid, None)

    def assume_pod(self, pod: "Pod") -> None:
        """The pod passed Reserve on its node; a pod the group does not hold (deleted meanwhile)
        is ignored, and one already bound stays assigned."""
        stored = self._all.get(pod.uid)
        if stored is None:
            return
        self.generation = next(_generations)
        if stored.node_name:
            self._assigned[pod.uid] = None
        else:
            self._assumed[pod.uid] = pod
        self._unscheduled.pop(pod.uid, None)

    def forget_pod(self, uid: str) -> None:
        """Back from assumed: to unscheduled, or to assigned when the stored pod is bound."""
        pod = self._all.get(uid)
        if pod is None:
            return
        self.generation = next(_generations)
        self._assumed.pop(uid, None)
        if pod.node_name:
            self._assigned[uid] = None
        else:
            self._unscheduled[uid] = None

    def empty(self) -> bool:
        return not self._all

    def snapshot(self) -> "PodGroupState":
        """A copy with the same generation, independent of this state from now on."""
        copy = PodGroupState.__new__(PodGroupState)
        copy.generation = self.generation
        copy._all = dict(self._all)
        copy._unscheduled = dict(self._unscheduled)
        copy._assumed = dict(self._assumed)
        copy._assigned = dict(self._assigned)
        return copy

    # -- what plugins read (kschedfw.fwk.PodGroupState)
    def all_pods(self) -> set[str]:
        return set(self._all)

    def all_pods_count(self) -> int:
        return len(self._all)

    def unscheduled_pods(self) -> dict[str, "Pod"]:
        pods = self._all
        return {pods[uid].name: pods[uid] for uid in self._unscheduled}

    def assumed_pods(self) -> set[str]:
        return set(self._assumed)

    def assigned_pods(self) -> set[str]:
        return set(self._assigned)

    def scheduled_pods(self) -> list["Pod"]:
        pods = self._all
        return [pods[uid] for uid in self._assigned] + list(self._assumed.values())

    def scheduled_pods_count(self) -> int:
        return len(self._assumed) + len(self._assigned)


class PodGroupStates:
    """Every known group's state by (namespace, name): the cache's live table, or a snapshot's
    copy (a :class:`kschedfw.fwk.PodGroupStateLister` either way). Each method takes a pod of
    some group (:func:`pod_group_key` not None)."""

    __slots__ = ("_changed", "_copied_to", "states")

    def __init__(self) -> None:
        self.states: dict[PodGroupKey, PodGroupState] = {}
        #: the groups changed since the last :meth:`copy_into` ``_copied_to``: a cycle copies
        #: those, not every group (a pod-group cycle refreshes its snapshot after each pod)
        self._changed: dict[PodGroupKey, None] = {}
        self._copied_to: PodGroupStates | None = None

    @classmethod
    def from_pods(cls, pods: "list[Pod]") -> "PodGroupStates":
        """The states of the groups of ``pods`` (assigned or not), as a snapshot built from
        objects holds them."""
        table = cls()
        for pod in pods:
            if pod.scheduling_group is not None:
                table.add_pod(pod)
        return table

    def get(self, namespace: str, pod_group_name: str) -> PodGroupState:
        state = self.states.get((namespace, pod_group_name))
        if state is None:
            raise NotFound(f"pod group state not found for pod group {namespace}/{pod_group_name}")
        return state

    def add_pod(self, pod: "Pod") -> None:
        key = pod_group_key(pod)
        if key is None:
            return
        self._changed[key] = None
        state = self.states.get(key)
        if state is None:
            state = self.states[key] = PodGroupState()
        state.add_pod(pod)

    def update_pod(self, old: "Pod", new: "Pod") -> None:
        """Upstream logs a missed add when the group is unknown; nothing changes then."""
        key = pod_group_key(new)
        if key is not None and (state := self.states.get(key)) is not None:
            self._changed[key] = None
            state.update_pod(old, new)

    def remove_pod(self, pod: "Pod") -> None:
        """The pod left; a group with no pods left is dropped."""
        key = pod_group_key(pod)
        if key is None or (state := self.states.get(key)) is None:
            return
        self._changed[key] = None
        state.delete_pod(pod.uid)
        if state.empty():
            del self.states[key]

    def assume_pod(self, pod: "Pod") -> None:
        """A pod of a group not known yet starts the group, holding that pod."""
        key = pod_group_key(pod)
        if key is None:
            return
        self._changed[key] = None
        state = self.states.get(key)
        if state is None:
            state = self.states[key] = PodGroupState()
            state._all[pod.uid] = pod
        state.assume_pod(pod)

    def forget_pod(self, pod: "Pod") -> None:
        key = pod_group_key(pod)
        if key is not None and (state := self.states.get(key)) is not None:
            self._changed[key] = None
            state.forget_pod(pod.uid)

    def copy_into(self, snapshot: "PodGroupStates") -> None:
        """Bring ``snapshot`` up to date: drop the groups gone, copy those whose generation moved.
        Only the groups changed since the last copy are looked at when ``snapshot`` is the one
        copied to last time (the cache's), every group otherwise."""
        live = self.states
        held = snapshot.states
        keys = self._changed if snapshot is self._copied_to else list(held) + list(live)
        for key in keys:
            state = live.get(key)
            if state is None:
                held.pop(key, None)
                continue
            kept = held.get(key)
            if kept is None or kept.generation != state.generation:
                held[key] = state.snapshot()
        self._changed = {}
        self._copied_to = snapshot
