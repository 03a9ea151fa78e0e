"""What a plugin call gave back, checked: the Status the runtime goes on with, never a crash.

Every hook call is guarded (see :mod:`kschedfw.fwk.hookspecs`): an exception, a return value of the
wrong type or a score that is not an int becomes an Error status naming the plugin, the extension
point and what came back; :class:`~kschedfw.framework.guard.PluginFaults` logs each cause once.
These are the only copies of the checks: the runtime applies them, and
:func:`kschedfw.testing.check_plugin` reports what they find on its sample inputs.
"""

from __future__ import annotations

import numbers
from typing import Any

from kschedfw.framework.guard import PluginFaults, bad_return
from kschedfw.fwk.events import ClusterEventWithHint
from kschedfw.fwk.extension_points import hook
from kschedfw.fwk.status import Code, Status
from kschedfw.fwk.types import MAX_NODE_SCORE, MIN_NODE_SCORE, SignFragment

__all__ = ["raised", "checked_status", "checked_pair", "filter_returned", "filter_raised", "score_values",
           "wanted_tuple", "not_one_per_node", "whole_list_values", "out_of_range", "checked_fragments",
           "events_problem", "legacy_status", "permit_returned", "CANONICAL"]

_STATUS = "Status or None"
_INT_ONLY = {int}

#: The one shape each of these points' hooks returns (its hookspec's annotation, from the
#: extension-point table), named in the warning when a plugin returns an old shape: the pair hooks'
#: bare Status or None, Score's ``(score, status)``.
CANONICAL: dict[str, str] = {point: hook(name).result for point, name in (
    ("PreFilter", "pre_filter"), ("PostFilter", "post_filter"), ("Permit", "permit"),
    ("PreBindPreFlight", "pre_bind_pre_flight"), ("Sign", "sign_pod"), ("Score", "score"))}


def legacy_status(faults: PluginFaults, name: str, point: str, out: Any) -> Status | None:
    """A pair hook's old bare ``Status`` or ``None`` return, accepted with a warning (once per
    plugin and point); anything else is the Error it always was."""
    if out is None or isinstance(out, Status):
        faults.deprecated_shape(name, point, out, CANONICAL[point])
        return out
    return Status(Code.Error, (faults.wrong_type(name, point, out, wanted_tuple(point)),), plugin=name)


def wanted_tuple(point: str) -> str:
    """What a hook returning a pair may return, as the wrong-type message says it."""
    return {"PreFilter": "(PreFilterResult | None, Status | None) or Status or None",
            "PostFilter": "(PostFilterResult | None, Status | None) or Status or None",
            "Permit": "Status or (Status, timeout seconds) or None",
            "PreBindPreFlight": "(PreBindPreFlightResult | None, Status | None) or Status or None"}[point]


def raised(faults: PluginFaults, name: str, point: str, exc: Exception) -> Status:
    """An exception inside a plugin, as an Error status naming it (logged once per cause)."""
    return Status(Code.Error, (faults.exception(name, point, exc),), plugin=name)


def checked_status(faults: PluginFaults, name: str, point: str, value: Any) -> Status | None:
    """A hook's Status return, checked: anything else becomes an Error naming what came back."""
    if value is None or isinstance(value, Status):
        return value
    return Status(Code.Error, (faults.wrong_type(name, point, value, _STATUS),), plugin=name)


def checked_pair(faults: PluginFaults, name: str, point: str, out: Any,
                 result_type: type) -> tuple[Any, Status | None]:
    """``(result, status)`` hooks (the old bare Status or None still accepted, with a warning)."""
    if isinstance(out, tuple):
        if len(out) == 2:
            result, status = out
            if (result is None or isinstance(result, result_type)) and (status is None or isinstance(status, Status)):
                return result, status
        return None, Status(Code.Error, (faults.wrong_type(name, point, out, wanted_tuple(point)),), plugin=name)
    return None, legacy_status(faults, name, point, out)


def permit_returned(faults: PluginFaults, name: str, out: Any) -> tuple[Status | None, Any]:
    """A Permit return ``(status, timeout seconds)`` as (status, timeout); the old bare Status or
    None is still accepted, with a warning."""
    if isinstance(out, tuple):
        if len(out) == 2 and isinstance(out[1], (int, float)) and not isinstance(out[1], bool):
            return checked_status(faults, name, "Permit", out[0]), out[1]
        return Status(Code.Error, (faults.wrong_type(name, "Permit", out, wanted_tuple("Permit")),), plugin=name), 0.0
    if out is None or isinstance(out, Status):
        faults.deprecated_shape(name, "Permit", out, CANONICAL["Permit"])
        return out, 0.0
    return checked_status(faults, name, "Permit", out), 0.0


def filter_returned(faults: PluginFaults, name: str, status: Any) -> Status | None:
    """A Filter plugin's non-None return, checked: None for Success, the rejection (naming the
    plugin), or an Error status for anything else."""
    if type(status) is not Status and not isinstance(status, Status):
        message = faults.wrong_type(name, "Filter", status, _STATUS)
        return Status(Code.Error, (f'running "{name}" filter plugin: {message}',), plugin=name)
    if status.code is Code.Success:
        return None
    if status.is_rejected():
        status.plugin = name
        return status
    return Status(Code.Error, (f'running "{name}" filter plugin: {status.message()}',), plugin=name)


def filter_raised(faults: PluginFaults, name: str, exc: Exception) -> Status:
    """An exception inside a Filter plugin, as upstream words the Error."""
    err = raised(faults, name, "Filter", exc)
    return Status(Code.Error, (f'running "{name}" filter plugin: {err.message()}',), plugin=name)


def not_one_per_node(faults: PluginFaults, name: str, point: str, out: Any, count: int) -> Status | None:
    """None when a whole-list form returned a list of ``count`` results (each then checked as
    the per-node hook's), else the Error naming what it returned."""
    if isinstance(out, (list, tuple)) and len(out) == count:
        return None
    message = faults.wrong_type(name, point, out, f"a list of {count} results, one per node")
    return Status(Code.Error, (message,), plugin=name)


def whole_list_values(faults: PluginFaults, name: str, point: str, out: Any,
                      count: int) -> tuple[list[int], Status | None]:
    """A Score or NormalizeScore whole-list form's results as ints, checked as the per-node
    hook's (:func:`score_values`): when their sum is an int every value is one (a float, None, a
    pair or a string makes it something else or raises), so the usual list is taken as it is
    after one pass in C; a bool there counts as the int it is."""
    if type(out) is not list or len(out) != count:
        wrong = not_one_per_node(faults, name, point, out, count)
        if wrong is not None:
            return [], wrong
    try:
        if type(sum(out)) is int:
            return out, None
    except TypeError:
        pass
    return score_values(faults, name, point, list(out))


def score_values(faults: PluginFaults, name: str, point: str, raw: list[Any]) -> tuple[list[int], Status | None]:
    """Plugin results as ints. Fast path: every value is exactly an int. Otherwise each value is
    checked: a failed Status (Score's failure) is returned; the old ``(score, status)`` tuples are
    unpacked (with a deprecation warning), a failed status returned; bools, floats,
    None and anything else are an Error naming the value (never truncated)."""
    if set(map(type, raw)) <= _INT_ONLY:
        return raw, None
    values = []
    for v in raw:
        if point == "Score" and isinstance(v, Status) and not v.is_success():
            return [], v
        if point == "Score" and type(v) is tuple and len(v) == 2:
            faults.deprecated_shape(name, point, v, CANONICAL["Score"])
            score, status = v
            if status is not None:
                if not isinstance(status, Status):
                    return [], checked_status(faults, name, point, status)
                if not status.is_success():
                    return [], status
            v = score
        if isinstance(v, numbers.Integral) and not isinstance(v, bool):  # int subclasses, numpy ints
            values.append(int(v))
            continue
        want = "int or (int, Status | None)" if point == "Score" else "int in NodeScore.score"
        return [], Status(Code.Error, (faults.wrong_type(name, point, v, want),), plugin=name)
    return values, None


def out_of_range(name: str, values: list[int]) -> Status | None:
    """None when every (normalised) score is in [0, 100] (upstream MinNodeScore, MaxNodeScore),
    else the cycle's Error naming the first value outside, in upstream's words."""
    bad = next((v for v in values if not MIN_NODE_SCORE <= v <= MAX_NODE_SCORE), None)
    if bad is None:
        return None
    return Status(Code.Error, (f'applying score defaultWeights on Score plugins: plugin "{name}" returns an invalid '
                               f'score {bad}, it should in the range of [{MIN_NODE_SCORE}, {MAX_NODE_SCORE}] after '
                               'normalizing',), plugin=name)


def checked_fragments(faults: PluginFaults, name: str, out: Any) -> list[Any] | tuple[Any, ...] | None:
    """A SignPod return's fragments (empty when it gave none), or None when the plugin refused
    to sign the pod: a non-Success status, or a value of the wrong type (reported)."""
    if isinstance(out, tuple) and len(out) == 2 and (out[1] is None or isinstance(out[1], Status)):
        fragments, status = out
    elif out is None or isinstance(out, Status):
        faults.deprecated_shape(name, "Sign", out, CANONICAL["Sign"])
        fragments, status = None, out
    else:
        faults.wrong_type(name, "Sign", out, "(list[SignFragment] | None, Status | None)")
        return None
    if status is not None and not status.is_success():
        return None
    if fragments is None:
        return ()
    if not isinstance(fragments, (list, tuple)):
        faults.wrong_type(name, "Sign", fragments, "list[SignFragment] | None as the fragments")
        return None
    wrong = next((f for f in fragments if not isinstance(f, SignFragment)), None)
    if wrong is not None:
        faults.wrong_type(name, "Sign", wrong, "SignFragment in the fragments")
        return None
    return fragments


def events_problem(name: str, out: Any) -> str | None:
    """None when an EventsToRegister return is a list (or tuple, or None: no events) of
    ClusterEventWithHint, else the message naming what came back."""
    if out is None:
        return None
    if not isinstance(out, (list, tuple)):
        return bad_return(name, "EventsToRegister", out, "a list of ClusterEventWithHint")
    wrong = next((e for e in out if not isinstance(e, ClusterEventWithHint)), None)
    if wrong is not None:
        return bad_return(name, "EventsToRegister", wrong, "ClusterEventWithHint in the list")
    return None
