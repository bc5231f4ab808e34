"""One `git cat-file --batch` kept open for a whole command: a move reads its law, the agent's
committed and staged file and what the judge asks through it, where each read was once a git
process of its own (bench/move_cost.py, issue 39).

What it answers is what a fresh `cat-file --batch` would: git resolves a revision's name
(`HEAD:path`) anew at each question, finds objects written since it started, and looks for
new packs when one is missing. Only the index is read once by a running git: a question about
it (`:path`) is asked of a fresh process whenever the index file is not the one the kept
process may have read (git writes a new index by renaming a new file over it), and never
where `GIT_INDEX_FILE` names the index (git resolves a relative one from elsewhere).
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import BinaryIO

# Questions are written before any answer is read: kept within what a pipe holds, so that
# writing never waits on git, which waits on its answers being read. More is asked of a
# process of its own.
MAX_ASKED = 4096   # one page: the least a pipe holds (git/runner.py `_LIGHT_INPUT_MAX`)


def index_stamp(git_dir: str | None, env: dict[str, str]) -> tuple | None:
    """What tells this index file from any other written over it: its file's identity and
    times, and the checksum git ends it with (a new index may reuse the inode within one tick
    of the clock); None where it cannot be told (no git dir known, or `GIT_INDEX_FILE` set)."""
    if git_dir is None or env.get("GIT_INDEX_FILE"):
        return None
    try:
        with open(os.path.join(git_dir, "index"), "rb") as fh:
            st = os.fstat(fh.fileno())
            fh.seek(max(0, st.st_size - 32))
            tail = fh.read(32)
    except FileNotFoundError:
        return ()
    except OSError:
        return None
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns, tail)


class Kept:
    """A running `git cat-file --batch` and the index it may have read (`stamp`). Started
    as git/runner.py starts git, without the `subprocess` module (a move imports none)."""

    def __init__(self, argv: list[str], env: dict[str, str]):
        in_r, in_w = os.pipe()
        out_r, out_w = os.pipe()
        null = os.open(os.devnull, os.O_WRONLY)
        actions: list[tuple[int, ...]] = [
            (os.POSIX_SPAWN_DUP2, in_r, 0), (os.POSIX_SPAWN_DUP2, out_w, 1),
            (os.POSIX_SPAWN_DUP2, null, 2)]   # (close-on-exec, all: runner.py's _spawn_light)
        try:
            self.pid: int | None = os.posix_spawnp(argv[0], argv, env, file_actions=actions)
        except OSError:
            self.pid = None
            os.close(in_w)
            os.close(out_r)
        finally:
            for fd in (in_r, out_w, null):
                os.close(fd)
        self._in = in_w if self.pid else -1
        self._out: BinaryIO | None = os.fdopen(out_r, "rb") if self.pid else None
        self.stamp: tuple | None = None   # the index as it was when first asked about

    def ask(self, asked: bytes, count: int) -> bytes | None:
        """The answers to `count` questions (the raw `--batch` output, each answered whole);
        None when git stopped answering (asked again of a process of its own, which says
        why)."""
        if self.pid is None or self._out is None:
            return None
        try:
            view = memoryview(asked)
            while view:
                view = view[os.write(self._in, view):]
            found = _answers(self._out, count)
        except (OSError, ValueError):
            found = None
        if found is None:
            self.close()
        return found

    def close(self) -> None:
        """End the kept process: git stops at the end of its questions."""
        pid, self.pid = self.pid, None
        if pid is None:
            return
        os.close(self._in)
        if self._out is not None:
            self._out.close()
        os.waitpid(pid, 0)


def _answers(out, count: int) -> bytes | None:
    chunks = []
    for _ in range(count):
        header = out.readline()
        if not header.endswith(b"\n"):
            return None
        chunks.append(header)
        if header.endswith((b" missing\n", b" ambiguous\n")):
            continue
        size = int(header.split()[2])
        body = out.read(size + 1)
        if len(body) != size + 1:
            return None
        chunks.append(body)
    return b"".join(chunks)


def kept_answers(git, asked: bytes, specs: list[str], argv: list[str]) -> bytes | None:
    """`cat-file --batch`'s answers to `specs` (`asked`, a line each) from the command's
    kept process (`argv`: git and its global options); None where a process of their own
    must answer."""
    if len(asked) > MAX_ASKED or not hasattr(os, "posix_spawnp"):
        return None
    stamp = git.index_stamp() if any(s.startswith(":") for s in specs) else False
    if stamp is None:
        return None
    if git._kept is not None and stamp is not False and git._kept.stamp not in (None, stamp):
        git.close()   # the index was written since the kept git may have read it
    if git._kept is None:
        import weakref

        git._kept = Kept([*argv, *(["-C", git.cwd] if git.cwd else []), "cat-file", "--batch"],
                         git._env(None))
        weakref.finalize(git, git._kept.close)
    if stamp is not False and git._kept.stamp is None:
        git._kept.stamp = stamp
    return git._kept.ask(asked, len(specs))


def bounded(git, specs: list[str], max_size: int) -> list:
    """`Git.cat_batch` with `max_size`: sizes asked first (`--batch-check`), and an object
    larger than that not read (an `Oversized` stands for it)."""
    from gitstate.law.limits import Oversized
    out = git.run("cat-file", "--batch-check",
                  input="".join(s + "\n" for s in specs).encode("utf-8", "surrogateescape"),
                  long_read=True)
    found: list = []
    small: list[tuple[int, str]] = []
    for i, header in enumerate(out.split(b"\n")[:len(specs)]):
        if header.endswith((b" missing", b" ambiguous")):
            found.append(None)
            continue
        sha, kind, size = header.decode().split()
        if int(size) <= max_size:
            found.append(None)   # read below
            small.append((i, sha))
        else:
            found.append((sha, kind, Oversized(sha, int(size))))
    for (i, _), got in zip(small, git.cat_batch(sha for _, sha in small)):
        found[i] = got
    return found
