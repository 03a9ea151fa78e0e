"""Trimaran load-aware scheduling for kschedfw: TargetLoadPacking (a port of
kubernetes-sigs/scheduler-plugins ``pkg/trimaran``), with pluggable metrics sources."""

from kschedfw_trimaran.metrics import (AnnotationMetricsSource, FileMetricsSource, Metric, MetricsSource,
                                       WatcherMetrics, Window)
from kschedfw_trimaran.targetloadpacking import ARGS_SCHEMA, NAME, TargetLoadPacking, validate_args

__all__ = ["TargetLoadPacking", "NAME", "ARGS_SCHEMA", "validate_args", "MetricsSource", "AnnotationMetricsSource",
           "FileMetricsSource", "Metric", "Window", "WatcherMetrics"]
