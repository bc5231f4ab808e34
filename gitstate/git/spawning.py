"""git processes that write to files rather than pipes (long reads), and git's talks with a
remote (push, fetch, ls-remote) bounded in time: a hub or a network that stops answering
costs a move its landing, never its caller a hang (a runtime's hook, a lead's command)."""

from __future__ import annotations

import contextlib
import os
import time

from gitstate.errors import GitFailure

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Protocol

    class Git(Protocol):   # gitstate.git.runner.Git, which imports this module
        deadline: float | None

NETWORK = frozenset({"push", "fetch", "ls-remote", "pull"})


@contextlib.contextmanager
def bounded(git: Git, seconds: float) -> Iterator[None]:
    """Within this block, `git`'s talks with a remote end `seconds` from now at the latest."""
    before, git.deadline = git.deadline, time.monotonic() + seconds
    try:
        yield
    finally:
        git.deadline = before


def remote_command(args: tuple[str, ...] | list[str]) -> str | None:
    """The git command `args` run, when it talks with a remote (after `-c NAME=VALUE`)."""
    i = 0
    while i < len(args) and args[i].startswith("-"):
        i += 2 if args[i] in ("-c", "-C") else 1
    return args[i] if i < len(args) and args[i] in NETWORK else None


def spawn_to_files(argv: list[str], input: bytes | None, env: dict[str, str],
                   deadline: float | None = None) -> tuple[int, bytes, bytes]:
    """A long read: git reads its input from a file and writes its output to files. A thread
    waiting on pipes takes Python's lock back after every read and write (32 KiB out, 4 KiB
    in), up to 5 ms each while another thread judges (`sys.getswitchinterval`); waiting
    on the process alone takes it back once (bench/README.md, "Near the floor"). With a
    `deadline`, git is ended (SIGKILL, git alone) when it passes: 124. Started with
    `posix_spawn` and files of no name, as `subprocess` and `tempfile` would start it and
    make them (a move imports neither: ~8 ms of its start)."""
    files: list[int] = []
    try:
        while len(files) < 3:
            files.append(_unnamed())
        fin, fout, ferr = files
        if input:
            view = memoryview(input)
            while view:
                view = view[os.write(fin, view):]
            os.lseek(fin, 0, os.SEEK_SET)
        pid = _spawned(argv, env, files)
        if deadline is None:
            code = _exit_code(pid)
        else:
            code, said = waited(pid, deadline, argv)
            if said:
                return code, b"", said
        return code, _read_all(fout), _read_all(ferr)
    finally:
        for fd in files:
            os.close(fd)


def _unnamed() -> int:
    """A file of no name, open for reading and writing, gone when closed."""
    folder = os.environ.get("TMPDIR") or "/tmp"
    try:
        return os.open(folder, os.O_TMPFILE | os.O_RDWR, 0o600)
    except (AttributeError, OSError):   # no O_TMPFILE (not Linux, or its file system)
        import tempfile
        fh = tempfile.TemporaryFile()
        fd = os.dup(fh.fileno())
        fh.close()
        return fd


def _spawned(argv: list[str], env: dict[str, str], files: list[int]) -> int:
    """git started with `files` for its stdin, stdout and stderr, and SIGPIPE as git expects
    it (this Python ignores it, and exec keeps what is ignored)."""
    import signal
    actions: list[tuple[int, ...]] = [(os.POSIX_SPAWN_DUP2, fd, n) for n, fd in enumerate(files)]
    try:
        return os.posix_spawnp(argv[0], argv, env, file_actions=actions,
                               setsigdef=(signal.SIGPIPE, signal.SIGXFSZ))
    except OSError as exc:
        raise GitFailure(f"cannot run git: {exc.strerror}",
                         hint="install git and make sure it is on PATH") from None


def _exit_code(pid: int) -> int:
    return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])


def _read_all(fd: int) -> bytes:
    os.lseek(fd, 0, os.SEEK_SET)
    chunks = []
    while chunk := os.read(fd, 1 << 20):
        chunks.append(chunk)
    return b"".join(chunks)


def waited(pid: int, deadline: float, argv: list[str]) -> tuple[int, bytes]:
    """(exit code, b"") of git talking to a remote, or (124, why) when `deadline`
    (time.monotonic()) passed first: then git alone is killed (a local hub's receive-pack
    ends on its own, releasing its locks)."""
    code = _ended_by(pid, deadline)
    if code is not None:
        return code, b""
    import signal
    os.kill(pid, signal.SIGKILL)
    _exit_code(pid)
    said = f"git {remote_command(argv[1:])} got no answer in time: the hub or the " \
           "network did not answer"
    return 124, said.encode()


def _ended_by(pid: int, deadline: float) -> int | None:
    """The exit code of the process `pid` if it ends before `deadline`, else None (it runs
    on). Told by the kernel the moment it ends (a pidfd): polling with sleeps of up to 50 ms,
    as `Popen.wait(timeout)` does, cost a push and the ls-remote before it that much wall time
    on every landing."""
    import select
    try:
        fd = os.pidfd_open(pid)
    except (AttributeError, OSError):   # no pidfd (not Linux, or before 5.3): poll
        while True:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                return os.waitstatus_to_exitcode(status)
            if time.monotonic() >= deadline:
                return None
            time.sleep(0.005)
    try:
        poller = select.poll()
        poller.register(fd, select.POLLIN)
        while True:
            left = deadline - time.monotonic()
            if poller.poll(max(0, int(left * 1000) + 1)):
                return _exit_code(pid)
            if left <= 0:
                return None
    finally:
        os.close(fd)
