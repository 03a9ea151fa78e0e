"""The TLS side of secure serving: an ``ssl`` server context from the serving pair and the client
CA, built again when either changes (upstream's dynamic serving certificates and CA content: a
renewed certificate or a rotated CA is used without a restart, by the connections made after
it). The pair and the CA are kept apart: a pair file that changes into something unusable is
logged and the last good pair kept (so a half-written renewal never takes the endpoint down),
while a new client CA is still taken, and the other way round (:mod:`kschedfw.serving.clientca`)."""

from __future__ import annotations

import logging
import os
import ssl
import tempfile
import threading
import time

from kschedfw.serving.clientca import ClientCA, FileClientCA
from kschedfw.serving.flags import TLS_VERSION_NAMES
from kschedfw.serving.certificates import CertificateFileError, check_pair

__all__ = ["TLS_VERSIONS", "ServingTLS"]

log = logging.getLogger(__name__)

#: --tls-min-version's values, Go's names
TLS_VERSIONS = dict(zip(TLS_VERSION_NAMES, (ssl.TLSVersion.TLSv1, ssl.TLSVersion.TLSv1_1, ssl.TLSVersion.TLSv1_2,
                                            ssl.TLSVersion.TLSv1_3)))
#: how often at most the pair's files are looked at (on a handshake)
RECHECK_EVERY = 1.0


class ServingTLS:
    """Either ``cert_file``/``key_file`` (watched) or ``pem`` (chain, key) held in memory; the
    client CA from ``client_ca_file`` (watched) or ``client_ca`` (any :class:`ClientCA`)."""

    def __init__(self, *, cert_file: str | None = None, key_file: str | None = None,
                 pem: tuple[bytes, bytes] | None = None, client_ca_file: str | None = None,
                 client_ca: ClientCA | None = None, min_version: ssl.TLSVersion | None = None) -> None:
        self._files = (cert_file, key_file) if cert_file and key_file else None
        self._min_version = min_version
        self._lock = threading.Lock()
        self._checked = 0.0
        # CertificateFileError from here on: a start with a broken file fails
        self._client_ca = FileClientCA(client_ca_file) if client_ca_file else client_ca
        self._stamp = self._file_stamp()
        self._pair = self._read_pair() if self._files is not None else pem
        self._ca = self._client_ca.current() if self._client_ca is not None else None
        self._context = self._build(self._pair, self._ca)

    @property
    def verifies_clients(self) -> bool:
        return self._client_ca is not None

    def context(self) -> ssl.SSLContext:
        """The context for the next handshake (rebuilt first when the pair or the CA changed)."""
        now = time.monotonic()
        ca = self._client_ca.current() if self._client_ca is not None else None
        files_due = self._files is not None and now - self._checked >= RECHECK_EVERY
        if not files_due and ca is self._ca:
            return self._context
        with self._lock:
            pair = self._pair
            if self._files is not None and now - self._checked >= RECHECK_EVERY:
                self._checked = now
                stamp = self._file_stamp()
                if stamp != self._stamp:
                    self._stamp = stamp
                    try:
                        pair = self._read_pair()
                    except CertificateFileError as exc:
                        log.warning("keeping the previous serving certificate: %s", exc)
            if pair is self._pair and ca is self._ca:
                return self._context
            try:
                context = self._build(pair, ca)
            except CertificateFileError as exc:  # not retried until something changes again
                log.warning("keeping the previous serving certificate and client CA: %s", exc)
            else:
                if pair is not self._pair:
                    log.info("serving certificate files changed: reloaded")
                self._context = context
            self._pair, self._ca = pair, ca
            return self._context

    def _file_stamp(self) -> tuple[tuple[int, int, int] | None, ...]:
        stamps: list[tuple[int, int, int] | None] = []
        for path in self._files or ():
            try:
                st = os.stat(path)
                stamps.append((st.st_mtime_ns, st.st_size, st.st_ino))
            except OSError:
                stamps.append(None)
        return tuple(stamps)

    def _read_pair(self) -> tuple[bytes, bytes]:
        assert self._files is not None
        cert_file, key_file = self._files
        return check_pair(cert_file, key_file)

    def _build(self, pair: tuple[bytes, bytes] | None, ca: bytes | None) -> ssl.SSLContext:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        if self._min_version is not None:
            context.minimum_version = self._min_version
        if pair is not None:
            try:
                _load_pem_chain(context, *pair)
            except (ssl.SSLError, OSError) as exc:
                what = "the serving certificate" if self._files is None else \
                    f"--tls-cert-file {self._files[0]} / --tls-private-key-file {self._files[1]}"
                raise CertificateFileError(f"{what}: {exc}") from None
        if ca:
            try:
                context.load_verify_locations(cadata=ca.decode("ascii", "replace"))
            except (ssl.SSLError, ValueError) as exc:
                raise CertificateFileError(f"client CA: {exc}") from None
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
