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
import json
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from gitstate.errors import GitFailure, GitstateError, Rejected
from gitstate.git.runner import Git, zero_like
from gitstate.git.writing import safe_path, write_file  # noqa: F401  (the moves' names)

MAX_ATTEMPTS = 8


class Plan:
    """What one commit writes: path -> new bytes (None deletes), and its message. (Plain
    classes, not `dataclasses`, which costs every move ~10 ms to import.)"""
    __slots__ = ("files", "message", "info", "executable", "with_staged", "sign", "key",
                 "judged", "work")

    def __init__(self, files: dict[str, bytes | None], message: str, info: dict | None = None,
                 *, executable: frozenset[str] = frozenset(), with_staged: bool = True,
                 sign: bool = False, key: str | None = None, judged: bool = True,
                 work: dict[str, bytes] | None = None) -> None:
        self.files, self.message = files, message
        self.info = {} if info is None else info     # handed back to the caller in the result
        self.executable = executable                 # paths committed with mode 100755
        self.with_staged = with_staged               # commit what the user staged, too
        self.sign, self.key = sign, key   # sign with the configured SSH key (approvals), or key's
        self.judged = judged                         # by its maker: the ref guard lets it pass
        # what the work tree gets where it differs from what is committed: the user's unstaged
        # edits of a file the move rewrites, with the move applied (nothing of theirs is lost)
        self.work = {} if work is None else work

    def mode(self, path: str) -> str:
        return "100755" if path in self.executable else "100644"


class Result:
    """The commit a plan made: its id, its parent, and where it went."""
    __slots__ = ("sha", "parent", "plan", "detached", "also", "line")

    def __init__(self, sha: str, parent: str | None, plan: Plan, detached: bool = False,
                 also: list[str] | None = None, line: str | None = None) -> None:
        self.sha, self.parent, self.plan = sha, parent, plan
        self.detached = detached   # HEAD named no branch: the commit is on no branch either
        self.also = [] if also is None else also   # staged files that rode along
        self.line = line   # the team line's branch, for a move made onto it from elsewhere


def git_dir(git: Git) -> Path:
    """The absolute git dir: as the command found its repository, else asked of git."""
    git.known_git_dir = git.known_git_dir or git.text("rev-parse", "--absolute-git-dir")
    return Path(git.known_git_dir)


class IndexLocked(GitFailure):
    """git's index lock is held (by a running git command, or left by a killed one)."""


@contextlib.contextmanager
def repo_lock(gdir: Path, name: str = "lock") -> Iterator[None]:
    """Serialise gitstate writers in one repository (`name`: one lock of several). The OS
    drops the lock if we die."""
    lock_dir = gdir / "gitstate"
    try:
        lock_dir.mkdir(exist_ok=True)
        fh = open(lock_dir / name, "a+")
    except OSError as exc:
        what = "is not a folder" if lock_dir.exists() and not lock_dir.is_dir() \
            else f"cannot be used ({exc.strerror})"
        raise GitstateError(f"{lock_dir} {what}: gitstate keeps its lock, journal and caches "
                            "there; nothing was written",
                            hint=f"move it out of the way (mv {lock_dir} {lock_dir}.old) and "
                                 "run the command again") from None
    with fh:
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
        wait_for_index(gdir)   # before anything is published: a stale lock is said at once
        recover(git, top, gdir)
        refuse_during_operation(gdir)
        detached, parent, told = _head_here(git)
        for attempt in range(MAX_ATTEMPTS):
            parent = git.head() if attempt else parent   # HEAD moved: read it again
            try:
                plan = prepare(parent)
            except GitstateError:   # a refusal stands as decided from HEAD as it is now
                now = _head_here(git) if told else None
                if now is None or now[1] == parent:
                    raise
                detached, parent, told = now
                plan = prepare(parent)
            for path in plan.files:
                safe_path(top, path)
            entries = [(path, plan.mode(path), None if data is None else git.hash_object(data))
                       for path, data in plan.files.items()]
            sha = build_commit(git, gdir, parent, plan, entries)
            subject = plan.message.split("\n", 1)[0]
            _refuse_if_switched(git)
            journal = _write_journal(gdir, sha, parent, entries)
            if _publish(git, sha, parent, f"{reflog}: {subject}", journal, plan.judged):
                _finish(git, top, entries, plan.files, gdir, sha, plan.work)
                journal.unlink()
                return Result(sha=sha, parent=parent, plan=plan, detached=detached,
                              also=_riders(git, parent, sha, plan) if plan.with_staged else [])
            journal.unlink()
        raise GitFailure(f"HEAD kept moving while committing ({MAX_ATTEMPTS} attempts); "
                         "nothing was committed", hint="try again")


def _refuse_if_switched(git: Git) -> None:
    """HEAD's branch when the command began decided where its move lands (HEAD, or the team
    line from elsewhere): switched since, the move is not made (the swap of HEAD would pass
    on a new branch at the same commit)."""
    if (named := git.head_renamed()) is not None:
        named = "a detached HEAD" if named == "HEAD" else named
        raise GitstateError(f"HEAD was switched to {named} since this command began, which "
                            "decided where the move lands; nothing was committed",
                            hint="run the move again: it lands as HEAD is now")


def _head_here(git: Git) -> tuple[bool, str | None, bool]:
    """(HEAD names no branch, its commit, whether the command read it before the lock was
    taken: `Git.head_read`, which the compare-and-swap checks): one git process, two on an
    unborn branch, none where the command read it."""
    told = git.head_read
    git.head_read = None   # (read again if asked again)
    code, out, _ = (0, " ".join(told).encode(), b"") if told else \
        git.call("rev-parse", "HEAD^{commit}", "--symbolic-full-name", "HEAD")
    lines = out.decode("utf-8", "surrogateescape").split()
    if code == 0 and len(lines) == 2:
        return not lines[1].startswith("refs/"), lines[0], bool(told)
    return not git.ok("symbolic-ref", "-q", "HEAD"), git.head(), False


def _riders(git: Git, parent: str | None, sha: str, plan: Plan) -> list[str]:
    """The paths the commit changed besides the plan's own files: what the user had staged.
    No git is asked where the plan's judgement listed them (`Git.staged_read`) from the very
    index the commit was built on, one that has no entry git leaves out of a tree (an
    intent-to-add: only an index of version 2 is sure to have none)."""
    seen, copied, git.index_copied = git.staged_read, git.index_copied, None
    if seen is not None and copied is not None and seen[:2] == (parent, copied):
        return [p for p in seen[2] if p not in plan.files]
    args = ("diff-tree", "-r", "-z", "--no-commit-id", "--name-only", "--no-renames")
    out = git.run(*args, parent, sha) if parent else git.run(*args, "--root", sha)
    return [p for p in out.decode("utf-8", "surrogateescape").split("\0")
            if p and p not in plan.files]


def _publish(git: Git, sha: str, parent: str | None, reflog: str, journal: Path,
             vouched: bool = True) -> bool:
    """Swap HEAD from `parent` to `sha`. False if HEAD moved meanwhile (judge again); a
    refusal with HEAD still at `parent` (e.g. a stale HEAD.lock) is said, not retried.
    `vouched`: judged already, so the ref guard need not judge it again."""
    args = ("update-ref", "-m", reflog, "HEAD", sha, parent or "")
    judged = {"GITSTATE_JUDGED": sha} if vouched else {}
    if git.ok(*args, env=judged):
        return True
    if git.head() != parent:
        return False
    try:
        git.run(*args, env=judged)   # again, for git's own words (and it may pass now)
        return True
    except GitFailure as exc:
        journal.unlink()
        raise GitFailure(f"{exc.message}; nothing was committed", where=exc.where,
                         hint="another git command is running here, or one was killed and "
                              "left its lock file behind: if none is running, remove the "
                              "lock file git names, then run the command again") from None


# What git leaves behind while an operation waits for the user, and how to end it.
_OPERATIONS = (("MERGE_HEAD", "a merge", "git merge --continue", "git merge --abort"),
               ("rebase-merge", "a rebase", "git rebase --continue", "git rebase --abort"),
               ("rebase-apply/applying", "an am", "git am --continue", "git am --abort"),
               ("rebase-apply", "a rebase", "git rebase --continue", "git rebase --abort"),
               ("CHERRY_PICK_HEAD", "a cherry-pick", "git cherry-pick --continue",
                "git cherry-pick --abort"),
               ("REVERT_HEAD", "a revert", "git revert --continue", "git revert --abort"))


def refuse_during_operation(gdir: Path) -> None:
    """A state move in the middle of a merge, rebase, cherry-pick, revert or am would fold
    that operation's files into a one-parent commit: refuse, and say how to finish it."""
    for marker, what, finish, abort in _OPERATIONS:
        if (gdir / marker).exists():
            raise GitstateError(f"{what} is in progress; a state move now would take its "
                                "unfinished files with it, so nothing was done",
                                hint=f"finish it (`{finish}`) or abort it (`{abort}`), then "
                                     "move again")


def _index_file(gdir: Path) -> Path:
    env_index = os.environ.get("GIT_INDEX_FILE")
    return Path(env_index) if env_index else gdir / "index"


INDEX_WAIT = 0.5   # seconds a git command may take to let go of the index


def wait_for_index(gdir: Path, seconds: float = INDEX_WAIT, sha: str | None = None) -> None:
    """Return once git's index lock is free; IndexLocked, saying what was found and what to do,
    if it is still held after `seconds`. Never removed here: a git command that holds it may
    be running (`git commit -a` holds it while its editor is open)."""
    lock = Path(f"{_index_file(gdir)}.lock")
    deadline = time.monotonic() + seconds
    while True:
        try:
            age = time.time() - lock.stat().st_mtime
        except FileNotFoundError:
            return
        if time.monotonic() >= deadline:
            break
        time.sleep(0.05)
    when = f"{age:,.0f} s old" if age < 3600 else f"{age / 3600:,.1f} h old"
    found = (f"found {lock} ({when}): another git command is using the index, or one was "
             "killed and left its lock behind")
    if sha is None:
        raise IndexLocked(f"{found}. Nothing was committed.",
                          hint=f"if no git command is running in this repository, remove the "
                               f"lock (rm '{lock}') and run the command again")
    raise IndexLocked(f"{found}. Commit {sha[:10]} is made (HEAD), but the index and work "
                      "tree have not followed yet; its journal is kept.",
                      hint=f"if no git command is running in this repository, remove the lock "
                           f"(rm '{lock}'); the next gitstate command or `git commit` then "
                           "finishes the step")


Entry = tuple[str, str, "str | None"]   # path, mode, blob (None: delete)


def index_info(entries: list[Entry], zero: str) -> bytes:
    """`update-index --index-info` lines; `zero`: the repository's all-zero id (a removal)."""
    lines = [f"0 {zero}\t{path}" if blob is None else f"{mode} {blob}\t{path}"
             for path, mode, blob in entries]
    return ("\n".join(lines) + "\n").encode()


def build_commit(git: Git, gdir: Path, parent: str | None, plan: Plan, entries: list[Entry]) -> str:
    """The commit object for `plan` on top of `parent` (and the index), not yet published."""
    tmp = gdir / "gitstate" / f"index.{os.getpid()}.tmp"
    real = _index_file(gdir)
    try:
        env = {"GIT_INDEX_FILE": str(tmp)}
        git.index_copied = None   # (none of an attempt before this one)
        if plan.with_staged and real.exists():
            git.index_copied = _copy(real, tmp)
        elif parent is not None:
            git.run("read-tree", parent, env=env)
        else:
            git.run("read-tree", "--empty", env=env)
        removes = any(blob is None for _path, _mode, blob in entries)
        zero = zero_like(parent) if parent else git.zero() if removes else ""
        if entries:   # a message commits no file: its tree is its parent's
            git.run("update-index", "--index-info", input=index_info(entries, zero),
                    env=env)
        tree = git.text("write-tree", env=env)
        # the message is UTF-8, and says so whatever this clone's i18n.commitEncoding: every
        # door refuses a commit that declares another encoding
        return git.text("-c", "i18n.commitEncoding=UTF-8", *_commit_tree(git, plan, tree, parent),
                        input=plan.message.encode())
    finally:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()


def _copy(src: Path, dst: Path) -> tuple | None:
    """`shutil.copyfile` without shutil (and its compression modules); the index copied, as
    `catfile.index_stamp` tells it, where it is of version 2."""
    with open(src, "rb") as fin, open(dst, "wb") as fout:
        st, head = os.fstat(fin.fileno()), fin.read(8)
        fout.write(tail := head)
        while chunk := fin.read(1 << 20):
            fout.write(chunk)
            tail = (tail + chunk)[-32:]
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns, tail[-32:]) \
        if head == b"DIRC\0\0\0\2" else None


def _commit_tree(git: Git, plan: Plan, tree: str, parent: str | None) -> list[str]:
    """The `git commit-tree` arguments for `tree` on `parent`, signed as the plan says."""
    args = [tree] + (["-p", parent] if parent else []) + ["-F", "-"]
    if plan.sign:   # an approval: signed with the SSH key of the human who gave it
        fmt = git.config("gpg.format")
        return ([] if fmt == "ssh" else ["-c", "gpg.format=ssh"]) + ["commit-tree", "-S"] + args
    if plan.key:   # a move signed with the key of the agent who makes it
        return ["-c", "gpg.format=ssh", "-c", f"user.signingkey={plan.key}",
                "commit-tree", "-S"] + args
    return ["commit-tree"] + args


def _journal_path(gdir: Path) -> Path:
    """A commit is published by the swap of HEAD; the index and work tree follow a moment
    later. The journal written here before the swap lets the next gitstate command finish that
    step if the process was killed in between: the index never silently lags behind HEAD."""
    return gdir / "gitstate" / "pending.json"


def _write_journal(gdir: Path, sha: str, parent: str | None, entries: list[Entry]) -> Path:
    path = _journal_path(gdir)
    write_file(path, json.dumps({"commit": sha, "parent": parent,
                                 "entries": [list(e) for e in entries]}).encode())
    return path


def recover(git: Git, top: Path | None, gdir: Path | None = None) -> bool:
    """Finish a commit whose process died between publishing and updating the index."""
    gdir = gdir or git_dir(git)
    path = _journal_path(gdir)
    try:
        pending = json.loads(path.read_text())
    except FileNotFoundError:
        return False
    except ValueError:   # torn journal: it was never acted on (written before the swap)
        path.unlink()
        return False
    finished = False
    if git.head() == pending.get("commit") and top is not None:
        _finish_pending(git, top, gdir, pending)
        finished = True
    path.unlink()
    return finished


def _finish_pending(git: Git, top: Path, gdir: Path, pending: dict) -> None:
    """The index and the files the journal names brought to its published commit, where
    they were not edited since."""
    wait_for_index(gdir, sha=pending["commit"])
    entries = [tuple(e) for e in pending["entries"]]
    parent = pending.get("parent")
    olds = git.cat_files(f"{parent}:{p}" for p, _, _ in entries) if parent \
        else [None] * len(entries)
    datas: dict[str, bytes | None] = {}
    for (p, _, blob), old in zip(entries, olds):
        target = top / p
        current = target.read_bytes() if target.is_file() else None
        if current is None or current == old:   # not edited since: bring it up to date
            datas[p] = None if blob is None else git.cat_files([blob])[0]
    _finish(git, top, entries, datas, gdir, pending["commit"])
    import sys
    print(f"gitstate: finished an interrupted commit: {pending['commit'][:10]} was "
          "published but its process stopped before the index and work tree followed; "
          "they now match it", file=sys.stderr)


def _finish(git: Git, top: Path, entries: list[Entry], datas: dict[str, bytes | None],
            gdir: Path, sha: str, work: dict[str, bytes] | None = None) -> None:
    """The real index takes the committed files (only those in `datas`), and so does the
    work tree, except where `work` says what it keeps instead."""
    if not entries:
        return
    for path, mode, blob in entries:
        if path not in datas:
            continue
        target = safe_path(top, path)
        if blob is None:
            with contextlib.suppress(FileNotFoundError):
                target.unlink()
        else:
            data = (work or {}).get(path, datas[path])
            assert data is not None   # `datas` has the content of every blob
            write_file(target, data, executable=mode == "100755")
    payload = index_info(entries, zero_like(sha))
    deadline = time.monotonic() + INDEX_WAIT
    while not _update_index(git, payload):
        # git's own index.lock may be held for a moment by another git command
        if time.monotonic() >= deadline:
            wait_for_index(gdir, 0, sha)   # says what it found (if it is gone: one last try)
            if _update_index(git, payload):
                return
            raise IndexLocked(f"commit {sha[:10]} is made (HEAD), but git refused to update "
                              "the index; its journal is kept",
                              hint="the next gitstate command or `git commit` finishes the step")
        time.sleep(0.05)


def _update_index(git: Git, payload: bytes) -> bool:
    try:
        git.run("update-index", "--index-info", input=payload)
        return True
    except GitFailure as exc:
        if "index.lock" in exc.message:
            return False
        raise


def reject_if(violations: list, action: str = "commit") -> None:
    if violations:
        raise Rejected(violations, action=action)
