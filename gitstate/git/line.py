"""Moves that land on the local team line from elsewhere (docs/explanation/team-line.md).

A move made in a worktree of the repository on another branch (or on a detached HEAD) is
committed onto the team line's ref by compare-and-swap (`git update-ref REF new old`): built
from the line's tip alone, so nothing of the worktree it is made in comes along (its index,
its work tree and its branch stay as they were), and judged like every move before the swap.
A lost race (the line moved meanwhile) decides the move again on the new tip.

A worktree that has the team line checked out (the lead's, usually) follows, path by path: a
file the move changed is brought forward where that worktree's index and file still hold the
line's old version; the rest of that worktree (its own edits, staged or not) is left alone, so
`git status` there never shows a landed move reversed. A path it cannot bring forward (edited
there, or the index locked by a running git command) is written in that worktree's
`gitstate/follow.json` before the swap; its next gitstate command finishes it, or says how to
catch up. A kill at any point leaves the line at its old tip or its new one.
"""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from gitstate.errors import GitFailure
from gitstate.git.atomic import (
    INDEX_WAIT,
    MAX_ATTEMPTS,
    Entry,
    Plan,
    Result,
    build_commit,
    git_dir,
    index_info,
    refuse_during_operation,
    repo_lock,
    safe_path,
    write_file,
)
from gitstate.git.runner import Git, zero_like

FOLLOW = "follow.json"   # in a worktree's git dir, under gitstate/


def commit_on_line(git: Git, ref: str, prepare: Callable[[str | None], Plan], *,
                   reflog: str = "gitstate") -> Result:
    """Build one commit on the tip of `ref` and swap the ref to it; decide it again from
    `prepare` when the ref moved meanwhile."""
    common = common_dir(git)
    # a rebase of the line itself would write its old tip back over the move when it ends
    refuse_during_operation(git_dir(git))
    with repo_lock(common):
        for _ in range(MAX_ATTEMPTS):
            parent = git.rev(ref)
            plan = prepare(parent)
            plan.with_staged = False   # the worktree's staged work is its branch's, not the line's
            plan.work = {}
            entries = [(path, plan.mode(path), None if data is None else git.hash_object(data))
                       for path, data in plan.files.items()]
            sha = build_commit(git, common, parent, plan, entries)
            followers = checked_out(git, ref)
            noted = [_note(w, parent, entries) for w in followers]
            subject = plan.message.split("\n", 1)[0]
            if _swap(git, ref, sha, parent, f"{reflog}: {subject}", plan.judged):
                for w in followers:
                    follow(w)
                return Result(sha=sha, parent=parent, plan=plan,
                              line=ref.removeprefix("refs/heads/"))
            for w, added in zip(followers, noted):
                _forget(w, added)
        raise GitFailure(f"{ref.removeprefix('refs/heads/')} kept moving while committing "
                         f"({MAX_ATTEMPTS} attempts); nothing was committed", hint="try again")


_LANDING: set[Path] = set()   # the clones whose landing lock this process holds


@contextlib.contextmanager
def landing_lock(git: Git) -> Iterator[None]:
    """The worktrees of one clone land their team line on its hub in turn: held from finding
    what the line holds that the hub has not got until the move has landed (taken again in
    the same process, it is already held)."""
    common = common_dir(git)
    if common in _LANDING:
        yield
        return
    with repo_lock(common, "landing"):
        _LANDING.add(common)
        try:
            yield
        finally:
            _LANDING.discard(common)


def common_dir(git: Git) -> Path:
    """The repository's own git dir, shared by all its worktrees."""
    return Path(git.text("rev-parse", "--path-format=absolute", "--git-common-dir"))


def step_line(git: Git, ref: str, old: str, new: str, *, reflog: str = "gitstate") -> bool:
    """Move `ref` from `old` to `new` (onto a hub's tip, back from an unlanded move), the
    worktrees that have it checked out following; False when it was not at `old`."""
    from gitstate.git.carry import changes
    entries: list[Entry] = [(p, mode, blob) for p, (mode, blob) in changes(git, old, new).items()]
    with repo_lock(common_dir(git)):
        followers = checked_out(git, ref)
        noted = [_note(w, old, entries) for w in followers]
        if git.ok("update-ref", "-m", reflog, ref, new, old, env={"GITSTATE_JUDGED": new}):
            for w in followers:
                follow(w)
            return True
        for w, added in zip(followers, noted):
            _forget(w, added)
        return False


def _swap(git: Git, ref: str, sha: str, parent: str | None, reflog: str,
          vouched: bool) -> bool:
    args = ("update-ref", "-m", reflog, ref, sha, parent or zero_like(sha))
    # judged already: the ref guard need not judge it again
    judged = {"GITSTATE_JUDGED": sha} if vouched else {}
    if git.ok(*args, env=judged):
        return True
    if git.rev(ref) != parent:
        return False
    git.run(*args, env=judged)   # git's own words (a stale lock); nothing was committed
    return True


class Follower:
    """A worktree that has the team line checked out: where it is, and its own git dir."""

    def __init__(self, top: Path, gdir: Path):
        self.top, self.gdir = top, gdir
        self.git = Git(top)

    @property
    def journal(self) -> Path:
        return self.gdir / "gitstate" / FOLLOW


def checked_out(git: Git, ref: str) -> list[Follower]:
    """The worktrees of this repository whose HEAD is `ref` (none is the one `git` runs in:
    a move lands here only from a worktree on another branch)."""
    out = git.run("worktree", "list", "--porcelain", "-z").decode("utf-8", "surrogateescape")
    found = []
    for record in out.split("\0\0"):
        fields = dict(f.partition(" ")[::2] for f in record.split("\0") if f)
        top = _on_ref(fields, ref)
        if top is None:
            continue
        code, gdir, _ = Git(top).call("rev-parse", "--absolute-git-dir")
        if code == 0:
            found.append(Follower(top, Path(gdir.decode("utf-8", "surrogateescape").strip())))
    return found


def _on_ref(fields: dict[str, str], ref: str) -> Path | None:
    """The top of a worktree (a `git worktree list --porcelain` record) on `ref`, if it is
    there."""
    path = fields.get("worktree")
    if not path or "bare" in fields or fields.get("branch") != ref:
        return None
    top = Path(path)
    return top if top.is_dir() else None


def _read(w: Follower) -> list[dict]:
    try:
        pending = json.loads(w.journal.read_text())
    except (FileNotFoundError, ValueError):
        return []
    if not isinstance(pending, list):
        return []
    return [e for e in pending if isinstance(e, dict) and isinstance(e.get("path"), str)
            and isinstance(e.get("old", ""), (str, type(None)))]


def _write(w: Follower, pending: list[dict]) -> None:
    if not pending:
        with contextlib.suppress(FileNotFoundError):
            w.journal.unlink()
        return
    w.journal.parent.mkdir(exist_ok=True)
    write_file(w.journal, json.dumps(pending).encode())


def _note(w: Follower, parent: str | None, entries: list[Entry]) -> set[str]:
    """Before the swap: the paths `w` is to bring forward, from the blob the line holds now
    (a path noted already keeps its older entry); the paths added."""
    olds = _blobs(w.git, parent, [p for p, _, _ in entries])
    pending = _read(w)
    known = {e["path"] for e in pending}
    added = {p for p, _, _ in entries if p not in known}
    _write(w, pending + [{"path": p, "old": olds[p]} for p in sorted(added)])
    return added


def _forget(w: Follower, added: set[str]) -> None:
    """The swap failed: nothing moved, so what was noted for it is not to follow."""
    if added:
        _write(w, [e for e in _read(w) if e["path"] not in added])


def _blobs(git: Git, rev: str | None, paths: list[str]) -> dict[str, str | None]:
    if not rev or not paths:
        return dict.fromkeys(paths)
    found = git.cat_batch([f"{rev}:{p}" for p in paths])
    return {p: (f[0] if f is not None and f[1] == "blob" else None)
            for p, f in zip(paths, found)}


def _index_blob(w: Follower, path: str) -> str | None:
    out = w.git.run("ls-files", "-s", "-z", "--", path, check=False)
    meta = out.decode("utf-8", "surrogateescape").split("\0")[0].partition("\t")[0].split()
    return meta[1] if len(meta) == 3 and meta[2] == "0" else None


def follow(w: Follower, *, wait: float = INDEX_WAIT) -> list[str]:
    """Bring `w`'s index and files forward to its HEAD for the paths its journal names, where
    they still hold the old version; returns the paths it could not (edited there)."""
    pending = _read(w)
    if not pending:
        return []
    left, forward = _sorted(w, pending)
    if forward and not _bring(w, forward, wait):
        left += [e for e in pending if e["path"] in {p for p, _, _ in forward}]
    _write(w, left)
    return [e["path"] for e in left]


def _sorted(w: Follower, pending: list[dict]) -> tuple[list[dict], list[tuple]]:
    """(the journal's entries edited here, the user's to decide; (path, mode, blob) of those
    to bring forward): an entry that has the line's version already is neither."""
    heads = _tree(w.git, [e["path"] for e in pending])
    left, forward = [], []
    for e in pending:
        path, old = e["path"], e.get("old")
        mode, new = heads.get(path, ("100644", None))
        held = _index_blob(w, path)
        if held == new:
            continue                      # it has the line's version already
        if held != old or _file_blob(w, path) != old:
            left.append(e)                # edited here: the user's to decide
            continue
        forward.append((path, mode, new))
    return left, forward


def _tree(git: Git, paths: list[str]) -> dict[str, tuple[str, str]]:
    """path -> (mode, blob) at HEAD, from one `git ls-tree`."""
    out = git.run("ls-tree", "-z", "HEAD", "--", *paths, check=False)
    found = {}
    for entry in out.decode("utf-8", "surrogateescape").split("\0"):
        meta, tab, path = entry.partition("\t")
        fields = meta.split()
        if tab and len(fields) == 3 and fields[1] == "blob":
            found[path] = (fields[0], fields[2])
    return found


def _file_blob(w: Follower, path: str) -> str | None:
    target = w.top / path
    if target.is_symlink() or not target.is_file():
        return None
    return w.git.hash_object(target.read_bytes())


def _bring(w: Follower, forward: list[tuple[str, str, str | None]], wait: float) -> bool:
    """Write the files and their index entries; False when git's index lock stays held."""
    lock = Path(f"{w.gdir / 'index'}.lock")
    deadline = time.monotonic() + wait
    while lock.exists():
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.05)
    datas = iter(w.git.cat_files([b for _, _, b in forward if b]))
    for path, mode, blob in forward:
        target = safe_path(w.top, path)
        if blob is None:
            with contextlib.suppress(FileNotFoundError):
                target.unlink()
        else:
            data = next(datas)
            assert data is not None
            write_file(target, data, executable=mode == "100755")
    zero = w.git.zero()
    code, _, _ = w.git.call("update-index", "--index-info",
                            input=index_info(list(forward), zero))
    return code == 0


def finish_following(git: Git, top: str, gdir: str) -> None:
    """What a landing from another worktree left for this one: brought forward now, or said
    (on stderr) with how to catch up."""
    w = Follower(Path(top), Path(gdir))
    w.git = git
    left = follow(w)
    if left:
        import sys
        shown = ", ".join(left[:5]) + (f" and {len(left) - 5} more" if len(left) > 5 else "")
        print(f"gitstate: note: moves landed on this branch from another worktree while "
              f"{shown} held edits here; `git diff HEAD -- {left[0]}` shows them, and "
              f"`git checkout HEAD -- {left[0]}` takes the landed version", file=sys.stderr)
