"""Preemption's calls into the scheduler extenders (upstream ``Evaluator.callExtenders``), through
``Handle.extenders``: a PostFilter plugin never imports the extender clients."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Callable, Mapping, Sequence

from kschedfw.fwk.interface import ExtenderError
from kschedfw.fwk.status import Status
from kschedfw.fwk.victims import Candidate, Victims

if TYPE_CHECKING:
    from kschedfw.api import Pod
    from kschedfw.fwk.interface import Extender, SharedLister

__all__ = ["call_extenders_for_preemption"]

log = logging.getLogger(__name__)


def call_extenders_for_preemption(
        extenders: Sequence["Extender"], pod: "Pod", candidates: Sequence["Candidate"],
        node_infos: "SharedLister",
        to_victims_map: Callable[[Sequence["Candidate"]], Mapping[str, "Victims"]] | None = None,
) -> tuple[list["Candidate"], Status | None]:
    """Upstream ``Evaluator.callExtenders``: each interested extender that supports preemption
    narrows the candidate nodes and their victims, in config order, each one seeing the previous
    one's result. A failure of an ignorable extender is skipped, of another one returns Error.
    A returned node without victims is dropped (ignorable extender) or an Error. Returns the new
    candidates (the input ones unchanged when no extender applies)."""
    if not extenders:
        return list(candidates), None
    victims_map: Mapping[str, Victims] = (to_victims_map(candidates) if to_victims_map is not None
                                          else {c.name: c.victims for c in candidates})
    if not victims_map:
        return list(candidates), None
    for extender in extenders:
        if not extender.supports_preemption() or not extender.is_interested(pod):
            continue
        try:
            result = dict(extender.process_preemption(pod, victims_map, node_infos))
        except ExtenderError as exc:
            if extender.is_ignorable():
                log.info("Skipped extender as it returned error and has ignorable flag set: extender=%s err=%s",
                         extender.name, exc)
                continue
            return [], Status.as_status(exc)
        for node_name in list(result):
            if not result[node_name].pods:
                if extender.is_ignorable():
                    log.info("Ignored node for which the extender didn't report victims: node=%s extender=%s",
                             node_name, extender.name)
                    del result[node_name]
                    continue
                return [], Status.as_status(ExtenderError(f'expected at least one victim pod on node "{node_name}"'))
        victims_map = result
        if not victims_map:
            break
    return [Candidate(name=name, victims=victims) for name, victims in victims_map.items()], None
