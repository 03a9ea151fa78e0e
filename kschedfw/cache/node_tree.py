"""Node order for the snapshot: nodes interleaved across zones, as upstream's nodeTree lists them.

Filtering starts at a rotating index and may stop early (percentageOfNodesToScore), so the order
decides which nodes a pod even looks at; interleaving zones spreads that sample across zones.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from kschedfw.api import Node

ZONE_LABEL = "topology.kubernetes.io/zone"
REGION_LABEL = "topology.kubernetes.io/region"
LEGACY_ZONE_LABEL = "failure-domain.beta.kubernetes.io/zone"
LEGACY_REGION_LABEL = "failure-domain.beta.kubernetes.io/region"


def zone_key(node: "Node") -> str:
    labels = node.labels
    region = labels.get(REGION_LABEL) or labels.get(LEGACY_REGION_LABEL, "")
    zone = labels.get(ZONE_LABEL) or labels.get(LEGACY_ZONE_LABEL, "")
    if not region and not zone:
        return ""
    return f"{region}:\x00:{zone}"


class NodeTree:
    """Zones in first-seen order, nodes per zone in insertion order."""

    def __init__(self) -> None:
        self._zones: dict[str, list[str]] = {}
        self._zone_of: dict[str, str] = {}

    def add(self, node: "Node") -> None:
        if node.name in self._zone_of:
            self.update(node)
            return
        key = zone_key(node)
        self._zones.setdefault(key, []).append(node.name)
        self._zone_of[node.name] = key

    def remove(self, name: str) -> None:
        key = self._zone_of.pop(name, None)
        if key is None:
            return
        names = self._zones[key]
        names.remove(name)
        if not names:
            del self._zones[key]

    def update(self, node: "Node") -> None:
        if self._zone_of.get(node.name) != zone_key(node):
            self.remove(node.name)
            self.add(node)

    def list(self) -> list[str]:
        """Round-robin over zones (upstream nodeTree.list)."""
        zones = list(self._zones.values())
        if len(zones) == 1:
            return list(zones[0])
        out: list[str] = []
        index = 0
        while True:
            added = False
            for names in zones:
                if index < len(names):
                    out.append(names[index])
                    added = True
            if not added:
                return out
            index += 1

    def __len__(self) -> int:
        return len(self._zone_of)
