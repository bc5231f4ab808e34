"""A commit's changes applied onto another commit as a cherry-pick would, without touching the
index or the work tree (`gitstate sync`)."""

from __future__ import annotations

from gitstate.errors import GitFailure
from gitstate.git.runner import Git


class CannotApply(GitFailure):
    pass


def tree_of(git: Git, rev: str) -> str:
    return git.text("rev-parse", f"{rev}^{{tree}}")


def cherry_tree(git: Git, base: str | None, ours: str, theirs: str) -> tuple[str, list[str]]:
    """The tree of `theirs`'s changes since `base` applied onto `ours`, and the conflicted
    paths (the tree then holds conflict markers there). git 2.39's merge-tree takes no
    --merge-base (2.40 does): the three trees are given as commits whose only common ancestor
    holds `base`'s tree."""
    empty = git.text("hash-object", "-t", "tree", "-w", "--stdin", input=b"")
    b = git.text("commit-tree", tree_of(git, base) if base else empty, "-m", "base")
    o = git.text("commit-tree", tree_of(git, ours), "-p", b, "-m", "ours")
    t = git.text("commit-tree", tree_of(git, theirs), "-p", b, "-m", "theirs")
    code, out, err = git.call("merge-tree", "--write-tree", "-z", "--name-only", o, t)
    fields = out.decode("utf-8", "surrogateescape").split("\0")
    if code not in (0, 1) or not fields[0]:
        raise CannotApply(f"git merge-tree failed: {err.decode('utf-8', 'replace').strip()}")
    conflicted = []
    for p in fields[1:] if code == 1 else []:
        if not p:
            break
        conflicted.append(p)
    return fields[0], sorted(set(conflicted))
