"""The cache's image sizes as upstream's cache keeps them (pkg/scheduler/backend/cache/cache.go,
addNodeImageStates / removeNodeImageStates): one size per image name, the size of the node that
added the name while no node had it, kept while any node still reports the name."""

from __future__ import annotations

import pytest

from kschedfw.cache.cache import Cache
from kschedfw.testing import make_node

IMAGE = "registry.k8s.io/pause:3.10"


def sizes(cache: Cache) -> dict[str, tuple[int, int]]:
    """node -> (size, number of nodes) of IMAGE, as the next cycle sees it"""
    snapshot = cache.update_snapshot()
    return {ni.name: (ni.image_states[IMAGE].size, ni.image_states[IMAGE].num_nodes)
            for ni in snapshot.node_infos() if IMAGE in ni.image_states}


def node(name: str, size: int, *more: tuple[list[str], int]):
    return make_node(name, images=[([IMAGE], size), *more])


@pytest.mark.parametrize("steps, expected", [
    pytest.param([("add", node("a", 900)), ("add", node("b", 300))], {"a": (900, 2), "b": (900, 2)},
                 id="the first node's size holds for every node"),
    pytest.param([("add", node("b", 300)), ("add", node("a", 900))], {"a": (300, 2), "b": (300, 2)},
                 id="first by arrival, not by name"),
    pytest.param([("add", node("a", 900)), ("add", node("b", 300)), ("remove", node("a", 900))], {"b": (900, 1)},
                 id="kept while another node still reports the name"),
    pytest.param([("add", node("a", 900)), ("remove", node("a", 900)), ("add", node("b", 300))], {"b": (300, 1)},
                 id="a name no node reports any more starts again"),
    pytest.param([("add", node("a", 900)), ("add", node("b", 300)), ("add", node("a", 100))],
                 {"a": (900, 2), "b": (900, 2)}, id="an update of the first node keeps the size while b has it"),
    pytest.param([("add", make_node("a", images=[([IMAGE], 500), ([IMAGE, "other:1"], 700)]))], {"a": (500, 1)},
                 id="within a node the first image naming it"),
])
def test_image_size_per_name(steps, expected):
    cache = Cache()
    for action, n in steps:
        cache.add_node(n) if action == "add" else cache.remove_node(n)
    assert sizes(cache) == expected
