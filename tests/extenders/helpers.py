"""Small builders shared by the extender tests."""

from __future__ import annotations

from typing import Any

from kschedfw.extenders import HTTPExtender, build_extenders
from kschedfw.fwk.types import NodeInfo
from kschedfw.testing.builders import make_node, make_pod

__all__ = ["extender", "node_infos", "make_pod", "make_node", "names"]


def extender(url: str, **fields: Any) -> HTTPExtender:
    """One extender built from config fields, as the scheduler builds it."""
    (built,) = build_extenders([{"urlPrefix": url, **fields}])
    return built


def node_infos(*names: str) -> list[NodeInfo]:
    return [NodeInfo(node=make_node(n)) for n in names]


def names(nodes: list) -> list[str]:
    return [n.name for n in nodes]
