"""Go time layouts and float syntax as NodeMetadata reads label/annotation values."""

from __future__ import annotations

import datetime as dt
import math

import pytest

from kschedfw_nodemetadata.gotime import (MIN_INT64, RFC3339, GoTimeError, go_int64, parse_go_float,
                                          parse_go_time, wrap_int64)


def unix_ns(*args, tz=dt.timezone.utc, micro=0) -> int:
    when = dt.datetime(*args, tzinfo=tz)
    return int(when.timestamp()) * 1_000_000_000 + micro * 1000


@pytest.mark.parametrize("layout, value, expected", [
    (RFC3339, "2025-12-03T10:00:00Z", unix_ns(2025, 12, 3, 10)),
    (RFC3339, "2025-12-03T10:00:00+02:00", unix_ns(2025, 12, 3, 8)),
    (RFC3339, "2025-12-03T10:00:00.5-01:30", unix_ns(2025, 12, 3, 11, 30) + 500_000_000),
    ("2006-01-02T15:04:05.000Z07:00", "2025-01-01T00:00:00.250Z", unix_ns(2025, 1, 1) + 250_000_000),
    ("2006-01-02", "2025-12-01", unix_ns(2025, 12, 1)),
    ("2006-01-02 15:04:05", "2024-02-29 23:59:59", unix_ns(2024, 2, 29, 23, 59, 59)),
    ("Jan _2 15:04:05 2006", "Feb  3 04:05:06 2024", unix_ns(2024, 2, 3, 4, 5, 6)),
    ("January 2, 2006", "march 9, 2025", unix_ns(2025, 3, 9)),  # month names ignore case
    ("Mon, 02 Jan 2006 15:04:05 MST", "Tue, 10 Dec 2024 10:00:00 UTC", unix_ns(2024, 12, 10, 10)),
    ("02 Jan 06 15:04 -0700", "05 Mar 70 08:00 +0100", unix_ns(1970, 3, 5, 7)),
    ("02 Jan 06", "05 Mar 68", unix_ns(2068, 3, 5)),
    ("3:04PM 2006-01-02", "12:30AM 2025-01-01", unix_ns(2025, 1, 1, 0, 30)),
    ("3:04pm 2006-01-02", "1:05pm 2025-01-01", unix_ns(2025, 1, 1, 13, 5)),
    ("2006-002", "2024-060", unix_ns(2024, 2, 29)),
    ("2006-01-02T15:04:05", "2025-01-01T00:00:00.123", unix_ns(2025, 1, 1) + 123_000_000),
])
def test_parse_go_time(layout, value, expected):
    assert parse_go_time(layout, value) == expected


def test_layout_without_a_year_reads_year_zero():
    # Go: time.Parse("15:04", "10:30") is 0000-01-01T10:30:00Z
    assert parse_go_time("15:04", "10:30") == (-62167219200 + 10 * 3600 + 30 * 60) * 1_000_000_000


@pytest.mark.parametrize("layout, value", [
    (RFC3339, "not-a-timestamp"),
    (RFC3339, "2025-12-03 10:00:00Z"),
    (RFC3339, "2025-12-03T10:00:00"),
    ("2006-01-02", "2025-02-30"),
    ("2006-01-02", "2025-13-01"),
    ("2006-01-02", "2025-1-01"),
    ("2006-01-02", "2025-01-01 "),
    ("15:04", "24:00"),
    ("3:04PM", "1:00XM"),
    ("2006-002", "2025-366"),
])
def test_parse_go_time_refuses(layout, value):
    with pytest.raises(GoTimeError):
        parse_go_time(layout, value)


@pytest.mark.parametrize("text, expected", [
    ("100", 100.0), ("-2.5", -2.5), ("+3", 3.0), ("1e3", 1000.0), ("1E-2", 0.01), (".5", 0.5), ("5.", 5.0),
    ("0x1p-2", 0.25), ("0X1.8P1", 3.0), ("0x_1p4", 16.0), ("inf", math.inf), ("-Infinity", -math.inf),
])
def test_parse_go_float(text, expected):
    assert parse_go_float(text) == expected


@pytest.mark.parametrize("text", ["", " 1", "1 ", "1_000", "0x10", "1e", "e1", "+nan", "1e400", "0x1p5000",
                                  "١", "1,5", "--1"])
def test_parse_go_float_refuses(text):
    with pytest.raises(ValueError):
        parse_go_float(text)


def test_nan_is_accepted_and_converts_to_min_int64():
    assert math.isnan(parse_go_float("NaN"))
    assert go_int64(math.nan) == MIN_INT64
    assert go_int64(2.0 ** 63) == MIN_INT64
    assert go_int64(-(2.0 ** 63)) == MIN_INT64
    assert go_int64(-2.9) == -2
    assert wrap_int64(-MIN_INT64) == MIN_INT64
