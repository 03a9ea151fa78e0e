"""The TLS side of secure serving: an ``ssl`` server context from the serving pair and the client
CA, built again when their files change (upstream's dynamic serving certificates: a renewed
certificate is used without a restart). A file that changes into something unusable is logged and
the last good context kept, so a half-written renewal never takes the endpoint down."""

from __future__ import annotations

import logging
import os
import ssl
import tempfile
import threading
import time

from kschedfw.serving.flags import TLS_VERSION_NAMES
from kschedfw.serving.certificates import CertificateFileError, check_client_ca, check_pair

__all__ = ["TLS_VERSIONS", "ServingTLS"]

log = logging.getLogger(__name__)

#: --tls-min-version's values, Go's names
TLS_VERSIONS = dict(zip(TLS_VERSION_NAMES, (ssl.TLSVersion.TLSv1, ssl.TLSVersion.TLSv1_1, ssl.TLSVersion.TLSv1_2,
                                            ssl.TLSVersion.TLSv1_3)))
#: how often at most the files are looked at (on a handshake)
RECHECK_EVERY = 1.0


class ServingTLS:
    """Either ``cert_file``/``key_file`` (watched) or ``pem`` (chain, key) held in memory; the
    client CA from ``client_ca_file`` (watched) or ``client_ca_pem``."""

    def __init__(self, *, cert_file: str | None = None, key_file: str | None = None,
                 pem: tuple[bytes, bytes] | None = None, client_ca_file: str | None = None,
                 client_ca_pem: bytes | None = None, min_version: ssl.TLSVersion | None = None) -> None:
        self._files = (cert_file, key_file) if cert_file and key_file else None
        self._pem = pem
        self._ca_file = client_ca_file
        self._ca_pem = client_ca_pem
        self._min_version = min_version
        self._lock = threading.Lock()
        self._checked = 0.0
        self._stamp = self._file_stamp()
        self._context = self._build()  # raises CertificateFileError: a start with a broken file fails

    @property
    def verifies_clients(self) -> bool:
        return self._ca_file is not None or self._ca_pem is not None

    def context(self) -> ssl.SSLContext:
        """The context for the next handshake (rebuilt first when a file changed)."""
        now = time.monotonic()
        if now - self._checked >= RECHECK_EVERY:
            with self._lock:
                self._checked = now
                stamp = self._file_stamp()
                if stamp != self._stamp:
                    self._stamp = stamp
                    try:
                        self._context = self._build()
                        log.info("serving certificate files changed: reloaded")
                    except CertificateFileError as exc:
                        log.warning("keeping the previous serving certificate: %s", exc)
        return self._context

    def _file_stamp(self) -> tuple[tuple[int, int] | None, ...]:
        paths = [*(self._files or ()), *((self._ca_file,) if self._ca_file else ())]
        stamps: list[tuple[int, int] | None] = []
        for path in paths:
            try:
                st = os.stat(path)
                stamps.append((st.st_mtime_ns, st.st_size))
            except OSError:
                stamps.append(None)
        return tuple(stamps)

    def _build(self) -> ssl.SSLContext:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        if self._min_version is not None:
            context.minimum_version = self._min_version
        if self._files is not None:
            cert_file, key_file = self._files
            check_pair(cert_file, key_file)
            try:
                context.load_cert_chain(cert_file, key_file)
            except (ssl.SSLError, OSError) as exc:
                raise CertificateFileError(f"--tls-cert-file {cert_file} / --tls-private-key-file {key_file}: "
                                           f"{exc}") from None
        elif self._pem is not None:
            _load_pem_chain(context, *self._pem)
        ca = check_client_ca(self._ca_file) if self._ca_file else self._ca_pem
        if ca:
            try:
                context.load_verify_locations(cadata=ca.decode("ascii", "replace"))
            except (ssl.SSLError, ValueError) as exc:
                raise CertificateFileError(f"client CA {self._ca_file or '(from the cluster)'}: {exc}") from None
            # a client may send no certificate (a token, or anonymous); one it sends must verify
            context.verify_mode = ssl.CERT_OPTIONAL
        return context


def _load_pem_chain(context: ssl.SSLContext, chain: bytes, key: bytes) -> None:
    """``ssl`` loads a pair only from files: a private directory, removed at once."""
    with tempfile.TemporaryDirectory(prefix="kschedfw-serving-") as directory:
        cert_file, key_file = os.path.join(directory, "tls.crt"), os.path.join(directory, "tls.key")
        for path, data in ((cert_file, chain), (key_file, key)):
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "wb") as out:
                out.write(data)
        context.load_cert_chain(cert_file, key_file)
