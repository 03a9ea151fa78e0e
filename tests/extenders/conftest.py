"""Fixtures: extender servers stopped after each test, and a throwaway PKI for TLS."""

from __future__ import annotations

import datetime as _dt
import ipaddress
import ssl
from typing import Callable, Iterator

import pytest

from tests.extenders.server import ExtenderServer


@pytest.fixture
def extender_server() -> Iterator[Callable[..., ExtenderServer]]:
    """``extender_server({"filter": handler, ...}, tls=None)`` -> a started server."""
    started: list[ExtenderServer] = []

    def start(handlers: dict, *, tls: ssl.SSLContext | None = None) -> ExtenderServer:
        server = ExtenderServer(handlers, tls=tls).start()
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()


class PKI:
    """A CA, a server certificate for 127.0.0.1 and ``extender.test`` (or only the DNS name),
    and a client certificate, as PEM bytes and files."""

    def __init__(self, folder) -> None:
        from cryptography import x509
        from cryptography.hazmat.primitives import hashes, serialization
        from cryptography.hazmat.primitives.asymmetric import ec
        from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

        now = _dt.datetime.now(_dt.timezone.utc)

        def key():
            return ec.generate_private_key(ec.SECP256R1())

        def name(cn):
            return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)])

        def pem_key(k):
            return k.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                   serialization.NoEncryption())

        ca_key = key()
        ca = (x509.CertificateBuilder().subject_name(name("test-ca")).issuer_name(name("test-ca"))
              .public_key(ca_key.public_key()).serial_number(x509.random_serial_number())
              .not_valid_before(now - _dt.timedelta(minutes=5)).not_valid_after(now + _dt.timedelta(days=1))
              .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
              .add_extension(x509.KeyUsage(digital_signature=True, key_cert_sign=True, crl_sign=True,
                                           content_commitment=False, key_encipherment=False,
                                           data_encipherment=False, key_agreement=False,
                                           encipher_only=False, decipher_only=False), critical=True)
              .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), critical=False)
              .sign(ca_key, hashes.SHA256()))

        def leaf(cn, sans, usage):
            k = key()
            builder = (x509.CertificateBuilder().subject_name(name(cn)).issuer_name(ca.subject)
                       .public_key(k.public_key()).serial_number(x509.random_serial_number())
                       .not_valid_before(now - _dt.timedelta(minutes=5))
                       .not_valid_after(now + _dt.timedelta(days=1))
                       .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
                       .add_extension(x509.ExtendedKeyUsage([usage]), critical=False)
                       .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()),
                                      critical=False))
            if sans:
                builder = builder.add_extension(x509.SubjectAlternativeName(sans), critical=False)
            cert = builder.sign(ca_key, hashes.SHA256())
            return cert.public_bytes(serialization.Encoding.PEM), pem_key(k)

        self.ca_pem = ca.public_bytes(serialization.Encoding.PEM)
        self.server_cert, self.server_key = leaf(
            "extender", [x509.IPAddress(ipaddress.ip_address("127.0.0.1")), x509.DNSName("extender.test")],
            ExtendedKeyUsageOID.SERVER_AUTH)
        self.dns_only_cert, self.dns_only_key = leaf("extender", [x509.DNSName("extender.test")],
                                                     ExtendedKeyUsageOID.SERVER_AUTH)
        self.client_cert, self.client_key = leaf("scheduler", [], ExtendedKeyUsageOID.CLIENT_AUTH)
        self.folder = folder
        for attr in ("ca_pem", "server_cert", "server_key", "dns_only_cert", "dns_only_key",
                     "client_cert", "client_key"):
            (folder / f"{attr}.pem").write_bytes(getattr(self, attr))

    def path(self, attr: str) -> str:
        return str(self.folder / f"{attr}.pem")

    def server_context(self, *, dns_only: bool = False, require_client_cert: bool = False) -> ssl.SSLContext:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        prefix = "dns_only" if dns_only else "server"
        ctx.load_cert_chain(self.path(f"{prefix}_cert"), self.path(f"{prefix}_key"))
        if require_client_cert:
            ctx.verify_mode = ssl.CERT_REQUIRED
            ctx.load_verify_locations(self.path("ca_pem"))
        return ctx


@pytest.fixture(scope="session")
def pki(tmp_path_factory) -> PKI:
    return PKI(tmp_path_factory.mktemp("pki"))
