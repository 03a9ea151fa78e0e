"""The cache's images: for each image name, its size and the nodes that report it (upstream
``cacheImpl.imageStates``, ``addNodeImageStates`` / ``removeNodeImageStates``).

An image's size is the one reported by the node that added the name while no other node had it,
and it stays while any node still reports the name: nodes reporting other sizes for the same
name do not change it (upstream keeps one ImageStateSummary per name, created with the first
node's ``sizeBytes``). Within one node the first image listing a name gives that node's entry."""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterable

from kschedfw.fwk.types import ImageStateSummary, NodeInfo

if TYPE_CHECKING:
    from kschedfw.api import Node

__all__ = ["ImageStates", "fill_image_states"]


class ImageStates:
    """image name -> [size, names of the nodes reporting it]"""

    def __init__(self) -> None:
        self._states: dict[str, tuple[int, set[str]]] = {}

    def add_node(self, node: "Node") -> None:
        for image in node.images:
            for name in image.names:
                state = self._states.get(name)
                if state is None:
                    self._states[name] = (image.size_bytes, {node.name})
                else:
                    state[1].add(node.name)

    def remove_node(self, node: "Node") -> None:
        for image in node.images:
            for name in image.names:
                state = self._states.get(name)
                if state is not None:
                    state[1].discard(node.name)
                    if not state[1]:
                        del self._states[name]

    def summaries(self, node: "Node") -> dict[str, ImageStateSummary]:
        """``node``'s images as a cycle sees them (upstream's snapshot ``createImageStateSummary``)."""
        out: dict[str, ImageStateSummary] = {}
        for image in node.images:
            for name in image.names:
                if name not in out:
                    size, nodes = self._states[name]
                    out[name] = ImageStateSummary(size=size, num_nodes=len(nodes))
        return out


def fill_image_states(node_infos: Iterable[NodeInfo], images: ImageStates | None = None) -> None:
    """Set each NodeInfo's image_states from ``images``, or, without it, from the nodes as if
    added in this order (a snapshot built by hand); a NodeInfo whose image states change gets a
    new ``generation``."""
    infos = [ni for ni in node_infos if ni.node is not None]
    if images is None:
        images = ImageStates()
        for ni in infos:
            images.add_node(ni.node)  # type: ignore[arg-type]
    for ni in infos:
        summaries = images.summaries(ni.node)  # type: ignore[arg-type]
        if summaries != ni.image_states:
            # a new object and a new generation: what was worked out from the node is stale
            # (the rule of kschedfw.fwk.node_reuse)
            ni.image_states = summaries
            ni.generation += 1
