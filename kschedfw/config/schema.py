"""JSON Schema (Draft 2020-12) of ``kubescheduler.config.k8s.io/v1`` KubeSchedulerConfiguration.

:data:`CONFIG_SCHEMA` describes the shape only: types, field names (unknown fields are errors, as
with upstream's strict decoding), Go integer widths and duration syntax. Ranges and cross-field
rules are upstream's semantic validation (:mod:`kschedfw.config.validate`), which words its errors
the way kube-scheduler does. :func:`schema_with_plugins` adds each installed plugin's args schema
under ``pluginConfig`` for editors; ``kschedfw schema`` prints it.
"""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Any

from kschedfw.config.plugin_sets import PLUGIN_SET_FIELDS
from kschedfw.fwk.extension_points import POINTS
from kschedfw.api.validation import DURATION_HINT, DURATION_PATTERN

if TYPE_CHECKING:
    from kschedfw.framework.registry import PluginRegistry

GROUP = "kubescheduler.config.k8s.io"
API_VERSION = f"{GROUP}/v1"
KIND = "KubeSchedulerConfiguration"
#: the plugins whose args kind (``<name>Args``) is one of this API group's own types: their args
#: carry its apiVersion (the plugins themselves own the args' schema, defaults and validation)
V1_ARGS_PLUGINS = frozenset({"DefaultPreemption", "DynamicResources", "InterPodAffinity", "NodeAffinity",
                             "NodeResourcesBalancedAllocation", "NodeResourcesFit", "PodTopologySpread",
                             "VolumeBinding"})
DRAFT = "https://json-schema.org/draft/2020-12/schema"

INT32 = {"type": "integer", "minimum": -(2 ** 31), "maximum": 2 ** 31 - 1}
INT64 = {"type": "integer", "minimum": -(2 ** 63), "maximum": 2 ** 63 - 1}
DURATION = {"type": "string", "pattern": DURATION_PATTERN, "x-pattern-message": DURATION_HINT,
            "description": 'A Go duration such as "10s" or "1m30s".'}


def _int32(description: str, **extra: Any) -> dict[str, Any]:
    return {**INT32, "description": description, **extra}


def _int64(description: str, **extra: Any) -> dict[str, Any]:
    return {**INT64, "description": description, **extra}


def _obj(properties: dict[str, Any], description: str = "", required: tuple[str, ...] = ()) -> dict[str, Any]:
    out: dict[str, Any] = {"type": "object", "properties": properties,
                           "additionalProperties": False}
    if required:
        out["required"] = list(required)
    if description:
        out["description"] = description
    return out


def _str(description: str, **extra: Any) -> dict[str, Any]:
    return {"type": "string", "description": description, **extra}


def _bool(description: str, **extra: Any) -> dict[str, Any]:
    return {"type": "boolean", "description": description, **extra}


PLUGIN = _obj({
    "name": _str("Plugin name as registered (upstream name for in-tree plugins); \"*\" in a "
                 "disabled list means every plugin."),
    "weight": _int32("Weight of the plugin; only used by score and placementScore (0 or unset "
                     "means 1)."),
}, "A plugin reference in a PluginSet.", required=("name",))

PLUGIN_SET = _obj({
    "enabled": {"type": "array", "items": PLUGIN,
                "description": "Plugins to enable, in addition to the defaults, in this order."},
    "disabled": {"type": "array", "items": PLUGIN,
                 "description": "Default plugins to disable; \"*\" disables all of them."},
}, "Plugins enabled and disabled at one extension point.")

_SET_DOCS = {"multiPoint": "Plugins enabled at every extension point they implement.",
             **{str(p.field): p.doc for p in POINTS}}

PLUGINS = _obj({f: {**PLUGIN_SET, "description": _SET_DOCS[f]} for f in PLUGIN_SET_FIELDS},
               "Plugins per extension point; the defaults live in multiPoint.")

PLUGIN_CONFIG = _obj({
    "name": _str("Name of the plugin these args are for."),
    "args": {"type": "object", "description": "The plugin's arguments (kind <name>Args)."},
}, "Arguments of one plugin.", required=("name",))

PROFILE = _obj({
    "schedulerName": _str("Pods with this spec.schedulerName are scheduled with this profile."),
    "percentageOfNodesToScore": _int32("Overrides the global percentageOfNodesToScore."),
    "plugins": PLUGINS,
    "pluginConfig": {"type": "array", "items": PLUGIN_CONFIG,
                     "description": "Arguments per plugin; at most one entry per plugin."},
}, "A scheduling profile.")

LEADER_ELECTION = _obj({
    "leaderElect": _bool("Run leader election before doing any work.", default=True),
    "leaseDuration": {**DURATION, "default": "15s"},
    "renewDeadline": {**DURATION, "default": "10s"},
    "retryPeriod": {**DURATION, "default": "2s"},
    "resourceLock": _str('Lock object type; must be "leases".', default="leases"),
    "resourceName": _str("Name of the lock object.", default="kube-scheduler"),
    "resourceNamespace": _str("Namespace of the lock object.", default="kube-system"),
}, "Leader election settings.")

CLIENT_CONNECTION = _obj({
    "kubeconfig": _str("Path to a kubeconfig file."),
    "acceptContentTypes": _str("Accept header sent to the API server."),
    "contentType": _str("Content type of requests.",
                        default="application/vnd.kubernetes.protobuf"),
    "qps": {"type": "number", "description": "Queries per second to the API server.",
            "default": 50},
    "burst": _int32("Extra queries allowed above qps.", default=100),
}, "API server client settings.")

EXTENDER_TLS = _obj({
    "insecure": _bool("Skip server certificate verification."),
    "serverName": _str("Server name for SNI and verification."),
    "certFile": _str("Client certificate file."),
    "keyFile": _str("Client key file."),
    "caFile": _str("Root certificate file."),
    "certData": _str("PEM client certificate, base64 encoded."),
    "keyData": _str("PEM client key, base64 encoded."),
    "caData": _str("PEM root certificates, base64 encoded."),
}, "TLS settings for talking to the extender.")

EXTENDER = _obj({
    "urlPrefix": _str("URL prefix of the extender."),
    "filterVerb": _str("Verb for the filter call; empty if unsupported."),
    "preemptVerb": _str("Verb for the preempt call; empty if unsupported."),
    "prioritizeVerb": _str("Verb for the prioritize call; empty if unsupported."),
    "weight": _int64("Multiplier of the prioritize scores; must be positive with prioritizeVerb."),
    "bindVerb": _str("Verb for the bind call; at most one extender may bind."),
    "enableHTTPS": _bool("Use https."),
    "tlsConfig": EXTENDER_TLS,
    "httpTimeout": DURATION,
    "nodeCacheCapable": _bool("The extender caches node information."),
    "managedResources": {"type": "array", "items": _obj({
        "name": _str("Extended resource name."),
        "ignoredByScheduler": _bool("Skip this resource in NodeResourcesFit."),
    }), "description": "Extended resources managed by this extender."},
    "ignorable": _bool("Scheduling goes on if the extender cannot be reached."),
}, "An HTTP scheduler extender.")

CONFIG_SCHEMA: dict[str, Any] = {
    "$schema": DRAFT,
    "$id": "https://kschedfw.dev/schemas/kubescheduler.config.k8s.io/v1/"
           "KubeSchedulerConfiguration.json",
    "title": "KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1)",
    **_obj({
        "apiVersion": {"const": API_VERSION, "description": "Must be " + API_VERSION + "."},
        "kind": {"const": KIND},
        "parallelism": _int32("Parallelism of the scheduling algorithm.", default=16),
        "leaderElection": LEADER_ELECTION,
        "clientConnection": CLIENT_CONNECTION,
        "enableProfiling": _bool("Enable profiling via web interface.", default=True),
        "enableContentionProfiling": _bool("Enable lock contention profiling.", default=True),
        "percentageOfNodesToScore": _int32(
            "Percentage of nodes to find feasible before scoring; 0 means adaptive.", default=0),
        "podInitialBackoffSeconds": _int64("Initial backoff of unschedulable pods.", default=1),
        "podMaxBackoffSeconds": _int64("Maximum backoff of unschedulable pods.", default=10),
        "profiles": {"type": "array", "items": PROFILE,
                     "description": "Scheduling profiles, one per schedulerName."},
        "extenders": {"type": "array", "items": EXTENDER,
                      "description": "Scheduler extenders."},
        "delayCacheUntilActive": _bool("Start the informers only once leader.", default=False),
    }, required=("apiVersion", "kind")),
}


def args_schema_in_config(name: str, schema: dict[str, Any]) -> dict[str, Any]:
    """A plugin's args schema as it appears under ``pluginConfig``: ``apiVersion``/``kind`` allowed."""
    out = copy.deepcopy(schema)
    out.pop("$schema", None)
    out.pop("$id", None)
    if isinstance(out.get("properties"), dict):
        out["properties"].setdefault("apiVersion", {"type": "string"})
        out["properties"].setdefault("kind", {"const": f"{name}Args"})
    return out


def schema_with_plugins(registry: "PluginRegistry") -> dict[str, Any]:
    """:data:`CONFIG_SCHEMA` plus every installed plugin's args schema, selected by ``name``.

    For editors: plugin names are offered as completions (any string stays valid, for ``*`` and
    plugins installed elsewhere), and ``args`` is checked against the named plugin's schema.
    """
    schema = copy.deepcopy(CONFIG_SCHEMA)
    names = registry.names()
    name_choice = {"anyOf": [{"enum": names}, {"type": "string"}]}
    plugin = schema["properties"]["profiles"]["items"]["properties"]["plugins"]
    for field in plugin["properties"].values():
        for lst in ("enabled", "disabled"):
            field["properties"][lst]["items"]["properties"]["name"].update(name_choice)
    config = schema["properties"]["profiles"]["items"]["properties"]["pluginConfig"]["items"]
    config["properties"]["name"].update(name_choice)
    rules = []
    for name in names:
        args = registry.args_schema(name)
        if args is None:
            continue
        rules.append({"if": {"properties": {"name": {"const": name}}, "required": ["name"]},
                      "then": {"properties": {"args": args_schema_in_config(name, args)}}})
    if rules:
        config["allOf"] = rules
    return schema
