"""The ref guard (git's `reference-transaction` hook, in its `prepared` state): every commit
about to reach a local branch by a command that runs no commit hook — merge, revert,
cherry-pick, rebase, am, pull, reset, `commit --no-verify` — is judged exactly as `verify`
judges history, and an illegal one aborts the update before the branch moves.

The shim hands over only branch updates that may concern gitstate (see
`.githooks/reference-transaction`); commits already on a local branch were judged when they
got there. Commits fetched from a remote are judged when they first reach a local branch (a
remote whose hub does not judge cannot slip an illegal move in through `git pull`).
"""

from __future__ import annotations

import os
import sys

from gitstate.git.runner import ZERO, Git


def guard(git: Git, updates: str) -> int:
    from gitstate.history.problems import print_by_commit
    from gitstate.history.verify import verify

    cache_dir = git.text("rev-parse", "--absolute-git-dir") + "/gitstate"
    bad: list[tuple[str, dict]] = []
    for line in updates.splitlines():
        parts = line.split()
        if len(parts) != 3 or parts[1] == ZERO or not parts[2].startswith("refs/heads/"):
            continue
        old, new, ref = parts
        base = old if old != ZERO else git.head()
        problems, _ = verify(git, [new, "--not", "--branches"], cache_dir, root=base,
                             bound=_bound(git, new))
        bad += [(ref, p) for p in problems]
    if not bad:
        return 0
    refs = sorted({ref for ref, _ in bad})
    print(f"gitstate: refused to move {', '.join(refs)}: it would take commits that break the "
          "lifecycle:", file=sys.stderr)
    print_by_commit(bad, sys.stderr)
    print("The branch was not moved. Make each move legal (e.g. `gitstate transition`), or "
          "rebase instead of merging where an agent moved on two lines.", file=sys.stderr)
    return 1


def _bound(git: Git, new: str) -> tuple[str, set[str]] | None:
    """(agent, commits made here) where this session is bound to an agent (`GITSTATE_AGENT`):
    the commits no local or remote-tracking branch has yet. Commits fetched from a remote were
    made elsewhere, by whoever moved them there."""
    agent = os.environ.get("GITSTATE_AGENT", "").strip().lower()
    if not agent:
        return None
    made = git.text("rev-list", new, "--not", "--branches", "--remotes")
    return agent, set(made.split())
