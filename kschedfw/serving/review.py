"""The one door to the API server for reviews (TokenReview, SubjectAccessReview): a POST through
the scheduler's kube client, with a timeout; any failure (no answer, an error status, a body that
is not a review) raises :class:`ReviewError`, so callers fail closed."""

from __future__ import annotations

from typing import Any, Callable, Protocol

__all__ = ["Post", "ReviewError", "kube_post"]

#: POST ``body`` to ``path`` and return the answer's JSON object (raises on any failure)
Post = Callable[[str, dict[str, Any]], dict[str, Any]]

#: upstream's TokenRequestTimeout and the SubjectAccessReview ClientTimeout (seconds)
REVIEW_TIMEOUT = 10.0


class ReviewError(RuntimeError):
    """A review got no usable answer."""


class _Client(Protocol):
    def request(self, method: str, path: str, *, body: Any = None) -> Any: ...


def kube_post(client: _Client) -> Post:
    """``client``: a :class:`~kschedfw.cluster.kube.client.KubeClient` built with
    :data:`REVIEW_TIMEOUT` (its socket timeout bounds the connect and every read)."""
    def post(path: str, body: dict[str, Any]) -> dict[str, Any]:
        try:
            answer = client.request("POST", path, body=body)
        except Exception as exc:  # ApiError, TransportError, CredentialsError: all fail closed
            raise ReviewError(str(exc)) from exc
        if not isinstance(answer, dict):
            raise ReviewError(f"POST {path}: the answer is not an object")
        return answer
    return post
