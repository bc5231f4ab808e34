"""How full the model's context is, measured from the runtime's own transcript
(docs/how-to/claude-code.md, the context hook; era's "fourth wall" in docs/how-to/presets.md:
the system measures, the agent does not guess).

Claude Code writes the session as JSON lines; each assistant turn carries the API's `usage`.
The prompt of the latest turn is `input_tokens + cache_read_input_tokens +
cache_creation_input_tokens`; against the model's window it is the context used.
"""

from __future__ import annotations

import json
import os

# Context windows of known models, by id prefix (longest prefix wins). A model run with the
# 1M-token window says so in its id ("[1m]"); `policies.context_window` overrides the table.
KNOWN_WINDOWS = {
    "claude-": 200_000,
    "claude-3": 200_000,
    "claude-opus-4": 200_000,
    "claude-sonnet-4": 200_000,
    "claude-haiku-4": 200_000,
}
LONG_CONTEXT_MARK = "[1m]"
TAIL = 256 * 1024   # how much of the transcript's end is read: the latest turn is there


def window_of(model: str | None, policy: int | None = None) -> int | None:
    if policy:
        return int(policy)
    if not model:
        return None
    if LONG_CONTEXT_MARK in model.lower():
        return 1_000_000
    return known_window(model, KNOWN_WINDOWS)


def known_window(model: str | None, windows: dict[str, int]) -> int | None:
    """The window of the longest beginning of `model`'s name that `windows` knows."""
    best = max((p for p in windows if model and model.startswith(p)), key=len, default=None)
    return windows[best] if best else None


def latest_usage(path: str, tool_use_id: str | None = None) -> tuple[int, str | None] | None:
    """(prompt tokens, model) of the latest main-thread assistant turn, or None.

    With `tool_use_id` (the tool call a PostToolUse hook follows), of the turn that made that
    call: Claude Code writes the transcript a moment after it runs the hook, so a transcript
    whose turns do not show the call yet is read again, every WAIT_STEP seconds for at most
    WAIT seconds; past that (a transcript that never names its calls), the latest turn (and
    the context hook stops waiting for that session)."""
    import time
    deadline = None
    while True:
        found = _usage(path, tool_use_id)
        if found is not _BEHIND:
            return found
        now = time.monotonic()
        deadline = deadline or now + WAIT
        if now >= deadline:
            return _usage(path, None)
        time.sleep(WAIT_STEP)


WAIT, WAIT_STEP = 2.0, 0.01
_BEHIND = (-1, None)


def _usage(path: str, tool_use_id: str | None):
    mark = json.dumps(tool_use_id).encode() if tool_use_id else None
    for raw in reversed(tail_lines(path)):
        found = _line_usage(raw, mark)
        if found is not None:
            return found
    return None


def _line_usage(raw: bytes, mark: bytes | None):
    """(prompt tokens, model) of a line that is a main-thread assistant turn that made the
    call `mark` names (or any, without a mark); _BEHIND for one that did not; else None."""
    if b'"usage"' not in raw or b'"assistant"' not in raw:
        return None
    if mark is not None and mark not in raw:
        if b'"isSidechain":true' in raw.replace(b" ", b""):
            return None
        return _BEHIND   # the main thread's latest turn is not the call's yet
    return _turn(raw)


def _turn(raw: bytes) -> tuple[int, str | None] | None:
    """(prompt tokens, model) of a line that is a main-thread assistant turn, else None."""
    try:
        entry = json.loads(raw)
    except ValueError:
        return None
    if not _main_turn(entry):
        return None
    message = entry.get("message") or {}
    usage = message.get("usage") if isinstance(message, dict) else None
    if not isinstance(usage, dict):
        return None
    return _prompt_tokens(usage), message.get("model")


def _main_turn(entry) -> bool:
    return isinstance(entry, dict) and entry.get("type") == "assistant" \
        and not entry.get("isSidechain")


def _prompt_tokens(usage: dict) -> int:
    return sum(int(usage.get(k) or 0) for k in (
        "input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens"))


def tail_lines(path: str | None) -> list[bytes]:
    """The whole lines of a transcript's last TAIL bytes (none when it cannot be read): a
    runtime's newest response is there."""
    found = _read_tail(path) if path else None
    if found is None:
        return []
    start, chunk = found
    lines = chunk.splitlines()
    return lines[1:] if start else lines   # the first line may be cut


def share(tokens: int, window: int | None) -> tuple[float, int, int] | None:
    """(context %, tokens, window): the share of the window used (None without a window)."""
    if not window:
        return None
    # a transcript may count more than the window holds (a wrong window guess, a compaction
    # not yet seen): the share of the window used is at most all of it
    return min(100.0, round(100.0 * tokens / window, 1)), tokens, window


def _read_tail(path: str) -> tuple[int, bytes] | None:
    """(offset, bytes) of the last TAIL bytes of a regular file, or None. The path comes from
    the runtime's event, which anyone can write: a FIFO would block an open for reading, a
    device such as /dev/zero never ends. Opened without blocking, refused unless regular,
    and never read past TAIL."""
    import stat
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0))
    except (OSError, ValueError):
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return None
        start = max(0, info.st_size - TAIL)
        os.lseek(fd, start, os.SEEK_SET)
        chunks, left = [], TAIL
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 16))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        return start, b"".join(chunks)
    except OSError:
        return None
    finally:
        os.close(fd)


def measure(path: str | None, policy_window: int | None = None,
            model_hint: str | None = None,
            tool_use_id: str | None = None) -> tuple[float, int, int] | None:
    """(context %, tokens, window) from a transcript, or None if it cannot be told."""
    if not path:
        return None
    found = latest_usage(path, tool_use_id)
    if found is None:
        return None
    tokens, model = found
    return share(tokens, window_of(model or model_hint, policy_window))
