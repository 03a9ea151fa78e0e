"""kube-scheduler's serving flags on ``kschedfw run`` (k8s.io/apiserver's SecureServingOptions,
DelegatingAuthenticationOptions and DelegatingAuthorizationOptions, with kube-scheduler's
defaults), and the servers they describe: the secure one, and the plain one only when asked for."""

from __future__ import annotations

import argparse
import logging
from typing import Any, Callable, Mapping

from kschedfw.serving.authentication import Authenticator
from kschedfw.serving.authorization import Authorizer
from kschedfw.serving.clientca import ConfigMapClientCA
from kschedfw.serving.certificates import CertificateFileError, check_pair, pair_in_dir, self_signed
from kschedfw.serving.endpoints import Check, Endpoints
from kschedfw.serving.handler import Chain
from kschedfw.serving.review import REVIEW_TIMEOUT, kube_post
from kschedfw.serving.server import Server, parse_address
from kschedfw.serving.tls import TLS_VERSIONS, ServingTLS

__all__ = ["ServingError", "start_servers"]

log = logging.getLogger(__name__)

DEFAULT_TLS_MIN_VERSION = "VersionTLS12"  # what kube-scheduler's Go TLS server accepts by default
#: upstream's delegated clients' limits (a review per new token or path, at most, each 10 s)
REVIEW_QPS, REVIEW_BURST = 200.0, 400


class ServingError(Exception):
    """A serving flag or file that cannot be used (exit status 2)."""


def start_servers(args: argparse.Namespace, connection: Any, health: Mapping[str, Mapping[str, Check]],
                  metrics: Callable[[], str], say: Callable[[str], None]) -> list[Server]:
    """The servers the flags ask for, started; ServingError when a flag or file is unusable.
    ``connection``: the scheduler's own :class:`~kschedfw.cluster.kube.credentials.Connection`."""
    endpoints = Endpoints(health, metrics)
    plain = _plain_address(args.health_address)
    servers: list[Server] = []
    where = f"--bind-address {args.bind_address} --secure-port {args.secure_port}"
    try:
        if args.secure_port:
            servers.append(_secure(args, connection, endpoints))
        where = f"--health-address {args.health_address}"
        if plain is not None:
            servers.append(Server(plain, lambda method, target, auth, peer: endpoints.get(target), name="health"))
    except OSError as exc:
        for server in servers:
            server.stop()
        raise ServingError(f"{where}: cannot listen: {exc.strerror or exc}") from None
    for server in servers:
        server.start()
        if server.scheme == "https":
            say(f"serving securely on {server.url} (authentication and authorization delegated to the API server)")
        else:
            say("WITHOUT authentication or authorization (--health-address: anyone who reaches it reads them), "
                f"health and metrics on {server.url}")
    return servers


def _plain_address(text: str) -> tuple[str, int] | None:
    if text in ("", "off"):
        return None
    try:
        return parse_address(text if ":" in text else f":{text}")
    except ValueError as exc:
        raise ServingError(f"--health-address: {exc}") from None


def _secure(args: argparse.Namespace, connection: Any, endpoints: Endpoints) -> Server:
    if not 0 < args.secure_port <= 65535:
        raise ServingError(f"--secure-port {args.secure_port} must be between 1 and 65535, or 0 to disable")
    if bool(args.tls_cert_file) != bool(args.tls_private_key_file):
        raise ServingError("--tls-cert-file and --tls-private-key-file must be given together")
    if args.tls_cert_file:  # a broken file is reported before anything is asked of the API server
        try:
            check_pair(args.tls_cert_file, args.tls_private_key_file)
        except CertificateFileError as exc:
            raise ServingError(str(exc)) from None
    authn_client = _review_client(args.authentication_kubeconfig, connection, "--authentication-kubeconfig")
    authz_client = _review_client(args.authorization_kubeconfig, connection, "--authorization-kubeconfig")
    min_version = TLS_VERSIONS[args.tls_min_version or DEFAULT_TLS_MIN_VERSION]
    # --client-ca-file, else the cluster's (both followed as they change)
    client_ca = None if args.client_ca_file else ConfigMapClientCA(authn_client)
    if client_ca is not None:
        client_ca.prime()
    try:
        if args.tls_cert_file:
            pair: dict[str, Any] = {"cert_file": args.tls_cert_file, "key_file": args.tls_private_key_file}
        elif args.cert_dir:
            cert_file, key_file = pair_in_dir(args.cert_dir)
            pair = {"cert_file": cert_file, "key_file": key_file}
        else:
            pair = {"pem": self_signed()}
        tls = ServingTLS(**pair, client_ca_file=args.client_ca_file or None, client_ca=client_ca,
                         min_version=min_version)
    except CertificateFileError as exc:
        raise ServingError(str(exc)) from None
    paths = [p.strip() for p in args.authorization_always_allow_paths.split(",") if p.strip()]
    chain = Chain(Authenticator(kube_post(authn_client)),
                  Authorizer(kube_post(authz_client), always_allow_paths=paths), endpoints.get)
    try:
        server = Server((args.bind_address, args.secure_port),
                        lambda method, target, auth, peer: chain.serve(method, target, auth, peer), tls,
                        name="secure-serving")
    except OSError:
        authn_client.close()
        authz_client.close()
        raise
    if client_ca is not None:
        client_ca.start()
        server.on_stop.append(client_ca.stop)
    server.on_stop += [authn_client.close, authz_client.close]
    return server


def _review_client(kubeconfig: str, connection: Any, flag: str) -> Any:
    from kschedfw.cluster.kube.client import KubeClient
    from kschedfw.cluster.kube.credentials import CredentialsError, load_connection
    if kubeconfig:
        try:
            connection = load_connection(kubeconfig)
        except CredentialsError as exc:
            raise ServingError(f"{flag}: {exc}") from None
    return KubeClient(connection, qps=REVIEW_QPS, burst=REVIEW_BURST, user_agent="kschedfw/serving",
                      timeout=REVIEW_TIMEOUT)
