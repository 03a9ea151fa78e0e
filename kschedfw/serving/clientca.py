"""The client CA that callers' certificates are verified against, kept current as upstream's
dynamic CA content is, so that a rotated CA takes effect without a restart:

- ``--client-ca-file`` (:class:`FileClientCA`): read at start (a broken file fails the start),
  read again when the file changes and once a minute regardless;
- otherwise the cluster's, the ``client-ca-file`` key of the
  ``kube-system/extension-apiserver-authentication`` ConfigMap (:class:`ConfigMapClientCA`):
  read once at start, then followed by an informer on that one ConfigMap and looked at again
  once a minute.

A CA that turns unusable (a half-written or broken file, a ConfigMap deleted or holding no
certificate) is logged and the last good one kept. :meth:`current` is asked at each TLS
handshake: a new CA applies to the connections made after it was read."""

from __future__ import annotations

import logging
import os
import threading
import time
from typing import Any, Protocol

import attrs

from kschedfw.serving.certificates import CertificateFileError, check_ca_bundle, check_client_ca

__all__ = ["AUTHENTICATION_CONFIGMAP", "ClientCA", "ConfigMapClientCA", "FileClientCA"]

log = logging.getLogger(__name__)

#: how often at most the file is looked at (on a handshake)
RECHECK_EVERY = 1.0
#: the CA is read again this often even when nothing said it changed (upstream's FileRefreshDuration)
RESYNC_EVERY = 60.0

CONFIGMAP_NAMESPACE = "kube-system"
CONFIGMAP_NAME = "extension-apiserver-authentication"
CONFIGMAP_KEY = "client-ca-file"
AUTHENTICATION_CONFIGMAP = f"/api/v1/namespaces/{CONFIGMAP_NAMESPACE}/configmaps/{CONFIGMAP_NAME}"
_WHERE = f"configmap/{CONFIGMAP_NAME} in {CONFIGMAP_NAMESPACE}"


class ClientCA(Protocol):
    def current(self) -> bytes | None:
        """The CA bundle (PEM) to verify client certificates against now; the same object
        until it changes. None: no CA yet, client certificates are not asked for."""

    def start(self) -> None: ...

    def stop(self) -> None: ...


class _Complaints:
    """A failure is logged as a warning when it differs from the last one; a repeat (the
    periodic look finding the same fault) only at debug level."""

    def __init__(self) -> None:
        self._last = ""

    def warn(self, text: str) -> None:
        (log.debug if text == self._last else log.warning)("%s", text)
        self._last = text

    def clear(self) -> None:
        self._last = ""


class FileClientCA:
    """``--client-ca-file``; CertificateFileError at construction when it cannot be used."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._pem = check_client_ca(path)
        self._lock = threading.Lock()
        self._stamp = self._file_stamp()
        self._checked = self._read_at = time.monotonic()
        self._complaints = _Complaints()

    def current(self) -> bytes:
        now = time.monotonic()
        if now - self._checked >= RECHECK_EVERY:
            with self._lock:
                if now - self._checked >= RECHECK_EVERY:
                    self._checked = now
                    stamp = self._file_stamp()
                    if stamp != self._stamp or now - self._read_at >= RESYNC_EVERY:
                        self._stamp, self._read_at = stamp, now
                        self._reload()
        return self._pem

    def start(self) -> None:
        pass

    def stop(self) -> None:
        pass

    def _reload(self) -> None:
        try:
            data = check_client_ca(self.path)
        except CertificateFileError as exc:
            self._complaints.warn(f"keeping the last good client CA: {exc}")
            return
        self._complaints.clear()
        if data != self._pem:
            self._pem = data
            log.info("--client-ca-file %s changed: client certificates are verified against the new CA", self.path)

    def _file_stamp(self) -> tuple[int, int, int] | None:
        try:
            st = os.stat(self.path)
        except OSError:
            return None
        return st.st_mtime_ns, st.st_size, st.st_ino


@attrs.frozen
class _ConfigMap:
    """What the informer keeps of the ConfigMap."""
    name: str
    namespace: str
    resource_version: str
    data: dict[str, str]


def _parse_configmap(resource: Any, d: Any) -> _ConfigMap:
    meta = d.get("metadata") or {}
    data = d.get("data")
    return _ConfigMap(str(meta.get("name") or ""), str(meta.get("namespace") or ""),
                      str(meta.get("resourceVersion") or ""),
                      {str(k): str(v) for k, v in data.items()} if isinstance(data, dict) else {})


class ConfigMapClientCA:
    """The cluster's client CA. ``client``: the authentication kubeconfig's
    :class:`~kschedfw.cluster.kube.client.KubeClient`."""

    def __init__(self, client: Any) -> None:
        from kschedfw.cluster.kube.informer import Informer
        from kschedfw.cluster.kube.resources import Resource
        self._client = client
        self._pem: bytes | None = None
        self._configmap: _ConfigMap | None = None
        self._lock = threading.Lock()
        self._evaluated = time.monotonic()
        self._complaints = _Complaints()
        resource = Resource("ConfigMap", "v1", "configmaps", namespace=CONFIGMAP_NAMESPACE,
                            field_selector=f"metadata.name={CONFIGMAP_NAME}")
        self._informer = Informer(client, resource, self.on_event, parse=_parse_configmap)
        self._informer.thread_name = "client-ca-configmap"

    def prime(self) -> None:
        """Read the ConfigMap once, before serving (the informer follows it from then on)."""
        try:
            d = self._client.get(AUTHENTICATION_CONFIGMAP)
        except Exception as exc:  # no answer, 403, 404: no client CA until the informer gets one
            log.warning("unable to get %s (%s): client certificates will not authenticate until it can be "
                        "read; usually fixed by a RoleBinding of the role extension-apiserver-authentication-reader "
                        "to this scheduler's service account", _WHERE, exc)
            return
        if isinstance(d, dict):
            self.on_event("ADDED", "ConfigMap", None, _parse_configmap(None, d))

    def current(self) -> bytes | None:
        if time.monotonic() - self._evaluated >= RESYNC_EVERY:
            with self._lock:
                self._evaluate()
        return self._pem

    def start(self) -> None:
        self._informer.start()

    def stop(self) -> None:
        self._informer.stop()

    def on_event(self, type_: str, kind: str, old: Any, new: Any) -> None:
        with self._lock:
            self._configmap = new if type_ != "DELETED" else None
            self._evaluate()

    def _evaluate(self) -> None:
        """The CA from the ConfigMap last seen (lock held)."""
        self._evaluated = time.monotonic()
        keeping = "keeping the last good client CA" if self._pem is not None \
            else "client certificates do not authenticate"
        if self._configmap is None:
            self._complaints.warn(f"{_WHERE} is gone: {keeping}")
            return
        ca = self._configmap.data.get(CONFIGMAP_KEY, "").encode()
        if not ca:
            self._complaints.warn(f"{_WHERE} has no {CONFIGMAP_KEY}: {keeping}")
            return
        if ca == self._pem:
            self._complaints.clear()
            return
        try:
            check_ca_bundle(ca, f"{_WHERE}, key {CONFIGMAP_KEY}")
        except CertificateFileError as exc:
            self._complaints.warn(f"{exc}: {keeping}")
            return
        self._complaints.clear()
        if self._pem is not None:
            log.info("the client CA in %s changed: client certificates are verified against the new CA", _WHERE)
        self._pem = ca
