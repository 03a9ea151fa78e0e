"""Which HTTP proxy, if any, the API server is reached through, decided as client-go decides it:
the kubeconfig cluster's ``proxy-url`` for every request when set; otherwise the environment
(``HTTPS_PROXY`` for an https server, ``HTTP_PROXY`` for http, either spelling's lower case too),
unless ``NO_PROXY`` names the host, or the host is ``localhost`` or a loopback address, which Go's
environment proxy never applies to.

Only ``http://`` proxies are supported (an HTTP CONNECT tunnel for https servers, absolute-form
requests for http ones); an ``https://`` or ``socks5://`` proxy is refused when the connection is
loaded rather than silently bypassed.
"""

from __future__ import annotations

import base64
import ipaddress
import urllib.parse
from typing import Mapping, NamedTuple

__all__ = ["Proxy", "choose_proxy", "parse_proxy_url", "bypassed_by_no_proxy"]


class Proxy(NamedTuple):
    host: str
    port: int
    #: the Proxy-Authorization header value (Basic, from the URL's user info), else None
    authorization: str | None = None

    def __str__(self) -> str:
        return f"http://{_host_port(self.host, self.port)}"


def parse_proxy_url(text: str) -> Proxy:
    """A proxy URL as client-go reads one (no scheme means http); ValueError when unusable."""
    url = urllib.parse.urlsplit(text if "://" in text else "http://" + text)
    if url.scheme != "http":
        raise ValueError(f"proxy {text!r}: only http:// proxies are supported, not {url.scheme}://")
    if not url.hostname:
        raise ValueError(f"proxy {text!r} names no host")
    authorization = None
    if url.username is not None:
        user = urllib.parse.unquote(url.username)
        password = urllib.parse.unquote(url.password or "")
        authorization = "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()
    return Proxy(url.hostname, url.port or 80, authorization)


def choose_proxy(server: str, proxy_url: str | None, environ: Mapping[str, str]) -> Proxy | None:
    """The proxy for requests to ``server``: ``proxy_url`` (the kubeconfig's) wins, else the
    environment's, else None (connect directly)."""
    if proxy_url:
        return parse_proxy_url(proxy_url)
    url = urllib.parse.urlsplit(server)
    https = url.scheme == "https"
    name = "HTTPS_PROXY" if https else "HTTP_PROXY"
    value = environ.get(name) or environ.get(name.lower())
    if not value:
        return None
    host = url.hostname or ""
    port = url.port or (443 if https else 80)
    if _never_proxied(host) or bypassed_by_no_proxy(host, port, environ.get("NO_PROXY") or environ.get("no_proxy") or ""):
        return None
    try:
        return parse_proxy_url(value)
    except ValueError as exc:
        raise ValueError(f"{name} in the environment: {exc}") from None


def _never_proxied(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def bypassed_by_no_proxy(host: str, port: int, no_proxy: str) -> bool:
    """Whether a NO_PROXY list names ``host:port``, with Go's rules: ``*`` names every host; an
    IP address or CIDR block names those addresses; ``example.com`` names it and its subdomains,
    ``.example.com`` (or ``*.example.com``) only its subdomains; any entry may carry a port."""
    host = host.lower().rstrip(".")
    try:
        address: ipaddress.IPv4Address | ipaddress.IPv6Address | None = ipaddress.ip_address(host)
    except ValueError:
        address = None
    for entry in no_proxy.replace(",", " ").split():
        entry = entry.lower()
        if entry == "*":
            return True
        if "/" in entry:
            try:
                if address is not None and address in ipaddress.ip_network(entry, strict=False):
                    return True
            except ValueError:
                pass
            continue
        name, entry_port = _split_port(entry)
        if entry_port is not None and entry_port != port:
            continue
        try:
            entry_address = ipaddress.ip_address(name)
        except ValueError:
            entry_address = None
        if entry_address is not None:
            if entry_address == address:
                return True
            continue
        if name.startswith("*."):
            name = name[1:]
        name = name.rstrip(".")
        if name.startswith("."):
            if host.endswith(name):
                return True
        elif host == name or host.endswith("." + name):
            return True
    return False


def _split_port(entry: str) -> tuple[str, int | None]:
    """``host:port``, ``[v6]:port``, a bare IPv6 address or a name, apart from its port."""
    if entry.startswith("["):
        name, _, rest = entry[1:].partition("]")
        return name, int(rest[1:]) if rest.startswith(":") and rest[1:].isdigit() else None
    if entry.count(":") == 1:
        name, _, port = entry.partition(":")
        return name, int(port) if port.isdigit() else None
    return entry, None


def _host_port(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
