"""What a move writes into a state file besides its state: `--set K=V` values, and the
time stamps."""

from __future__ import annotations

import re
from datetime import UTC, datetime

from gitstate.errors import InvalidFile, UsageError
from gitstate.law.statekeys import KEYS, NUMBERS, SET

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

_SET_KEY = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]*$")
PROTECTED_KEYS = {k.name: k.refused for k in KEYS if SET not in k.by}   # key -> why not


def first_few(items: list[str], n: int) -> str:
    """The first `n` of `items`, and how many more there are."""
    return ", ".join(items[:n]) + (f" and {len(items) - n} more" if len(items) > n else "")


def now_iso(precise: bool = False) -> str:
    now = datetime.now(UTC)
    return (now if precise else now.replace(microsecond=0)).isoformat().replace("+00:00", "Z")


def parse_sets(pairs: tuple[str, ...] | list[str]) -> dict[str, Any]:
    """`--set K=V` pairs: `null` clears K, the numeric keys take numbers, the rest is text.
    A `pid` is recorded with its `host` (this one unless given) and its start
    (`pid_started`), so that no later process with the same pid is taken for it."""
    out: dict[str, Any] = dict(_read_pair(pair) for pair in pairs)
    if "pid" in out:
        _stamp_pid(out)
    return out


def _read_pair(pair: str) -> tuple[str, Any]:
    key, sep, raw = pair.partition("=")
    key = key.strip()
    if not sep or not _SET_KEY.match(key):
        raise UsageError(f"--set takes KEY=VALUE, got {pair!r}")
    if key in PROTECTED_KEYS:
        raise UsageError(f"--set {key}=... is not allowed: {PROTECTED_KEYS[key]}")
    return key, _read_value(raw, key)


def _stamp_pid(out: dict[str, Any]) -> None:
    """A pid means a process of this host unless said otherwise: its `host` and start."""
    from gitstate.moves.processes import stamp
    if isinstance(out["pid"], int) and "host" not in out:
        import socket
        out["host"] = socket.gethostname()
    out.setdefault("pid_started", stamp(out["pid"], out.get("host")))


NUMERIC_KEYS = frozenset(k.name for k in KEYS if k.type in NUMBERS)


def _read_value(raw: str, key: str) -> Any:
    """Empty, `null` or `~` clears a key; the known numeric keys take numbers; anything else
    is text exactly as given (`thread=007` stays "007", `model=4.10` stays "4.10")."""
    if raw.strip() in ("", "null", "~"):
        return None
    if key not in NUMERIC_KEYS:
        return raw
    from gitstate.law import yamlio  # PyYAML for a number given: a move imports it no more
    try:
        value, _ = yamlio.load(raw, where=f"--set {key}")
    except InvalidFile:
        return raw
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) else raw
