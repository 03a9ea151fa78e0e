"""A trace's initial cluster as what `kschedfw simulate` schedules: the one door from recorded
objects (a trace's list, or a live snapshot) to :class:`~kschedfw.cluster.inputs.manifests.Inputs`."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterable

from kschedfw.api.field import ManifestError
from kschedfw.api.load import Located, parse_object
from kschedfw.cluster.inputs.manifests import Inputs
from kschedfw.trace.reader import initial_objects, read_lines

__all__ = ["snapshot_inputs", "trace_inputs"]


def snapshot_inputs(objects: Iterable[dict[str, Any]], source: str) -> Inputs:
    """The objects as simulation inputs, each located at ``source``; one that cannot be read is
    in ``malformed``, as a bad manifest is, and the others are used."""
    located: list[Located] = []
    malformed: list[ManifestError] = []
    for d in objects:
        try:
            located.append(Located(parse_object(d, source=source), source, None))
        except ManifestError as exc:
            malformed.append(exc)
    return Inputs(tuple(located), (), (), tuple(malformed))


def trace_inputs(path: str | Path) -> Inputs:
    """The cluster as the trace at ``path`` starts."""
    return snapshot_inputs(initial_objects(read_lines(path)), str(path))
