"""Delegated authorization, as kube-scheduler's: the always-allowed paths
(``--authorization-always-allow-paths``), then the ``system:masters`` group, then the API server's
answer to a SubjectAccessReview for the non-resource URL and verb (allowed answers cached 10 s,
denied ones 10 s, failures not at all). A review that fails is an error (500), never an allow."""

from __future__ import annotations

import enum
from typing import Sequence

import attrs

from kschedfw.serving.authentication import UserInfo
from kschedfw.serving.cache import TTLCache
from kschedfw.serving.flags import ALWAYS_ALLOW_PATHS
from kschedfw.serving.review import Post, ReviewError

__all__ = ["ALWAYS_ALLOW_PATHS", "AuthorizationError", "Authorizer", "Decision", "Verdict"]

#: upstream's defaults (DelegatingAuthorizationOptions)
ALWAYS_ALLOW_GROUPS = ("system:masters",)
ALLOW_CACHE_TTL = 10.0
DENY_CACHE_TTL = 10.0
SUBJECT_ACCESS_REVIEWS = "/apis/authorization.k8s.io/v1/subjectaccessreviews"


class Decision(enum.Enum):
    ALLOW = "allow"
    DENY = "deny"
    NO_OPINION = "no opinion"


@attrs.frozen
class Verdict:
    decision: Decision
    reason: str = ""

    @property
    def allowed(self) -> bool:
        return self.decision is Decision.ALLOW


class AuthorizationError(Exception):
    """No authorizer allowed and the API server could not be asked (answered 500)."""


class Authorizer:
    """``post`` is None when there is no API server to ask: only the always-allowed paths and
    groups pass then."""

    def __init__(self, post: Post | None, *, always_allow_paths: Sequence[str] = ALWAYS_ALLOW_PATHS,
                 always_allow_groups: Sequence[str] = ALWAYS_ALLOW_GROUPS, allow_ttl: float = ALLOW_CACHE_TTL,
                 deny_ttl: float = DENY_CACHE_TTL, cache: TTLCache[Verdict] | None = None) -> None:
        self._post = post
        self._exact = frozenset(p for p in always_allow_paths if not p.endswith("*"))
        self._prefixes = tuple(p[:-1] for p in always_allow_paths if p.endswith("*"))
        self._groups = frozenset(always_allow_groups)
        self._allow_ttl = allow_ttl
        self._deny_ttl = deny_ttl
        self._cache: TTLCache[Verdict] = cache if cache is not None else TTLCache()

    def authorize(self, user: UserInfo, verb: str, path: str) -> Verdict:
        """The verdict on ``verb`` of the non-resource URL ``path``; AuthorizationError when none
        allowed and the review failed."""
        if path in self._exact or path.startswith(self._prefixes):
            return Verdict(Decision.ALLOW)
        if self._groups.intersection(user.groups):
            return Verdict(Decision.ALLOW)
        if self._post is None:
            return Verdict(Decision.NO_OPINION)
        spec = {"user": user.name, "uid": user.uid, "groups": list(user.groups),
                "extra": {k: list(v) for k, v in user.extra},
                "nonResourceAttributes": {"path": path, "verb": verb}}
        key = (user, verb, path)
        cached = self._cache.get(key)
        if cached is not None:
            return cached
        try:
            answer = self._post(SUBJECT_ACCESS_REVIEWS, {"apiVersion": "authorization.k8s.io/v1",
                                                         "kind": "SubjectAccessReview", "spec": spec})
        except ReviewError as exc:
            raise AuthorizationError(str(exc)) from None
        status = answer.get("status") or {}
        reason = str(status.get("reason") or "")
        if status.get("allowed") and status.get("denied"):
            raise AuthorizationError("webhook subject access review returned both allow and deny response")
        if status.get("allowed"):
            verdict = Verdict(Decision.ALLOW, reason)
            self._cache.set(key, verdict, self._allow_ttl)
            return verdict
        verdict = Verdict(Decision.DENY if status.get("denied") else Decision.NO_OPINION, reason)
        self._cache.set(key, verdict, self._deny_ttl)
        return verdict
