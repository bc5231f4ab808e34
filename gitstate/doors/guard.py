"""The ref guard (git's `reference-transaction` hook, in its `prepared` state): every commit
about to reach a local branch by a command that runs no commit hook — merge, revert,
cherry-pick, rebase, am, pull, reset, `commit --no-verify` — is judged exactly as `verify`
judges history, and an illegal one aborts the update before the branch moves.

The shim hands over only branch updates that may concern gitstate (see
`.githooks/reference-transaction`); commits already on a local branch were judged when they
got there. Commits fetched from a remote are judged when they first reach a local branch as
part of its line (a remote whose hub does not judge cannot slip an illegal move in through
`git pull`); the team line's first-parent history is judged as the line's whatever other
branch holds it, and a merge's other parents are work, whose moves never reach the line.
"""

from __future__ import annotations

import os
import sys

from gitstate.git.repo import team_ref
from gitstate.git.runner import Git, is_zero


def guard(git: Git, updates: str) -> int:
    cache_dir = git.text("rev-parse", "--absolute-git-dir") + "/gitstate"
    bad: list[tuple[str, dict]] = []
    for line in updates.splitlines():
        parts = line.split()
        if len(parts) == 3 and not is_zero(parts[1]) and parts[2].startswith("refs/heads/"):
            old, new, ref = parts
            bad += _judge_branch(git, old, new, ref, cache_dir)
    return _refused(bad) if bad else 0


def _refused(bad: list[tuple[str, dict]]) -> int:
    from gitstate.history.problems import print_by_commit

    refs = sorted({ref for ref, _ in bad})
    print(f"gitstate: refused to move {', '.join(refs)}: it would take commits that break the "
          "lifecycle:", file=sys.stderr)
    print_by_commit(bad, sys.stderr)
    print("The branch was not moved. Make each move legal (e.g. `gitstate transition`); on the "
          "team line, merge work and land moves one by one.", file=sys.stderr)
    return 1


def _judge_branch(git: Git, old: str, new: str, ref: str,
                  cache_dir: str) -> list[tuple[str, dict]]:
    """A branch moving to `new`: the commits no branch has yet, judged (as the line's, when
    it is the team line)."""
    from gitstate.history.verify import verify
    base = old if not is_zero(old) else git.head()
    if ref == team_ref(git, base or new):
        return _judge_line(git, ref, old, new, base, cache_dir)
    problems, _ = verify(git, [new, "--not", "--branches"], cache_dir, root=base,
                         bound=_bound(git, new), line=False)
    return [(ref, p) for p in problems]


def _judge_line(git: Git, ref: str, old: str, new: str, base: str | None,
                cache_dir: str) -> list[tuple[str, dict]]:
    """The team line moves: every commit it gains on its first-parent line is judged as one
    of the line. A fast-forward that would leave the old tip off that line (a merge that took
    the line as its second parent) is refused; a rewrite (reset, rebase) is this clone's own
    business, and what it brings is judged all the same."""
    from gitstate.git.repo import on_first_parent_line
    from gitstate.history.verify import verify
    if not is_zero(old) and git.ok("merge-base", "--is-ancestor", old, new) \
            and not on_first_parent_line(git, old, new):
        from gitstate.law.rule_ids import Rule
        return [(ref, {"commit": new, "subject": "", "rule": Rule.NON_FAST_FORWARD,
                       "where": None, "message": f"{ref} is the team line: moving it to "
                       f"{new[:10]} would leave its tip {old[:10]} off its first-parent line "
                       "(that commit's first parents lead down another branch); merge that "
                       "branch into the team line instead (`git merge` while on it)"})]
    revs = [new, "--not", old] if not is_zero(old) else [new, "--not", "--branches"]
    problems, _ = verify(git, revs, cache_dir, root=base, bound=_bound(git, new), line=True)
    return [(ref, p) for p in problems]


def _bound(git: Git, new: str) -> tuple[str | None, str | None, set[str]] | None:
    """(agent, runtime mark, commits made here) where this session is an agent's (bound by
    `GITSTATE_AGENT`, or marked as a runtime's): the commits no local or remote-tracking branch
    has yet. Commits fetched from a remote were made elsewhere, by whoever moved them there."""
    from gitstate.law.movers import agent_session
    agent, mark = agent_session(os.environ)
    if agent is None and mark is None:
        return None
    made = git.text("rev-list", new, "--not", "--branches", "--remotes")
    return agent, mark, set(made.split())
