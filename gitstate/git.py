"""The one door to git. Every call to git goes through `Git.run`, which turns git's failures
into GitFailure with git's own words.

These are raw `git` subprocess calls on purpose: hooks run on every commit, and importing
GitPython alone costs more than the whole budget of a hook (see bench/README.md). GitPython
is used only where a command needs repository plumbing beyond this (`init`).
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Iterable, Iterator

from gitstate.errors import GitFailure, NotManaged

ZERO = "0" * 40
EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"


class Git:
    """git in one repository (`cwd` is any directory inside its work tree, or a bare repo)."""

    def __init__(self, cwd: str | os.PathLike | None = None, env: dict[str, str] | None = None):
        self.cwd = str(cwd) if cwd is not None else None
        self.env = env

    def _env(self, extra: dict[str, str] | None) -> dict[str, str] | None:
        if not extra and self.env is None:
            return None
        env = dict(os.environ if self.env is None else self.env)
        env.update(extra or {})
        return env

    def run(self, *args: str, input: bytes | None = None, env: dict[str, str] | None = None,
            check: bool = True) -> bytes:
        """stdout of `git args...`; GitFailure (with git's message) if it fails and `check`."""
        proc = subprocess.run(["git", *args], cwd=self.cwd, input=input, capture_output=True,
                              env=self._env(env))
        if check and proc.returncode != 0:
            raise GitFailure(_plain(proc.stderr, args), where=f"git {args[0]}")
        return proc.stdout

    def text(self, *args: str, **kw) -> str:
        return self.run(*args, **kw).decode("utf-8", "replace").strip()

    def ok(self, *args: str, env: dict[str, str] | None = None) -> bool:
        return subprocess.run(["git", *args], cwd=self.cwd, capture_output=True,
                              env=self._env(env)).returncode == 0

    def stream(self, *args: str) -> Iterator[bytes]:
        """Lines of a long-running git command's stdout, read as they come."""
        proc = subprocess.Popen(["git", *args], cwd=self.cwd, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, env=self._env(None))
        try:
            assert proc.stdout is not None
            yield from proc.stdout
        finally:
            proc.stdout.close()
            err = proc.stderr.read() if proc.stderr else b""
            if proc.wait() != 0:
                raise GitFailure(_plain(err, args), where=f"git {args[0]}")

    # -- where am I -------------------------------------------------------------------

    def toplevel(self) -> Path:
        return Path(self.text("rev-parse", "--show-toplevel"))

    def git_dir(self) -> Path:
        path = Path(self.text("rev-parse", "--absolute-git-dir"))
        return path

    def is_bare(self) -> bool:
        return self.text("rev-parse", "--is-bare-repository") == "true"

    # -- refs and objects ---------------------------------------------------------------

    def rev(self, rev: str) -> str | None:
        """The commit a revision names, or None (unborn HEAD, unknown name)."""
        out = subprocess.run(["git", "rev-parse", "-q", "--verify", f"{rev}^{{commit}}"],
                             cwd=self.cwd, capture_output=True, env=self._env(None))
        if out.returncode != 0:
            return None
        return out.stdout.decode().strip() or None

    def head(self) -> str | None:
        return self.rev("HEAD")

    def cat_files(self, specs: Iterable[str]) -> list[bytes | None]:
        """Contents of `rev:path` / `:path` objects in one `git cat-file --batch`; None if absent."""
        specs = list(specs)
        if not specs:
            return []
        for s in specs:
            if "\n" in s:
                raise GitFailure(f"a path with a newline cannot be read: {s!r}")
        out = self.run("cat-file", "--batch", input="".join(s + "\n" for s in specs).encode())
        results: list[bytes | None] = []
        pos = 0
        for _ in specs:
            nl = out.index(b"\n", pos)
            header = out[pos:nl]
            pos = nl + 1
            if header.endswith((b" missing", b" ambiguous")):
                results.append(None)
                continue
            _sha, kind, size = header.split()
            results.append(out[pos:pos + int(size)] if kind == b"blob" else None)
            pos += int(size) + 1
        return results

    def hash_object(self, data: bytes) -> str:
        return self.text("hash-object", "-w", "--stdin", input=data)

    def ls_tree_paths(self, rev: str, prefix: str = "") -> list[str]:
        args = ["ls-tree", "-r", "-z", "--name-only", rev]
        if prefix:
            args += ["--", prefix]
        return [p for p in self.run(*args).decode("utf-8", "surrogateescape").split("\0") if p]

    def index_paths(self, prefix: str = "") -> list[str]:
        args = ["ls-files", "-z", "--cached"]
        if prefix:
            args += ["--", prefix]
        return [p for p in self.run(*args).decode("utf-8", "surrogateescape").split("\0") if p]

    def staged_changes(self, base: str | None) -> list[str]:
        """Paths whose index entry differs from `base` (None: nothing committed yet)."""
        out = self.run("diff-index", "--cached", "-z", "--name-only", "--no-renames",
                       base or EMPTY_TREE)
        return [p for p in out.decode("utf-8", "surrogateescape").split("\0") if p]

    def config(self, key: str) -> str | None:
        out = subprocess.run(["git", "config", "--get", key], cwd=self.cwd, capture_output=True,
                             env=self._env(None))
        return out.stdout.decode().strip() if out.returncode == 0 else None


def _plain(stderr: bytes, args: tuple[str, ...]) -> str:
    """git's stderr made into one readable sentence."""
    lines = [ln.strip() for ln in stderr.decode("utf-8", "replace").splitlines() if ln.strip()]
    fatal = [ln.split(":", 1)[1].strip() if ln.startswith(("fatal:", "error:")) else ln
             for ln in lines if not ln.startswith("hint:")]
    text = "; ".join(fatal) or "git failed with no message"
    return text


def find_repo(path: str | os.PathLike | None = None) -> tuple[Git, Path, Path]:
    """(git, top of work tree, git dir) of the repository containing `path`."""
    git = Git(path)
    proc = subprocess.run(["git", "rev-parse", "--show-toplevel", "--absolute-git-dir"],
                          cwd=git.cwd, capture_output=True)
    lines = proc.stdout.decode().splitlines()
    if proc.returncode != 0 or len(lines) != 2:
        where = os.path.abspath(path or ".")
        raise NotManaged(f"not inside a git work tree: {where}",
                         hint="run `git init` first, then `gitstate init`")
    top = Path(lines[0])
    return Git(top), top, Path(lines[1])
