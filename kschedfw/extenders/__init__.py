"""Scheduler extenders: the ``extenders:`` of a KubeSchedulerConfiguration, called over HTTP(S).

:func:`build_extenders` turns the configuration into :class:`HTTPExtender` clients; the
functions of :mod:`kschedfw.extenders.cycle` are what the scheduling cycle calls, where
kube-scheduler's ``schedule_one.go`` and preemption evaluator call their extenders. The JSON
wire format (``k8s.io/kube-scheduler/extender/v1``) lives in :mod:`kschedfw.extenders.wire`.
"""

from kschedfw.extenders.cycle import (EXTENDER_NAME, build_extenders,
                                      close_extenders, extender_binder, extender_scores, extenders_binding,
                                      find_nodes_that_pass_extenders, has_extender_filters,
                                      has_prioritizing_extenders, ignored_extended_resources,
                                      prioritize_with_extenders, with_extender_ignored_resources)
from kschedfw.extenders.http_extender import ExtenderConfigError, HTTPExtender
from kschedfw.extenders.transport import DEFAULT_EXTENDER_TIMEOUT, ExtenderError, TLSSettings
from kschedfw.extenders.wire import MAX_EXTENDER_PRIORITY, MIN_EXTENDER_PRIORITY

__all__ = [
    "EXTENDER_NAME", "DEFAULT_EXTENDER_TIMEOUT", "MAX_EXTENDER_PRIORITY", "MIN_EXTENDER_PRIORITY",
    "HTTPExtender", "ExtenderError", "ExtenderConfigError", "TLSSettings",
    "build_extenders", "ignored_extended_resources", "with_extender_ignored_resources", "close_extenders", "has_extender_filters", "has_prioritizing_extenders",
    "find_nodes_that_pass_extenders", "prioritize_with_extenders", "extender_scores",
    "extender_binder", "extenders_binding",
]
