"""HTTP(S) to one extender: TLS settings, timeout, and the POST of one verb.

Mirrors upstream's ``makeTransport`` / client-go ``TLSConfigFor``: with ``enableHTTPS`` and no CA
the server certificate is not verified; a CA together with ``insecure`` is refused; client
certificates and CAs come from files or from (base64-decoded) data; ``serverName`` sets SNI and
the name verified. Without any TLS setting an ``https://`` prefix is verified against the
system roots. The whole exchange is bounded by ``httpTimeout`` (default 5s). Failures are
:class:`ExtenderError` with the text Go's ``net/http`` would give
(``Post "<url>": <reason>``, ``failed <verb> with extender at URL <url>, code <code>``).
"""

from __future__ import annotations

import json
import logging
import os
import socket
import ssl
import tempfile
import time
import warnings
from typing import Any

import attrs
import urllib3
from urllib3.exceptions import (ConnectTimeoutError, HTTPError, InsecureRequestWarning, MaxRetryError,
                                NewConnectionError, ReadTimeoutError, SSLError)

from kschedfw.fwk.interface import ExtenderError  # what Extender.process_preemption raises

__all__ = ["DEFAULT_EXTENDER_TIMEOUT", "ExtenderError", "TLSSettings", "Transport"]

log = logging.getLogger(__name__)

#: upstream ``DefaultExtenderTimeout``: used when ``httpTimeout`` is zero or unset
DEFAULT_EXTENDER_TIMEOUT = 5.0

_TIMEOUT = "context deadline exceeded (Client.Timeout exceeded while awaiting headers)"
_BODY_TIMEOUT = "context deadline exceeded (Client.Timeout or context cancellation while reading body)"


@attrs.frozen(kw_only=True)
class TLSSettings:
    """``tlsConfig`` of an extender (``*_data`` already base64-decoded PEM)."""

    insecure: bool = False
    server_name: str = ""
    cert_file: str = ""
    key_file: str = ""
    ca_file: str = ""
    cert_data: bytes = b""
    key_data: bytes = b""
    ca_data: bytes = b""

    @property
    def has_ca(self) -> bool:
        return bool(self.ca_data or self.ca_file)

    @property
    def has_cert_auth(self) -> bool:
        return bool(self.cert_data or self.cert_file) and bool(self.key_data or self.key_file)


def _read(path: str) -> bytes:
    try:
        with open(path, "rb") as fh:
            return fh.read()
    except FileNotFoundError:
        raise ValueError(f"open {path}: no such file or directory") from None
    except OSError as exc:
        raise ValueError(f"open {path}: {exc.strerror or exc}") from None


def ssl_context_for(tls: TLSSettings | None, enable_https: bool) -> ssl.SSLContext | None:
    """The TLS client configuration, or None for Go's defaults (system roots, verification on).
    ValueError (upstream's text) for an unusable configuration."""
    tls = tls or TLSSettings()
    if enable_https and not tls.has_ca:
        tls = attrs.evolve(tls, insecure=True)
    if not (tls.has_ca or tls.has_cert_auth or tls.insecure or tls.server_name):
        return None
    if tls.has_ca and tls.insecure:
        raise ValueError("specifying a root certificates file with the insecure flag is not allowed")
    ca = tls.ca_data or (_read(tls.ca_file) if tls.ca_file else b"")
    cert = tls.cert_data or (_read(tls.cert_file) if tls.cert_file else b"")
    key = tls.key_data or (_read(tls.key_file) if tls.key_file else b"")
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.minimum_version = ssl.TLSVersion.TLSv1_2
    if tls.insecure:
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
    elif ca:
        try:
            ctx.load_verify_locations(cadata=ca.decode("ascii", errors="replace"))
        except (ssl.SSLError, ValueError):
            raise ValueError("unable to load root certificates: unable to parse bytes as PEM block") from None
    else:
        ctx.load_default_certs()
    if tls.has_cert_auth:  # a certificate without a key (or the reverse) is ignored, as in client-go
        _load_client_pair(ctx, cert, key)
    return ctx


def _load_client_pair(ctx: ssl.SSLContext, cert: bytes, key: bytes) -> None:
    """``tls.X509KeyPair``: Python's ssl reads key pairs from files only, so the PEM goes
    through a private temporary folder that is removed at once."""
    if b"-----BEGIN" not in cert:
        raise ValueError("tls: failed to find any PEM data in certificate input")
    if b"-----BEGIN" not in key:
        raise ValueError("tls: failed to find any PEM data in key input")
    with tempfile.TemporaryDirectory() as folder:
        cert_path, key_path = os.path.join(folder, "cert.pem"), os.path.join(folder, "key.pem")
        for path, data in ((cert_path, cert), (key_path, key)):
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
        try:
            ctx.load_cert_chain(cert_path, key_path)
        except ssl.SSLError as exc:
            raise ValueError(f"tls: private key does not match public key or is invalid ({exc.reason})") from None


class Transport:
    """A connection pool to one extender; :meth:`post` sends one JSON request."""

    def __init__(self, url_prefix: str, *, timeout: float = DEFAULT_EXTENDER_TIMEOUT,
                 tls: TLSSettings | None = None, enable_https: bool = False) -> None:
        self.url_prefix = url_prefix
        self.timeout = timeout
        ctx = ssl_context_for(tls, enable_https)
        kw: dict[str, Any] = {"retries": False, "timeout": urllib3.Timeout(total=timeout), "block": False}
        if ctx is not None:
            kw["ssl_context"] = ctx
            if ctx.verify_mode == ssl.CERT_NONE:
                kw.update(cert_reqs="CERT_NONE", assert_hostname=False)
                # chosen in the configuration (insecure, or enableHTTPS without a CA), as upstream
                # allows: said once here instead of urllib3 warning on every request
                log.warning("extender %s: the server certificate will not be verified", url_prefix)
                warnings.filterwarnings("ignore", category=InsecureRequestWarning)
            if tls is not None and tls.server_name:
                kw["server_hostname"] = tls.server_name
        self._pool = urllib3.PoolManager(**kw)

    def url(self, verb: str) -> str:
        return self.url_prefix.rstrip("/") + "/" + verb

    def post(self, verb: str, args: Any) -> bytes:
        """POST ``args`` as JSON to ``<urlPrefix>/<verb>``; the body of a 200 answer."""
        url = self.url(verb)
        scheme = url.split("://", 1)[0] if "://" in url else ""
        if scheme not in ("http", "https"):
            raise ExtenderError(f'Post "{url}": unsupported protocol scheme "{scheme}"')
        body = json.dumps(args, separators=(",", ":")).encode()
        deadline = time.monotonic() + self.timeout
        try:
            resp = self._pool.request("POST", url, body=body, headers={"Content-Type": "application/json"},
                                      redirect=False, preload_content=False)
        except (HTTPError, OSError) as exc:
            raise ExtenderError(f'Post "{url}": {_reason(exc)}') from exc
        try:
            if resp.status != 200:
                raise ExtenderError(f"failed {verb} with extender at URL {url}, code {resp.status}")
            return _read_until(resp, deadline)
        finally:
            resp.release_conn()

    def close(self) -> None:
        self._pool.clear()


def _read_until(resp: Any, deadline: float) -> bytes:
    """The body, within the same ``httpTimeout`` as the request (Go's ``Client.Timeout`` covers
    reading the body too)."""
    chunks: list[bytes] = []
    try:
        while True:
            if time.monotonic() > deadline:
                raise ExtenderError(_BODY_TIMEOUT)
            chunk = resp.read1(65536)
            if not chunk:
                return b"".join(chunks)
            chunks.append(chunk)
    except (HTTPError, OSError) as exc:
        if isinstance(exc, (ReadTimeoutError, socket.timeout, TimeoutError)):
            raise ExtenderError(_BODY_TIMEOUT) from exc
        raise ExtenderError(f"unexpected EOF ({_reason(exc)})") from exc


def _reason(exc: BaseException) -> str:
    """Go's wording for the common transport failures; the library's text otherwise."""
    if isinstance(exc, MaxRetryError) and exc.reason is not None:
        exc = exc.reason
    if isinstance(exc, NewConnectionError):  # a subclass of ConnectTimeoutError in urllib3
        cause = exc.__cause__ or exc.__context__
        if isinstance(cause, ConnectionRefusedError) or "refused" in str(exc).lower():
            return f"dial tcp {_host_port(exc)}: connect: connection refused"
        return str(exc)
    if isinstance(exc, (ReadTimeoutError, ConnectTimeoutError, socket.timeout, TimeoutError)):
        return _TIMEOUT
    if isinstance(exc, SSLError) or isinstance(exc, ssl.SSLError):
        inner = exc.args[0] if exc.args and isinstance(exc.args[0], BaseException) else exc
        if isinstance(inner, ssl.SSLCertVerificationError):
            if "hostname" in str(inner.verify_message or "").lower() or "IP address mismatch" in str(inner):
                return f"tls: failed to verify certificate: x509: {inner.verify_message}"
            return "tls: failed to verify certificate: x509: certificate signed by unknown authority"
        return f"remote error: tls: {inner}"
    return str(exc)


def _host_port(exc: NewConnectionError) -> str:
    conn = getattr(exc, "conn", None)
    host, port = getattr(conn, "host", "?"), getattr(conn, "port", "?")
    return f"{host}:{port}"
