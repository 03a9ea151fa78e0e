"""The handler chain answers as kube-scheduler's secure port: the always-allowed paths without
credentials, 401 for a token the API server rejects or cannot review, 403 (naming user, verb and
path) when the SubjectAccessReview does not allow, 500 when it fails, 200 otherwise; reviews are
cached for upstream's TTLs, failures never."""

from __future__ import annotations

import json

import pytest

from kschedfw.serving.authentication import ANONYMOUS, Authenticator, UserInfo
from kschedfw.serving.authorization import Authorizer
from kschedfw.serving.cache import TTLCache
from kschedfw.serving.endpoints import Endpoints, Reply
from kschedfw.serving.handler import Chain
from kschedfw.serving.review import ReviewError, kube_post


class FakeApiServer:
    """Answers TokenReviews from ``tokens`` (token -> user dict) and SubjectAccessReviews from
    ``allowed`` ((user, path) pairs); ``down`` makes every review fail."""

    def __init__(self) -> None:
        self.tokens = {"good": {"username": "alice", "groups": ["system:authenticated"]},
                       "poor": {"username": "bob", "groups": ["system:authenticated"]}}
        self.allowed = {("alice", "/metrics")}
        self.down = False
        self.calls: list[str] = []

    def post(self, path: str, body: dict) -> dict:
        self.calls.append(body["kind"])
        if self.down:
            raise ReviewError("connection refused")
        if body["kind"] == "TokenReview":
            user = self.tokens.get(body["spec"]["token"])
            return {"status": {"authenticated": True, "user": user} if user else {"authenticated": False}}
        spec = body["spec"]
        return {"status": {"allowed": (spec["user"], spec["nonResourceAttributes"]["path"]) in self.allowed}}


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def world():
    api, clock = FakeApiServer(), Clock()
    endpoints = Endpoints({"healthz": {"ping": lambda: None}, "readyz": {"ping": lambda: None}}, lambda: "up 1\n")
    chain = Chain(Authenticator(api.post, cache=TTLCache(clock=clock)),
                  Authorizer(api.post, cache=TTLCache(clock=clock)), endpoints.get)
    return api, clock, chain


def get(chain: Chain, path: str, token: str | None = None, cert: bytes | None = None) -> Reply:
    return chain.serve("GET", path, f"Bearer {token}" if token else None, cert)


def test_status_codes_and_bodies_as_upstreams(world):
    api, _, chain = world
    assert get(chain, "/healthz") == Reply(200, "ok")
    assert get(chain, "/readyz?verbose").status == 200
    anonymous = get(chain, "/metrics")
    assert anonymous.status == 403 and anonymous.content_type == "application/json"
    assert json.loads(anonymous.body) == {
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": 'forbidden: User "system:anonymous" cannot get path "/metrics"', "reason": "Forbidden",
        "details": {}, "code": 403}
    rejected = get(chain, "/metrics", "forged")
    assert rejected.status == 401 and json.loads(rejected.body)["reason"] == "Unauthorized"
    assert get(chain, "/healthz", "forged").status == 401  # authentication comes before the allowed paths
    assert get(chain, "/metrics", "poor").status == 403
    assert get(chain, "/metrics", "good") == Reply(200, "up 1\n", "text/plain; version=0.0.4; charset=utf-8")
    assert get(chain, "/nope", "good").status == 403  # no right on that path: not even a 404


def test_a_failing_api_server_fails_closed(world):
    api, _, chain = world
    api.down = True
    assert get(chain, "/metrics", "good").status == 401  # the token cannot be reviewed
    assert get(chain, "/healthz").status == 200  # the probes do not depend on the API server
    internal = get(chain, "/metrics")
    assert internal.status == 500 and internal.body.startswith('Internal Server Error: "/metrics": ')


def test_answers_are_cached_for_ten_seconds_failures_not_at_all(world):
    api, clock, chain = world
    for _ in range(3):
        assert get(chain, "/metrics", "good").status == 200
        assert get(chain, "/metrics", "forged").status == 401
        assert get(chain, "/metrics", "poor").status == 403
    assert sorted(api.calls) == ["SubjectAccessReview"] * 2 + ["TokenReview"] * 3
    api.allowed.add(("bob", "/metrics"))
    clock.now = 9.9
    assert get(chain, "/metrics", "poor").status == 403  # the denial still cached
    clock.now = 10.0
    assert get(chain, "/metrics", "poor").status == 200
    api.calls.clear()
    api.down = True
    clock.now = 30.0
    assert get(chain, "/metrics", "good").status == 401
    api.down = False
    assert get(chain, "/metrics", "good").status == 200  # the failure was not remembered
    assert api.calls == ["TokenReview", "TokenReview", "SubjectAccessReview"]


def test_system_masters_and_prefix_paths_need_no_review():
    calls = []

    def post(path, body):
        calls.append(path)
        return {"status": {"allowed": False}}
    authorizer = Authorizer(post, always_allow_paths=["/debug/*", "/healthz"])
    assert authorizer.authorize(UserInfo("root", groups=("system:masters",)), "get", "/metrics").allowed
    assert authorizer.authorize(ANONYMOUS, "get", "/debug/pprof").allowed
    assert not authorizer.authorize(ANONYMOUS, "get", "/healthz/ping").allowed  # exact unless starred
    assert calls == ["/apis/authorization.k8s.io/v1/subjectaccessreviews"]


def test_a_review_that_both_allows_and_denies_is_an_error():
    authorizer = Authorizer(lambda path, body: {"status": {"allowed": True, "denied": True}})
    chain = Chain(Authenticator(None), authorizer, lambda target: Reply(200, "secret"))
    assert get(chain, "/metrics").status == 500


def test_client_certificate_names_user_and_groups(tmp_path):
    from cryptography import x509
    from cryptography.hazmat.primitives import serialization
    from kschedfw.serving.authentication import user_of_certificate
    from tests.serving.certs import client_certificate
    _, cert_pem, _ = client_certificate(tmp_path, "carol", ["ops", "sre"])
    der = x509.load_pem_x509_certificate(cert_pem).public_bytes(serialization.Encoding.DER)
    assert user_of_certificate(der) == UserInfo("carol", groups=("ops", "sre"))
    seen = []
    chain = Chain(Authenticator(None), Authorizer(lambda path, body: seen.append(body["spec"]) or
                                                  {"status": {"allowed": True}}), lambda target: Reply(200, "m"))
    assert chain.serve("GET", "/metrics", None, der).status == 200
    assert seen[0]["user"] == "carol" and seen[0]["groups"] == ["ops", "sre", "system:authenticated"]
    _, server_pem, _ = client_certificate(tmp_path, "server-only", [], server=True)
    der = x509.load_pem_x509_certificate(server_pem).public_bytes(serialization.Encoding.DER)
    assert chain.serve("GET", "/metrics", None, der).status == 401  # not a client certificate


def test_kube_post_turns_every_failure_into_a_review_error():
    class Broken:
        def request(self, method, path, *, body=None):
            raise OSError("connection reset")

    class NotAReview:
        def request(self, method, path, *, body=None):
            return "<html>"
    for client in (Broken(), NotAReview()):
        with pytest.raises(ReviewError):
            kube_post(client)("/apis/x", {})


def test_cache_keeps_at_most_its_size():
    cache: TTLCache[int] = TTLCache(max_entries=2)
    for key in range(3):
        cache.set(key, key, 10)
    assert len(cache) == 2 and cache.get(0) is None and cache.get(2) == 2
    cache.set("zero", 1, 0)
    assert cache.get("zero") is None


