"""Patterns the lifecycle is written with, each compiled or answered once: a move written
'from -> to', a state name matched by a pattern where '*' is the only special character, and
the paths of a layout's state files. Pure, and light: a hook asks them of every commit."""

from __future__ import annotations

import re

_GLOBS: dict[tuple[str, str], bool] = {}


def glob(pattern: str, name: str) -> bool:
    """Shell-style match where only '*' is special (state names have no other metacharacter).
    Remembered: every commit judged asks it of the approval patterns (a bounded memo, as
    names may come from any file)."""
    found = _GLOBS.get((pattern, name))
    if found is None:
        if len(_GLOBS) > 4096:
            _GLOBS.clear()
        found = _GLOBS[(pattern, name)] = re.fullmatch(
            ".*".join(re.escape(p) for p in pattern.split("*")), name) is not None
    return found


_PATH_RES: dict[str, re.Pattern] = {}


def state_path_regex(pattern: str) -> re.Pattern:
    """The regular expression of a layout's state-file paths (asked for every commit judged:
    made once per layout)."""
    found = _PATH_RES.get(pattern)
    if found is None:
        if len(_PATH_RES) > 64:   # a history of many layouts: keep it bounded
            _PATH_RES.clear()
        head, _, tail = pattern.partition("{id}")
        # \Z, not $: `agent/alice/_state.md<newline>` is no state file of alice
        found = _PATH_RES[pattern] = re.compile(
            f"^{re.escape(head)}(?P<id>[^/]+){re.escape(tail)}\\Z")
    return found


def parse_arrow(text: str) -> tuple[str, str] | None:
    """`"a -> b"` -> ("a", "b")."""
    if not isinstance(text, str) or "->" not in text:
        return None
    a, _, b = text.partition("->")
    a, b = a.strip(), b.strip()
    return (a, b) if a and b else None
