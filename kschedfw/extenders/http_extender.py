"""HTTPExtender: one ``extenders:`` entry of the configuration (upstream ``pkg/scheduler/extender.go``).

Each verb is optional; a missing verb answers locally as upstream does (Filter keeps every
node, Prioritize scores 0 with weight 0) without a request. Node lists go out as manifests, or
as names when the extender keeps its own node cache (``nodeCacheCapable``).
"""

from __future__ import annotations

import base64
import binascii
import json
from typing import TYPE_CHECKING, Any, Iterable, Mapping, Sequence

from kschedfw.api import Node
from kschedfw.api.field import ManifestError
from kschedfw.api.validation import parse_duration
from kschedfw.extenders import wire
from kschedfw.extenders.transport import DEFAULT_EXTENDER_TIMEOUT, ExtenderError, TLSSettings, Transport
from kschedfw.fwk.types import NodeInfo
from kschedfw.fwk.victims import Victims

if TYPE_CHECKING:
    from kschedfw.api import Pod
    from kschedfw.fwk.interface import SharedLister

__all__ = ["HTTPExtender", "ExtenderConfigError", "FailedNodes"]

FailedNodes = dict[str, str]

_BASE64 = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")


class ExtenderConfigError(ValueError):
    """An ``extenders[i]`` entry that cannot be turned into a client; names the field."""


def _node_of(item: Any) -> Node:
    """The Node of a NodeInfo (what the cycle holds), or the Node itself."""
    return item if isinstance(item, Node) else item.node


def _returned_node(manifest: dict[str, Any], as_info: bool) -> Node | NodeInfo:
    """A node of a returned ``NodeList``, taken as the extender wrote it: kube-scheduler v1.36
    goes on with a fresh NodeInfo of that Node (no pods, no image states, even for a node it
    sent, and even for a node it does not know), so scores are computed on it as such."""
    try:
        node = Node.from_dict(manifest)
    except ManifestError as exc:
        raise ExtenderError(f"json: cannot unmarshal the returned node: {exc}") from None
    return NodeInfo(node=node) if as_info else node


def _go_quote(text: str) -> str:
    """Go's ``%q`` for the names and URLs that appear in messages."""
    return json.dumps(text, ensure_ascii=False)


def _pod_manifest(pod: "Pod") -> dict[str, Any]:
    """The pod as the API server holds it: its manifest, with the name, namespace and uid the
    scheduler knows it by (the embedded cluster may derive a uid the file did not carry)."""
    raw = pod.raw or {}
    meta = raw.get("metadata") or {}
    ident = {"name": pod.name, "namespace": pod.namespace, **({"uid": pod.uid} if pod.uid else {})}
    if all(meta.get(k) == v for k, v in ident.items()):
        return raw
    return {**raw, "metadata": {**meta, **ident}}


class HTTPExtender:
    """A scheduler extender reached over HTTP(S); ``name`` is its ``urlPrefix``."""

    def __init__(self, *, url_prefix: str, filter_verb: str = "", prioritize_verb: str = "",
                 preempt_verb: str = "", bind_verb: str = "", weight: int = 0,
                 node_cache_capable: bool = False, managed_resources: Iterable[str] = (),
                 ignorable: bool = False, http_timeout: float = DEFAULT_EXTENDER_TIMEOUT,
                 enable_https: bool = False, tls: TLSSettings | None = None) -> None:
        self.url_prefix = url_prefix
        self.filter_verb = filter_verb
        self.prioritize_verb = prioritize_verb
        self.preempt_verb = preempt_verb
        self.bind_verb = bind_verb
        self.weight = weight
        self.node_cache_capable = node_cache_capable
        self.managed_resources = frozenset(managed_resources)
        self.ignorable = ignorable
        self.http_timeout = http_timeout or DEFAULT_EXTENDER_TIMEOUT
        self._transport = Transport(url_prefix, timeout=self.http_timeout, tls=tls, enable_https=enable_https)

    @classmethod
    def from_config(cls, entry: Mapping[str, Any], index: int = 0) -> "HTTPExtender":
        """From one defaulted ``extenders[index]`` entry (field names as in the YAML)."""
        path = f"extenders[{index}]"
        timeout = DEFAULT_EXTENDER_TIMEOUT
        raw_timeout = entry.get("httpTimeout")
        if raw_timeout not in (None, ""):
            try:
                ns = parse_duration(str(raw_timeout))
            except ValueError as exc:
                raise ExtenderConfigError(f"{path}.httpTimeout: {exc}") from None
            timeout = ns / 1e9 if ns > 0 else DEFAULT_EXTENDER_TIMEOUT
        tls = _tls_settings(entry.get("tlsConfig"), f"{path}.tlsConfig")
        try:
            return cls(url_prefix=str(entry.get("urlPrefix") or ""),
                       filter_verb=entry.get("filterVerb") or "",
                       prioritize_verb=entry.get("prioritizeVerb") or "",
                       preempt_verb=entry.get("preemptVerb") or "",
                       bind_verb=entry.get("bindVerb") or "",
                       weight=int(entry.get("weight") or 0),
                       node_cache_capable=bool(entry.get("nodeCacheCapable")),
                       managed_resources=[r.get("name", "") for r in entry.get("managedResources") or ()
                                          if isinstance(r, Mapping)],
                       ignorable=bool(entry.get("ignorable")),
                       http_timeout=timeout,
                       enable_https=bool(entry.get("enableHTTPS")),
                       tls=tls)
        except ValueError as exc:
            raise ExtenderConfigError(f"{path}.tlsConfig: {exc}") from None

    # -------------------------------------------------------------------- what it does
    @property
    def name(self) -> str:
        return self.url_prefix

    def __repr__(self) -> str:
        return f"HTTPExtender({self.url_prefix!r})"

    def is_ignorable(self) -> bool:
        """Scheduling goes on when this extender fails."""
        return self.ignorable

    def is_filter(self) -> bool:
        return bool(self.filter_verb)

    def is_prioritizer(self) -> bool:
        return bool(self.prioritize_verb)

    def is_binder(self) -> bool:
        return bool(self.bind_verb)

    def supports_preemption(self) -> bool:
        return bool(self.preempt_verb)

    def is_interested(self, pod: "Pod") -> bool:
        """No managed resources: every pod. Otherwise only pods whose containers or init
        containers request or limit one of them."""
        if not self.managed_resources:
            return True
        for container in (*pod.containers, *pod.init_containers):
            if not self.managed_resources.isdisjoint(container.requests) or \
                    not self.managed_resources.isdisjoint(container.limits):
                return True
        return False

    # -------------------------------------------------------------------- verbs
    def _nodes_args(self, pod: "Pod", nodes: Sequence[Any]) -> dict[str, Any]:
        if self.node_cache_capable:
            return wire.filter_args(_pod_manifest(pod), None, [_node_of(n).name for n in nodes])
        return wire.filter_args(_pod_manifest(pod), [_node_of(n).raw for n in nodes], None)

    def _call(self, verb: str, args: Any, decoder: Any) -> Any:
        body = self._transport.post(verb, args)
        try:
            return decoder(body)
        except wire.WireError as exc:
            raise ExtenderError(str(exc)) from None

    def filter(self, pod: "Pod", nodes: Sequence[Any]) -> tuple[list[Any], FailedNodes, FailedNodes]:
        """``(kept, failed, failed_and_unresolvable)``, ``kept`` in the extender's order.

        Names (node-cache-capable) select among the given objects (Node or NodeInfo); a name
        that was not sent is an ExtenderError. A returned ``NodeList`` is taken as it is, as
        upstream does: fresh NodeInfos (or Nodes) built from the returned manifests. Also an
        ExtenderError: a failed call, or an ``Error`` in the answer."""
        if not self.filter_verb:
            return list(nodes), {}, {}
        result = self._call(self.filter_verb, self._nodes_args(pod, nodes), wire.decode_filter_result)
        if result["Error"]:
            raise ExtenderError(result["Error"])
        kept: list[Any] = []
        if self.node_cache_capable and result["NodeNames"] is not None:
            by_name = {_node_of(n).name: n for n in nodes}
            for name in result["NodeNames"]:
                if name not in by_name:
                    raise ExtenderError(f"extender {_go_quote(self.url_prefix)} claims a filtered node "
                                        f"{_go_quote(name)} which is not found in the input node list")
                kept.append(by_name[name])
        elif result["Nodes"] is not None:
            as_infos = bool(nodes) and not isinstance(nodes[0], Node)
            for manifest in result["Nodes"]:
                kept.append(_returned_node(manifest, as_infos))
        return kept, result["FailedNodes"], result["FailedAndUnresolvableNodes"]

    def prioritize(self, pod: "Pod", nodes: Sequence[Any]) -> tuple[list[tuple[str, int]], int]:
        """``([(host, score 0..10)], weight)``; without a prioritize verb every node scores 0
        with weight 0."""
        if not self.prioritize_verb:
            return [(_node_of(n).name, 0) for n in nodes], 0
        scores = self._call(self.prioritize_verb, self._nodes_args(pod, nodes), wire.decode_host_priority_list)
        return scores, self.weight

    def bind(self, pod: "Pod", node_name: str) -> None:
        """Ask the extender to bind ``pod`` to ``node_name``; ExtenderError if it could not."""
        if not self.bind_verb:
            raise ExtenderError("unexpected empty bindVerb in extender")
        args = wire.binding_args(pod.name, pod.namespace, pod.uid, node_name)
        error = self._call(self.bind_verb, args, wire.decode_binding_result)
        if error:
            raise ExtenderError(error)

    def process_preemption(self, pod: "Pod", node_name_to_victims: Mapping[str, "Victims"],
                           node_infos: "SharedLister") -> dict[str, "Victims"]:
        """The extender's choice of candidate nodes and victims. It gets full victim pods, or
        only their uids when node-cache-capable, and always answers with uids, which are
        resolved against the pods of ``node_infos``. The input map is not changed."""
        if not self.supports_preemption():
            raise ExtenderError(f"preempt verb is not defined for extender {self.url_prefix} "
                                f"but run into ProcessPreemption")
        if self.node_cache_capable:
            meta = {n: wire.meta_victims([p.uid for p in v.pods], v.num_pdb_violations)
                    for n, v in node_name_to_victims.items()}
            args = wire.preemption_args(_pod_manifest(pod), None, meta)
        else:
            full = {n: {"Pods": [wire.as_sent(_pod_manifest(p)) for p in v.pods],
                        "NumPDBViolations": v.num_pdb_violations}
                    for n, v in node_name_to_victims.items()}
            args = wire.preemption_args(_pod_manifest(pod), full, None)
        result = self._call(self.preempt_verb, args, wire.decode_preemption_result)
        out: dict[str, Victims] = {}
        for node_name, (uids, violations) in result.items():
            info = node_infos.get(node_name)
            if info is None:
                raise ExtenderError(f'nodeinfo not found for node name "{node_name}"')
            on_node = {p.uid: p for p in info.pods}
            pods = []
            for uid in uids:
                if uid not in on_node:
                    raise ExtenderError(f"extender: {self.url_prefix} claims to preempt pod (UID: &{{{uid}}}) "
                                        f"on node: {node_name}, but the pod is not found on that node")
                pods.append(on_node[uid])
            out[node_name] = Victims(pods=pods, num_pdb_violations=violations)
        return out

    def close(self) -> None:
        self._transport.close()


def _tls_settings(raw: Any, path: str) -> TLSSettings | None:
    if not isinstance(raw, Mapping):
        return None

    def data(field: str) -> bytes:
        value = raw.get(field)
        if not value:
            return b""
        text = str(value)
        try:
            return base64.b64decode(text, validate=True)
        except (binascii.Error, ValueError):
            bad = next((i for i, ch in enumerate(text) if ch not in _BASE64), len(text))
            raise ExtenderConfigError(f"{path}.{field}: illegal base64 data at input byte {bad}") from None

    return TLSSettings(insecure=bool(raw.get("insecure")), server_name=raw.get("serverName") or "",
                       cert_file=raw.get("certFile") or "", key_file=raw.get("keyFile") or "",
                       ca_file=raw.get("caFile") or "", cert_data=data("certData"),
                       key_data=data("keyData"), ca_data=data("caData"))
