"""`--push`: a move committed here and landed on the hub (see `git/push.py` for the loop).

The commits fetched from the hub are judged here, in this process, before the local branch
takes them (as the ref guard would judge them, without starting it again for each retry).
"""

from __future__ import annotations

from collections.abc import Callable

from gitstate.errors import GitstateError
from gitstate.git.atomic import Result
from gitstate.git.push import Landing, PushPolicy, land, local_upstream
from gitstate.git.repo import Managed
from gitstate.history.problems import describe_problem
from gitstate.history.verify import verify
from gitstate.law.grammar import canonical_id
from gitstate.moves.operations import committed


def policy_of(repo: Managed) -> PushPolicy:
    """Attempts, seconds and the longest pause between attempts from `git config
    gitstate.pushAttempts / gitstate.pushSeconds / gitstate.pushBackoffMax`."""
    policy = PushPolicy()
    for key, attr, kind in (("gitstate.pushattempts", "attempts", int),
                            ("gitstate.pushseconds", "seconds", float),
                            ("gitstate.pushbackoffmax", "cap", float)):
        raw = repo.git.config(key)
        if raw:
            try:
                setattr(policy, attr, max(1, kind(raw)) if kind is int else max(0.0, kind(raw)))
            except ValueError:
                pass
    return policy


def push_move(repo: Managed, agent: str, move: Callable[[], Result],
              policy: PushPolicy | None = None, *, queue: bool = True
              ) -> tuple[Landing, Result]:
    """Commit `move()` and land it on the upstream branch: landed, illegal or gave up; and the
    last local commit of the move (`queue=False`: pushed past a hub's landing queue, for a
    commit that moves no agent)."""
    git = repo.git

    def judge_fetched(old: str | None, new: str) -> str | None:
        problems, _ = verify(git, [new, "--not", "--branches"], repo.cache_dir, root=old)
        if problems:
            return ("the hub's branch holds commits that break the lifecycle (is the hub "
                    "judging pushes?): " + "; ".join(describe_problem(p) for p in problems[:3]))
        return None

    line = repo.line_ref()
    if line and local_upstream(git, line):   # the team line is here: committing lands it
        result = move()
        return Landing("landed", 1, result.sha, line.removeprefix("refs/heads/")), result
    if line:   # the worktrees of this clone share the line: they land on the hub in turn
        from gitstate.git.atomic import repo_lock
        from gitstate.git.line import common_dir
        with repo_lock(common_dir(git), "landing"):
            return land(git, repo.work_tree, move, agent=canonical_id(agent),
                        policy=policy or policy_of(repo), judge_fetched=judge_fetched,
                        queue=queue, line=line)
    return land(git, repo.work_tree, move, agent=canonical_id(agent),
                policy=policy or policy_of(repo), judge_fetched=judge_fetched, queue=queue)


def landed(repo: Managed) -> Callable[[str, Callable[[], Result]], Result]:
    """For operations that commit several moves (sweep, reap, shutdown) with `--push`: land
    each; a move that does not land stops the operation with the reason."""

    def commit(agent: str, move: Callable[[], Result]) -> Result:
        landing, result = push_move(repo, agent, move)
        if landing.outcome != "landed":
            kept = f"; kept on branch {landing.kept}" if landing.kept else ""
            raise GitstateError(f"{agent}'s move did not land ({landing.outcome}): "
                                f"{landing.reason}{kept}")
        return result
    return commit


def committer(repo: Managed, push: bool) -> Callable[[str, Callable[[], Result]], Result]:
    """How an operation commits each of its moves: here, or with `push` landed on the hub."""
    if push:
        return landed(repo)
    return committed
