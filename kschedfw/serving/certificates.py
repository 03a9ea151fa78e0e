"""The serving certificate: the operator's files (checked here so that a broken one is named, not
a traceback), else one kept in ``--cert-dir``, else a self-signed one made in memory at start, as
kube-scheduler's (a throwaway CA and a certificate it signs for localhost and 127.0.0.1)."""

from __future__ import annotations

import datetime as _dt
import ipaddress
import os
from pathlib import Path

__all__ = ["CertificateFileError", "PAIR_NAME", "check_ca_bundle", "check_client_ca", "check_pair", "self_signed",
           "pair_in_dir"]

PAIR_NAME = "kschedfw"
VALIDITY = _dt.timedelta(days=365)


class CertificateFileError(Exception):
    """A certificate, key or CA file that cannot be used; the message names it."""


def check_pair(cert_file: str, key_file: str) -> tuple[bytes, bytes]:
    """Both files readable PEM, the key one of the certificate's: (chain PEM, key PEM) as read."""
    from cryptography import x509
    from cryptography.hazmat.primitives import serialization
    data = _read(cert_file, "--tls-cert-file")
    try:
        if not _pem_has(data, b"CERTIFICATE"):
            raise ValueError("no PEM certificate in it")
        certs = x509.load_pem_x509_certificates(data)
    except ValueError as exc:
        raise CertificateFileError(f"--tls-cert-file {cert_file}: {exc}") from None
    key_data = _read(key_file, "--tls-private-key-file")
    try:
        key = serialization.load_pem_private_key(key_data, password=None)
    except (ValueError, TypeError) as exc:
        raise CertificateFileError(f"--tls-private-key-file {key_file}: not a PEM private key: {exc}") from None
    ours = key.public_key().public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
    theirs = certs[0].public_key().public_bytes(serialization.Encoding.DER,
                                                serialization.PublicFormat.SubjectPublicKeyInfo)
    if ours != theirs:
        raise CertificateFileError(f"--tls-private-key-file {key_file} does not match the certificate "
                                   f"in --tls-cert-file {cert_file}")
    return data, key_data


def check_client_ca(ca_file: str) -> bytes:
    """The CA bundle's PEM; at least one certificate in it."""
    return check_ca_bundle(_read(ca_file, "--client-ca-file"), f"--client-ca-file {ca_file}")


def check_ca_bundle(data: bytes, what: str) -> bytes:
    """``data`` when it is a PEM bundle of at least one certificate that TLS can verify against;
    else CertificateFileError starting with ``what``."""
    import ssl

    from cryptography import x509
    try:
        if not _pem_has(data, b"CERTIFICATE") or not x509.load_pem_x509_certificates(data):
            raise ValueError("no PEM certificate in it")
        ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER).load_verify_locations(cadata=data.decode("ascii"))
    except (ValueError, ssl.SSLError) as exc:  # (UnicodeDecodeError is a ValueError)
        raise CertificateFileError(f"{what}: {exc}") from None
    return data


def self_signed(host: str = "localhost", ips: tuple[str, ...] = ("127.0.0.1",)) -> tuple[bytes, bytes]:
    """(chain PEM, key PEM): a certificate for ``host`` and ``ips`` and the CA that signed it."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    now = _dt.datetime.now(_dt.timezone.utc)
    stamp = int(now.timestamp())
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, f"{host}-ca@{stamp}")])
    ca = (x509.CertificateBuilder().subject_name(ca_name).issuer_name(ca_name).public_key(ca_key.public_key())
          .serial_number(x509.random_serial_number()).not_valid_before(now).not_valid_after(now + VALIDITY)
          .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
          .add_extension(x509.KeyUsage(digital_signature=True, key_encipherment=True, key_cert_sign=True,
                                       content_commitment=False, data_encipherment=False, key_agreement=False,
                                       crl_sign=False, encipher_only=False, decipher_only=False), critical=True)
          .sign(ca_key, hashes.SHA256()))
    key = ec.generate_private_key(ec.SECP256R1())
    names: list[x509.GeneralName] = [x509.DNSName(host)] + [x509.IPAddress(ipaddress.ip_address(ip)) for ip in ips]
    cert = (x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, f"{host}@{stamp}")]))
            .issuer_name(ca_name).public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now).not_valid_after(now + VALIDITY)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
            .add_extension(x509.SubjectAlternativeName(names), critical=False)
            .sign(ca_key, hashes.SHA256()))
    return _pem(cert) + _pem(ca), _key_pem(key)


def pair_in_dir(cert_dir: str) -> tuple[str, str]:
    """``--cert-dir``'s pair, made there first when it is missing (kept across restarts)."""
    cert_file, key_file = (os.path.join(cert_dir, f"{PAIR_NAME}.{ext}") for ext in ("crt", "key"))
    if not (os.path.exists(cert_file) and os.path.exists(key_file)):
        chain, key = self_signed()
        try:
            os.makedirs(cert_dir, mode=0o755, exist_ok=True)
            Path(cert_file).write_bytes(chain)
            fd = os.open(key_file, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "wb") as out:
                out.write(key)
        except OSError as exc:
            raise CertificateFileError(f"--cert-dir {cert_dir}: cannot write the self-signed pair: "
                                       f"{exc.strerror or exc}") from None
    return cert_file, key_file


def _read(path: str, flag: str) -> bytes:
    try:
        return Path(path).read_bytes()
    except OSError as exc:
        raise CertificateFileError(f"{flag} {path}: cannot read it: {exc.strerror or exc}") from None


def _pem_has(data: bytes, label: bytes) -> bool:
    return b"-----BEGIN " + label + b"-----" in data


def _pem(cert: object) -> bytes:
    from cryptography.hazmat.primitives import serialization
    return cert.public_bytes(serialization.Encoding.PEM)  # type: ignore[attr-defined, no-any-return]


def _key_pem(key: object) -> bytes:
    from cryptography.hazmat.primitives import serialization
    return key.private_bytes(serialization.Encoding.PEM,  # type: ignore[attr-defined, no-any-return]
                             serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
