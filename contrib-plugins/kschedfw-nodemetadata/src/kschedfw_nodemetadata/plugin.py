"""NodeMetadata: score nodes by a number or a timestamp kept in a node label or annotation.

Port of scheduler-plugins ``pkg/nodemetadata``. The raw score of a node is

* ``Number``: the value (Go ``ParseFloat``) truncated to an integer; negated for ``Lowest``;
* ``Timestamp``: the age of the timestamp in whole seconds (read with the Go layout
  ``timestampFormat``, RFC 3339 by default); negated for ``Newest``.

A node without the key, or with a value that does not parse, gets the reserved invalid score
(the smallest int64) and ends with score 0 after NormalizeScore; valid nodes are spread over
1..100 (all equal: 1).

Time: upstream measures ages against the wall clock. Only differences between nodes reach the
normalized score, so kschedfw measures them against the Handle's clock (``clock.now_datetime()``):
the simulated clock in ``kschedfw simulate`` (deterministic runs), the wall clock without a Handle.
"""

from __future__ import annotations

import datetime as _dt
import logging
import time
from typing import TYPE_CHECKING, Any, Mapping

from kschedfw import MAX_NODE_SCORE, MIN_NODE_SCORE, Status, hookimpl
from kschedfw.api.field import INVALID, FieldError

from kschedfw_nodemetadata.gotime import (MAX_INT64, MIN_INT64, RFC3339, GoTimeError, go_int64,
                                          parse_go_float, parse_go_time, wrap_int64)

if TYPE_CHECKING:
    from kschedfw import CycleState, Handle, NodeInfo, NodeScore
    from kschedfw.api import Node, Pod

log = logging.getLogger(__name__)

NAME = "NodeMetadata"
INVALID_SCORE = MIN_INT64

LABEL, ANNOTATION = "Label", "Annotation"
NUMBER, TIMESTAMP = "Number", "Timestamp"
HIGHEST, LOWEST, NEWEST, OLDEST = "Highest", "Lowest", "Newest", "Oldest"

ARGS_SCHEMA: dict[str, Any] = {
    "$comment": "NodeMetadataArgs (scheduler-plugins apis/config/v1)",
    "type": "object",
    "properties": {
        "metadataKey": {"type": "string", "default": "",
                        "description": "Name of the node label or annotation to score by (required)."},
        "metadataSource": {"type": "string", "default": "",
                           "description": 'Where to read it: "Label" or "Annotation" (required).'},
        "metadataType": {"type": "string", "default": "",
                         "description": 'What it holds: "Number" or "Timestamp" (required).'},
        "scoringStrategy": {"type": "string", "default": "",
                            "description": 'Number: "Highest" or "Lowest"; Timestamp: "Newest" or "Oldest" '
                                           "(required)."},
        "timestampFormat": {"type": "string", "default": "",
                            "description": "Go time layout of Timestamp values; empty means RFC 3339 "
                                           f'("{RFC3339}").'},
    },
    "additionalProperties": False,
}


def validate_args(args: Mapping[str, Any]) -> list[FieldError]:
    """Upstream ``ValidateNodeMetadataArgs``, messages as upstream."""
    errors: list[FieldError] = []
    key = args.get("metadataKey") or ""
    source = args.get("metadataSource") or ""
    kind = args.get("metadataType") or ""
    strategy = args.get("scoringStrategy") or ""
    if key == "":
        errors.append(FieldError(("metadataKey",), INVALID, "metadataKey cannot be empty", key))
    if source not in (LABEL, ANNOTATION):
        errors.append(FieldError(("metadataSource",), INVALID,
                                 'metadataSource must be either "Label" or "Annotation"', source))
    if kind not in (NUMBER, TIMESTAMP):
        errors.append(FieldError(("metadataType",), INVALID,
                                 'metadataType must be either "Number" or "Timestamp"', kind))
    if strategy not in (HIGHEST, LOWEST, NEWEST, OLDEST):
        errors.append(FieldError(("scoringStrategy",), INVALID,
                                 'scoringStrategy must be one of "Highest", "Lowest", "Newest", or "Oldest"',
                                 strategy))
    if kind == NUMBER and strategy in (NEWEST, OLDEST):
        errors.append(FieldError(("scoringStrategy",), INVALID,
                                 'scoringStrategy "Newest" and "Oldest" are only valid for metadataType "Timestamp"',
                                 strategy))
    if kind == TIMESTAMP and strategy in (HIGHEST, LOWEST):
        errors.append(FieldError(("scoringStrategy",), INVALID,
                                 'scoringStrategy "Highest" and "Lowest" are only valid for metadataType "Number"',
                                 strategy))
    return errors


class MetadataError(ValueError):
    """A node whose metadata cannot be scored (missing key, value that does not parse)."""


def _datetime_ns(when: _dt.datetime) -> int:
    if when.tzinfo is None:
        when = when.replace(tzinfo=_dt.timezone.utc)
    delta = when - _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)
    return ((delta.days * 86400 + delta.seconds) * 1_000_000 + delta.microseconds) * 1000


class NodeMetadata:
    """Score plugin: rank nodes by a numeric or timestamp label/annotation."""

    name = NAME
    args_schema = ARGS_SCHEMA
    validate_args = staticmethod(validate_args)

    def __init__(self, args: Mapping[str, Any] | None, handle: Handle | None = None) -> None:
        args = dict(args or {})
        errors = validate_args(args)
        if errors:
            messages = [str(e) for e in errors]
            text = messages[0] if len(messages) == 1 else "[" + ", ".join(messages) + "]"
            raise ValueError(f"invalid NodeMetadataArgs: {text}")
        self.metadata_key: str = args["metadataKey"]
        self.metadata_source: str = args["metadataSource"]
        self.metadata_type: str = args["metadataType"]
        self.scoring_strategy: str = args["scoringStrategy"]
        fmt = args.get("timestampFormat") or ""
        if self.metadata_type == TIMESTAMP and fmt == "":
            fmt = RFC3339
        self.timestamp_format: str = fmt
        self.handle = handle

    # ------------------------------------------------------------------ time
    def now_ns(self) -> int:
        """The scheduler's "now" in Unix nanoseconds (see the module docstring)."""
        if self.handle is None:
            return time.time_ns()
        return _datetime_ns(self.handle.clock.now_datetime())

    # ------------------------------------------------------------------ scoring
    def calculate_score(self, node: "Node", now_ns: int | None = None) -> int:
        """The raw score of ``node``; :class:`MetadataError` when it has no usable metadata."""
        source = node.labels if self.metadata_source == LABEL else node.annotations
        value = source.get(self.metadata_key)
        if value is None:
            raise MetadataError(f'metadata key "{self.metadata_key}" not found in {self.metadata_source}')
        if self.metadata_type == NUMBER:
            return self._numeric(value)
        if self.metadata_type == TIMESTAMP:
            return self._timestamp(value, self.now_ns() if now_ns is None else now_ns)
        raise MetadataError(f"unsupported metadata type: {self.metadata_type}")

    def _numeric(self, value: str) -> int:
        try:
            number = parse_go_float(value)
        except ValueError as exc:
            raise MetadataError(f'failed to parse numeric value "{value}": {exc}') from None
        score = go_int64(number)
        if self.scoring_strategy == LOWEST:
            score = wrap_int64(-score)
        return score

    def _timestamp(self, value: str, now_ns: int) -> int:
        try:
            stamp = parse_go_time(self.timestamp_format, value)
        except GoTimeError as exc:
            raise MetadataError(f'failed to parse timestamp "{value}" with format "{self.timestamp_format}": '
                                f"{exc}") from None
        age_ns = max(MIN_INT64, min(MAX_INT64, now_ns - stamp))  # time.Since saturates
        age = int(age_ns / 1e9)  # float seconds, then int64() truncates toward zero
        return -age if self.scoring_strategy == NEWEST else age

    @hookimpl
    def score(self, state: "CycleState", pod: "Pod", node_info: "NodeInfo") -> int | Status:
        node = node_info.node
        if node is None:
            return Status.as_status(f'node "{node_info.name}" not found')
        try:
            return self.calculate_score(node)
        except MetadataError as exc:
            log.debug("NodeMetadata: cannot score node %s for pod %s: %s", node.name, pod.key, exc)
            return INVALID_SCORE  # invalid or missing metadata sorts after every valid node

    @hookimpl
    def normalize_score(self, state: "CycleState", pod: "Pod", scores: list["NodeScore"]) -> Status | None:
        """Valid scores onto [MinNodeScore+1, MaxNodeScore]; invalid ones to MinNodeScore."""
        if not scores:
            return None
        valid = [s.score for s in scores if s.score != INVALID_SCORE]
        if not valid:
            for s in scores:
                s.score = MIN_NODE_SCORE
            return None
        low, high = min(valid), max(valid)
        lower_bound = MIN_NODE_SCORE + 1  # MinNodeScore is reserved for invalid nodes
        if low == high:
            for s in scores:
                s.score = MIN_NODE_SCORE if s.score == INVALID_SCORE else lower_bound
            return None
        old_range = high - low
        new_range = MAX_NODE_SCORE - lower_bound
        for s in scores:
            if s.score == INVALID_SCORE:
                s.score = MIN_NODE_SCORE
            else:
                s.score = (s.score - low) * new_range // old_range + lower_bound
        return None
