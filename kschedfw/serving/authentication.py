"""Delegated authentication, as kube-scheduler's (k8s.io/apiserver's delegating authenticator):
a client certificate verified against the client CA (its CommonName the user, its Organizations
the groups), else a bearer token the API server vouches for (TokenReview, answers cached 10 s),
else the anonymous user. A token the API server rejects, or cannot be asked about, is an error
(401), never anonymous: that would let a broken API server open the door wider."""

from __future__ import annotations

import hashlib
from typing import Any

import attrs

from kschedfw.serving.cache import TTLCache
from kschedfw.serving.review import Post, ReviewError

__all__ = ["ANONYMOUS", "AuthenticationError", "Authenticator", "UserInfo", "user_of_certificate"]

#: upstream's --authentication-token-webhook-cache-ttl default, for accepted and rejected tokens
TOKEN_CACHE_TTL = 10.0
TOKEN_REVIEWS = "/apis/authentication.k8s.io/v1/tokenreviews"

AUTHENTICATED = "system:authenticated"
UNAUTHENTICATED = "system:unauthenticated"


@attrs.frozen
class UserInfo:
    name: str
    uid: str = ""
    groups: tuple[str, ...] = ()
    extra: tuple[tuple[str, tuple[str, ...]], ...] = ()


ANONYMOUS = UserInfo("system:anonymous", groups=(UNAUTHENTICATED,))


class AuthenticationError(Exception):
    """The request carried credentials that do not authenticate (answered 401)."""


def user_of_certificate(der: bytes) -> UserInfo:
    """The user a verified client certificate names (upstream's CommonNameUserConversion); it
    must be meant for client authentication when it says what it is meant for."""
    from cryptography import x509
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    cert = x509.load_der_x509_certificate(der)
    try:
        usages = cert.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
    except x509.ExtensionNotFound:
        usages = None
    if usages is not None and ExtendedKeyUsageOID.CLIENT_AUTH not in usages \
            and ExtendedKeyUsageOID.ANY_EXTENDED_KEY_USAGE not in usages:
        raise AuthenticationError("x509: certificate specifies an incompatible key usage")
    names = [str(a.value) for a in cert.subject.get_attributes_for_oid(NameOID.COMMON_NAME)]
    if not names or not names[0]:
        raise AuthenticationError("x509: certificate has no common name")
    groups = tuple(str(a.value) for a in cert.subject.get_attributes_for_oid(NameOID.ORGANIZATION_NAME))
    return UserInfo(names[0], groups=groups)


class Authenticator:
    """``post`` is None when there is no API server to review tokens (every token then fails)."""

    def __init__(self, post: Post | None, *, cache_ttl: float = TOKEN_CACHE_TTL,
                 cache: TTLCache[UserInfo | str] | None = None) -> None:
        self._post = post
        self._ttl = cache_ttl
        self._cache: TTLCache[UserInfo | str] = cache if cache is not None else TTLCache()

    def authenticate(self, authorization: str | None, peer_certificate: bytes | None) -> UserInfo:
        """The request's user; AuthenticationError when its credentials do not hold."""
        if peer_certificate is not None:
            return _with_authenticated(user_of_certificate(peer_certificate))
        token = _bearer(authorization)
        if token is None:
            return ANONYMOUS
        return _with_authenticated(self._review(token))

    def _review(self, token: str) -> UserInfo:
        key = hashlib.sha256(token.encode()).digest()  # the cache holds no token
        cached = self._cache.get(key)
        if isinstance(cached, UserInfo):
            return cached
        if cached is not None:
            raise AuthenticationError(cached)
        if self._post is None:
            raise AuthenticationError("invalid bearer token")
        try:
            answer = self._post(TOKEN_REVIEWS, {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview",
                                                "spec": {"token": token}})
        except ReviewError as exc:  # not cached: the next request asks again
            raise AuthenticationError(f"token review failed: {exc}") from None
        status = answer.get("status") or {}
        if not status.get("authenticated"):
            reason = str(status.get("error") or "invalid bearer token")
            self._cache.set(key, reason, self._ttl)
            raise AuthenticationError(reason)
        user = _user_of_review(status.get("user") or {})
        self._cache.set(key, user, self._ttl)
        return user


def _bearer(authorization: str | None) -> str | None:
    """The token of an ``Authorization: Bearer`` header; None for no header, another scheme or
    an empty token (upstream passes those on, to end as anonymous)."""
    if not authorization:
        return None
    parts = authorization.strip().split(" ")
    if len(parts) < 2 or parts[0].lower() != "bearer" or not parts[1]:
        return None
    return parts[1]


def _user_of_review(user: dict[str, Any]) -> UserInfo:
    extra = user.get("extra") or {}
    return UserInfo(str(user.get("username") or ""), str(user.get("uid") or ""),
                    tuple(str(g) for g in user.get("groups") or ()),
                    tuple(sorted((str(k), tuple(str(v) for v in values or ())) for k, values in extra.items())))


def _with_authenticated(user: UserInfo) -> UserInfo:
    """Upstream's AuthenticatedGroupAdder: every authenticated user is in system:authenticated."""
    if AUTHENTICATED in user.groups or UNAUTHENTICATED in user.groups:
        return user
    return attrs.evolve(user, groups=(*user.groups, AUTHENTICATED))
