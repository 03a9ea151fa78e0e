"""The lean pod decoders take anything a real API server may send on a pod watch or list:
recorded pods, bookmarks of every shape, Status objects, and the same with fields nulled,
removed or of another type. Fast (msgspec) and plain (json + prune) agree on every valid line,
never raise on one, and raise ValueError on a line that is not JSON."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kschedfw.cluster.kube import leanpod

HERE = Path(__file__).resolve().parent
RECORDED = json.loads((HERE / "fixtures" / "recorded-pods.json").read_text())

#: a pod bookmark exactly as a v1.36.2 kube-apiserver sends it
REAL_BOOKMARK = (b'{"type":"BOOKMARK","object":{"kind":"Pod","apiVersion":"v1","metadata":{"resourceVersion":"230"},'
                 b'"spec":{"containers":null},"status":{}}}')
EXPIRED = (b'{"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",'
           b'"message":"too old resource version: 1 (230)","reason":"Expired","code":410}}')

FAST_EVENT, PLAIN_EVENT = leanpod.pod_event_decoder(True), leanpod.pod_event_decoder(False)
FAST_PAGE, PLAIN_PAGE = leanpod.pod_list_decoder(True), leanpod.pod_list_decoder(False)
FAST_POD, PLAIN_POD = leanpod.pod_decoder(True), leanpod.pod_decoder(False)


def expected_event(value: Any) -> Any:
    """What a watch line decodes to, by definition: type and object, the object pruned unless
    the event is an ERROR (its Status whole)."""
    if not isinstance(value, dict):
        return value
    lean = {k: value[k] for k in ("type", "object") if k in value}
    if "object" in lean and lean.get("type") != "ERROR":
        lean["object"] = leanpod.prune(lean["object"])
    return lean


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(min_value=-2**70, max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=8)


def paths(value: Any, prefix: tuple = ()) -> list[tuple]:
    """Every place in a JSON value: dict keys and list indexes, nested."""
    out = []
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, sub in items:
        out.append(prefix + (key,))
        out += paths(sub, prefix + (key,))
    return out


def mutate(value: Any, path: tuple, how: str, replacement: Any) -> None:
    parent = value
    for key in path[:-1]:
        parent = parent[key]
    if how == "remove":
        del parent[path[-1]]
    else:
        parent[path[-1]] = None if how == "null" else replacement


@st.composite
def mutated_objects(draw: Any) -> Any:
    base = draw(st.sampled_from([*RECORDED, json.loads(REAL_BOOKMARK)["object"], json.loads(EXPIRED)["object"],
                                 {"kind": "Pod", "apiVersion": "v1", "metadata": {"resourceVersion": "7"}}]))
    obj = json.loads(json.dumps(base))
    for _ in range(draw(st.integers(0, 4))):
        places = paths(obj)
        if not places:
            break
        # the fields the lean decoder keeps are where it can go wrong: prefer them
        kept = [p for p in places if _is_kept(p)]
        path = draw(st.sampled_from(kept or places))
        mutate(obj, path, draw(st.sampled_from(["null", "remove", "replace"])), draw(json_values))
    return obj


def _is_kept(path: tuple) -> bool:
    fields: Any = leanpod.POD_FIELDS
    for key in path:
        if isinstance(fields, list):
            if not isinstance(key, int):
                return False
            fields = fields[0]
        elif isinstance(fields, dict):
            if key not in fields:
                return False
            fields = fields[key]
        else:
            return True
    return True


event_types = st.sampled_from(["ADDED", "MODIFIED", "DELETED", "BOOKMARK", "ERROR", "", None, 3])


@st.composite
def events(draw: Any) -> Any:
    event: dict[str, Any] = {}
    if draw(st.integers(0, 9)):
        event["type"] = draw(event_types)
    if draw(st.integers(0, 9)):
        event["object"] = draw(mutated_objects() | json_values)
    if draw(st.integers(0, 4)) == 0:
        event["extra"] = draw(json_values)
    return draw(st.sampled_from([event, event, event, draw(json_values)]))


def agree(fast: Any, plain: Any, line: bytes) -> Any:
    out = fast(line)
    assert out == plain(line)
    return out


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(events())
def test_fast_and_plain_event_decoders_agree_on_anything_valid(event):
    line = json.dumps(event).encode()
    assert agree(FAST_EVENT, PLAIN_EVENT, line) == expected_event(event)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(mutated_objects() | json_values, max_size=4), json_values,
       st.sampled_from(["items", "metadata", None]))
def test_fast_and_plain_list_decoders_agree_on_anything_valid(items, other, broken):
    page: dict[str, Any] = {"kind": "PodList", "apiVersion": "v1", "metadata": {"resourceVersion": "9"},
                            "items": items, "extra": 1}
    if broken:
        page[broken] = other
    out = agree(FAST_PAGE, PLAIN_PAGE, json.dumps(page).encode())
    assert "extra" not in out
    if isinstance(page["items"], list):
        assert out["items"] == [leanpod.prune(i) for i in page["items"]]


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated_objects() | json_values)
def test_fast_and_plain_pod_decoders_agree_on_anything_valid(obj):
    assert agree(FAST_POD, PLAIN_POD, json.dumps(obj).encode()) == leanpod.prune(obj)


@settings(max_examples=200, deadline=None)
@given(events(), st.data())
def test_a_line_that_is_not_json_raises_value_error_from_both(event, data):
    line = json.dumps(event).encode()
    cut = line[:data.draw(st.integers(0, len(line) - 1))] + data.draw(st.sampled_from([b"", b"}", b"\xff", b","]))
    try:
        json.loads(cut)
    except ValueError:
        pass
    else:  # still JSON (e.g. "1" cut from "12"): must agree instead
        agree(FAST_EVENT, PLAIN_EVENT, cut)
        return
    for decode in (FAST_EVENT, PLAIN_EVENT):
        with pytest.raises(ValueError):
            decode(cut)


@pytest.mark.parametrize("fast", [True, False], ids=["msgspec", "python"])
def test_the_real_servers_pod_bookmark_decodes_with_its_resource_version(fast):
    decoded = leanpod.pod_event_decoder(fast)(REAL_BOOKMARK)
    assert decoded == json.loads(REAL_BOOKMARK)
    assert decoded["object"]["metadata"]["resourceVersion"] == "230"


@pytest.mark.parametrize("line", [
    b'{"type":"BOOKMARK","object":{"kind":"Pod","apiVersion":"v1","metadata":{"resourceVersion":"5","labels":null},'
    b'"spec":{"containers":null,"initContainers":null,"tolerations":null},"status":null}}',
    b'{"type":"BOOKMARK","object":{"metadata":{"resourceVersion":"5"}}}',
    b'{"type":"BOOKMARK","object":{"metadata":null}}',
    b'{"type":"MODIFIED","object":{"metadata":{"name":"p","labels":null},"spec":{"containers":[null]}}}',
    b'{"type":"MODIFIED","object":null}',
    b'{"type":"ADDED"}',
    b'{"object":{}}',
    b'[]',
    b'"ERROR"',
    EXPIRED,
    b'{"type":"ERROR","object":"not a Status"}',
])
def test_every_shape_of_line_decodes_alike_without_raising(line):
    assert agree(FAST_EVENT, PLAIN_EVENT, line) == expected_event(json.loads(line))
