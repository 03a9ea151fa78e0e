"""Timestamps as the API server writes them, for objects a plugin or the scheduler writes back."""

from __future__ import annotations

import datetime as _dt

__all__ = ["micro_time", "rfc3339"]


def rfc3339(when: _dt.datetime) -> str:
    """An object timestamp as the API server stores it (whole seconds, UTC)."""
    return when.astimezone(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def micro_time(when: _dt.datetime) -> str:
    """A MicroTime (events' eventTime, leases' renewTime), UTC."""
    return when.astimezone(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
