"""git's talks with a remote (push, fetch, ls-remote) bounded in time: a hub or a network
that stops answering costs a move its landing, never its caller a hang (a runtime's hook, a
lead's command)."""

from __future__ import annotations

import contextlib
import subprocess
import time

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


def waited(proc: subprocess.Popen, deadline: float, argv: list[str]) -> tuple[int, bytes]:
    """(exit code, b"") of git talking to a remote, or (124, why) when `deadline`
    (time.monotonic()) passed first: then git alone is killed (a local hub's receive-pack
    ends on its own, releasing its locks)."""
    try:
        return proc.wait(timeout=max(0.0, deadline - time.monotonic())), b""
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        said = f"git {remote_command(argv[1:])} got no answer in time: the hub or the " \
               "network did not answer"
        return 124, said.encode()
