"""Secure serving over real sockets: the in-memory self-signed certificate, the operator's files
reloaded when they change (a broken renewal keeps the last good one), client certificates
verified against the client CA, --tls-min-version, and `kschedfw run` refusing a broken
certificate or key file with exit status 2 and the file's name."""

from __future__ import annotations

import os
import ssl
import time
import urllib.error
import urllib.request

import pytest

from kschedfw.serving import tls as tls_module
from kschedfw.serving.certificates import CertificateFileError, check_pair, pair_in_dir, self_signed
from kschedfw.serving.endpoints import Reply
from kschedfw.serving.server import Server
from kschedfw.serving.tls import ServingTLS
from kschedfw.testing.cli import run_cli
from tests.serving.certs import client_certificate


def echo_user(method, target, authorization, peer):
    from kschedfw.serving.authentication import user_of_certificate
    return Reply(200, user_of_certificate(peer).name if peer else "nobody")


def fetch(server: Server, context: ssl.SSLContext) -> str:
    with urllib.request.urlopen(server.url + "/metrics", context=context, timeout=10) as answer:
        return answer.read().decode()


def trusting(ca_pem: bytes) -> ssl.SSLContext:
    context = ssl.create_default_context(cadata=ca_pem.decode())
    return context


def served_certificate(server: Server) -> bytes:
    return ssl.get_server_certificate(server.address).encode()


def test_self_signed_certificate_is_for_localhost_and_loopback(serve):
    chain, key = self_signed()
    server = serve(ServingTLS(pem=(chain, key)))
    ca = chain[chain.index(b"-----BEGIN CERTIFICATE-----", 10):]
    assert fetch(server, trusting(ca)) == "nobody"  # 127.0.0.1 is in the certificate
    with pytest.raises(urllib.error.URLError):
        fetch(server, ssl.create_default_context())  # not trusted by the system


def test_certificate_files_are_reloaded_and_a_broken_renewal_is_ignored(serve, tmp_path, monkeypatch):
    monkeypatch.setattr(tls_module, "RECHECK_EVERY", 0.0)
    cert_file, key_file = pair_in_dir(str(tmp_path / "certs"))
    assert oct(os.stat(key_file).st_mode & 0o777) == "0o600"
    server = serve(ServingTLS(cert_file=cert_file, key_file=key_file))
    first = served_certificate(server)
    chain, key = self_signed()
    with open(cert_file, "wb") as out:
        out.write(chain)
    with open(key_file, "wb") as out:
        out.write(key)
    time.sleep(0.01)
    assert served_certificate(server) != first
    renewed = served_certificate(server)
    with open(cert_file, "wb") as out:
        out.write(b"half a certificate")
    assert served_certificate(server) == renewed


def test_client_certificates_are_verified_against_the_client_ca(serve, tmp_path):
    ca_file, _, _ = client_certificate(tmp_path, "carol", ["ops"])
    chain, key = self_signed()
    server = serve(ServingTLS(pem=(chain, key), client_ca_file=str(ca_file)))
    context = ssl.create_default_context()
    context.check_hostname, context.verify_mode = False, ssl.CERT_NONE
    assert fetch(server, context) == "nobody"  # a certificate is optional
    context.load_cert_chain(tmp_path / "carol.crt", tmp_path / "carol.key")
    assert fetch(server, context) == "carol"


def test_min_version_refuses_older_clients(serve):
    server = serve(ServingTLS(pem=self_signed(), min_version=ssl.TLSVersion.TLSv1_3))
    context = ssl.create_default_context()
    context.check_hostname, context.verify_mode = False, ssl.CERT_NONE
    context.maximum_version = ssl.TLSVersion.TLSv1_2
    with pytest.raises((urllib.error.URLError, ssl.SSLError, ConnectionError)):
        fetch(server, context)
    context.maximum_version = ssl.TLSVersion.TLSv1_3
    assert fetch(server, context) == "nobody"


def test_broken_files_are_named(tmp_path):
    cert_file, key_file = pair_in_dir(str(tmp_path))
    other_cert, _ = pair_in_dir(str(tmp_path / "other"))
    broken = tmp_path / "broken.crt"
    broken.write_text("-----BEGIN CERTIFICATE-----\nnot base64\n-----END CERTIFICATE-----\n")
    cases = {(str(broken), key_file): str(broken), (cert_file, str(broken)): str(broken),
             (str(tmp_path / "absent.crt"), key_file): "absent.crt",
             (other_cert, key_file): "does not match"}
    for (cert, key), named in cases.items():
        with pytest.raises(CertificateFileError, match=named.replace(".", r"\.")):
            check_pair(cert, key)


def test_run_exits_2_naming_a_broken_certificate_file(tmp_path):
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text('{"apiVersion": "v1", "kind": "Config", "current-context": "c",'
                          ' "clusters": [{"name": "c", "cluster": {"server": "http://127.0.0.1:1"}}],'
                          ' "users": [{"name": "u", "user": {"token": "t"}}],'
                          ' "contexts": [{"name": "c", "context": {"cluster": "c", "user": "u"}}]}')
    cert_file, key_file = pair_in_dir(str(tmp_path / "certs"))
    broken = tmp_path / "broken.pem"
    broken.write_text("garbage\n")
    for flags, named in ((["--tls-cert-file", str(broken), "--tls-private-key-file", key_file], "--tls-cert-file"),
                         (["--tls-cert-file", cert_file, "--tls-private-key-file", str(broken)],
                          "--tls-private-key-file")):
        result = run_cli("run", "--kubeconfig", str(kubeconfig), *flags)
        assert result.exit_code == 2, result.output
        assert f"{named} {broken}" in result.stderr and "Traceback" not in result.output
    only_cert = run_cli("run", "--kubeconfig", str(kubeconfig), "--tls-cert-file", cert_file)
    assert only_cert.exit_code == 2 and "must be given together" in only_cert.stderr
