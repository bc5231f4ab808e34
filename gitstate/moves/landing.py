"""`--push`: a move committed here and landed on the hub (see `git/push.py` for the loop).

The commits fetched from the hub are judged here, in this process, before the local branch
takes them (as the ref guard would judge them, without starting it again for each retry).

This lands one move on a branch in step with its upstream (`gitstate sync` lands each of its
replayed moves so); `moves/chain.py` is `--push` itself, which first lands what the branch
holds that the hub has not got.
"""

from __future__ import annotations

from collections.abc import Callable

from gitstate.git.atomic import Result
from gitstate.git.push import Landing, PushPolicy, land
from gitstate.git.repo import Managed
from gitstate.git.upstream import Upstream, local_upstream
from gitstate.law.grammar import canonical_id


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
              policy: PushPolicy | None = None, *, queue: bool = True,
              in_step: Upstream | None = None) -> tuple[Landing, Result]:
    """Commit `move()` and land it on the upstream branch: landed, illegal or gave up; and the
    last local commit of the move (`queue=False`: pushed past a hub's landing queue, for a
    commit that moves no agent). Refused, nothing done, when the branch holds commits the
    hub has not got (`chain.land_move` lands those first; `in_step`: the upstream it has
    just found this branch in step with)."""
    git = repo.git

    def judge_fetched(old: str | None, new: str) -> str | None:
        # only when the hub's branch moved since this clone last saw it: imported then
        from gitstate.history.problems import describe_problem
        from gitstate.history.verify import verify
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
        from gitstate.git.line import landing_lock
        with landing_lock(git):
            return land(git, repo.work_tree, move, agent=canonical_id(agent),
                        policy=policy or policy_of(repo), judge_fetched=judge_fetched,
                        queue=queue, line=line)
    return land(git, repo.work_tree, move, agent=canonical_id(agent),
                policy=policy or policy_of(repo), judge_fetched=judge_fetched, queue=queue,
                in_step=in_step)
