"""An agent's state file as a move finds it: committed, staged, and in the work tree, and
what the work tree keeps of the user's own unstaged edits once the move is made."""

from __future__ import annotations

from collections.abc import Callable

from gitstate.errors import InvalidFile
from gitstate.git.atomic import Plan, Result, commit_atomically
from gitstate.git.line import commit_on_line
from gitstate.git.repo import Managed
from gitstate.law import statefile

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any


def at_commit(repo: Managed, rev: str | None, paths: list[str]) -> list[bytes | None]:
    """The content of each of `paths` at `rev` (None: not there, or no commit yet)."""
    return repo.git.cat_files(f"{rev}:{p}" for p in paths) if rev else [None] * len(paths)


def commit_move(repo: Managed, prepare: Callable[[str | None], Plan], *,
                reflog: str) -> Result:
    """One move's commit: on HEAD, or onto the team line from a worktree on another branch
    (`Managed.line_ref`; `git/line.py`)."""
    ref = repo.line_ref()
    if ref:
        return commit_on_line(repo.git, ref, prepare, reflog=reflog)
    return commit_atomically(repo.git, repo.work_tree, prepare, reflog=reflog)


def current(repo: Managed, parent: str | None, path: str) -> tuple[bytes | None, bytes | None]:
    """(committed bytes at parent, work tree bytes) of a state file."""
    old = repo.git.cat_files([f"{parent}:{path}"])[0] if parent else None
    work = None
    if repo.top is not None and not repo.line_ref():   # a move onto the line takes no file
        f = repo.top / path
        # a link is never followed (`is_file` would: a link whose target is the text of a
        # state file names a path too long to stat)
        if not f.is_symlink() and f.is_file():
            work = f.read_bytes()
    return old, work


def staged_version(repo: Managed, path: str) -> bytes | None:
    """The index's version of a file (what `git commit` would take), or None; None for a move
    that lands on the team line from another branch (it takes nothing staged here)."""
    if repo.line_ref():
        return None
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
    if _edits_what_it_sets(draft, before, fields):
        return {path: work}   # edits of the very keys the move sets: kept exactly as they are
    return {path: statefile.with_fields(draft, fields).encode()}


def _edits_what_it_sets(draft, before, fields: dict[str, Any]) -> bool:
    return any(draft.get(k) != before.get(k) for k in fields if k != "updated")


def carried(repo: Managed, agent: str, paths=()) -> dict[str, bytes]:
    """What a move made for an agent by a program (the MCP tools) carries besides the agent's
    state file: exactly the `paths` it names, as they are in the work tree. The index may be
    shared with other agents: anything else staged there is theirs, so the move is refused,
    saying what is staged, rather than committing it."""
    from gitstate.errors import GitstateError
    from gitstate.law.grammar import canonical_id
    from gitstate.moves.fields import first_few
    head = repo.head()
    own = repo.lifecycle(head).state_path(canonical_id(agent))
    if repo.top is None:
        raise GitstateError("a move needs a work tree (this is a bare repository)")
    named = _named_files(repo.top.resolve(), paths, own)
    others = [p for p in repo.git.staged_changes(head) if p != own and p not in named]
    if others:
        raise GitstateError(
            f"refused: the index holds {len(others)} staged change"
            f"{'s' if len(others) != 1 else ''} that {agent}'s move does not name: "
            f"{first_few(others, 10)}. "
            f"A move made here commits only {own} and the paths it names",
            hint="name them in `paths` to commit them with this move, or leave them to "
                 "whoever staged them (`git restore --staged PATH` unstages)")
    return named


def _named_files(top: Path, paths, own: str) -> dict[str, bytes]:
    """path -> content of each of `paths`, a file of the work tree at `top` (the agent's own
    state file is the move's to write); refused for any other."""
    from gitstate.errors import GitstateError
    named: dict[str, bytes] = {}
    for raw in paths:
        full = (top / str(raw)).resolve()
        if top not in full.parents or not full.is_file():
            raise GitstateError(f"'{raw}' is not a file in this work tree",
                                hint="name files by their path from the repository's top")
        rel = full.relative_to(top).as_posix()
        if rel != own:
            named[rel] = full.read_bytes()
    return named
