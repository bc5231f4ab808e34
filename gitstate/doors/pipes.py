"""The lander's long-lived git processes: objects read, replayed commits written, and "is
this commit on the branch?" answered, each without a process per question (doors/batch.py)."""

from __future__ import annotations

import os
import subprocess
from collections import deque
from pathlib import Path

from gitstate.git.runner import Git

WALK = 512        # commits of the branch's history read in-process to answer "is it on it?"


class Objects:
    """One long-lived `git cat-file --batch-command`: each object, or its size, in one
    round trip through a pipe instead of a process."""

    def __init__(self, git: Git):
        argv = ["git", "--no-replace-objects"] + (["-C", git.cwd] if git.cwd else []) \
            + ["cat-file", "--batch-command"]
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     env=git._env(None))

    def _ask(self, command: str, name: str) -> tuple[str, str, int] | None:
        if "\n" in name or not name:
            return None
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(f"{command} {name}\n".encode())
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError("git cat-file stopped")
        header = line.split()
        if line.endswith((b" missing\n", b" ambiguous\n")) or len(header) != 3 \
                or not header[2].isdigit():
            return None
        return header[0].decode(), header[1].decode(), int(header[2])

    def info(self, name: str) -> tuple[str, str, int] | None:
        """(id, type, size) of the object `name` names (`rev`, `rev:path`), or None."""
        return self._ask("info", name)

    def read(self, name: str) -> tuple[str, str, bytes] | None:
        found = self._ask("contents", name)
        if found is None:
            return None
        assert self.proc.stdout is not None
        data = self.proc.stdout.read(found[2] + 1)[:-1]
        return found[0], found[1], data

    def close(self) -> None:
        if self.proc.stdin:
            self.proc.stdin.close()
        self.proc.wait()


class Commits:
    """One long-lived `git hash-object -w -t commit --stdin-paths`: each replayed commit
    written without a process of its own."""

    def __init__(self, git: Git, scratch: Path):
        self.git, self.scratch = git, scratch
        self.proc: subprocess.Popen | None = None
        self.count = 0

    def write(self, body: bytes) -> str:
        if self.proc is None:
            argv = ["git", "--no-replace-objects"] + (["-C", self.git.cwd] if self.git.cwd
                                                      else []) \
                + ["hash-object", "-w", "-t", "commit", "--no-filters", "--stdin-paths"]
            self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                         env=self.git._env(None))
        self.count += 1
        path = self.scratch / f".commit.{os.getpid()}.{self.count}"
        path.write_bytes(body)
        try:
            assert self.proc.stdin is not None and self.proc.stdout is not None
            self.proc.stdin.write(str(path).encode() + b"\n")
            self.proc.stdin.flush()
            oid = self.proc.stdout.readline().decode().strip()
        finally:
            path.unlink(missing_ok=True)
        if not is_oid(oid):
            raise RuntimeError("git hash-object did not write the replayed commit")
        return oid

    def close(self) -> None:
        if self.proc is not None:
            assert self.proc.stdin is not None
            self.proc.stdin.close()
            self.proc.wait()


class Reach:
    """Is a commit on the branch's history at `tip` (or on the chain the pass adds to it)?
    The newest `WALK` commits are read in-process; git is asked only beyond them."""

    def __init__(self, git: Git, objects: Objects, tip: str):
        self.git, self.objects, self.tip = git, objects, tip
        self.seen = {tip}
        self.frontier = deque([tip])

    def holds(self, sha: str, chain: set[str]) -> bool:
        if sha in chain or sha in self.seen:
            return True
        while self.frontier and len(self.seen) < WALK:
            got = self.objects.read(self.frontier.popleft())
            for parent in parents_of(got[2]) if got and got[1] == "commit" else []:
                if parent not in self.seen:
                    self.seen.add(parent)
                    self.frontier.append(parent)
            if sha in self.seen:
                return True
        if not self.frontier:
            return False   # the whole history read
        return self.git.ok("merge-base", "--is-ancestor", sha, self.tip)


def parents_of(raw: bytes) -> list[str]:
    head = raw.partition(b"\n\n")[0]
    return [line[7:].decode() for line in head.split(b"\n") if line.startswith(b"parent ")]


def is_oid(text: str) -> bool:
    return len(text) in (40, 64) and all(c in "0123456789abcdef" for c in text)
