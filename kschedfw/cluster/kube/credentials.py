"""Where to connect and how to authenticate, loaded by lightkube (kubeconfig with exec plugins,
client certificates, token files; in-cluster service account with its rotating token).

The transport is our own (urllib3, measured cheaper per request than httpx), so the bearer
header is taken from lightkube's auth flow instead of letting lightkube send the requests.
"""

from __future__ import annotations

import ssl
import threading
from pathlib import Path
from typing import Any

import attrs

__all__ = ["Connection", "CredentialsError", "load_connection"]


class CredentialsError(RuntimeError):
    """The kubeconfig / in-cluster configuration cannot be used (message says why)."""


@attrs.define
class Connection:
    """One API server: its URL, a TLS context (server CA, client certificate) and the auth."""

    server: str
    ssl_context: ssl.SSLContext | None
    _auth: Any = None  # an httpx2.Auth from lightkube, or None
    _header: str | None = None
    _lock: threading.Lock = attrs.field(factory=threading.Lock)

    def authorization(self) -> str | None:
        """The Authorization header value to send now (computed once, then after each 401)."""
        if self._auth is None:
            return None
        with self._lock:
            if self._header is None:
                self._header = self._run_flow(unauthorized=False)
            return self._header

    def refresh_after_unauthorized(self) -> str | None:
        """A 401 came: let the auth re-read its token file or re-run its exec plugin."""
        if self._auth is None:
            return None
        with self._lock:
            self._header = self._run_flow(unauthorized=True)
            return self._header

    def _run_flow(self, unauthorized: bool) -> str | None:
        import httpx2
        request = httpx2.Request("GET", self.server)
        flow = self._auth.sync_auth_flow(request)
        try:
            sent = next(flow)
            if unauthorized:
                try:
                    sent = flow.send(httpx2.Response(401, request=sent))
                except StopIteration:
                    pass
        except Exception as exc:  # lightkube's ConfigError, a failing exec plugin, a missing file
            raise CredentialsError(f"cannot get credentials: {exc}") from None
        finally:
            flow.close()
        return sent.headers.get("Authorization")


def load_connection(kubeconfig: str | Path | None = None, context: str | None = None) -> Connection:
    """From ``kubeconfig`` if given; else in-cluster, ``$KUBECONFIG`` or ``~/.kube/config``
    (client-go's order for a scheduler run with no --kubeconfig)."""
    try:
        from lightkube.config import client_adapter
        from lightkube.config.kubeconfig import KubeConfig
        from lightkube.core.exceptions import ConfigError
    except ImportError:
        raise CredentialsError("reading kubeconfigs needs the lightkube package (pip install lightkube)") from None
    try:
        config = KubeConfig.from_file(str(kubeconfig)) if kubeconfig else KubeConfig.from_env()
        single = config.get(context_name=context)
        if single is None:
            raise CredentialsError(f"kubeconfig {kubeconfig or ''}: no current context")
        if single.user is None:
            raise CredentialsError(f"kubeconfig {kubeconfig or ''}: the context names no user")
        ssl_context = None
        if single.cluster.server.startswith("https:"):
            ssl_context = client_adapter.verify_cluster(single.cluster, single.user, single.abs_file)
        auth = client_adapter.user_auth(single.user)
    except ConfigError as exc:
        raise CredentialsError(f"kubeconfig {kubeconfig or '(default)'}: {exc}") from None
    except OSError as exc:
        raise CredentialsError(f"cannot read kubeconfig {kubeconfig or '(default)'}: {exc.strerror or exc}") from None
    except (ValueError, KeyError, TypeError) as exc:
        raise CredentialsError(f"kubeconfig {kubeconfig or '(default)'} is not valid: {exc}") from None
    return Connection(single.cluster.server.rstrip("/"), ssl_context, auth)
