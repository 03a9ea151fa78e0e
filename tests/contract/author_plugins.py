"""Plugins written as an outside author would, installed for the tests through a
``kschedfw.plugins`` entry point (see :func:`install`), so ``simulate``, ``run`` and the
scheduler_perf harness find them exactly as they find a third-party package."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kschedfw import hookimpl
from kschedfw.fwk.events import ActionType, ClusterEvent, ClusterEventWithHint, EventResource, QueueingHint
from kschedfw.fwk.status import Status

ENTRY_POINTS = {"OnlyNode": "OnlyNode", "PrefersGood": "PrefersGood", "Misspelled": "Misspelled",
                "OpenNodes": "OpenNodes"}


class OnlyNode:
    """The issue's plugin: Filter without ``state``."""
    name = "OnlyNode"

    def __init__(self, args: Any, handle: Any) -> None:
        pass

    @hookimpl
    def filter(self, pod: Any, node_info: Any) -> Status | None:
        if node_info.node.labels.get("bad") == "true":
            return Status.unresolvable("bad node")
        return None


class PrefersGood:
    """Score with only ``pod`` and ``node_info``: a bad node would win, were it not filtered."""
    name = "PrefersGood"

    def __init__(self, args: Any, handle: Any) -> None:
        pass

    @hookimpl
    def score(self, pod: Any, node_info: Any) -> tuple[int, Status | None]:
        labels = node_info.node.labels
        return (100 if labels.get("bad") == "true" else 50 if labels.get("good") == "true" else 0), None


class Misspelled:
    """``nodeinfo`` is not an argument of the filter hook: refused when the plugin loads."""
    name = "Misspelled"

    def __init__(self, args: Any, handle: Any) -> None:
        pass

    @hookimpl
    def filter(self, state: Any, pod: Any, nodeinfo: Any) -> None:
        return None


class OpenNodes:
    """Pods go only to the node named by their ``open-nodes/wants`` annotation, once that node is
    open (labelled ``open=true``). Which nodes are open is the plugin's own state, kept by a Node
    subscription; its QueueingHint reads that state, so it is right only if the subscription
    heard a change before the scheduler's handlers ran the hint. ``hints`` records each hint."""
    name = "OpenNodes"
    hints: list[tuple[str, str, str]] = []

    def __init__(self, args: Any, handle: Any) -> None:
        self.open: set[str] = set()
        for node in handle.lister.list("Node"):
            self._on_node_object(node)
        handle.subscribe("Node", self._on_node)

    def _on_node(self, event: Any) -> None:
        if event.new is None:
            self.open.discard(event.old.name)
        else:
            self._on_node_object(event.new)

    def _on_node_object(self, node: Any) -> None:
        if node.labels.get("open") == "true":
            self.open.add(node.name)
        else:
            self.open.discard(node.name)

    @hookimpl
    def filter(self, pod: Any, node_info: Any) -> Status | None:
        name = node_info.node.name
        if pod.annotations.get("open-nodes/wants") != name or name not in self.open:
            return Status.unresolvable("node not open for this pod")
        return None

    @hookimpl
    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [ClusterEventWithHint(ClusterEvent(EventResource.Node, ActionType.Add | ActionType.UpdateNodeLabel))]

    @hookimpl
    def queueing_hint(self, event: Any, pod: Any, old_obj: Any, new_obj: Any) -> QueueingHint:
        if new_obj is None or pod.annotations.get("open-nodes/wants") != new_obj.name:
            return QueueingHint.QueueSkip
        hint = QueueingHint.Queue if new_obj.name in self.open else QueueingHint.QueueSkip
        OpenNodes.hints.append((pod.name, new_obj.name, hint.name))
        return hint


def install(target: Path) -> Path:
    """Write ``target/author_plugins-0.1.dist-info``, what installing a package offering these
    plugins leaves for entry-point discovery; put ``target`` and the repository on PYTHONPATH."""
    dist = target / "author_plugins-0.1.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: author-plugins\nVersion: 0.1\n")
    lines = ["[kschedfw.plugins]"] + [f"{name} = {__name__}:{cls}" for name, cls in ENTRY_POINTS.items()]
    (dist / "entry_points.txt").write_text("\n".join(lines) + "\n")
    return target
