"""git's output read as it comes (`Git.stream`, `Git.stream_batches`, `Git.log_records`): the
caller works while git is still writing."""

from __future__ import annotations

import os

from gitstate.errors import GitFailure
from gitstate.git.runner import _COMMIT_ID, _GLOBAL_OPTIONS, _READ_OPTIONS, _plain

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator

    from gitstate.git.runner import Git


def started(git: Git, args: tuple[str, ...], sep: bytes) -> Iterator[list[bytes]]:
    """`git args...` started now; its stdout's records (split on `sep`) a list at a time, read
    as the caller iterates."""
    import subprocess
    import tempfile
    err = tempfile.TemporaryFile()
    try:
        # GIT_FLUSH=0: git log flushes after every commit when writing to a pipe, a
        # system call per record (a third of the time of a long log); full buffers
        # still arrive as git walks
        proc = subprocess.Popen(["git", *_GLOBAL_OPTIONS, *_READ_OPTIONS, *args],
                                cwd=git.cwd,
                                stdout=subprocess.PIPE, stderr=err,
                                env=git._env({"GIT_FLUSH": "0"}))
    except BaseException:
        err.close()
        raise
    assert proc.stdout is not None
    _widen(proc.stdout.fileno())
    return _batches(proc, err, args, sep)


def _widen(fd: int) -> None:
    """Let git write up to 1 MiB ahead of a reader (Linux pipes hold 64 KiB): a reading thread
    that waits for Python's lock meanwhile no longer stops git's walk."""
    try:
        import fcntl
        fcntl.fcntl(fd, fcntl.F_SETPIPE_SZ, 1 << 20)
    except (ImportError, AttributeError, OSError):
        pass   # the pipe keeps its size: slower, not wrong


def _batches(proc, err, args: tuple[str, ...], sep: bytes) -> Iterator[list[bytes]]:
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
            raise GitFailure(_plain(err.read(), args), where=f"git {args[0]}")


def records(stream: Iterator[bytes], n: int) -> Iterator[list[str]]:
    for raw in stream:
        parts = raw.decode("utf-8", "replace").lstrip("\n").split("\n", n - 1)
        if len(parts) == n and _COMMIT_ID(parts[0]):
            yield parts
