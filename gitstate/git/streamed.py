"""git's output read as it comes (`Git.stream`, `Git.stream_batches`, `Git.log_records`): the
caller works while git is still writing."""

from __future__ import annotations

import os

from gitstate.errors import GitFailure

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator


def started(argv: list[str], cwd: str | None, env: dict[str, str], args: tuple[str, ...],
            sep: bytes, plain: Callable[[bytes, tuple[str, ...]], str]
            ) -> Iterator[list[bytes]]:
    """git (`argv`, which ends with `args`) started now; its stdout's records (split on
    `sep`) a list at a time, read as the caller iterates; its failure in `plain` words."""
    import subprocess
    import tempfile
    err = tempfile.TemporaryFile()
    try:
        proc = subprocess.Popen(argv, cwd=cwd, stdout=subprocess.PIPE, stderr=err, env=env)
    except BaseException:
        err.close()
        raise
    assert proc.stdout is not None
    _widen(proc.stdout.fileno())
    return _batches(proc, err, args, sep, plain)


def _widen(fd: int) -> None:
    """Let git write up to 1 MiB ahead of a reader (Linux pipes hold 64 KiB): a reading thread
    that waits for Python's lock meanwhile no longer stops git's walk."""
    try:
        import fcntl
        fcntl.fcntl(fd, fcntl.F_SETPIPE_SZ, 1 << 20)
    except (ImportError, AttributeError, OSError):
        pass   # the pipe keeps its size: slower, not wrong


def _batches(proc, err, args: tuple[str, ...], sep: bytes, plain) -> Iterator[list[bytes]]:
    """A started git's stdout split on `sep`, a read at a time; its exit checked at the end."""
    with err:
        fd = proc.stdout.fileno()
        rest = b""
        try:
            while True:
                chunk = os.read(fd, 1 << 20)
                if not chunk:
                    break
                parts = (rest + chunk).split(sep)
                rest = parts.pop()
                if parts:
                    yield parts
            if rest:
                yield [rest]
        finally:
            proc.stdout.close()
            code = proc.wait()
        if code != 0:
            err.seek(0)
            raise GitFailure(plain(err.read(), args), where=f"git {args[0]}")


def records(stream: Iterator[bytes], n: int, commit_id) -> Iterator[list[str]]:
    for raw in stream:
        parts = raw.decode("utf-8", "replace").lstrip("\n").split("\n", n - 1)
        if len(parts) == n and commit_id(parts[0]):
            yield parts
