"""HTTPS extenders: upstream makeTransport + client-go TLSConfigFor, against a real TLS server."""

from __future__ import annotations

import base64

import pytest

from kschedfw.extenders import ExtenderConfigError, build_extenders, find_nodes_that_pass_extenders
from kschedfw.fwk.types import NodeToStatus
from tests.extenders.helpers import extender, make_pod, names, node_infos


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def run_filter(ext):
    return find_nodes_that_pass_extenders([ext], make_pod(), node_infos("n1", "n2"), NodeToStatus())


def keep_n1(args):
    return {"NodeNames": ["n1"]}


def tls_server(extender_server, pki, **kw):
    return extender_server({"filter": keep_n1}, tls=pki.server_context(**kw))


@pytest.mark.parametrize("settings", [
    pytest.param(lambda pki: {"enableHTTPS": True}, id="enableHTTPS-without-CA-skips-verification"),
    pytest.param(lambda pki: {"tlsConfig": {"caData": b64(pki.ca_pem)}}, id="caData"),
    pytest.param(lambda pki: {"enableHTTPS": True, "tlsConfig": {"caFile": pki.path("ca_pem")}}, id="caFile"),
    pytest.param(lambda pki: {"tlsConfig": {"insecure": True}}, id="insecure"),
])
def test_https_extender_answers(extender_server, pki, settings):
    server = tls_server(extender_server, pki)
    ext = extender(server.url, filterVerb="filter", nodeCacheCapable=True, **settings(pki))
    feasible, status = run_filter(ext)
    assert status is None and names(feasible) == ["n1"]


def test_unknown_authority_is_refused_without_tls_settings(extender_server, pki):
    # no tlsConfig, no enableHTTPS: Go's default transport verifies against the system roots
    server = tls_server(extender_server, pki)
    feasible, status = run_filter(extender(server.url, filterVerb="filter", nodeCacheCapable=True))
    assert feasible == [] and status.message() == (
        f'Post "{server.url}/filter": tls: failed to verify certificate: '
        "x509: certificate signed by unknown authority")


def test_server_name_selects_the_name_verified(extender_server, pki):
    server = tls_server(extender_server, pki, dns_only=True)   # certificate for extender.test only
    trusted = {"caData": b64(pki.ca_pem)}
    _, status = run_filter(extender(server.url, filterVerb="filter", nodeCacheCapable=True, tlsConfig=trusted))
    assert status is not None and "tls: failed to verify certificate" in status.message()
    feasible, status = run_filter(extender(server.url, filterVerb="filter", nodeCacheCapable=True,
                                           tlsConfig={**trusted, "serverName": "extender.test"}))
    assert status is None and names(feasible) == ["n1"]


@pytest.mark.parametrize("client", [
    pytest.param(lambda pki: {"certData": b64(pki.client_cert), "keyData": b64(pki.client_key)}, id="data"),
    pytest.param(lambda pki: {"certFile": pki.path("client_cert"), "keyFile": pki.path("client_key")}, id="files"),
])
def test_client_certificate(extender_server, pki, client):
    server = tls_server(extender_server, pki, require_client_cert=True)
    ext = extender(server.url, filterVerb="filter", nodeCacheCapable=True,
                   tlsConfig={"caData": b64(pki.ca_pem), **client(pki)})
    feasible, status = run_filter(ext)
    assert status is None and names(feasible) == ["n1"]


def test_missing_client_certificate_is_refused_by_the_server(extender_server, pki):
    server = tls_server(extender_server, pki, require_client_cert=True)
    ext = extender(server.url, filterVerb="filter", nodeCacheCapable=True, tlsConfig={"caData": b64(pki.ca_pem)})
    feasible, status = run_filter(ext)
    assert feasible == [] and status.message().startswith(f'Post "{server.url}/filter": ')


@pytest.mark.parametrize("entry, message", [
    pytest.param({"tlsConfig": {"insecure": True, "caData": "LS0t"}},
                 "extenders[0].tlsConfig: specifying a root certificates file with the insecure flag is not allowed",
                 id="insecure-with-ca"),
    pytest.param({"tlsConfig": {"caFile": "/nonexistent/ca.pem"}},
                 "extenders[0].tlsConfig: open /nonexistent/ca.pem: no such file or directory", id="missing-caFile"),
    pytest.param({"tlsConfig": {"caData": b64(b"not a certificate")}},
                 "extenders[0].tlsConfig: unable to load root certificates: unable to parse bytes as PEM block",
                 id="caData-not-PEM"),
    pytest.param({"tlsConfig": {"caData": "%%%"}},
                 "extenders[0].tlsConfig.caData: illegal base64 data at input byte 0", id="caData-not-base64"),
    pytest.param({"tlsConfig": {"certData": b64(b"junk"), "keyData": b64(b"junk")}},
                 "extenders[0].tlsConfig: tls: failed to find any PEM data in certificate input",
                 id="client-pair-not-PEM"),
    pytest.param({"httpTimeout": "soon"}, "extenders[0].httpTimeout: time: invalid duration 'soon'",
                 id="bad-timeout"),
])
def test_unusable_tls_settings_refused_at_build_time(entry, message):
    # the texts after the field are kube-scheduler v1.36.2's ("couldn't build extenders: <text>")
    with pytest.raises(ExtenderConfigError) as info:
        build_extenders([{"urlPrefix": "https://127.0.0.1:1/x", "filterVerb": "filter", **entry}])
    assert str(info.value) == message


def test_client_certificate_without_key_is_ignored_as_client_go_does():
    (ext,) = build_extenders([{"urlPrefix": "https://127.0.0.1:1/x", "tlsConfig": {"certData": b64(b"junk")}}])
    ext.close()
