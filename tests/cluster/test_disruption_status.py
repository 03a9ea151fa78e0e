"""A PodDisruptionBudget's status as upstream's disruption controller computes it
(``pkg/controller/disruption``: getExpectedPodCount, countHealthyPods, buildDisruptedPodMap,
updatePdbStatus), which ``simulate --write-out`` writes for the cluster at the end of a run."""

from __future__ import annotations

import datetime as _dt

import pytest

from kschedfw.cluster.controllers.disruption import budget_status, with_status_after
from kschedfw.testing import make_pdb, make_pod, owner_reference

NOW = _dt.datetime(2026, 1, 1, 12, 0, tzinfo=_dt.timezone.utc)
READY = [{"type": "Ready", "status": "True"}]
RS = owner_reference("ReplicaSet", "web-abc")


def web(name, *, ready=True, owner=RS, **kw):
    conditions = READY if ready else [{"type": "Ready", "status": "False"}]
    return make_pod(name, labels={"app": "web"}, node_name="n1", conditions=conditions, owner=owner, **kw)


def three_web(**kw):
    return [web("web-0", **kw), web("web-1", **kw), web("web-2", **kw)]


def counts(status):
    return (status["currentHealthy"], status["desiredHealthy"], status["expectedPods"], status["disruptionsAllowed"])


# (name, pdb keyword arguments, pods, input status.expectedPods, (currentHealthy, desiredHealthy, expectedPods,
#  disruptionsAllowed))
CASES = [
    # an integer minAvailable: desiredHealthy is it, every selected pod is expected
    ("minAvailable int", {"min_available": 2}, three_web(), None, (3, 2, 3, 1)),
    ("minAvailable int, not enough", {"min_available": 3}, three_web()[:2], None, (2, 3, 2, 0)),
    # a percentage scales to the controllers' replicas, rounded up
    ("minAvailable percent", {"min_available": "50%"}, three_web(), None, (3, 2, 3, 1)),
    ("maxUnavailable int", {"max_unavailable": 1}, three_web(), None, (3, 2, 3, 1)),
    ("maxUnavailable percent", {"max_unavailable": "34%"}, three_web(), None, (3, 1, 3, 2)),
    # the replicas as the input status had them: a preempted replica is not replaced here
    ("maxUnavailable, replicas from the input status", {"max_unavailable": 1}, three_web()[:2], 3, (2, 2, 3, 0)),
    # pods without a controller count for no replica
    ("maxUnavailable, unmanaged pods", {"max_unavailable": 1}, three_web(owner=None), None, (3, 0, 0, 0)),
    # terminating and not-Ready pods are not healthy
    ("terminating", {"min_available": 1}, [web("web-0", terminating=True), web("web-1", ready=False)], None,
     (0, 1, 2, 0)),
    # neither field: no pod expected, which allows no disruption (updatePdbStatus' safe state)
    ("neither", {}, three_web(), None, (3, 0, 0, 0)),
]


@pytest.mark.parametrize("name, spec, pods, old_expected, expected", CASES, ids=[c[0] for c in CASES])
def test_status_counts(name, spec, pods, old_expected, expected):
    pdb = make_pdb("web-pdb", match_labels={"app": "web"}, **spec)
    if old_expected is not None:
        pdb = type(pdb).from_dict({**pdb.raw, "status": {**pdb.raw["status"], "expectedPods": old_expected}})
    assert counts(budget_status(pdb, pods, NOW)) == expected


def test_no_selector_selects_no_pod_and_an_empty_one_every_pod():
    none = make_pdb("none", min_available=1)
    every = make_pdb("every", selector={}, min_available=1)
    pods = three_web() + [make_pod("other", node_name="n1", conditions=READY)]
    assert counts(budget_status(none, pods, NOW)) == (0, 1, 0, 0)
    assert counts(budget_status(every, pods, NOW)) == (4, 1, 4, 3)


def test_pods_of_another_namespace_are_not_selected():
    pdb = make_pdb("web-pdb", match_labels={"app": "web"}, min_available=1)
    pods = three_web() + [make_pod("web-x", namespace="other", labels={"app": "web"}, node_name="n1")]
    assert counts(budget_status(pdb, pods, NOW))[2] == 3


def test_a_recent_disruption_is_kept_and_not_healthy_an_expired_one_is_dropped():
    recent = (NOW - _dt.timedelta(seconds=30)).strftime("%Y-%m-%dT%H:%M:%SZ")
    expired = (NOW - _dt.timedelta(minutes=5)).strftime("%Y-%m-%dT%H:%M:%SZ")
    pdb = make_pdb("web-pdb", match_labels={"app": "web"}, min_available=1)
    raw = {**pdb.raw, "status": {"disruptedPods": {"web-0": recent, "web-1": expired, "gone": recent}}}
    status = budget_status(type(pdb).from_dict(raw), three_web(), NOW)
    assert status["disruptedPods"] == {"web-0": recent}  # web-1 expired, "gone" is not here
    assert counts(status) == (2, 1, 3, 1)


def test_the_disruption_allowed_condition():
    pdb = make_pdb("web-pdb", match_labels={"app": "web"}, min_available=3)
    [condition] = budget_status(pdb, three_web(), NOW)["conditions"]
    assert (condition["type"], condition["status"], condition["reason"]) == (
        "DisruptionAllowed", "False", "InsufficientPods")
    assert condition["lastTransitionTime"] == "2026-01-01T12:00:00Z"
    # the same status keeps its transition time; another one moves it
    kept = {**pdb.raw, "status": {"conditions": [{**condition, "lastTransitionTime": "2025-01-01T00:00:00Z"}]}}
    [same] = budget_status(type(pdb).from_dict(kept), three_web(), NOW)["conditions"]
    assert same["lastTransitionTime"] == "2025-01-01T00:00:00Z"
    [changed] = budget_status(type(pdb).from_dict(kept), three_web() + [web("web-3")], NOW)["conditions"]
    assert (changed["status"], changed["reason"], changed["lastTransitionTime"]) == (
        "True", "SufficientPods", "2026-01-01T12:00:00Z")


def test_a_value_that_is_not_a_percentage_fails_safe():
    pdb = make_pdb("web-pdb", match_labels={"app": "web"}, max_unavailable="half", disruptions_allowed=2)
    status = budget_status(pdb, three_web(), NOW)
    assert status["disruptionsAllowed"] == 0
    [condition] = status["conditions"]
    assert (condition["status"], condition["reason"]) == ("False", "SyncFailed")


def test_with_status_after_sets_the_manifest_and_the_typed_fields():
    pdb = make_pdb("web-pdb", match_labels={"app": "web"}, min_available=1, disruptions_allowed=0)
    after = with_status_after(pdb, three_web(), NOW)
    assert after.disruptions_allowed == 2 and after.raw["status"]["disruptionsAllowed"] == 2
    assert pdb.raw["status"]["disruptionsAllowed"] == 0  # the input is not changed
