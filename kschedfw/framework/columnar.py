"""The whole-list forms a plugin declares (:data:`kschedfw.fwk.extension_points.WHOLE_LIST_FORMS`), found
once when a profile's plan is compiled.

A form counts only when the class that defines it also defines the per-node hook it stands for,
and that hook is the one the plugin resolves: a subclass overriding ``score`` does not inherit a
``score_nodes`` that no longer gives what its ``score`` gives. Whether the runtime uses the forms
at all is the Framework's choice (``fast_paths``), made per profile, not here.
"""

from __future__ import annotations

from typing import Any, Callable

from kschedfw.fwk.extension_points import WHOLE_LIST_FORMS

__all__ = ["declared_with", "whole_list_filter", "whole_list_score"]


def declared_with(plugin: Any, method: str, hook: str) -> Callable[..., Any] | None:
    """``plugin``'s bound ``method``, if the class that defines it also defines the ``hook`` the
    plugin resolves: a subclass overriding the hook does not inherit an optional method that
    stands for its base's hook."""
    cls = type(plugin)
    for klass in cls.__mro__:
        if method in vars(klass):
            if hook in vars(klass) and getattr(cls, hook, None) is vars(klass)[hook]:
                bound = getattr(plugin, method)
                return bound if callable(bound) else None
            return None
    return None


def _own_form(plugin: Any, form: str) -> Callable[..., Any] | None:
    """The plugin's bound ``form`` if the class defining it also defines the resolved hook."""
    return declared_with(plugin, form, WHOLE_LIST_FORMS[form])


def whole_list_filter(plugin: Any) -> Callable[..., Any] | None:
    """``plugin``'s ``filter_nodes``, if it declares one to use."""
    return _own_form(plugin, "filter_nodes")


def whole_list_score(plugin: Any, normalize: Callable[..., Any] | None
                     ) -> tuple[Callable[..., Any] | None, Callable[..., Any] | None]:
    """(score_nodes, normalize_score_values) of ``plugin``, each None when it declares none to
    use (no normalize_score_values without the plugin's NormalizeScore in the plan)."""
    normalize_values = _own_form(plugin, "normalize_score_values") if normalize is not None else None
    return _own_form(plugin, "score_nodes"), normalize_values
