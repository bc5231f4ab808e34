"""Lengths of time and moments as people read them: one spelling for the command line, the
viewer and the law's messages (`3d4h`, `2h5m`, `30m`, `45s`; `2026-11-22 03:46`, UTC), and
the lengths a lifecycle writes (`parse_duration`)."""

from __future__ import annotations

import re

SKEW = 300   # seconds a committer's clock may run ahead of the door's (the law's tolerance)
_UNITS = (("d", 86400), ("h", 3600), ("m", 60), ("s", 1))


def duration(seconds: int, *, exact: bool = False) -> str:
    """`3d4h`: the largest unit and, when not zero, the one below it (`9m29s`, `3h`). `exact`
    keeps every unit, for a length the law counts (`after 1d1h1m`), never rounded away."""
    counts = []
    for unit, size in _UNITS:
        count, seconds = divmod(seconds, size)
        counts.append((count, unit))
    first = next((i for i, (count, _) in enumerate(counts) if count), len(counts) - 1)
    kept = counts[first:] if exact else counts[first:first + 2]
    return "".join(f"{count}{unit}" for count, unit in kept if count) or "0s"


def when(ts: int | str) -> str:
    """A commit's time (seconds, or an `iso` string), to the minute, in UTC:
    `2026-11-22 03:46`."""
    import datetime
    if isinstance(ts, str):
        ts = parse_iso(ts)
    return datetime.datetime.fromtimestamp(ts, datetime.UTC).strftime("%Y-%m-%d %H:%M")


def iso(ts: int | float | None) -> str | None:
    """A moment as every `--json` output says one: ISO 8601 in UTC, to the second
    (`2026-11-22T03:46:05Z`); such strings sort as the moments do."""
    import time
    if ts is None:
        return None
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(int(ts)))


def parse_iso(text: str) -> int:
    """The seconds of an `iso` string (for the text faces, which print minutes)."""
    import datetime
    return int(datetime.datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp())


# a length written in the law: `30m`, `2h`, `45s`, `1d` or seconds (compiled on first use)
_DURATION = r"(\d{1,18})\s*([smhd]?)"
_DURATION_UNITS = {"": 1, **dict(_UNITS)}   # a bare number is seconds


def parse_duration(value: object) -> int | None:
    """Seconds in `30m`, `2h`, `45s`, `1d` or a bare number of seconds; None if unreadable."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if value > 0 else None
    m = re.fullmatch(_DURATION, str(value).strip())
    if not m or int(m.group(1)) == 0:
        return None
    return int(m.group(1)) * _DURATION_UNITS[m.group(2)]
