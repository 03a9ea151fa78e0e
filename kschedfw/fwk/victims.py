"""What preemption and the extenders exchange: the victims on a node and a candidate node.

Upstream keeps ``Victims`` with the extender interface and ``Candidate`` with the preemption
framework, both in the framework layer: a preemption plugin builds them, an extender's
``ProcessPreemption`` narrows them, and neither side imports the other.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import attrs

if TYPE_CHECKING:
    from kschedfw.api import Pod

__all__ = ["Victims", "Candidate"]


@attrs.define(eq=True)
class Victims:
    """Pods to evict on one node (most important first) and how many of them break a PDB."""

    pods: list["Pod"] = attrs.Factory(list)
    num_pdb_violations: int = 0


@attrs.define(eq=True)
class Candidate:
    """A node the preemptor could run on once ``victims`` are gone."""

    name: str
    victims: Victims
