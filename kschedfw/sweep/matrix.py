"""`kschedfw sweep`'s matrix: one :class:`Run` per configuration × cluster × feature gates × seed."""

from __future__ import annotations

import itertools
from typing import Iterable

import attrs

#: The columns that name a run in the results file, in order.
KEY_COLUMNS = ("config", "cluster", "seed", "feature_gates", "once", "ties")


@attrs.frozen
class Run:
    """One simulation of a sweep; ``config`` "" is upstream's defaults, ``feature_gates`` one
    ``--feature-gates`` value ("" is v1.36's defaults)."""

    config: str
    cluster: str
    seed: int
    feature_gates: str = ""
    once: bool = False
    ties: str = "random"

    def key(self) -> tuple[str, ...]:
        """The run's key columns as the results file holds them."""
        return tuple(self.columns().values())

    def columns(self) -> dict[str, str]:
        return {"config": self.config, "cluster": self.cluster, "seed": str(self.seed),
                "feature_gates": self.feature_gates, "once": "true" if self.once else "false",
                "ties": self.ties}


def parse_seeds(text: str) -> list[int]:
    """``0-9``, ``1,2,5`` or both (``0-3,7``): the seeds in the order given, each once."""
    seeds: list[int] = []
    for part in text.split(","):
        part = part.strip()
        first, dash, last = part.partition("-")
        try:
            if dash and first:
                low, high = int(first), int(last)
                if high < low:
                    raise ValueError
                values: Iterable[int] = range(low, high + 1)
            else:
                values = (int(part),)
        except ValueError:
            raise ValueError(f"{part!r} is not a seed or a range of seeds like 0-9") from None
        seeds.extend(v for v in values if v not in seeds)
    return seeds


def expand(configs: list[str], clusters: list[str], seeds: list[int], gates: list[str], *,
           once: bool = False, ties: str = "random") -> list[Run]:
    """Every combination, configurations outermost and seeds innermost."""
    return [Run(config, cluster, seed, gate, once, ties)
            for config, cluster, gate, seed in itertools.product(configs or [""], clusters, gates or [""], seeds)]
