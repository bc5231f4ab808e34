"""A progress line for long reads of history (a cold index over a long history, situations):
shown on a terminal's stderr when the command line enables it, never when piped or under
`--json`; erased once the answer comes."""

from __future__ import annotations

EVERY = 5000
_stream = None
_shown = False


def enable(stream) -> None:
    global _stream
    _stream = stream


def tick(what: str, count: int) -> None:
    """Say how far `what` has got, every EVERY steps."""
    global _shown
    if _stream is not None and count % EVERY == 0:
        _stream.write(f"\r{what}: {count:,} ...")
        _stream.flush()
        _shown = True


def done() -> None:
    global _shown
    if _stream is not None and _shown:
        _stream.write("\r\033[K")
        _stream.flush()
        _shown = False
