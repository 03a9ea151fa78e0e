"""A guard against YAML nested deeper than anything a manifest or a configuration needs.

libyaml's composer (and our own tree builders) recurse once per level: a few kilobytes of
``[[[[...`` crash the interpreter instead of failing. libyaml's event parser keeps its own
stack, so one event pass measures the depth safely before anything recursive runs.

libyaml 0.2.6 (bundled from PyYAML 6.0.4) has a nesting guard of its own in the scanner, which
reads a whole flow line ahead of the events: it refuses ``[[[...`` past 1000 levels before the
first event reaches us. The pure-Python parser has no such guard and no recursion either, so on
that error the depth is measured again with it, and the position named is still the first
level past ``limit``.
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
    try:
        return _first_too_deep(text, limit, _Loader)
    except yaml.YAMLError as exc:
        if _Loader is yaml.SafeLoader or "nesting depth" not in str(exc):
            return None
    try:
        return _first_too_deep(text, limit, yaml.SafeLoader)
    except yaml.YAMLError:
        return None


def _first_too_deep(text: str, limit: int, loader: type) -> tuple[int, int] | None:
    depth = 0
    for event in yaml.parse(text, Loader=loader):
        if isinstance(event, _OPEN):
            depth += 1
            if depth > limit:
                mark = event.start_mark
                return (mark.line + 1, mark.column + 1)
        elif isinstance(event, _CLOSE):
            depth -= 1
    return None
