"""`--push` (and the moves the runtime's hooks and MCP land): a move committed here, then
landed on the hub, after whatever the branch already holds that the hub has not got.

A branch in step with its upstream lands the move alone (`landing.push_move`). A branch
ahead of it (a measurement the runtime's hook committed, a move made without `--push`, one
that gave up) is landed as `gitstate sync` lands it, with sync's own machinery: the new move
is committed here first (decided from this branch's state; refused, nothing is done), then
every commit the hub has not got is made again on the hub's tip, oldest first, the moves
each landed and the new one last of them (decided again there by its own command, from its
agent's state on the hub, signed again where it is signed), the work (commits that move no
agent) replayed on the branch after them and left for `git push`. Once one does not land,
the rest are only replayed here, or kept on a side branch when they cannot be: the new move's
outcome says so, and its `earlier` says what became of each commit before it. Nothing is
lost: every commit ends on the hub, on the branch, or on a side branch `gitstate/unlanded/*`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from gitstate.errors import GitstateError
from gitstate.git.atomic import Result
from gitstate.git.carry import Conflict, carry_work, restore, stage
from gitstate.git.push import Earlier, Landing, PushPolicy
from gitstate.git.repo import Managed
from gitstate.git.runner import Git
from gitstate.git.upstream import Upstream, ahead_of, local_upstream, upstream_of
from gitstate.moves.landing import policy_of, push_move
from gitstate.moves.unlanded import (
    Unlanded,
    entry,
    fetch_tip,
    find_unlanded,
    free_side,
    refuse_dirty,
    reset_keep,
)


def land_move(repo: Managed, agent: str, move: Callable[[], Result],
              policy: PushPolicy | None = None, *,
              with_work: bool = True) -> tuple[Landing, Result]:
    """Commit `move()` and land it on the upstream branch, after what the branch holds that
    the hub has not got: landed, illegal or gave up; and the last local commit of the move.
    Without `with_work`, a branch holding work commits (that move no agent) the hub has not
    got lands nothing: landing would make them again (the runtime's hooks never do that)."""
    policy = policy or policy_of(repo)
    line = repo.line_ref()
    if line is not None:
        return _from_elsewhere(repo, line, agent, move, policy)
    up = upstream_of(repo.git)
    if ahead_of(repo.git, up):
        return land_chain(repo, up, agent, move, policy, with_work=with_work)
    return push_move(repo, agent, move, policy, in_step=up)


def _from_elsewhere(repo: Managed, line: str, agent: str, move: Callable[[], Result],
                    policy: PushPolicy) -> tuple[Landing, Result]:
    """A move made in a worktree on another branch: it lands on the team line here, and on
    the line's hub from there. A line holding commits its hub has not got is landed by
    `gitstate sync` (in one go, from the line's own worktree): the move stays on the line,
    committed (gave-up, nothing lost)."""
    from gitstate.git.line import landing_lock
    git = repo.git
    if local_upstream(git, line):
        return push_move(repo, agent, move, policy)
    with landing_lock(git):
        up = upstream_of(git, line)
        if ahead_of(git, up):   # what waits on the line lands first, as `gitstate sync` lands it
            why = _not_synced(repo)
            if why:
                result = move()
                branch = line.removeprefix("refs/heads/")
                return Landing("gave-up", 0, result.sha, up.name, reason=(
                    f"what {branch} held before this move did not land ({why}); the move is "
                    f"committed on {branch} as {result.sha[:10]}: `gitstate sync` lands it "
                    "once that is settled")), result
        return push_move(repo, agent, move, policy)


def _not_synced(repo: Managed) -> str | None:
    """`gitstate sync` of the line: why what it held did not all land (None: it did)."""
    from gitstate.moves.sync import sync
    try:
        synced = sync(repo)
    except GitstateError as exc:
        return exc.message
    return None if synced["ok"] else "; ".join(
        f"{m['subject']}: {m['reason']}" for m in synced["moves"]
        if m["outcome"] not in ("landed", "replayed"))


def landed(repo: Managed) -> Callable[[str, Callable[[], Result]], Result]:
    """For operations that commit several moves (sweep, reap, shutdown) with `--push`: land
    each; a move that does not land stops the operation with the reason."""

    def commit(agent: str, move: Callable[[], Result]) -> Result:
        landing, result = land_move(repo, agent, move)
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
    from gitstate.moves.operations import committed  # an operation commits here
    return committed


def land_chain(repo: Managed, up: Upstream, agent: str, move: Callable[[], Result],
               policy: PushPolicy | None = None, *,
               with_work: bool = True) -> tuple[Landing, Result]:
    """`--push` on a branch that holds commits the hub has not got: commit `move()` here
    (decided from this branch's state; refused, nothing is done), then land the branch's
    unlanded commits one by one, oldest first, as `sync` does (each made again on the tip and
    landed; work replayed after the moves), the new move last of the moves, decided again by
    `move()` on the tip. Once one does not
    land, the rest are only replayed here (or kept on a side branch when they cannot be): the
    move's outcome says so, and `earlier` says what became of each commit before it."""
    git, top = repo.git, repo.work_tree
    made = move()
    try:
        todo = _on_the_tip(repo, up, made, with_work)
    except GitstateError as exc:
        return _gave_up(git, up, made, exc), made
    from gitstate.moves.sync import replay_commits  # (a branch ahead of the hub only)
    mine = next(u for u in todo if u.sha == made.sha)
    mine.remake = _decided_again(git, top, made, move)
    try:
        records = replay_commits(repo, top, up, todo, push=True, stop=True, policy=policy)
    except Exception:
        _park(git, made, agent)   # every commit of the chain is an ancestor of the move
        raise
    earlier = [Earlier(r["commit"], r["subject"], r["agent"], r["outcome"], r["new"],
                       r["reason"], r["rule"], r["kept"]) for r in records if r is not mine.record]
    return _outcome(git, top, up, made, mine, earlier), _made_again(made, mine)


def _on_the_tip(repo: Managed, up: Upstream, made: Result, with_work: bool) -> list[Unlanded]:
    """The branch's commits the hub has not got (`made` last of them), the branch brought to
    the hub's tip to make them again there; refused (nothing done) when it cannot be."""
    git = repo.git
    tip = fetch_tip(git, up)
    todo, _merges = find_unlanded(repo, up, made.sha, [])
    work = [u for u in todo if u.kind == "work"]
    if work and not with_work:
        raise GitstateError(f"this branch holds {len(work)} commit(s) of work that "
                            f"{up.name} has not got ({work[0].subject}...), which landing "
                            "would make again after the moves")
    refuse_dirty(git, made.sha, tip, todo, set())
    if made.sha != tip:
        reset_keep(git, tip)
    return todo


def _gave_up(git: Git, up: Upstream, made: Result, exc: GitstateError) -> Landing:
    """Nothing landed, the branch as it was: why, and how the move and the commits before it
    stay here."""
    count = len(git.text("rev-list", f"{up.tracking}..{made.sha}").split()) - 1
    said = exc.message.strip().splitlines()[0] if exc.message.strip() else str(exc)
    why = re.sub(r"[;,] (so )?nothing (else )?was done$", "", said) \
        + (f" ({exc.hint})" if exc.hint and "sync" in exc.hint else "")
    return Landing("gave-up", 0, made.sha, up.name, reason=(
        f"nothing landed: {why}; the move stays committed here as {made.sha[:10]}, with "
        f"the {count} commit(s) before it that {up.name} has not got: `gitstate sync` "
        "lands them"))


def _outcome(git: Git, top: Path, up: Upstream, made: Result, mine: Unlanded,
             earlier: list[Earlier]) -> Landing:
    """The new move's landing, from what the replay did with it."""
    rec = mine.record
    attempts = mine.landing.attempts if mine.landing is not None else 0
    if rec["outcome"] == "landed":
        return Landing("landed", attempts, rec["new"] or git.rev(up.tracking), up.name,
                       reason=rec["reason"] if rec["how"] != "already" else None,
                       earlier=earlier)
    if rec["outcome"] in ("replayed", "gave-up"):   # committed here, not landed
        return Landing("gave-up", attempts, rec["new"] or made.sha, up.name,
                       reason=rec["reason"], earlier=earlier)
    return Landing("illegal", attempts, None, up.name, reason=rec["reason"], rule=rec["rule"],
                   kept=rec["kept"], staged=_stage_again(git, top, mine), earlier=earlier)


def _stage_again(git: Git, top: Path, u: Unlanded) -> list[str]:
    """The work of the kept move `u` (not its state file) staged again on the branch's tip,
    as `--push` leaves a move that did not land, where the tip has each file as `u`'s parent
    had it (elsewhere it is on the side branch only)."""
    head = git.head()
    paths = [p for p in u.paths if p != u.path]
    if not head or not paths:
        return []
    same = [p for p in paths if u.parent and entry(git, head, p) == entry(git, u.parent, p)]
    stage(git, top, {p: u.paths[p] for p in same})
    return sorted(same)


def _decided_again(git: Git, top: Path, made: Result,
                   move: Callable[[], Result]) -> Callable[[], Result]:
    """The new move made again on HEAD once what came before it landed: its work staged there
    (the first time: a landing that decides it again carries the work itself) and `move()`
    deciding it again from HEAD's state, signed again where it is signed. Its work conflicts
    with HEAD's: it cannot be made there (kept)."""
    first = [True]

    def again() -> Result:
        if not first[0]:
            return move()
        first[0] = False
        from gitstate.moves.sync import CannotReplay
        head = git.head() or ""
        try:
            work = carry_work(git, top, made, head)
        except Conflict as exc:
            raise CannotReplay(str(exc)) from None
        try:
            return move()
        except BaseException:
            restore(git, top, head, work)   # it is kept as it was made: nothing staged
            raise
    return again


def _made_again(made: Result, mine: Unlanded) -> Result:
    """The move as it stands after the replay: made again (or landed), or as it was made here
    when it is kept."""
    if mine.result is None or mine.record["outcome"] in ("illegal", "kept"):
        return made
    return mine.result


def _park(git: Git, made: Result, agent: str) -> None:
    """Something went wrong mid-replay: the chain (the move and its ancestors) is kept on a
    side branch, so that nothing is lost whatever the branch holds now."""
    git.call("update-ref", free_side(git, agent), made.sha, env={"GITSTATE_JUDGED": made.sha})
