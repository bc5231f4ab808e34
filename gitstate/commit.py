"""Atomic commits made by gitstate itself (`spawn`, `transition`, `init`).

A commit is built with plumbing on a private copy of the index and published with a
compare-and-swap of HEAD (`git update-ref HEAD new old`). So:
- whatever the user staged goes into the same commit (work and state land together);
- if HEAD moves meanwhile (another agent committed), the swap fails, nothing is published, and
  the move is judged again against the new state and retried;
- a crash at any point leaves either the old HEAD or the new one, never a half-made commit;
  the real index is only touched after the commit is published, one entry at a time.

`prepare` is a callable that sees the current HEAD and returns what to write, so that a retry
(and later a push that lost a race) re-decides from the latest state instead of a stale one.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterator

from gitstate.errors import GitFailure, GitstateError, Rejected
from gitstate.git import Git

MAX_ATTEMPTS = 8


@dataclass
class Plan:
    """What one commit writes: path -> new bytes (None deletes), and its message."""

    files: dict[str, bytes | None]
    message: str
    info: dict = field(default_factory=dict)   # handed back to the caller in the result
    executable: frozenset[str] = frozenset()    # paths committed with mode 100755

    def mode(self, path: str) -> str:
        return "100755" if path in self.executable else "100644"


@dataclass
class Result:
    sha: str
    parent: str | None
    plan: Plan


def git_dir(git: Git) -> Path:
    return Path(git.text("rev-parse", "--absolute-git-dir"))


@contextlib.contextmanager
def repo_lock(gdir: Path) -> Iterator[None]:
    """Serialise gitstate writers in one repository. The OS drops the lock if we die."""
    lock_dir = gdir / "gitstate"
    lock_dir.mkdir(exist_ok=True)
    with open(lock_dir / "lock", "a+") as fh:
        try:
            import fcntl
        except ImportError:  # no flock (Windows): the compare-and-swap alone keeps us safe
            yield
            return
        fcntl.flock(fh.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh.fileno(), fcntl.LOCK_UN)


def commit_atomically(git: Git, top: Path, prepare: Callable[[str | None], Plan],
                      *, reflog: str = "gitstate") -> Result:
    """Build and publish one commit on HEAD; retry from `prepare` if HEAD moved meanwhile."""
    gdir = git_dir(git)
    with repo_lock(gdir):
        for _ in range(MAX_ATTEMPTS):
            parent = git.head()
            plan = prepare(parent)
            for path in plan.files:
                safe_path(top, path)
            sha = _build(git, gdir, parent, plan)
            subject = plan.message.split("\n", 1)[0]
            if git.ok("update-ref", "-m", f"{reflog}: {subject}", "HEAD", sha, parent or ""):
                _sync_index_and_tree(git, top, plan)
                return Result(sha=sha, parent=parent, plan=plan)
        raise GitFailure(f"HEAD kept moving while committing ({MAX_ATTEMPTS} attempts); "
                         "nothing was committed", hint="try again")


def _index_file(git: Git, gdir: Path) -> Path:
    env_index = os.environ.get("GIT_INDEX_FILE")
    return Path(env_index) if env_index else gdir / "index"


def _build(git: Git, gdir: Path, parent: str | None, plan: Plan) -> str:
    """The commit object for `plan` on top of `parent` and the current index (not published)."""
    tmp = gdir / "gitstate" / f"index.{os.getpid()}.tmp"
    real = _index_file(git, gdir)
    try:
        if real.exists():
            shutil.copyfile(real, tmp)
        env = {"GIT_INDEX_FILE": str(tmp)}
        if parent is None and not real.exists():
            git.run("read-tree", "--empty", env=env)
        infos = []
        for path, data in plan.files.items():
            if data is None:
                infos.append(f"0 {'0' * 40}\t{path}")
            else:
                infos.append(f"{plan.mode(path)} {git.hash_object(data)}\t{path}")
        git.run("update-index", "--index-info", input=("\n".join(infos) + "\n").encode(), env=env)
        tree = git.text("write-tree", env=env)
        args = ["commit-tree", tree] + (["-p", parent] if parent else []) + ["-F", "-"]
        return git.text(*args, input=plan.message.encode())
    finally:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()


def _sync_index_and_tree(git: Git, top: Path, plan: Plan) -> None:
    """After publishing: the real index and work tree take the committed files."""
    infos = []
    for path, data in plan.files.items():
        target = safe_path(top, path)
        if data is None:
            infos.append(f"0 {'0' * 40}\t{path}")
            with contextlib.suppress(FileNotFoundError):
                target.unlink()
            continue
        write_file(target, data, executable=path in plan.executable)
        infos.append(f"{plan.mode(path)} {git.hash_object(data)}\t{path}")
    payload = ("\n".join(infos) + "\n").encode()
    for attempt in range(40):
        # git's own index.lock may be held for a moment by another git command
        if _update_index(git, payload):
            return
        time.sleep(0.025 * (attempt + 1))
    raise GitFailure("the commit was made, but the index stayed locked by another git command; "
                     "run `git reset -q -- " + " ".join(plan.files) + "` to refresh it")


def _update_index(git: Git, payload: bytes) -> bool:
    try:
        git.run("update-index", "--index-info", input=payload)
        return True
    except GitFailure as exc:
        if "index.lock" in exc.message:
            return False
        raise


def safe_path(top: Path, relpath: str) -> Path:
    """`top/relpath`, refusing anything that would land outside the repository."""
    parts = relpath.split("/")
    if relpath.startswith("/") or any(p in ("", ".", "..") for p in parts) or "\\" in relpath:
        raise GitstateError(f"refusing to write {relpath!r}: not a plain path inside the "
                            "repository")
    target = top.joinpath(*parts)
    real_top = top.resolve()
    real_parent = target.parent.resolve()
    if real_parent != real_top and real_top not in real_parent.parents:
        raise GitstateError(f"refusing to write {relpath!r}: it leads outside the repository "
                            f"(through a link to {real_parent})")
    if target.is_symlink():
        raise GitstateError(f"refusing to write {relpath!r}: it is a symbolic link")
    return target


def write_file(target: Path, data: bytes, *, executable: bool = False) -> None:
    """Write atomically: a reader sees the old file or the new one, never half of it."""
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    tmp.write_bytes(data)
    if executable:
        tmp.chmod(0o755)
    os.replace(tmp, target)


def reject_if(violations: list, action: str = "commit") -> None:
    if violations:
        raise Rejected(violations, action=action)
