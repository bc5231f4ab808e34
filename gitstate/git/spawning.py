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
    import subprocess
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
    `deadline`, git is ended (SIGKILL, git alone) when it passes: 124."""
    import subprocess
    import tempfile
    with tempfile.TemporaryFile() as fin, tempfile.TemporaryFile() as fout, \
            tempfile.TemporaryFile() as ferr:
        if input:
            fin.write(input)
            fin.seek(0)
        try:
            proc = subprocess.Popen(argv, stdin=fin, stdout=fout, stderr=ferr, env=env)
        except OSError as exc:
            raise GitFailure(f"cannot run git: {exc.strerror}",
                             hint="install git and make sure it is on PATH") from None
        if deadline is None:
            code = proc.wait()
        else:
            code, said = waited(proc, deadline, argv)
            if said:
                return code, b"", said
        fout.seek(0)
        ferr.seek(0)
        return code, fout.read(), ferr.read()


def waited(proc: subprocess.Popen, deadline: float, argv: list[str]) -> tuple[int, bytes]:
    """(exit code, b"") of git talking to a remote, or (124, why) when `deadline`
    (time.monotonic()) passed first: then git alone is killed (a local hub's receive-pack
    ends on its own, releasing its locks)."""
    if _ends_by(proc, deadline):
        return proc.wait(), b""
    proc.kill()
    proc.wait()
    said = f"git {remote_command(argv[1:])} got no answer in time: the hub or the " \
           "network did not answer"
    return 124, said.encode()


def _ends_by(proc: subprocess.Popen, deadline: float) -> bool:
    """Does `proc` end before `deadline`? Told by the kernel the moment it ends (a pidfd):
    `Popen.wait(timeout)` polls with sleeps of up to 50 ms, which a push and the ls-remote
    before it paid in wall time on every landing."""
    import select
    try:
        fd = os.pidfd_open(proc.pid)
    except (AttributeError, OSError):   # no pidfd (not Linux, or before 5.3): poll
        import subprocess
        try:
            proc.wait(timeout=max(0.0, deadline - time.monotonic()))
            return True
        except subprocess.TimeoutExpired:
            return False
    try:
        poller = select.poll()
        poller.register(fd, select.POLLIN)
        while True:
            left = deadline - time.monotonic()
            if poller.poll(max(0, int(left * 1000) + 1)):
                return True
            if left <= 0:
                return False
    finally:
        os.close(fd)
