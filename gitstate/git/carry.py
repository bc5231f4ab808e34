"""Carrying an unlanded move's work onto the hub's new tip (`--push`, `gitstate sync`).

The branch (with its index and work tree) steps from the unlanded commit to the tip, and the
work that commit carried is staged again, so that the move, decided again from the new state,
takes it along. A file the hub's side changed too is a conflict: nothing is moved then.
"""

from __future__ import annotations

from pathlib import Path

from gitstate.git.atomic import Result, safe_path, write_file
from gitstate.git.runner import Git, is_zero


class Conflict(Exception):
    pass


def changes(git: Git, a: str | None, b: str) -> dict[str, tuple[str, str | None]]:
    """path -> (mode, blob or None if deleted) for what changed from `a` to `b`."""
    out = git.run("diff-tree", "-r", "-z", "--no-renames", a or "--root", b)
    tokens = out.decode("utf-8", "surrogateescape").split("\0")
    found: dict[str, tuple[str, str | None]] = {}
    i = 1 if a is None else 0   # --root prints the commit id first
    while i + 1 < len(tokens):
        meta = tokens[i].lstrip(":").split()
        if len(meta) < 5:
            i += 1
            continue
        path = tokens[i + 1]
        found[path] = (meta[1], None if is_zero(meta[3]) else meta[3])
        i += 2
    return found


def carry_work(git: Git, top: Path, result: Result, tip: str, *,
                 replay: bool = True) -> list[str]:
    """Move the branch (with index and work tree) from our unlanded commit to `tip`, and
    stage again the work that commit carried, so that the next `move()` takes it along.
    The mover's own state file is re-decided by the move; a file the hub's side changed too
    is a conflict (nothing is moved then)."""
    ours = changes(git, result.parent, result.sha)
    theirs = changes(git, result.parent, tip)
    keep = _kept(ours, theirs, result.plan.info.get("path"), result.plan.files, replay)
    # gitstate wrote the index entries without stat data: let git see they are up to date
    git.run("update-index", "-q", "--refresh", check=False)
    # the tip's commits were judged by `judge_fetched`: the ref guard need not judge them again
    git.run("reset", "-q", "--keep", tip, env={"GITSTATE_JUDGED": tip})
    stage(git, top, keep)
    return sorted(keep)


def _kept(ours: dict, theirs: dict, state_path, files, replay: bool
          ) -> dict[str, tuple[str, str | None]]:
    """The work of our commit to stage again on the tip; Conflict where the hub's side
    changed a file of it too (but the files the move writes again)."""
    keep: dict[str, tuple[str, str | None]] = {}
    for path, entry in ours.items():
        if path in theirs:
            if theirs[path] == entry:
                continue
            if path == state_path or path in files:
                continue   # the move writes it again from the new tip
            raise Conflict(f"{path} was changed on the hub too; the move cannot be replayed "
                            "without a merge")
        if replay or (path != state_path and path not in files):
            keep[path] = entry
    return keep


def stage(git: Git, top: Path, entries: dict[str, tuple[str, str | None]]) -> None:
    if not entries:
        return
    lines = []
    for path, (mode, blob) in entries.items():
        target = safe_path(top, path)
        if blob is None:
            if target.is_file():
                target.unlink()
            lines.append(f"0 {git.zero()}\t{path}")
        else:
            write_file(target, git.run("cat-file", "blob", blob), executable=mode == "100755")
            lines.append(f"{mode} {blob}\t{path}")
    git.run("update-index", "--index-info", input=("\n".join(lines) + "\n").encode())


def restore(git: Git, top: Path, tip: str, paths: list[str]) -> None:
    """Index and work tree take `tip`'s version of `paths` (absent there: removed)."""
    if not paths:
        return
    out = git.run("ls-tree", "-z", tip, "--", *paths).decode("utf-8", "surrogateescape")
    at_tip = {}
    for rec in filter(None, out.split("\0")):
        meta, _, path = rec.partition("\t")
        mode, _kind, blob = meta.split()
        at_tip[path] = (mode, blob)
    stage(git, top, {p: at_tip.get(p, ("100644", None)) for p in paths})
