"""kube-scheduler's serving flags on ``kschedfw run`` (k8s.io/apiserver's SecureServingOptions,
DelegatingAuthenticationOptions and DelegatingAuthorizationOptions, with kube-scheduler's
defaults). Apart from the servers (:mod:`kschedfw.serving.options`) so that building the
command line, which every command does, imports neither TLS nor the certificate library."""

from __future__ import annotations

import argparse

__all__ = ["ALWAYS_ALLOW_PATHS", "SECURE_PORT", "TLS_VERSION_NAMES", "add_arguments"]

SECURE_PORT = 10259
#: --tls-min-version's values, Go's names, oldest first
TLS_VERSION_NAMES = ("VersionTLS10", "VersionTLS11", "VersionTLS12", "VersionTLS13")
#: --authorization-always-allow-paths' default, kube-scheduler's
ALWAYS_ALLOW_PATHS = ("/healthz", "/readyz", "/livez")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("secure serving (kube-scheduler's flags)")
    group.add_argument("--secure-port", type=int, default=SECURE_PORT, metavar="PORT",
                       help="serve /healthz, /livez, /readyz and /metrics over HTTPS with authentication and "
                            "authorization on this port (default 10259; 0 disables)")
    group.add_argument("--bind-address", default="0.0.0.0", metavar="IP",
                       help="the address the secure port listens on (default 0.0.0.0)")
    group.add_argument("--cert-dir", default="", metavar="DIR",
                       help="where the self-signed pair is kept when --tls-cert-file is not given "
                            "(default: made in memory at each start)")
    group.add_argument("--tls-cert-file", default="", metavar="FILE",
                       help="the serving certificate (PEM, with intermediates), reloaded when it changes")
    group.add_argument("--tls-private-key-file", default="", metavar="FILE",
                       help="the key of --tls-cert-file, reloaded when it changes")
    group.add_argument("--tls-min-version", choices=TLS_VERSION_NAMES, default=None,
                       help="the lowest TLS version accepted (default VersionTLS12, as Go's servers)")
    group.add_argument("--client-ca-file", default="", metavar="FILE",
                       help="accept client certificates signed by these CAs (CommonName the user, Organization "
                            "the groups), reloaded when it changes; default: the cluster's, from "
                            "kube-system/extension-apiserver-authentication (followed as it changes)")
    group.add_argument("--authentication-kubeconfig", default="", metavar="FILE",
                       help="the API server that reviews tokens (TokenReview); default: the scheduler's own")
    group.add_argument("--authorization-kubeconfig", default="", metavar="FILE",
                       help="the API server that authorizes requests (SubjectAccessReview); default: the "
                            "scheduler's own")
    group.add_argument("--authorization-always-allow-paths", default=",".join(ALWAYS_ALLOW_PATHS), metavar="PATHS",
                       help="paths served without authorization, comma separated; a trailing * matches a prefix "
                            "(default /healthz,/readyz,/livez)")
    group.add_argument("--health-address", default="off", metavar="[HOST]:PORT",
                       help="also serve the endpoints over plain HTTP with NO authentication here (default off; "
                            "a port alone or :PORT listens on 127.0.0.1; port 0 picks a free one)")
