"""The scheduling queue: activeQ, backoffQ, the unschedulable pool (with gated pods), in-flight
events and the nominator. See :mod:`kschedfw.queue.scheduling_queue`."""

from kschedfw.queue.active_queue import InFlightEvent
from kschedfw.queue.nominator import Nominator
from kschedfw.queue.scheduling_queue import (
    ACTIVE_Q, BACKOFF_Q, DEFAULT_POD_INITIAL_BACKOFF, DEFAULT_POD_MAX_BACKOFF,
    DEFAULT_POD_MAX_IN_UNSCHEDULABLE_PODS_DURATION, EVENT_ASSIGNED_POD_ADD,
    EVENT_ASSIGNED_POD_DELETE, EVENT_ASSIGNED_POD_UPDATE, EVENT_UNSCHEDULED_POD_ADD,
    EVENT_UNSCHEDULED_POD_DELETE, EVENT_UNSCHEDULED_POD_UPDATE, GATED, POP_FROM_BACKOFF_Q,
    SCHEDULE_ATTEMPT_FAILURE, UNROLLED_WILDCARD_EVENTS, UNSCHEDULABLE_FLUSH_INTERVAL,
    UNSCHEDULABLE_Q, PriorityQueue, QueueFramework, QueueingStrategy, is_wildcard_event,
    match_any_cluster_event, match_cluster_events)

__all__ = [
    "PriorityQueue", "Nominator", "QueueFramework", "QueueingStrategy", "InFlightEvent",
    "match_cluster_events", "match_any_cluster_event", "is_wildcard_event",
    "UNROLLED_WILDCARD_EVENTS",
    "ACTIVE_Q", "BACKOFF_Q", "UNSCHEDULABLE_Q", "GATED",
    "EVENT_ASSIGNED_POD_ADD", "EVENT_ASSIGNED_POD_UPDATE", "EVENT_ASSIGNED_POD_DELETE",
    "EVENT_UNSCHEDULED_POD_ADD", "EVENT_UNSCHEDULED_POD_UPDATE", "EVENT_UNSCHEDULED_POD_DELETE",
    "SCHEDULE_ATTEMPT_FAILURE", "POP_FROM_BACKOFF_Q", "DEFAULT_POD_INITIAL_BACKOFF",
    "DEFAULT_POD_MAX_BACKOFF", "DEFAULT_POD_MAX_IN_UNSCHEDULABLE_PODS_DURATION",
    "UNSCHEDULABLE_FLUSH_INTERVAL",
]
