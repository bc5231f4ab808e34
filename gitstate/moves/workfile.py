"""An agent's state file as a move finds it: committed, staged, and in the work tree, and
what the work tree keeps of the user's own unstaged edits once the move is made."""

from __future__ import annotations

from typing import Any

from gitstate.errors import InvalidFile
from gitstate.git.repo import Managed
from gitstate.law import statefile


def current(repo: Managed, parent: str | None, path: str) -> tuple[bytes | None, bytes | None]:
    """(committed bytes at parent, work tree bytes) of a state file."""
    old = repo.git.cat_files([f"{parent}:{path}"])[0] if parent else None
    work = None
    if repo.top is not None:
        f = repo.top / path
        if f.is_file() and not f.is_symlink():
            work = f.read_bytes()
    return old, work


def staged_version(repo: Managed, path: str) -> bytes | None:
    """The index's version of a file (what `git commit` would take), or None."""
    return repo.git.cat_files([f":{path}"])[0]


def kept_edits(work: bytes | None, base: bytes, fields: dict[str, Any],
                path: str) -> dict[str, bytes]:
    """Where the work tree holds unstaged edits of the state file (`work` differs from the
    `base` the commit is built on): the work tree keeps them, with the move's `fields`
    applied, so that after the move `git diff` shows just those edits."""
    if work is None or work == base:
        return {}
    try:
        draft = statefile.parse_bytes(work, path)
        before = statefile.parse_bytes(base, path)
    except InvalidFile:
        return {path: work}   # the user's broken draft stays as it is; the commit is fine
    if any(draft.get(k) != before.get(k) for k in fields if k != "updated"):
        return {path: work}   # edits of the very keys the move sets: kept exactly as they are
    return {path: statefile.with_fields(draft, fields).encode()}
