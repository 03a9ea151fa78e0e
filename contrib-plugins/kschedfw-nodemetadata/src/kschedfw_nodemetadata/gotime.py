"""Go's ``time.Parse`` layouts and ``strconv.ParseFloat`` syntax, for NodeMetadata's args.

NodeMetadata's ``timestampFormat`` is a Go reference-time layout (``2006-01-02T15:04:05Z07:00``),
so timestamps must be read the way Go reads them: :func:`parse_go_time` implements the layout
elements of Go's ``time`` package (numeric and named months and weekdays, 2- and 4-digit years,
12/24-hour clocks, AM/PM, day of year, fractional seconds ``.000``/``.999``, and the numeric,
ISO 8601 and abbreviated time zones) and returns Unix nanoseconds. Years need not be in Python's
``datetime`` range: a layout without a year reads year 0, as Go does.

:func:`parse_go_float` accepts exactly what ``strconv.ParseFloat(s, 64)`` accepts (no spaces, no
underscores except in hexadecimal literals, ``inf``/``nan`` spelled as Go spells them) and
:func:`go_int64` converts a float to int64 as Go does on amd64 (NaN and out-of-range values
become the smallest int64).
"""

from __future__ import annotations

import math
import re

__all__ = ["RFC3339", "GoTimeError", "parse_go_time", "parse_go_float", "go_int64", "wrap_int64", "MIN_INT64",
           "MAX_INT64"]

RFC3339 = "2006-01-02T15:04:05Z07:00"
MIN_INT64 = -(1 << 63)
MAX_INT64 = (1 << 63) - 1


class GoTimeError(ValueError):
    """The value does not match the layout (Go's ``*time.ParseError``)."""


# --------------------------------------------------------------------------- layout tokens

(_NONE, _LONG_MONTH, _MONTH, _NUM_MONTH, _ZERO_MONTH, _LONG_WEEKDAY, _WEEKDAY, _DAY, _UNDER_DAY,
 _ZERO_DAY, _UNDER_YEAR_DAY, _ZERO_YEAR_DAY, _HOUR, _HOUR12, _ZERO_HOUR12, _MINUTE, _ZERO_MINUTE,
 _SECOND, _ZERO_SECOND, _LONG_YEAR, _YEAR, _PM, _PM_LOWER, _TZ, _ISO_TZ, _ISO_SECONDS_TZ,
 _ISO_SHORT_TZ, _ISO_COLON_TZ, _ISO_COLON_SECONDS_TZ, _NUM_TZ, _NUM_SECONDS_TZ, _NUM_SHORT_TZ,
 _NUM_COLON_TZ, _NUM_COLON_SECONDS_TZ, _FRAC0, _FRAC9) = range(36)

_ZERO_X = {"1": _ZERO_MONTH, "2": _ZERO_DAY, "3": _ZERO_HOUR12, "4": _ZERO_MINUTE, "5": _ZERO_SECOND,
           "6": _YEAR}
_ISO_TZS = (_ISO_TZ, _ISO_SECONDS_TZ, _ISO_SHORT_TZ, _ISO_COLON_TZ, _ISO_COLON_SECONDS_TZ)

_LONG_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September",
                "October", "November", "December")
_SHORT_MONTHS = tuple(m[:3] for m in _LONG_MONTHS)
_LONG_DAYS = ("Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday")
_SHORT_DAYS = tuple(d[:3] for d in _LONG_DAYS)
_DAYS_BEFORE = (0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334, 365)


def _starts_lower(s: str) -> bool:
    return bool(s) and "a" <= s[0] <= "z"


def _is_digit(s: str, i: int) -> bool:
    return i < len(s) and "0" <= s[i] <= "9"


def _next_chunk(layout: str) -> tuple[str, int, int, str]:
    """Go's ``nextStdChunk``: (literal prefix, element, fraction digits, rest of the layout)."""
    n = len(layout)
    for i, c in enumerate(layout):
        rest = layout[i:]
        if c == "J" and rest.startswith("Jan"):
            if rest.startswith("January"):
                return layout[:i], _LONG_MONTH, 0, layout[i + 7:]
            if not _starts_lower(layout[i + 3:]):
                return layout[:i], _MONTH, 0, layout[i + 3:]
        elif c == "M":
            if rest.startswith("Mon"):
                if rest.startswith("Monday"):
                    return layout[:i], _LONG_WEEKDAY, 0, layout[i + 6:]
                if not _starts_lower(layout[i + 3:]):
                    return layout[:i], _WEEKDAY, 0, layout[i + 3:]
            if rest.startswith("MST"):
                return layout[:i], _TZ, 0, layout[i + 3:]
        elif c == "0":
            if i + 1 < n and "1" <= layout[i + 1] <= "6":
                return layout[:i], _ZERO_X[layout[i + 1]], 0, layout[i + 2:]
            if rest.startswith("002"):
                return layout[:i], _ZERO_YEAR_DAY, 0, layout[i + 3:]
        elif c == "1":
            if rest.startswith("15"):
                return layout[:i], _HOUR, 0, layout[i + 2:]
            return layout[:i], _NUM_MONTH, 0, layout[i + 1:]
        elif c == "2":
            if rest.startswith("2006"):
                return layout[:i], _LONG_YEAR, 0, layout[i + 4:]
            return layout[:i], _DAY, 0, layout[i + 1:]
        elif c == "_":
            if rest.startswith("_2"):
                if rest.startswith("_2006"):
                    return layout[:i + 1], _LONG_YEAR, 0, layout[i + 5:]
                return layout[:i], _UNDER_DAY, 0, layout[i + 2:]
            if rest.startswith("__2"):
                return layout[:i], _UNDER_YEAR_DAY, 0, layout[i + 3:]
        elif c == "3":
            return layout[:i], _HOUR12, 0, layout[i + 1:]
        elif c == "4":
            return layout[:i], _MINUTE, 0, layout[i + 1:]
        elif c == "5":
            return layout[:i], _SECOND, 0, layout[i + 1:]
        elif c == "P" and rest.startswith("PM"):
            return layout[:i], _PM, 0, layout[i + 2:]
        elif c == "p" and rest.startswith("pm"):
            return layout[:i], _PM_LOWER, 0, layout[i + 2:]
        elif c == "-":
            for text, std in (("-070000", _NUM_SECONDS_TZ), ("-07:00:00", _NUM_COLON_SECONDS_TZ),
                              ("-0700", _NUM_TZ), ("-07:00", _NUM_COLON_TZ), ("-07", _NUM_SHORT_TZ)):
                if rest.startswith(text):
                    return layout[:i], std, 0, layout[i + len(text):]
        elif c == "Z":
            for text, std in (("Z070000", _ISO_SECONDS_TZ), ("Z07:00:00", _ISO_COLON_SECONDS_TZ),
                              ("Z0700", _ISO_TZ), ("Z07:00", _ISO_COLON_TZ), ("Z07", _ISO_SHORT_TZ)):
                if rest.startswith(text):
                    return layout[:i], std, 0, layout[i + len(text):]
        elif c in ".," and i + 1 < n and layout[i + 1] in "09":
            ch = layout[i + 1]
            j = i + 1
            while j < n and layout[j] == ch:
                j += 1
            if not _is_digit(layout, j):
                return layout[:i], _FRAC0 if ch == "0" else _FRAC9, j - (i + 1), layout[j:]
    return layout, _NONE, 0, ""


def _skip(value: str, prefix: str) -> str:
    while prefix:
        if prefix[0] == " ":
            if value and value[0] != " ":
                raise GoTimeError("bad")
            prefix = prefix.lstrip(" ")
            value = value.lstrip(" ")
            continue
        if not value or value[0] != prefix[0]:
            raise GoTimeError("bad")
        prefix, value = prefix[1:], value[1:]
    return value


def _getnum(s: str, fixed: bool) -> tuple[int, str]:
    if not _is_digit(s, 0):
        raise GoTimeError("bad")
    if not _is_digit(s, 1):
        if fixed:
            raise GoTimeError("bad")
        return int(s[0]), s[1:]
    return int(s[:2]), s[2:]


def _getnum3(s: str, fixed: bool) -> tuple[int, str]:
    i = 0
    while i < 3 and _is_digit(s, i):
        i += 1
    if i == 0 or (fixed and i != 3):
        raise GoTimeError("bad")
    return int(s[:i]), s[i:]


def _lookup(names: tuple[str, ...], value: str) -> tuple[int, str]:
    for i, name in enumerate(names):
        if len(value) >= len(name) and value[:len(name)].lower() == name.lower():
            return i, value[len(name):]
    raise GoTimeError("bad")


def _atoi_digits(s: str) -> int:
    if not s or not s.isascii() or not s.isdigit():
        raise GoTimeError("bad")
    return int(s)


def _nanoseconds(value: str, nbytes: int) -> int:
    if not value or value[0] not in ".,":
        raise GoTimeError("bad")
    if nbytes > 10:
        value, nbytes = value[:10], 10
    ns = _atoi_digits(value[1:nbytes])
    return ns * 10 ** (10 - nbytes)


def _zone_abbreviation_length(value: str) -> int:
    """Go's ``parseTimeZone``: 0 when ``value`` does not start with a zone abbreviation."""
    if len(value) < 3:
        return 0
    if value[:4] in ("ChST", "MeST"):
        return 4
    if value[:3] == "GMT":
        m = re.match(r"GMT([+-]\d{1,2})?", value)
        if m and m.group(1) and not -23 <= int(m.group(1)) <= 23:
            return 3
        return m.end() if m else 3
    if value[0] in "+-":
        m = re.match(r"[+-]\d{1,2}", value)
        return m.end() if m and -23 <= int(m.group(0)) <= 23 else 0
    upper = 0
    while upper < 6 and upper < len(value) and "A" <= value[upper] <= "Z":
        upper += 1
    if upper == 5 and value[4] == "T":
        return 5
    if upper == 4 and (value[3] == "T" or value[:4] == "WITA"):
        return 4
    if upper == 3:
        return 3
    return 0


def _is_leap(year: int) -> bool:
    return year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)


def _days_in(month: int, year: int) -> int:
    if month == 2 and _is_leap(year):
        return 29
    return _DAYS_BEFORE[month] - _DAYS_BEFORE[month - 1]


def _days_from_civil(year: int, month: int, day: int) -> int:
    """Days since 1970-01-01 in the proleptic Gregorian calendar, for any year."""
    y = year - (month <= 2)
    era = y // 400
    yoe = y - era * 400
    mp = (month + 9) % 12
    doy = (153 * mp + 2) // 5 + day - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468


def parse_go_time(layout: str, value: str) -> int:
    """``time.Parse(layout, value)`` as Unix nanoseconds; :class:`GoTimeError` when it fails."""
    original = value
    try:
        return _parse(layout, value)
    except GoTimeError as exc:
        detail = str(exc)
        if detail == "bad":
            raise GoTimeError(f'parsing time "{original}" as "{layout}": cannot parse') from None
        raise GoTimeError(f'parsing time "{original}"{detail}') from None


def _parse(layout: str, value: str) -> int:
    year, month, day, yday = 0, -1, -1, -1
    hour = minute = sec = nsec = 0
    zone_offset: int | None = None
    pm_set = am_set = False
    while True:
        prefix, std, ndigits, suffix = _next_chunk(layout)
        value = _skip(value, prefix)
        if std == _NONE:
            if value:
                raise GoTimeError(f": extra text: {value!r}")
            break
        layout = suffix
        range_error = ""
        if std == _LONG_YEAR:
            if len(value) < 4 or not _is_digit(value, 0):
                raise GoTimeError("bad")
            year, value = _atoi_digits(value[:4]), value[4:]
        elif std == _YEAR:
            if len(value) < 2:
                raise GoTimeError("bad")
            year, value = _atoi_digits(value[:2]), value[2:]
            year += 1900 if year >= 69 else 2000
        elif std == _LONG_MONTH:
            month, value = _lookup(_LONG_MONTHS, value)
            month += 1
        elif std == _MONTH:
            month, value = _lookup(_SHORT_MONTHS, value)
            month += 1
        elif std in (_NUM_MONTH, _ZERO_MONTH):
            month, value = _getnum(value, std == _ZERO_MONTH)
            if not 1 <= month <= 12:
                range_error = "month"
        elif std == _WEEKDAY:
            _, value = _lookup(_SHORT_DAYS, value)
        elif std == _LONG_WEEKDAY:
            _, value = _lookup(_LONG_DAYS, value)
        elif std in (_DAY, _UNDER_DAY, _ZERO_DAY):
            if std == _UNDER_DAY and value[:1] == " ":
                value = value[1:]
            day, value = _getnum(value, std == _ZERO_DAY)
        elif std in (_UNDER_YEAR_DAY, _ZERO_YEAR_DAY):
            for _ in range(2):
                if std == _UNDER_YEAR_DAY and value[:1] == " ":
                    value = value[1:]
            yday, value = _getnum3(value, std == _ZERO_YEAR_DAY)
        elif std == _HOUR:
            hour, value = _getnum(value, False)
            if not 0 <= hour < 24:
                range_error = "hour"
        elif std in (_HOUR12, _ZERO_HOUR12):
            hour, value = _getnum(value, std == _ZERO_HOUR12)
            if not 0 <= hour <= 12:
                range_error = "hour"
        elif std in (_MINUTE, _ZERO_MINUTE):
            minute, value = _getnum(value, std == _ZERO_MINUTE)
            if not 0 <= minute < 60:
                range_error = "minute"
        elif std in (_SECOND, _ZERO_SECOND):
            sec, value = _getnum(value, std == _ZERO_SECOND)
            if not 0 <= sec < 60:
                range_error = "second"
            elif len(value) >= 2 and value[0] in ".," and _is_digit(value, 1):
                # A fractional second in the value but none in the layout: read it anyway.
                _, next_std, _, _ = _next_chunk(layout)
                if next_std not in (_FRAC0, _FRAC9):
                    n = 2
                    while n < len(value) and _is_digit(value, n):
                        n += 1
                    nsec = _nanoseconds(value, n)
                    value = value[n:]
        elif std == _PM:
            if len(value) < 2:
                raise GoTimeError("bad")
            if value[:2] == "PM":
                pm_set = True
            elif value[:2] == "AM":
                am_set = True
            else:
                raise GoTimeError("bad")
            value = value[2:]
        elif std == _PM_LOWER:
            if len(value) < 2:
                raise GoTimeError("bad")
            if value[:2] == "pm":
                pm_set = True
            elif value[:2] == "am":
                am_set = True
            else:
                raise GoTimeError("bad")
            value = value[2:]
        elif std in (*_ISO_TZS, _NUM_TZ, _NUM_SECONDS_TZ, _NUM_SHORT_TZ, _NUM_COLON_TZ, _NUM_COLON_SECONDS_TZ):
            if std in _ISO_TZS and value[:1] == "Z":
                value = value[1:]
                zone_offset = 0
                continue
            if std in (_ISO_COLON_TZ, _NUM_COLON_TZ):
                if len(value) < 6 or value[3] != ":":
                    raise GoTimeError("bad")
                sign, hh, mm, ss, value = value[0], value[1:3], value[4:6], "00", value[6:]
            elif std in (_NUM_SHORT_TZ, _ISO_SHORT_TZ):
                if len(value) < 3:
                    raise GoTimeError("bad")
                sign, hh, mm, ss, value = value[0], value[1:3], "00", "00", value[3:]
            elif std in (_ISO_COLON_SECONDS_TZ, _NUM_COLON_SECONDS_TZ):
                if len(value) < 9 or value[3] != ":" or value[6] != ":":
                    raise GoTimeError("bad")
                sign, hh, mm, ss, value = value[0], value[1:3], value[4:6], value[7:9], value[9:]
            elif std in (_ISO_SECONDS_TZ, _NUM_SECONDS_TZ):
                if len(value) < 7:
                    raise GoTimeError("bad")
                sign, hh, mm, ss, value = value[0], value[1:3], value[3:5], value[5:7], value[7:]
            else:
                if len(value) < 5:
                    raise GoTimeError("bad")
                sign, hh, mm, ss, value = value[0], value[1:3], value[3:5], "00", value[5:]
            hr, _ = _getnum(hh, True)
            mi, _ = _getnum(mm, True)
            se, _ = _getnum(ss, True)
            if hr > 24:
                range_error = "time zone offset hour"
            if mi > 60:
                range_error = "time zone offset minute"
            if se > 60:
                range_error = "time zone offset second"
            offset = (hr * 60 + mi) * 60 + se
            if sign == "-":
                offset = -offset
            elif sign != "+":
                raise GoTimeError("bad")
            zone_offset = offset
        elif std == _TZ:
            if value[:3] == "UTC":
                zone_offset, value = 0, value[3:]
            else:
                n = _zone_abbreviation_length(value)
                if n == 0:
                    raise GoTimeError("bad")
                name, value = value[:n], value[n:]
                # An abbreviation names no offset (Go fabricates a zone with offset 0), except GMT+h.
                zone_offset = int(name[3:]) * 3600 if len(name) > 3 and name.startswith("GMT") and \
                    name[3] in "+-" else 0
        elif std == _FRAC0:
            n = 1 + ndigits
            if len(value) < n:
                raise GoTimeError("bad")
            nsec = _nanoseconds(value, n)
            value = value[n:]
        elif std == _FRAC9:
            if len(value) < 2 or value[0] not in ".," or not _is_digit(value, 1):
                continue  # fractional second omitted
            i = 0
            while i + 1 < len(value) and _is_digit(value, i + 1):
                i += 1
            nsec = _nanoseconds(value, 1 + i)
            value = value[1 + i:]
        if range_error:
            raise GoTimeError(f": {range_error} out of range")
    if pm_set and hour < 12:
        hour += 12
    elif am_set and hour == 12:
        hour = 0
    if yday >= 0:
        m = d = 0
        if _is_leap(year):
            if yday == 31 + 29:
                m, d = 2, 29
            elif yday > 31 + 29:
                yday -= 1
        if yday < 1 or yday > 365:
            raise GoTimeError(": day-of-year out of range")
        if m == 0:
            m = (yday - 1) // 31 + 1
            if _DAYS_BEFORE[m] < yday:
                m += 1
            d = yday - _DAYS_BEFORE[m - 1]
        if month >= 0 and month != m:
            raise GoTimeError(": day-of-year does not match month")
        month = m
        if day >= 0 and day != d:
            raise GoTimeError(": day-of-year does not match day")
        day = d
    else:
        if month < 0:
            month = 1
        if day < 0:
            day = 1
    if day < 1 or day > _days_in(month, year):
        raise GoTimeError(": day out of range")
    seconds = _days_from_civil(year, month, day) * 86400 + hour * 3600 + minute * 60 + sec
    seconds -= zone_offset or 0
    return seconds * 1_000_000_000 + nsec


# --------------------------------------------------------------------------- numbers

_DECIMAL = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_HEX_DIGITS = r"(?:_?[0-9a-fA-F])"
_HEX = re.compile(r"([+-]?)0[xX]((?:" + _HEX_DIGITS + r"+(?:\.(?:[0-9a-fA-F]" + _HEX_DIGITS + r"*)?)?"
                  r"|\.[0-9a-fA-F]" + _HEX_DIGITS + r"*))[pP]([+-]?[0-9](?:_?[0-9])*)")
_INF = re.compile(r"[+-]?(?:inf|infinity)", re.IGNORECASE)


def parse_go_float(text: str) -> float:
    """``strconv.ParseFloat(text, 64)``; ValueError for what Go refuses (including out of range)."""
    if _DECIMAL.fullmatch(text):
        value = float(text)
        if math.isinf(value):
            raise ValueError(f'strconv.ParseFloat: parsing "{text}": value out of range')
        return value
    m = _HEX.fullmatch(text)
    if m:
        sign, mantissa, exponent = m.group(1), m.group(2).replace("_", ""), m.group(3).replace("_", "")
        try:
            value = float.fromhex(f"{sign}0x{mantissa}p{exponent}")
        except OverflowError:
            raise ValueError(f'strconv.ParseFloat: parsing "{text}": value out of range') from None
        return value
    if _INF.fullmatch(text):
        return -math.inf if text.startswith("-") else math.inf
    if text.lower() == "nan":
        return math.nan
    raise ValueError(f'strconv.ParseFloat: parsing "{text}": invalid syntax')


def go_int64(value: float) -> int:
    """``int64(value)``: truncation toward zero; NaN and values outside int64 give MinInt64 (amd64)."""
    if math.isnan(value) or not (-(2.0 ** 63) <= value < 2.0 ** 63):
        return MIN_INT64
    return int(value)


def wrap_int64(value: int) -> int:
    """Two's-complement wrap-around of an int64 result (``-MinInt64 == MinInt64``)."""
    return (value + (1 << 63)) % (1 << 64) - (1 << 63)
