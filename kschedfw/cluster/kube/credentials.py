"""Where to connect and how to authenticate, loaded by lightkube (kubeconfig with exec plugins,
client certificates, token files; in-cluster service account with its rotating token).

The transport is our own (:mod:`.transport`, measured cheaper per request than httpx, urllib3
and http.client), so the bearer header is taken from lightkube's auth flow instead of letting
lightkube send the requests, and the proxy is chosen here (:mod:`.proxy`: the cluster's
``proxy-url``, which lightkube does not read, else the environment's).
"""

from __future__ import annotations

import os
import ssl
import threading
from pathlib import Path
from typing import Any

import attrs
import yaml

from kschedfw.api.yamlinput import YamlLimit, load_first
from kschedfw.cluster.kube.proxy import Proxy, choose_proxy

__all__ = ["Connection", "CredentialsError", "load_connection"]


class CredentialsError(RuntimeError):
    """The kubeconfig / in-cluster configuration cannot be used (message says why)."""


@attrs.define
class Connection:
    """One API server: its URL, a TLS context (server CA, client certificate), the auth and the
    HTTP proxy to reach it through (None: directly)."""

    server: str
    ssl_context: ssl.SSLContext | None
    _auth: Any = None  # an httpx2.Auth from lightkube, or None
    _header: str | None = None
    _lock: threading.Lock = attrs.field(factory=threading.Lock)
    proxy: Proxy | None = attrs.field(default=None, kw_only=True)

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
        header = sent.headers.get("Authorization")
        return None if header is None else str(header)


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
        server = single.cluster.server.rstrip("/")
        proxy_url = _proxy_url(single.fname, single.context.cluster)
    except ConfigError as exc:
        raise CredentialsError(f"kubeconfig {kubeconfig or '(default)'}: {exc}") from None
    except OSError as exc:
        raise CredentialsError(f"cannot read kubeconfig {kubeconfig or '(default)'}: {exc.strerror or exc}") from None
    except (ValueError, KeyError, TypeError, AttributeError, yaml.YAMLError) as exc:
        raise CredentialsError(f"kubeconfig {kubeconfig or '(default)'} is not valid: {exc}") from None
    try:
        proxy = choose_proxy(server, proxy_url, os.environ)
    except ValueError as exc:
        raise CredentialsError(f"kubeconfig {kubeconfig or '(default)'}: {exc}" if proxy_url else str(exc)) from None
    return Connection(server, ssl_context, auth, proxy=proxy)


def _proxy_url(kubeconfig: Path | None, cluster: str) -> str | None:
    """The ``proxy-url`` of the kubeconfig's cluster entry named ``cluster`` (None in-cluster)."""
    if kubeconfig is None:
        return None
    try:
        document = load_first(kubeconfig.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, YamlLimit, yaml.YAMLError) as exc:
        raise CredentialsError(f"kubeconfig {kubeconfig} cannot be read: {exc}") from None
    if not isinstance(document, dict):
        return None
    for entry in document.get("clusters") or ():
        if isinstance(entry, dict) and entry.get("name") == cluster:
            value = (entry.get("cluster") or {}).get("proxy-url")
            return str(value) if value else None
    return None
