"""A guard against YAML nested deeper than anything a manifest or a configuration needs.

libyaml's composer (and our own tree builders) recurse once per level: a few kilobytes of
``[[[[...`` crash the interpreter instead of failing. libyaml's event parser keeps its own
stack, so one event pass measures the depth safely before anything recursive runs.
"""

from __future__ import annotations

import yaml
from yaml.events import MappingEndEvent, MappingStartEvent, SequenceEndEvent, SequenceStartEvent

_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_OPEN = (SequenceStartEvent, MappingStartEvent)
_CLOSE = (SequenceEndEvent, MappingEndEvent)


def too_deep(text: str, limit: int) -> tuple[int, int] | None:
    """The 1-based (line, column) where ``text`` first nests more than ``limit`` collections
    deep, or None. Syntax errors are left to the real parse, which reports them."""
    depth = 0
    try:
        for event in yaml.parse(text, Loader=_Loader):
            if isinstance(event, _OPEN):
                depth += 1
                if depth > limit:
                    mark = event.start_mark
                    return (mark.line + 1, mark.column + 1)
            elif isinstance(event, _CLOSE):
                depth -= 1
    except yaml.YAMLError:
        return None
    return None
