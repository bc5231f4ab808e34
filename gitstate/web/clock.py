"""Times as the viewer reads them: every time it shows goes through `epoch`, which takes what
the views give (seconds since the epoch, an ISO 8601 string, or a {"sha", "time"} commit), so
that a page never depends on one shape of a time."""

from __future__ import annotations

import datetime


def epoch(value) -> int | None:
    """Seconds since the epoch of `value` (a number, an ISO 8601 text, or a commit dict with a
    "time"); None when it holds no time."""
    if isinstance(value, dict):
        value = value.get("time")
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return int(value)
    if isinstance(value, str):
        return _epoch_of_text(value)
    return None


def _epoch_of_text(value: str) -> int | None:
    """An ISO 8601 moment (in UTC when it names no zone), or digits."""
    try:
        moment = datetime.datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return int(value) if value.isdigit() else None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=datetime.UTC)
    return int(moment.timestamp())


_HEX = frozenset("0123456789abcdef")


def sha_of(value) -> str | None:
    """The commit id of `value` (a sha, or a commit dict with "sha" or "commit"); None for
    anything else (a bare time has no commit)."""
    if isinstance(value, dict):
        value = value.get("sha") or value.get("commit")
    if isinstance(value, str) and 7 <= len(value) <= 64 and _HEX.issuperset(value):
        return value
    return None
