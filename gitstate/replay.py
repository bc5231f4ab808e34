"""Judging commits that already exist (a push arriving at a hub), by the hooks' own rules."""

from __future__ import annotations

from gitstate.errors import GitstateError
from gitstate.git import Git
from gitstate.lifecycle import LifecycleInvalid
from gitstate.repo import GitContext, Managed
from gitstate.rules import Violation, validate


def check_commit(git: Git, sha: str) -> list[Violation]:
    """Every violation of commit `sha`, judged against its first parent."""
    repo = Managed(git, None)
    fields = git.text("rev-list", "--parents", "-n", "1", sha).split()
    parents = fields[1:]
    base = parents[0] if parents else None
    try:
        lc = repo.lifecycle(base, index=False, worktree=False) if base else None
    except GitstateError:
        lc = None
    if lc is None:
        try:
            lc = repo.lifecycle(sha, index=False, worktree=False)
        except LifecycleInvalid as exc:
            return [Violation("lifecycle", exc.message)]
        except GitstateError:
            return []  # not managed at this point of history
    args = ["diff-tree", "-r", "-z", "--name-only", "--no-renames", "--no-commit-id"]
    args += [base, sha] if base else ["--root", sha]
    names = [p for p in git.run(*args).decode("utf-8", "surrogateescape").split("\0") if p]
    rx = lc.state_path_regex()
    changes = repo.changes_between([p for p in names if rx.match(p)], base, sha)
    inherited: set[str] = set()
    for other in parents[1:]:
        versions = git.cat_files(f"{other}:{c.path}" for c in changes)
        inherited |= {c.path for c, v in zip(changes, versions) if v == c.new}
    message = git.run("log", "-1", "--format=%B", sha).decode("utf-8", "replace")
    return validate(changes, lc, message, inherited=inherited, context=GitContext(git, base, tree=sha))
