"""git's talks with a remote (push, fetch, ls-remote) bounded in time: a hub or a network
that stops answering costs a move its landing, never its caller a hang (a runtime's hook, a
lead's command)."""

from __future__ import annotations

import contextlib
import subprocess
import tempfile
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


def spawn_bounded(argv: list[str], input: bytes | None, env: dict[str, str],
                  deadline: float) -> tuple[int, bytes, bytes]:
    """git talking to a remote, ended when `deadline` (time.monotonic()) passes: SIGKILL to git
    alone (a local hub's receive-pack then ends on its own, releasing its locks), exit code 124
    and why. Its output goes to files, so nothing git leaves running holds a pipe open."""
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
        try:
            code = proc.wait(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            said = f"git {remote_command(argv[1:])} got no answer in time: the hub or the " \
                   "network did not answer"
            return 124, b"", said.encode()
        fout.seek(0)
        ferr.seek(0)
        return code, fout.read(), ferr.read()
