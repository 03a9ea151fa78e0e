"""Whole-list forms of Filter, Score and NormalizeScore, for the plugins whose per-node work is
cheaper than a Python call per node (the in-tree ones on the hot path).

Filter and Score run for hundreds of nodes per pod and plugin. Besides its per-node hooks, which
stay the contract, a plugin may offer:

- ``filter_nodes(state, pod, nodes)``: what ``filter`` returns for each node (None or a Status),
  in ``nodes`` order, or None to let this cycle call ``filter`` per node. The framework gives it
  only nodes the per-node loop would visit (see ``Framework._filter_in_chunks``);

- ``score_nodes(state, pod, nodes)``: what ``score`` returns for each node, in ``nodes`` order,
  or None to let this cycle take the per-node path;
- ``normalize_score_values(state, pod, values)``: a new list of the scores ``normalize_score``
  would leave in a NodeScore list holding ``values`` (ints, in node order), or None to take the
  NodeScore path.

They exist for the in-tree plugins, so the runtime takes their lists as ints (it checks only the
0-100 range after normalising, as for every plugin): the per-node hooks' values are checked as
always, and tests prove both give the same scores. Each form is used
only when the class that defines it also defines the per-node hook it stands for, and that hook
is the one the plugin resolves (a subclass overriding ``score`` does not inherit a stale
``score_nodes``).
"""

from __future__ import annotations

from typing import Any, Callable

__all__ = ["columnar_filter_form", "columnar_forms", "set_enabled"]

_enabled = True


def set_enabled(on: bool) -> None:
    """Whether frameworks built from now on use the whole-list forms (True, the default); off
    runs the per-node hooks alone, e.g. to check that both give the same scores."""
    global _enabled
    _enabled = bool(on)


def _own_form(plugin: Any, form: str, hook: str) -> Callable | None:
    """The plugin's bound ``form`` if the class defining it also defines the resolved ``hook``."""
    cls = type(plugin)
    for klass in cls.__mro__:
        if form in vars(klass):
            if hook in vars(klass) and getattr(cls, hook, None) is vars(klass)[hook]:
                bound = getattr(plugin, form)
                return bound if callable(bound) else None
            return None
    return None


def columnar_filter_form(plugin: Any) -> Callable | None:
    """``plugin``'s ``filter_nodes``, if it has one to use."""
    return _own_form(plugin, "filter_nodes", "filter") if _enabled else None


def columnar_forms(plugin: Any, normalize: Callable | None) -> tuple[Callable | None, Callable | None]:
    """(score_nodes, normalize_score_values) of ``plugin``, each None when it has none to use."""
    if not _enabled:
        return None, None
    score_nodes = _own_form(plugin, "score_nodes", "score")
    normalize_values = _own_form(plugin, "normalize_score_values", "normalize_score") \
        if normalize is not None else None
    return score_nodes, normalize_values
