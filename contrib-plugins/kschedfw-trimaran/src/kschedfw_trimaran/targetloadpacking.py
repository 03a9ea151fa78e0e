"""TargetLoadPacking: best-fit bin packing on measured CPU utilisation, up to a target.

Port of scheduler-plugins ``pkg/trimaran/targetloadpacking``. For each node the plugin predicts
the CPU utilisation after placing the pod:

    predicted = 100 * (measured% / 100 * capacity + pod + recently bound pods) / capacity

where the pod's (and each recently bound pod's) CPU is predicted per container: its cpu limit if
set, else its cpu request times ``defaultRequestsMultiplier`` (rounded), else
``defaultRequests.cpu``; plus the pod overhead. "Recently bound" pods are those bound after the
metrics window ended, or less than 60 seconds before its end (the metrics may not show them yet).

Score: up to the target, ``round((100 - target) * predicted / target + target)`` (rising from
``target`` to 100); above it, ``round(target * (100 - predicted) / (100 - target))`` (falling to 0);
above 100 %, 0. A node without CPU metrics scores 0.

Metrics come from a :mod:`~kschedfw_trimaran.metrics` source: the file named by ``metricsFile``,
else the node annotation ``metricsAnnotation``. ``metricProvider`` and ``watcherAddress`` are
accepted and checked as upstream checks them, but a simulation contacts no metrics service.
"""

from __future__ import annotations

import logging
import math
import re
from typing import TYPE_CHECKING, Any, Mapping

from kschedfw import MIN_NODE_SCORE, Status, hookimpl
from kschedfw.api import resource_amount
from kschedfw.api.field import INVALID, FieldError

from kschedfw_trimaran.handler import METRICS_AGENT_REPORTING_INTERVAL_SECONDS, PodAssignEventHandler
from kschedfw_trimaran.metrics import (AVERAGE, CPU, DEFAULT_ANNOTATION, LATEST, AnnotationMetricsSource,
                                       FileMetricsSource, MetricsSource, now_unix)

if TYPE_CHECKING:
    from kschedfw import CycleState, Handle, NodeInfo, NodeScore
    from kschedfw.api import Container, Pod

log = logging.getLogger(__name__)

NAME = "TargetLoadPacking"

KUBERNETES_METRICS_SERVER = "KubernetesMetricsServer"
PROMETHEUS = "Prometheus"
SIGNALFX = "SignalFx"
METRIC_PROVIDER_TYPES = (KUBERNETES_METRICS_SERVER, PROMETHEUS, SIGNALFX)

DEFAULT_REQUESTS_MILLI_CORES = 1000
DEFAULT_REQUESTS_MULTIPLIER = "1.5"
DEFAULT_TARGET_UTILIZATION_PERCENT = 40

_QUANTITY_MESSAGE = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"

ARGS_SCHEMA: dict[str, Any] = {
    "$comment": "TargetLoadPackingArgs (scheduler-plugins apis/config/v1) and kschedfw's metrics sources",
    "type": "object",
    "properties": {
        "metricProvider": {
            "type": "object",
            "description": "Metrics provider used by load-watcher as a library (not contacted in a simulation).",
            "properties": {
                "type": {"type": "string", "description": "KubernetesMetricsServer, Prometheus or SignalFx"},
                "address": {"type": "string"},
                "token": {"type": "string"},
                "insecureSkipVerify": {"type": "boolean"},
            },
            "additionalProperties": False,
            "default": {"type": KUBERNETES_METRICS_SERVER},
        },
        "watcherAddress": {"type": "string", "description": "Address of a load-watcher service (not contacted "
                                                             "in a simulation)."},
        "defaultRequests": {
            "type": "object",
            "description": "Requests assumed for containers without cpu requests or limits (BestEffort).",
            "additionalProperties": {"type": ["string", "integer", "number"]},
            "default": {"cpu": f"{DEFAULT_REQUESTS_MILLI_CORES}m"},
        },
        "defaultRequestsMultiplier": {
            "type": "string",
            "description": "Multiplier of the cpu request of containers without a cpu limit (Burstable).",
            "default": DEFAULT_REQUESTS_MULTIPLIER,
        },
        "targetUtilization": {
            "type": "integer",
            "description": "Target CPU utilisation of a node, in percent; 0 or less means the default.",
            "default": DEFAULT_TARGET_UTILIZATION_PERCENT,
        },
        "metricsFile": {
            "type": "string",
            "description": "kschedfw: YAML/JSON file of node metrics (load-watcher's format, or "
                           "nodes: {name: cpuPercent}); empty: read node annotations.",
            "default": "",
        },
        "metricsAnnotation": {
            "type": "string",
            "description": "kschedfw: node annotation holding the CPU utilisation in percent, used when "
                           "metricsFile is empty.",
            "default": DEFAULT_ANNOTATION,
        },
    },
    "additionalProperties": False,
}


# --------------------------------------------------------------------------- args

_DECIMAL = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_SPECIAL = re.compile(r"[+-]?(?:inf|infinity)|nan", re.IGNORECASE)


def parse_go_float(text: str) -> float:
    """``strconv.ParseFloat(text, 64)`` for decimal text (hexadecimal floats are not accepted)."""
    if _DECIMAL.fullmatch(text):
        value = float(text)
        if math.isinf(value):
            raise ValueError(f'strconv.ParseFloat: parsing "{text}": value out of range')
        return value
    if _SPECIAL.fullmatch(text):
        return float(text)
    raise ValueError(f'strconv.ParseFloat: parsing "{text}": invalid syntax')


def default_args(args: Mapping[str, Any]) -> dict[str, Any]:
    """Upstream ``SetDefaults_TargetLoadPackingArgs`` on top of the schema defaults."""
    out = dict(args)
    provider = dict(out.get("metricProvider") or {})
    if out.get("watcherAddress") is None and not provider.get("type"):
        provider["type"] = KUBERNETES_METRICS_SERVER
    if provider.get("type") == PROMETHEUS and provider.get("insecureSkipVerify") is None:
        provider["insecureSkipVerify"] = True
    out["metricProvider"] = provider
    if out.get("defaultRequests") is None:
        out["defaultRequests"] = {"cpu": f"{DEFAULT_REQUESTS_MILLI_CORES}m"}
    if out.get("defaultRequestsMultiplier") is None:
        out["defaultRequestsMultiplier"] = DEFAULT_REQUESTS_MULTIPLIER
    target = out.get("targetUtilization")
    if target is None or target <= 0:
        out["targetUtilization"] = DEFAULT_TARGET_UTILIZATION_PERCENT
    out.setdefault("metricsFile", "")
    out.setdefault("metricsAnnotation", DEFAULT_ANNOTATION)
    return out


def validate_args(args: Mapping[str, Any]) -> list[FieldError]:
    """What upstream refuses when it builds the plugin, as field errors."""
    args = default_args(args)
    errors: list[FieldError] = []
    if not args.get("watcherAddress"):
        kind = args["metricProvider"].get("type") or ""
        if kind not in METRIC_PROVIDER_TYPES:
            errors.append(FieldError(("metricProvider", "type"), INVALID, f"invalid MetricProvider.Type, got {kind}",
                                     kind))
    for name, quantity in (args.get("defaultRequests") or {}).items():
        try:
            resource_amount(str(name), quantity)
        except (ValueError, TypeError):
            errors.append(FieldError(("defaultRequests", str(name)), INVALID, _QUANTITY_MESSAGE, quantity))
    multiplier = args["defaultRequestsMultiplier"]
    try:
        parse_go_float(multiplier)
    except ValueError as exc:
        errors.append(FieldError(("defaultRequestsMultiplier",), INVALID,
                                 f"unable to parse DefaultRequestsMultiplier: {exc}", multiplier))
    return errors


def go_round(value: float) -> int:
    """Go's ``math.Round``: half away from zero."""
    return int(math.copysign(math.floor(abs(value) + 0.5), value))


# --------------------------------------------------------------------------- the plugin

class TargetLoadPacking:
    """Score plugin: pack nodes up to a target CPU utilisation, using measured load."""

    name = NAME
    args_schema = ARGS_SCHEMA
    validate_args = staticmethod(validate_args)

    def __init__(self, args: Mapping[str, Any] | None, handle: Handle | None = None) -> None:
        args = default_args(args or {})
        errors = validate_args(args)
        if errors:
            messages = [str(e) for e in errors]
            raise ValueError(messages[0] if len(messages) == 1 else "[" + ", ".join(messages) + "]")
        self.args = args
        self.handle = handle
        self.target_utilization: int = int(args["targetUtilization"])
        self.requests_milli_cores: int = resource_amount("cpu", args["defaultRequests"]["cpu"]) \
            if "cpu" in args["defaultRequests"] else 0
        self.requests_multiplier: float = parse_go_float(args["defaultRequestsMultiplier"])
        self.metrics_source: MetricsSource = make_metrics_source(args, handle)
        self.event_handler = PodAssignEventHandler(lambda: now_unix(self.handle))
        if handle is not None:
            self.event_handler.follow(handle)

    # ------------------------------------------------------------------ prediction
    def predict_utilisation(self, container: "Container") -> int:
        """Upstream ``PredictUtilisation``: the container's expected cpu in millicores."""
        if "cpu" in container.limits:
            return int(container.limits["cpu"])
        if "cpu" in container.requests:
            return go_round(container.requests["cpu"] * self.requests_multiplier)
        return self.requests_milli_cores

    def pod_cpu(self, pod: "Pod") -> int:
        return sum(self.predict_utilisation(c) for c in pod.containers) + int(pod.overhead.get("cpu", 0))

    # ------------------------------------------------------------------ scoring
    @hookimpl
    def score(self, state: "CycleState", pod: "Pod", node_info: "NodeInfo") -> int:
        node = node_info.node
        node_name = node_info.name
        metrics, all_metrics = self.metrics_source.node_metrics(node_name, node)
        if metrics is None:
            log.info("Failed to get metrics for node %s; using minimum score", node_name)
            return MIN_NODE_SCORE
        cur_pod_cpu = self.pod_cpu(pod)
        util_percent = 0.0
        found = False
        for metric in metrics:
            if metric.type == CPU and metric.operator in (AVERAGE, LATEST):
                util_percent = metric.value
                found = True
        if not found:
            log.error("Cpu metric not found in node metrics for node %s: %s", node_name, metrics)
            return MIN_NODE_SCORE
        capacity = node.capacity.get("cpu") if node is not None else None
        if capacity is None and node is not None:
            capacity = node.allocatable.get("cpu")  # a manifest without status.capacity
        cap_millis = float(capacity or 0)
        util_millis = (util_percent / 100) * cap_millis
        window_end = all_metrics.window.end if all_metrics is not None else 0
        missing = 0
        for info in self.event_handler.pods_on(node_name):
            seen = int(info.timestamp)
            if seen > window_end or (window_end - seen) < METRICS_AGENT_REPORTING_INTERVAL_SECONDS:
                missing += self.pod_cpu(info.pod)
        predicted = 0.0
        if cap_millis != 0:
            predicted = 100 * (util_millis + float(cur_pod_cpu) + float(missing)) / cap_millis
        target = float(self.target_utilization)
        if predicted > target:
            if predicted > 100:
                return MIN_NODE_SCORE
            return go_round(target * (100 - predicted) / (100 - target))
        return go_round((100 - target) * predicted / target + target)

    @hookimpl
    def normalize_score(self, state: "CycleState", pod: "Pod", scores: list["NodeScore"]) -> Status | None:
        return None


def make_metrics_source(args: Mapping[str, Any], handle: Handle | None) -> MetricsSource:
    """The file source when ``metricsFile`` is set, else the annotation source."""
    path = args.get("metricsFile") or ""
    if path:
        return FileMetricsSource(path, handle)
    return AnnotationMetricsSource(handle, args.get("metricsAnnotation") or DEFAULT_ANNOTATION)
