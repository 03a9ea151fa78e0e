"""k8s.io/apiserver's handler chain in front of the endpoints, with its status codes and bodies:
authentication (401 ``Unauthorized`` Status), then authorization of the non-resource URL (403
``Forbidden`` Status naming the user, verb and path; 500 when the review failed), then the
endpoint. Nothing that fails answers 200."""

from __future__ import annotations

import json
import logging
import urllib.parse
from typing import Any, Callable

from kschedfw.serving.authentication import AuthenticationError, Authenticator, UserInfo
from kschedfw.serving.authorization import AuthorizationError, Authorizer
from kschedfw.serving.endpoints import Reply

__all__ = ["Chain"]

log = logging.getLogger(__name__)

JSON = "application/json"


class Chain:
    """``inner`` answers a request that passed (its target: path and query)."""

    def __init__(self, authenticator: Authenticator, authorizer: Authorizer, inner: Callable[[str], Reply]) -> None:
        self.authenticator = authenticator
        self.authorizer = authorizer
        self.inner = inner

    def serve(self, method: str, target: str, authorization: str | None, peer_certificate: bytes | None) -> Reply:
        try:
            user = self.authenticator.authenticate(authorization, peer_certificate)
        except AuthenticationError as exc:
            log.info("unable to authenticate the request: %s", exc)
            return _status(401, "Unauthorized", "Unauthorized")
        path = urllib.parse.urlsplit(target).path
        verb = method.lower()
        try:
            verdict = self.authorizer.authorize(user, verb, path)
        except AuthorizationError as exc:
            log.warning("authorization of %s %s for %s failed: %s", verb, path, user.name, exc)
            return Reply(500, f"Internal Server Error: {json.dumps(target)}: {exc}\n")
        if not verdict.allowed:
            return _forbidden(user, verb, path, verdict.reason)
        return self.inner(target)


def _forbidden(user: UserInfo, verb: str, path: str, reason: str) -> Reply:
    message = f"forbidden: User {json.dumps(user.name)} cannot {verb} path {json.dumps(path)}"
    return _status(403, "Forbidden", message + (f": {reason}" if reason else ""), details={})


def _status(code: int, reason: str, message: str, **extra: Any) -> Reply:
    body = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "message": message,
            "reason": reason, **extra, "code": code}
    return Reply(code, json.dumps(body, separators=(",", ":")) + "\n", JSON)
