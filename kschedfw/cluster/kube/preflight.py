"""Start-up checks that fail fast with one clear message instead of waiting out the informers'
sync timeout: the API server answers, accepts the credentials, and lets this user do what the
scheduler needs (list and watch pods, create pods/binding, get and update its Lease).

Rights are asked with SelfSubjectAccessReview, which every authenticated user may create and
which answers for writes without making them. A server error or throttling is not a verdict:
it is logged and start-up goes on (the informers retry as upstream's do)."""

from __future__ import annotations

import logging
import time
from typing import Any, NamedTuple

from kschedfw.cluster.kube.client import ApiError, KubeClient, TransportError
from kschedfw.fwk.interface import NotFound

__all__ = ["Access", "PreflightError", "preflight", "PREFLIGHT_TIMEOUT"]

log = logging.getLogger(__name__)

#: seconds to wait for each preflight answer: a server that does not answer within this at
#: start-up is reported rather than waited for
PREFLIGHT_TIMEOUT = 10.0
#: seconds between the attempts of a start-up check whose connection failed: a server behind a
#: flaky proxy is not reported unreachable for one dropped connection
UNREACHABLE_RETRY_DELAYS = (0.5, 1.0, 2.0)

_SSAR = "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews"
_WHOAMI = "/apis/authentication.k8s.io/v1/selfsubjectreviews"


class PreflightError(RuntimeError):
    """The scheduler cannot work with this server or these credentials (the message says why)."""


class Access(NamedTuple):
    """One right the scheduler needs, as a SelfSubjectAccessReview's resourceAttributes."""

    verb: str
    resource: str
    group: str = ""
    namespace: str = ""
    name: str = ""

    def describe(self) -> str:
        """``create pods/binding``, ``update leases.coordination.k8s.io "x" in namespace y``."""
        text = f"{self.verb} {self.resource}{'.' + self.group if self.group else ''}"
        if self.name:
            text += f' "{self.name}"'
        return text + (f" in namespace {self.namespace}" if self.namespace else " (cluster-wide)")


def required_access(*, writes: bool, lease: tuple[str, str] | None) -> list[Access]:
    """What the scheduler does: read pods (and nodes), bind unless a dry run, keep its Lease."""
    needed = [Access("list", "pods"), Access("watch", "pods"), Access("list", "nodes")]
    if writes:
        needed.append(Access("create", "pods/binding"))
    if lease is not None:
        namespace, name = lease
        needed += [Access("get", "leases", "coordination.k8s.io", namespace, name),
                   Access("update", "leases", "coordination.k8s.io", namespace, name)]
    return needed


def preflight(client: KubeClient, credentials: str, needed: list[Access],
              lease: tuple[str, str] | None = None) -> None:
    """Raise :class:`PreflightError` when the server cannot be reached, refuses the credentials
    (``credentials`` names where they came from) or denies one of ``needed``; with ``lease``
    (namespace, name), also ``create`` on leases when that Lease does not exist yet."""
    server = client.connection.server
    try:
        for delay in (*UNREACHABLE_RETRY_DELAYS, None):
            try:
                _check(client, needed, lease)
                return
            except TransportError as exc:
                # one dropped connection is a blip, not a verdict: the answer is retried a few
                # times before the server counts as unreachable
                if delay is None:
                    cause = exc.__cause__ or exc
                    raise PreflightError(f"cannot reach the API server at {server}: {cause}") from None
                log.info("start-up check against %s: %s; trying again in %.1fs", server, exc, delay)
                time.sleep(delay)
    except ApiError as exc:
        if exc.status == 401:
            raise PreflightError(f"Unauthorized: the API server at {server} refused the credentials; "
                                 f"check the credentials in {credentials}") from None
        log.warning("start-up check against %s inconclusive, going on: %s", server, exc)


def _check(client: KubeClient, needed: list[Access], lease: tuple[str, str] | None) -> None:
    user = _whoami(client)
    for access in needed:
        _require(client, access, user)
    if lease is not None and not _exists(client, *lease):
        _require(client, Access("create", "leases", "coordination.k8s.io", lease[0]), user)


def _whoami(client: KubeClient) -> str:
    """The user the server sees (SelfSubjectReview), for messages; 'this user' if not served."""
    try:
        review = client.request("POST", _WHOAMI, body={"apiVersion": "authentication.k8s.io/v1",
                                                       "kind": "SelfSubjectReview"})
    except (NotFound, ApiError) as exc:
        if isinstance(exc, ApiError) and exc.status == 401:
            raise
        return "this user"
    return (((review or {}).get("status") or {}).get("userInfo") or {}).get("username") or "this user"


def _require(client: KubeClient, access: Access, user: str) -> None:
    attributes: dict[str, Any] = {"verb": access.verb, "group": access.group}
    resource, _, subresource = access.resource.partition("/")
    attributes["resource"] = resource
    if subresource:
        attributes["subresource"] = subresource
    if access.namespace:
        attributes["namespace"] = access.namespace
    if access.name:
        attributes["name"] = access.name
    body = {"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview",
            "spec": {"resourceAttributes": attributes}}
    try:
        review = client.request("POST", _SSAR, body=body)
    except ApiError as exc:
        if exc.status != 403:
            raise
        _require_by_listing(client, access, user)  # may not even ask: try the cheapest real read
        return
    if not ((review or {}).get("status") or {}).get("allowed"):
        raise PreflightError(f"forbidden: {user} cannot {access.describe()}; grant it in this scheduler's "
                             f"RBAC (see deploy/rbac.yaml)")


def _require_by_listing(client: KubeClient, access: Access, user: str) -> None:
    """Without SelfSubjectAccessReview, only a list can be tried for real (writes are not)."""
    if access.verb != "list":
        return
    path = f"/api/v1/{access.resource}" if not access.group else f"/apis/{access.group}/v1/{access.resource}"
    try:
        client.request("GET", path, params={"limit": 1})
    except ApiError as exc:
        if exc.status == 403:
            raise PreflightError(f"forbidden: {user} cannot {access.describe()}; grant it in this scheduler's "
                                 f"RBAC (see deploy/rbac.yaml)") from None
        raise


def _exists(client: KubeClient, namespace: str, name: str) -> bool:
    try:
        client.request("GET", f"/apis/coordination.k8s.io/v1/namespaces/{namespace}/leases/{name}")
    except NotFound:
        return False
    return True
