"""Pod names as kubectl users type them: ``NAMESPACE/POD``, or a bare ``POD`` with ``-n NAMESPACE``,
or a bare name: the pod of that name in ``default`` (kubectl's reading), else the only pod of
that name in any namespace. A name that matches nothing gets the
closest names as a suggestion; one that several pods share gets them listed."""

from __future__ import annotations

import difflib
from typing import Iterable

#: the namespace a bare name means without -n, as kubectl reads it with no namespace in its context
DEFAULT_NAMESPACE = "default"

#: how many suggestions a name that matches nothing gets
MAX_SUGGESTIONS = 3


def resolve_pod_names(wanted: Iterable[str], known: Iterable[str], namespace: str | None = None,
                      *, option: str = "--explain", keep: Iterable[str] = ()) -> tuple[list[str], list[str]]:
    """``(keys, errors)``: each of ``wanted`` as the ``NAMESPACE/POD`` key of a pod among ``known``
    keys, and one error line (naming ``option``) per name that is not one pod's. ``namespace``
    is ``-n``'s value (None when not given); names in ``keep`` (``all``) pass unchanged."""
    known = sorted(set(known))
    by_name: dict[str, list[str]] = {}
    for key in known:
        by_name.setdefault(key.partition("/")[2], []).append(key)
    keys: list[str] = []
    errors: list[str] = []
    for name in wanted:
        if name in keep:
            keys.append(name)
            continue
        key, error = _resolve(name, known, by_name, namespace)
        if error:
            errors.append(f"{option} {name}{f' (namespace {namespace})' if namespace and '/' not in name else ''}: "
                          f"{error}")
        else:
            keys.append(key)
    return keys, errors


def _resolve(name: str, known: list[str], by_name: dict[str, list[str]],
             namespace: str | None) -> tuple[str, str]:
    """(key, "") or ("", why not)."""
    if "/" in name or namespace:
        key = name if "/" in name else f"{namespace}/{name}"
        if key in known:
            return key, ""
        bare = key.partition("/")[2]
        close = difflib.get_close_matches(key, known, n=MAX_SUGGESTIONS, cutoff=0.8)
        elsewhere = [k for k in by_name.get(bare, []) if k not in close]
        return "", "no such pod" + _did_you_mean((close + elsewhere)[:MAX_SUGGESTIONS])
    same = by_name.get(name, [])
    if f"{DEFAULT_NAMESPACE}/{name}" in same:  # kubectl's reading of a bare name without -n
        return f"{DEFAULT_NAMESPACE}/{name}", ""
    if len(same) == 1:
        return same[0], ""
    if same:
        return "", (f"{len(same)} pods have this name ({', '.join(same)}): give NAMESPACE/POD or "
                    "-n NAMESPACE")
    close_names = difflib.get_close_matches(name, list(by_name), n=MAX_SUGGESTIONS, cutoff=0.8)
    close = [k for n in close_names for k in by_name[n]]
    return "", "no such pod in any namespace" + _did_you_mean(close[:MAX_SUGGESTIONS])


def _did_you_mean(keys: list[str]) -> str:
    return f"; did you mean {' or '.join(keys)}?" if keys else ""
