"""Pieces of the real-cluster backend that need no API server: the reflector's handling of what
a v1.36 server sends (recorded shapes), the rate limiter, credentials, the status patch."""

from __future__ import annotations

import json
import sys
import textwrap

import pytest

from kschedfw.cluster.kube.backend import _condition_patch
from kschedfw.cluster.kube.informer import Informer
from kschedfw.cluster.kube.ratelimit import TokenBucket
from kschedfw.cluster.kube.resources import BY_KIND, parse_api_object


def pod_json(name: str, rv: str, node: str = "") -> dict:
    return {"metadata": {"name": name, "namespace": "ns", "uid": f"uid-{name}", "resourceVersion": rv,
                         "managedFields": [{"manager": "kubectl"}]},
            "spec": {"containers": [{"name": "c", "image": "i"}], **({"nodeName": node} if node else {})},
            "status": {"phase": "Pending"}}


# the exact event a v1.36 server sent on a watch from an expired version (HTTP 200 first)
EXPIRED = {"type": "ERROR", "object": {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                                        "message": "too old resource version: 289 (291)", "reason": "Expired",
                                        "code": 410}}


class ScriptedClient:
    """Answers lists from ``lists`` and watches from ``watches``, in order."""

    def __init__(self, lists: list[dict], watches: list[list[dict]]) -> None:
        self.lists, self.watches = list(lists), list(watches)
        self.watch_params: list[dict] = []
        self.list_params: list[dict] = []

    def get(self, path, *, decode=None, **params):  # answers are dicts already: nothing to decode
        self.list_params.append(params)
        return self.lists.pop(0)

    def watch(self, path, params, *, inactivity_timeout, decode=None):
        self.watch_params.append(dict(params))
        yield from self.watches.pop(0)


def make_informer(client) -> tuple[Informer, list]:
    seen: list = []
    informer = Informer(client, BY_KIND["Pod"], lambda t, k, old, new: seen.append(
        (t, (new or old).name, (new or old).resource_version)))
    return informer, seen


def test_reflector_lists_then_watches_from_the_lists_version_with_bookmarks():
    client = ScriptedClient([{"metadata": {"resourceVersion": "10"}, "items": [pod_json("a", "5")]}],
                            [[{"type": "ADDED", "object": {"kind": "Pod", "apiVersion": "v1", **pod_json("b", "11")}},
                              {"type": "BOOKMARK", "object": {"kind": "Pod", "apiVersion": "v1",
                                                              "metadata": {"resourceVersion": "15"}}}]])
    informer, seen = make_informer(client)
    informer._list()
    informer._watch()
    assert client.list_params[0]["fieldSelector"] == "status.phase!=Succeeded,status.phase!=Failed"
    params = client.watch_params[0]
    assert params["resourceVersion"] == "10" and params["allowWatchBookmarks"] == "true"
    assert 300 <= params["timeoutSeconds"] <= 600  # client-go: random 5-10 minutes
    assert seen == [("ADDED", "a", "5"), ("ADDED", "b", "11")]  # a bookmark is not a change
    assert informer.resource_version == "15"


def test_expired_error_event_makes_the_reflector_relist_and_diff():
    """Upstream relists on the 410 ERROR event; objects gone meanwhile become DELETED, changed
    ones MODIFIED, unchanged ones (same resourceVersion) produce nothing."""
    client = ScriptedClient(
        [{"metadata": {"resourceVersion": "10"}, "items": [pod_json("a", "5"), pod_json("b", "6")]},
         {"metadata": {"resourceVersion": "40"}, "items": [pod_json("a", "5"), pod_json("c", "30")]}],
        [[EXPIRED]])
    informer, seen = make_informer(client)
    informer._list()
    with pytest.raises(Exception) as expired:
        informer._watch()
    assert type(expired.value).__name__ == "_Expired"
    informer._list()
    assert seen[2:] == [("ADDED", "c", "30"), ("DELETED", "b", "6")]
    assert informer.resource_version == "40" and informer.lists == 2


def test_update_with_unchanged_resource_version_is_dropped():
    same = {"type": "MODIFIED", "object": {"kind": "Pod", "apiVersion": "v1", **pod_json("a", "5")}}
    client = ScriptedClient([{"metadata": {"resourceVersion": "10"}, "items": [pod_json("a", "5")]}], [[same]])
    informer, seen = make_informer(client)
    informer._list()
    informer._watch()
    assert seen == [("ADDED", "a", "5")]


def test_cached_objects_drop_managed_fields():
    pod = parse_api_object(BY_KIND["Pod"], pod_json("a", "5"))
    assert "managedFields" not in pod.raw["metadata"]
    assert pod.resource_version == "5" and pod.uid == "uid-a"


def test_token_bucket_allows_a_burst_then_paces_at_qps():
    now = [0.0]
    bucket = TokenBucket(10, 3, clock=lambda: now[0], sleep=lambda s: None)
    assert [bucket.reserve() for _ in range(3)] == [0.0, 0.0, 0.0]
    assert bucket.reserve() == pytest.approx(0.1)
    assert bucket.reserve() == pytest.approx(0.2)
    now[0] = 10.0  # long idle: refills to the burst, not beyond
    assert [bucket.reserve() for _ in range(3)] == [0.0, 0.0, 0.0]
    assert bucket.reserve() > 0
    assert TokenBucket(0, 1).reserve() == 0.0  # client-go: qps <= 0 means no limit


def test_condition_patch_keeps_transition_time_when_status_is_unchanged():
    raw = pod_json("a", "5")
    raw["status"]["conditions"] = [{"type": "Ready", "status": "False"},
                                   {"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
                                    "lastTransitionTime": "2026-01-01T00:00:00Z"}]
    pod = parse_api_object(BY_KIND["Pod"], raw)
    patch = _condition_patch(pod, "PodScheduled", "False", "Unschedulable", "new message")
    assert patch["$setElementOrder/conditions"] == [{"type": "Ready"}, {"type": "PodScheduled"}]
    assert patch["conditions"][0]["lastTransitionTime"] == "2026-01-01T00:00:00Z"
    assert patch["conditions"][0]["message"] == "new message"
    moved = _condition_patch(pod, "PodScheduled", "True", "", "")["conditions"][0]
    assert moved["lastTransitionTime"] != "2026-01-01T00:00:00Z"


# ---------------------------------------------------------------------------------------- credentials
def kubeconfig(tmp_path, user: dict) -> str:
    path = tmp_path / "kubeconfig"
    path.write_text(json.dumps({
        "apiVersion": "v1", "kind": "Config", "current-context": "c",
        "clusters": [{"name": "k", "cluster": {"server": "http://127.0.0.1:1"}}],
        "users": [{"name": "u", "user": user}], "contexts": [{"name": "c", "context": {"cluster": "k", "user": "u"}}]}))
    return str(path)


def test_token_file_is_reread_after_unauthorized(tmp_path):
    from kschedfw.cluster.kube.credentials import load_connection
    token = tmp_path / "token"
    token.write_text("first\n")
    conn = load_connection(kubeconfig(tmp_path, {"tokenFile": str(token)}))
    assert conn.authorization() == "Bearer first"
    token.write_text("rotated\n")
    assert conn.authorization() == "Bearer first"  # cached until the server says 401
    assert conn.refresh_after_unauthorized() == "Bearer rotated"


def test_exec_credential_plugin_provides_the_token(tmp_path):
    from kschedfw.cluster.kube.credentials import load_connection
    plugin = tmp_path / "plugin.py"
    plugin.write_text(textwrap.dedent('''
        import json
        print(json.dumps({"apiVersion": "client.authentication.k8s.io/v1beta1", "kind": "ExecCredential",
                          "status": {"token": "from-exec"}}))
    '''))
    conn = load_connection(kubeconfig(tmp_path, {"exec": {
        "apiVersion": "client.authentication.k8s.io/v1beta1", "command": sys.executable, "args": [str(plugin)]}}))
    assert conn.authorization() == "Bearer from-exec"


def test_unreadable_kubeconfig_is_a_clear_error(tmp_path):
    from kschedfw.cluster.kube.credentials import CredentialsError, load_connection
    with pytest.raises(CredentialsError, match="no-such-file"):
        load_connection(tmp_path / "no-such-file")


# ---------------------------------------------------------------------------------------- events
class RecordingClient:
    def __init__(self) -> None:
        self.calls: list[tuple[str, str, dict]] = []

    def request(self, method, path, *, body=None, content_type="application/json", params=None):
        self.calls.append((method, path, body))
        return body


def test_repeated_event_becomes_a_series_not_a_flood():
    """client-go's events library: an isomorphic event within minutes patches the first one's series."""
    from kschedfw.cluster.kube.events import EventWriter
    pod = parse_api_object(BY_KIND["Pod"], pod_json("stuck", "7"))
    client = RecordingClient()
    writer = EventWriter(client, instance="host")
    for _ in range(3):
        writer.record(pod, "Warning", "FailedScheduling", "0/3 nodes are available: 3 Insufficient cpu.")
    writer.record(pod, "Warning", "FailedScheduling", "x" * 2000)
    writer.close()
    (m1, p1, created), (m2, p2, patch2), (m3, _, patch3), (m4, _, long) = client.calls
    assert (m1, m2, m3, m4) == ("POST", "PATCH", "PATCH", "POST")
    assert p1 == "/apis/events.k8s.io/v1/namespaces/ns/events"
    assert p2 == f"{p1}/{created['metadata']['name']}"
    assert created["regarding"]["uid"] == "uid-stuck" and created["action"] == "Scheduling"
    assert created["reportingController"] == "default-scheduler"
    assert created["reportingInstance"] == "default-scheduler-host"
    assert (patch2["series"]["count"], patch3["series"]["count"]) == (2, 3)
    assert len(long["note"]) == 1024 and long["note"].endswith(" ...")  # the server refuses longer notes
