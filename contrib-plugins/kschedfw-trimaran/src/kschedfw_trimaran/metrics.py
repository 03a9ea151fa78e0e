"""Node load metrics for Trimaran plugins, in load-watcher's shapes, from pluggable sources.

Upstream reads metrics from a load-watcher service or library (Kubernetes metrics server,
Prometheus, SignalFx). A simulation has no such service, so kschedfw reads them from a
:class:`MetricsSource`. Two are provided:

* :class:`AnnotationMetricsSource`: a node annotation holding the node's CPU utilisation in
  percent (``kschedfw.io/cpu-utilization: "35"``), measured "now" (the scheduler's clock);
* :class:`FileMetricsSource`: a YAML or JSON file, either exactly what load-watcher's
  ``/watcher`` endpoint serves (``{"timestamp", "window": {"duration", "start", "end"}, "source",
  "data": {"NodeMetricsMap": {node: {"metrics": [{"name", "type", "operator", "rollup",
  "value"}]}}}}``) or a shorthand ``{"window": {...}, "nodes": {node: cpuPercent}}``.

Anything with a ``node_metrics(node_name, node)`` method returning ``(metrics, watcher_metrics)``
(both None when nothing is known about any node; ``(None, all)`` when the node is unknown) can
replace them: set ``plugin.metrics_source``.
"""

from __future__ import annotations

import datetime as _dt
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping, Protocol

import attrs
import yaml

if TYPE_CHECKING:
    from kschedfw.api import Node
    from kschedfw.fwk.interface import Handle

__all__ = [
    "CPU", "MEMORY", "AVERAGE", "STD", "LATEST", "Metric", "Window", "WatcherMetrics", "MetricsSource",
    "AnnotationMetricsSource", "FileMetricsSource", "MetricsFileError", "parse_watcher_metrics",
    "DEFAULT_ANNOTATION", "now_unix",
]

# load-watcher's metric types and operators
CPU = "CPU"
MEMORY = "Memory"
AVERAGE = "AVG"
STD = "STD"
LATEST = "Latest"

DEFAULT_ANNOTATION = "kschedfw.io/cpu-utilization"


@attrs.frozen
class Metric:
    """One measurement of a node; ``value`` is a percentage."""

    name: str = ""
    type: str = ""
    operator: str = ""
    rollup: str = ""
    value: float = 0.0


@attrs.frozen
class Window:
    """The interval the metrics were aggregated over, in Unix seconds."""

    duration: str = ""
    start: int = 0
    end: int = 0


@attrs.frozen
class WatcherMetrics:
    """load-watcher's answer: metrics per node for one window. ``nodes`` None = never populated."""

    timestamp: int = 0
    window: Window = Window()
    source: str = ""
    nodes: Mapping[str, tuple[Metric, ...]] | None = None


class MetricsSource(Protocol):
    def node_metrics(self, node_name: str, node: "Node | None") -> tuple[
            tuple[Metric, ...] | None, WatcherMetrics | None]: ...


class MetricsFileError(ValueError):
    """A metrics file that cannot be read."""


def now_unix(handle: Handle | None) -> float:
    """The scheduler's "now" in Unix seconds: the Handle's clock, the wall clock without one."""
    if handle is None:
        return time.time()
    return handle.clock.now_datetime().timestamp()


# --------------------------------------------------------------------------- annotations

class AnnotationMetricsSource:
    """CPU utilisation (percent) read from a node annotation, as a ``Latest`` CPU metric measured
    at the scheduler's current time. A node without the annotation (or with one that is not a
    number) has no metrics."""

    def __init__(self, handle: Handle | None = None, annotation: str = DEFAULT_ANNOTATION) -> None:
        self.handle = handle
        self.annotation = annotation

    def node_metrics(self, node_name: str, node: "Node | None") -> tuple[
            tuple[Metric, ...] | None, WatcherMetrics | None]:
        now = int(now_unix(self.handle))
        window = Window("", now, now)
        raw = node.annotations.get(self.annotation) if node is not None else None
        value = _percent(raw)
        if value is None:
            return None, WatcherMetrics(now, window, "annotations", {})
        metric = Metric(f"annotation:{self.annotation}", CPU, LATEST, "", value)
        return (metric,), WatcherMetrics(now, window, "annotations", {node_name: (metric,)})


def _percent(raw: Any) -> float | None:
    if raw is None:
        return None
    text = str(raw).strip().removesuffix("%").strip()
    try:
        value = float(text)
    except ValueError:
        return None
    return value if value == value else None  # NaN is no measurement


# --------------------------------------------------------------------------- files

def parse_watcher_metrics(doc: Any, *, source: str = "") -> WatcherMetrics:
    """A load-watcher ``WatcherMetrics`` document (or the ``nodes:`` shorthand) -> WatcherMetrics."""
    where = f"{source}: " if source else ""
    if not isinstance(doc, Mapping):
        raise MetricsFileError(f"{where}expected a mapping with data.NodeMetricsMap or nodes")
    window_doc = doc.get("window") or {}
    if not isinstance(window_doc, Mapping):
        raise MetricsFileError(f"{where}window: expected a mapping")
    window = Window(str(window_doc.get("duration") or ""), _unix(window_doc.get("start"), f"{where}window.start"),
                    _unix(window_doc.get("end"), f"{where}window.end"))
    nodes: dict[str, tuple[Metric, ...]] = {}
    if "data" in doc:
        data = doc.get("data") or {}
        if not isinstance(data, Mapping):
            raise MetricsFileError(f"{where}data: expected a mapping")
        node_map = data.get("NodeMetricsMap")
        if node_map is None:  # never populated: no metrics for any node
            return WatcherMetrics(_unix(doc.get("timestamp"), f"{where}timestamp"), window,
                                  str(doc.get("source") or ""), None)
        if not isinstance(node_map, Mapping):
            raise MetricsFileError(f"{where}data.NodeMetricsMap: expected a mapping")
        for name, node_doc in node_map.items():
            metrics = (node_doc or {}).get("metrics") if isinstance(node_doc, Mapping) else None
            if metrics is None:
                metrics = []
            if not isinstance(metrics, list):
                raise MetricsFileError(f"{where}data.NodeMetricsMap.{name}.metrics: expected a list")
            nodes[str(name)] = tuple(_metric(m, f"{where}data.NodeMetricsMap.{name}.metrics[{i}]")
                                     for i, m in enumerate(metrics))
    elif "nodes" in doc:
        node_map = doc.get("nodes") or {}
        if not isinstance(node_map, Mapping):
            raise MetricsFileError(f"{where}nodes: expected a mapping of node name to CPU percent")
        for name, value in node_map.items():
            percent = _percent(value)
            if percent is None or isinstance(value, bool):
                raise MetricsFileError(f"{where}nodes.{name}: expected a CPU utilisation in percent, got {value!r}")
            nodes[str(name)] = (Metric("cpu", CPU, LATEST, "", percent),)
    else:
        raise MetricsFileError(f"{where}expected data.NodeMetricsMap (load-watcher format) or nodes (shorthand)")
    return WatcherMetrics(_unix(doc.get("timestamp"), f"{where}timestamp"), window, str(doc.get("source") or ""),
                          nodes)


def _unix(value: Any, where: str) -> int:
    if value is None or value == "":
        return 0
    if isinstance(value, bool):
        raise MetricsFileError(f"{where}: expected Unix seconds or an RFC 3339 time, got {value!r}")
    if isinstance(value, (int, float)):
        return int(value)
    if isinstance(value, _dt.datetime):
        when = value if value.tzinfo else value.replace(tzinfo=_dt.timezone.utc)
        return int(when.timestamp())
    try:
        return int(str(value))
    except ValueError:
        pass
    try:
        when = _dt.datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except ValueError:
        raise MetricsFileError(f"{where}: expected Unix seconds or an RFC 3339 time, got {value!r}") from None
    if when.tzinfo is None:
        when = when.replace(tzinfo=_dt.timezone.utc)
    return int(when.timestamp())


def _metric(doc: Any, where: str) -> Metric:
    if not isinstance(doc, Mapping):
        raise MetricsFileError(f"{where}: expected a mapping")
    value = doc.get("value", 0)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise MetricsFileError(f"{where}.value: expected a number, got {value!r}")
    return Metric(str(doc.get("name") or ""), str(doc.get("type") or ""), str(doc.get("operator") or ""),
                  str(doc.get("rollup") or ""), float(value))


#: load-watcher clients are polled this often (upstream ``metricsUpdateIntervalSeconds``).
METRICS_UPDATE_INTERVAL_SECONDS = 30


class FileMetricsSource:
    """Metrics from a YAML/JSON file (see the module docstring), read when the plugin is built and
    checked for changes every 30 seconds of the scheduler's clock, as upstream polls its watcher."""

    def __init__(self, path: str | Path, handle: Handle | None = None) -> None:
        self.path = Path(path)
        self.handle = handle
        self._stamp: tuple[int, int] | None = None
        self.metrics = self._load()
        self._next_refresh = now_unix(handle) + METRICS_UPDATE_INTERVAL_SECONDS

    def _load(self) -> WatcherMetrics:
        try:
            stat = self.path.stat()
            text = self.path.read_text(encoding="utf-8")
        except OSError as exc:
            raise MetricsFileError(f"cannot read metrics file {self.path}: {exc.strerror or exc}") from None
        try:
            doc = yaml.safe_load(text)
        except yaml.YAMLError as exc:
            raise MetricsFileError(f"metrics file {self.path} is not YAML or JSON: {exc}") from None
        self._stamp = (stat.st_mtime_ns, stat.st_size)
        return parse_watcher_metrics(doc, source=str(self.path))

    def refresh(self) -> None:
        """Re-read the file if it changed; a file that became unreadable keeps the last metrics."""
        try:
            stat = self.path.stat()
        except OSError:
            return
        if (stat.st_mtime_ns, stat.st_size) != self._stamp:
            try:
                self.metrics = self._load()
            except MetricsFileError:
                pass

    def node_metrics(self, node_name: str, node: "Node | None") -> tuple[
            tuple[Metric, ...] | None, WatcherMetrics | None]:
        now = now_unix(self.handle)
        if now >= self._next_refresh:
            self._next_refresh = now + METRICS_UPDATE_INTERVAL_SECONDS
            self.refresh()
        metrics = self.metrics
        if metrics.nodes is None:
            return None, None
        found = metrics.nodes.get(node_name)
        if found is None:
            return None, metrics
        return found, metrics
