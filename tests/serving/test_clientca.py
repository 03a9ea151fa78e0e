"""The client CA is kept current without a restart, over real sockets: --client-ca-file is read
again when it changes and once a minute regardless, a broken file keeps the last good CA without
holding up a serving certificate renewal, and the cluster's CA follows the
extension-apiserver-authentication ConfigMap's changes (a ConfigMap gone or holding garbage keeps
the last good CA)."""

from __future__ import annotations

import os
import shutil
import ssl
import urllib.error
from pathlib import Path

import pytest

from kschedfw.serving import clientca as clientca_module
from kschedfw.serving import tls as tls_module
from kschedfw.serving.certificates import pair_in_dir, self_signed
from kschedfw.serving.clientca import ConfigMapClientCA
from kschedfw.serving.server import Server
from kschedfw.serving.tls import ServingTLS
from tests.serving.certs import client_certificate
from tests.serving.test_tls import fetch, served_certificate


@pytest.fixture
def users(tmp_path) -> dict[str, tuple[Path, Path, Path]]:
    """carol's certificate is signed by the old CA, dave's by the new one: (CA file, cert, key)."""
    out = {}
    for user, d in (("carol", tmp_path / "old"), ("dave", tmp_path / "new")):
        d.mkdir()
        ca_file, _, _ = client_certificate(d, user, ["ops"])
        out[user] = (ca_file, d / f"{user}.crt", d / f"{user}.key")
    return out


def as_user(server: Server, files: tuple[Path, Path, Path]) -> str:
    """Who the server says the caller is; "refused" when the handshake fails."""
    context = ssl.create_default_context()
    context.check_hostname, context.verify_mode = False, ssl.CERT_NONE
    context.load_cert_chain(files[1], files[2])
    try:
        return fetch(server, context)
    except (urllib.error.URLError, ssl.SSLError, ConnectionError):
        return "refused"


def test_a_rotated_client_ca_file_is_used_by_new_connections_and_a_broken_one_keeps_the_last_good(
        serve, users, tmp_path, monkeypatch):
    """A new CA in --client-ca-file verifies the next connections (the old CA's certificates are
    refused); a file that then turns broken keeps the last good CA, and a serving certificate
    renewed meanwhile is still taken."""
    monkeypatch.setattr(clientca_module, "RECHECK_EVERY", 0.0)
    monkeypatch.setattr(tls_module, "RECHECK_EVERY", 0.0)
    ca_file = tmp_path / "client-ca.pem"
    shutil.copy(users["carol"][0], ca_file)
    cert_file, key_file = pair_in_dir(str(tmp_path / "serving"))
    server = serve(ServingTLS(cert_file=cert_file, key_file=key_file, client_ca_file=str(ca_file)))
    assert (as_user(server, users["carol"]), as_user(server, users["dave"])) == ("carol", "refused")

    ca_file.write_bytes(users["dave"][0].read_bytes())
    assert (as_user(server, users["carol"]), as_user(server, users["dave"])) == ("refused", "dave")

    ca_file.write_bytes(b"-----BEGIN CERTIFICATE-----\nhalf a CA\n")
    first = served_certificate(server)
    chain, key = self_signed()
    Path(cert_file).write_bytes(chain)
    Path(key_file).write_bytes(key)
    assert served_certificate(server) != first  # the renewal does not wait for a usable CA file
    assert (as_user(server, users["carol"]), as_user(server, users["dave"])) == ("refused", "dave")
    os.remove(ca_file)
    assert (as_user(server, users["carol"]), as_user(server, users["dave"])) == ("refused", "dave")


def test_the_client_ca_file_is_read_again_every_minute_even_when_it_looks_unchanged(
        serve, users, tmp_path, monkeypatch):
    """A change the file's size, mtime and inode do not show is taken at the minute's re-read
    (upstream's periodic resync besides the file watch)."""
    monkeypatch.setattr(clientca_module, "RECHECK_EVERY", 0.0)
    monkeypatch.setattr(clientca_module, "RESYNC_EVERY", 3600.0)
    old, new = users["carol"][0].read_bytes(), users["dave"][0].read_bytes()
    size = max(len(old), len(new))
    ca_file = tmp_path / "client-ca.pem"
    ca_file.write_bytes(old.ljust(size, b"\n"))
    server = serve(ServingTLS(pem=self_signed(), client_ca_file=str(ca_file)))
    assert as_user(server, users["carol"]) == "carol"
    st = os.stat(ca_file)
    with open(ca_file, "r+b") as out:  # same inode, same size, and the mtime put back
        out.write(new.ljust(size, b"\n"))
    os.utime(ca_file, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert as_user(server, users["dave"]) == "refused"  # not looked at again yet
    monkeypatch.setattr(clientca_module, "RESYNC_EVERY", 0.0)
    assert (as_user(server, users["carol"]), as_user(server, users["dave"])) == ("refused", "dave")


def configmap(ca: bytes | None, version: str) -> dict:
    return {"metadata": {"name": "extension-apiserver-authentication", "namespace": "kube-system",
                         "resourceVersion": version},
            "data": {} if ca is None else {"client-ca-file": ca.decode()}}


class OneConfigMap:
    """A client whose GET answers the ConfigMap given."""

    def __init__(self, d: dict) -> None:
        self.d = d

    def get(self, path: str, **params):
        assert path == "/api/v1/namespaces/kube-system/configmaps/extension-apiserver-authentication"
        return self.d


def test_the_cluster_client_ca_follows_the_configmap_and_keeps_the_last_good(serve, users, monkeypatch):
    """The ConfigMap read at start verifies client certificates; its informer's change to a new
    CA verifies the next connections; a change to garbage, no client-ca-file, or the ConfigMap
    deleted keep the last good CA."""
    from kschedfw.serving.clientca import _parse_configmap
    old, new = users["carol"][0].read_bytes(), users["dave"][0].read_bytes()
    ca = ConfigMapClientCA(OneConfigMap(configmap(old, "1")))
    ca.prime()
    server = serve(ServingTLS(pem=self_signed(), client_ca=ca))
    assert (as_user(server, users["carol"]), as_user(server, users["dave"])) == ("carol", "refused")

    def event(type_: str, d: dict | None) -> None:  # what the informer on that ConfigMap hands on
        ca.on_event(type_, "ConfigMap", None, None if d is None else _parse_configmap(None, d))
    event("MODIFIED", configmap(new, "2"))
    assert (as_user(server, users["carol"]), as_user(server, users["dave"])) == ("refused", "dave")
    for type_, d in (("MODIFIED", configmap(b"-----BEGIN CERTIFICATE-----\ngarbage\n", "3")),
                     ("MODIFIED", configmap(None, "4")), ("DELETED", None)):
        event(type_, d)
        assert (as_user(server, users["carol"]), as_user(server, users["dave"])) == ("refused", "dave"), type_
    event("ADDED", configmap(old + new, "5"))  # both during a rotation
    assert (as_user(server, users["carol"]), as_user(server, users["dave"])) == ("carol", "dave")
