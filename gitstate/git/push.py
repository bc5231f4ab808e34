"""Landing a move on the hub (`--push`, docs/explanation/landing.md).

A move is committed locally, then the current branch is pushed to its upstream. When the hub
refuses because another agent got there first (a non-fast-forward, or a lost race for the ref
at the hub), the upstream tip is fetched, the move is replayed on it — the work committed with
it is staged again on the new tip and the move itself is re-decided from the new state — and
pushed again, with jittered backoff, within a bounded number of attempts and time. Exactly
one outcome:
- `landed`: the move is on the upstream branch;
- `illegal`: no longer legal on the new tip, or the hub's law refused it; the branch is back in
  step with upstream, the work staged and kept on a side branch `gitstate/unlanded/<agent>-<n>`;
- `gave-up`: attempts or time ran out (a hub that does not answer included), or the hub
  could not be reached; the move stays committed here (nothing lost), the reason is said.

A hub made by `gitstate init --server` says so with the ref `refs/gitstate/hub` (asked once
and remembered: one that stops queueing is asked again, and pushed to as any other), and keeps a
landing queue (`doors/queue.py`): the move is pushed to `refs/gitstate/queue/<branch>`, which
never loses a race; the hub lands it in order of arrival and says how in git's push report
(the landed commit, or the rule that refused it). Only a move whose agent moved on the hub
meanwhile (`queue-stale`) is decided again here and queued again.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from gitstate.errors import GitFailure, GitstateError, Rejected
from gitstate.git import QUEUE_PREFIX
from gitstate.git.atomic import Result
from gitstate.git.carry import Conflict, carry_work, restore
from gitstate.git.hub_report import RACE_WORDS, push_queued, push_to
from gitstate.git.runner import Git, zero_like
from gitstate.git.spawning import bounded
from gitstate.git.upstream import (
    Upstream,
    check_in_step,
    hub_queues,
    keeps_no_queue,
    upstream_of,
)
from gitstate.law.record import Record, field
from gitstate.law.rule_ids import Rule

UNLANDED = "refs/heads/gitstate/unlanded"


class PushPolicy:
    """How hard to try: time bounds the loop (and a count, if one is set); backoff doubles
    from `base` up to `cap`."""
    __slots__ = ("attempts", "seconds", "base", "cap")

    def __init__(self, attempts: int | None = None, seconds: float = 120.0,
                 base: float = 0.05, cap: float = 2.0) -> None:
        self.attempts, self.seconds, self.base, self.cap = attempts, seconds, base, cap

    def spent(self, attempt: int, start: float) -> bool:
        """Are the attempts (if counted) or the time since `start` used up?"""
        return bool(self.attempts and attempt >= self.attempts) \
            or time.monotonic() - start >= self.seconds

    def pause(self, attempt: int) -> float:
        import random  # full jitter: racing agents spread out instead of colliding in step
        return random.uniform(0, min(self.cap, self.base * 2 ** attempt))


class Earlier(Record):
    """A commit the branch held that the hub had not got when the move was made, landed
    before it (a move) or replayed after it (work), as `gitstate sync` does."""

    commit: str = field(about="the commit as it was here")
    subject: str = field(about="its subject")
    agent: str | None = field(None, about="the agent it moves (none: work)")
    outcome: str = field("landed", about="landed, replayed (here only), illegal, gave-up or "
                                         "kept")
    new: str | None = field(None, about="the commit on the hub (landed), or made again here")
    reason: str | None = field(None, about="why it did not land")
    rule: str | None = field(None, about="the rule that refused it")
    kept: str | None = field(None, about="the side branch that holds it")


# Its plain form is the `--json` record of a landing; gitstate/schema describes it.
class Landing(Record):
    """How a move made with `--push` landed: landed (exit 0), illegal or gave-up (exit 1)."""

    outcome: str = field(about="landed, illegal or gave-up")
    attempts: int = field(about="how many times it tried to land")
    commit: str | None = field(about="the commit on the hub (landed), or the one kept here")
    upstream: str = field(about="the branch it was to land on")
    reason: str | None = field(None, about="why it did not land (or what could not follow)")
    rule: str | None = field(None, about="the rule that refused it (illegal)")
    kept: str | None = field(None, about="the side branch that holds the unlanded work")
    staged: list[str] = field([], about="work left staged in the index")
    earlier: list[Earlier] = field([], about="the commits this branch held that the hub had "
                                             "not got, oldest first: each move landed before "
                                             "this one, work replayed after it")

    @property
    def exit_code(self) -> int:
        return 0 if self.outcome == "landed" else 1


def land(git: Git, top: Path, move: Callable[[], Result], *, agent: str,
         policy: PushPolicy | None = None,
         judge_fetched: Callable[[str | None, str], str | None] | None = None,
         on_attempt: Callable[[int, str], None] | None = None,
         queue: bool = True, line: str | None = None,
         in_step: Upstream | None = None) -> tuple[Landing, Result]:
    """Commit `move()` and land it on the upstream branch; see the module's docstring. Returns
    how it landed and the last local commit of the move.

    `move` commits on HEAD (re-deciding from HEAD each time it is called). `judge_fetched`
    judges commits fetched from the hub before the local branch takes them (old tip, new
    tip) and returns a reason to stop, or None. `queue=False`: pushed to the branch even where
    the hub keeps a landing queue (a message, which moves no agent: the queue takes moves).
    `in_step`: the upstream the caller has just found the branch in step with."""
    policy = policy or PushPolicy()
    with bounded(git, policy.seconds):   # no talk with the hub outlasts the policy's time
        up = in_step or upstream_of(git, line)
        if in_step is None:
            check_in_step(git, up)
        queued = queue and hub_queues(git, up)
        result = move()
        if queued:
            return _land_queued(git, top, up, move, result, agent, policy, judge_fetched)
        return _land_pushed(git, top, up, move, result, agent, policy, judge_fetched, on_attempt)


def _land_pushed(git: Git, top: Path, up: Upstream, move: Callable[[], Result], result: Result,
                 agent: str, policy: PushPolicy,
                 judge_fetched: Callable[[str | None, str], str | None] | None,
                 on_attempt: Callable[[int, str], None] | None) -> tuple[Landing, Result]:
    """Push the move to the branch; when another push got there first, fetch and try again."""
    start = time.monotonic()
    attempt = 0
    while True:
        attempt += 1
        status, words = push_to(git, up, result.sha)
        if on_attempt:
            on_attempt(attempt, status)
        done = _pushed(git, top, up, result, agent, attempt, status, words)
        if done is not None:
            return done
        if policy.spent(attempt, start):
            return _gave_up(up, result, attempt, f"the hub kept moving ({attempt} attempts in "
                            f"{time.monotonic() - start:.1f}s)")
        time.sleep(policy.pause(attempt))
        try:
            tip = _fetch(git, up)
        except GitFailure as exc:
            return _gave_up(up, result, attempt, f"could not fetch {up.name}: {exc.message}")
        if git.ok("merge-base", "--is-ancestor", result.sha, tip):
            return Landing("landed", attempt, result.sha, up.name), result   # it got there
        ending, result = _decide_again(git, top, up, move, result, agent, attempt, tip,
                                       judge_fetched)
        if ending is not None:
            return ending, result


def _pushed(git: Git, top: Path, up: Upstream, result: Result, agent: str, attempt: int,
            status: str, words: str) -> tuple[Landing, Result] | None:
    """How a push to the branch ended, unless another push got there first (None)."""
    if status == "landed":
        return Landing("landed", attempt, result.sha, up.name), result
    if status == "refused":
        return _set_aside(git, top, up, result, agent, attempt,
                          f"the hub refused it: {words}", fetch=True)
    if status == "error":
        return _gave_up(up, result, attempt, f"the push failed: {words}")
    return None


def _land_queued(git: Git, top: Path, up: Upstream, move: Callable[[], Result], result: Result,
                 agent: str, policy: PushPolicy,
                 judge_fetched: Callable[[str | None, str], str | None] | None
                 ) -> tuple[Landing, Result]:
    """Queue the move at the hub and learn how it landed; decide it again only when its agent
    moved on the hub meanwhile."""
    start = time.monotonic()
    queue = QUEUE_PREFIX + up.ref.removeprefix("refs/heads/")
    attempt = 0
    while True:
        attempt += 1
        status, landed, rule, words = push_queued(git, up, result.sha, queue)
        if _queue_gone(git, up, status, rule, attempt, queue):
            return _land_pushed(git, top, up, move, result, agent, policy, judge_fetched, None)
        if status == "landed":
            return _answered_landed(git, up, result, landed, attempt, judge_fetched)
        if status == "error":
            if _busy(words, policy, attempt, start):
                time.sleep(policy.pause(attempt))   # the hub's ref was busy: ask again
                continue
            return _gave_up(up, result, attempt, f"the push failed: {words}")
        if rule != Rule.QUEUE_STALE or time.monotonic() - start >= policy.seconds:
            return _set_aside(git, top, up, result, agent, attempt,
                              f"the hub refused it: [{rule}] {words}", fetch=True, rule=rule)
        try:   # decide it again from the agent's state on the hub
            tip = _fetch(git, up)
        except GitFailure as exc:
            return _gave_up(up, result, attempt, f"could not fetch {up.name}: {exc.message}")
        ending, result = _decide_again(git, top, up, move, result, agent, attempt, tip,
                                       judge_fetched)
        if ending is not None:
            return ending, result


def _queue_gone(git: Git, up: Upstream, status: str, rule, attempt: int, queue: str) -> bool:
    """The hub keeps no queue (it said so before, or it wrote the queued move as a ref of its
    own, whatever its mark says): the move goes to the branch."""
    if status == "unqueued":
        git.call("push", "--quiet", up.remote, f":{queue}")
        keeps_no_queue(git, up)
        return True
    return status != "landed" and rule is None and attempt == 1 \
        and not hub_queues(git, up, ask=True)


def _answered_landed(git: Git, up: Upstream, result: Result, landed: str, attempt: int,
                     judge_fetched) -> tuple[Landing, Result]:
    held, note = _take_landed(git, up, result, landed, judge_fetched)
    if not held:
        return _gave_up(up, result, attempt, f"the hub reported it landed as "
                        f"{landed[:10]}, but {up.name} has no such commit holding it")
    return Landing("landed", attempt, landed, up.name, reason=note), result


def _busy(words: str, policy: PushPolicy, attempt: int, start: float) -> bool:
    """Did the queued push fail on the hub's busy ref, with time and attempts left?"""
    return any(w in words.lower() for w in RACE_WORDS) \
        and time.monotonic() - start < policy.seconds \
        and (policy.attempts is None or attempt < policy.attempts)


def _decide_again(git: Git, top: Path, up: Upstream, move: Callable[[], Result],
                  result: Result, agent: str, attempt: int, tip: str,
                  judge_fetched: Callable[[str | None, str], str | None] | None
                  ) -> tuple[Landing | None, Result]:
    """Bring the branch onto the hub's `tip` with the work the move carried, and decide the
    move again there: (None, the new move) to push, or the outcome when that cannot be."""
    if judge_fetched is not None:
        reason = judge_fetched(result.parent, tip)
        if reason:
            return _gave_up(up, result, attempt, reason)
    work = _onto(git, top, up, result, agent, attempt, tip)
    if isinstance(work, tuple):
        return work
    try:
        return None, move()
    except (Rejected, GitstateError) as exc:
        return _now_illegal(git, top, up, result, agent, attempt, tip, work, exc)


def _now_illegal(git: Git, top: Path, up: Upstream, result: Result, agent: str, attempt: int,
                 tip: str, work: list[str], exc: GitstateError) -> tuple[Landing, Result]:
    """The move decided again on `tip` and refused there: set aside, its state file as the
    tip has it."""
    moved = [p for p in work if p == result.plan.info.get("path") or p in result.plan.files]
    said = getattr(exc, "violations", None)   # the first rule that refused it
    if not up.line:
        restore(git, top, tip, moved)   # the refused state file goes back to the tip's
    return _set_aside(git, top, up, result, agent, attempt,
                      f"now illegal on {tip[:10]}: {exc}", fetch=False,
                      staged=[p for p in work if p not in moved],
                      rule=str(said[0].rule) if said else None)


def _onto(git: Git, top: Path, up: Upstream, result: Result, agent: str, attempt: int,
          tip: str) -> list[str] | tuple[Landing, Result]:
    """The branch onto the hub's `tip` with the move's work: its paths, or the outcome."""
    if up.line:   # the line steps onto the tip by its ref: no work of this worktree moves
        from gitstate.git.line import step_line
        if not step_line(git, up.branch, result.sha, tip):
            return _gave_up(up, result, attempt, f"{up.branch.removeprefix('refs/heads/')} "
                            "moved here meanwhile")
        return []
    try:
        return carry_work(git, top, result, tip)
    except Conflict as exc:
        return _set_aside(git, top, up, result, agent, attempt, str(exc), fetch=False)
    except GitFailure as exc:
        return _gave_up(up, result, attempt, f"could not move onto {up.name}: "
                        f"{exc.message}")


def _take_landed(git: Git, up: Upstream, result: Result, landed: str,
                 judge_fetched: Callable[[str | None, str], str | None] | None
                 ) -> tuple[bool, str | None]:
    """Bring this branch to the commit the hub landed (the same move, on the hub's tip):
    (whether that commit holds the move, a note for the user when the branch cannot follow).
    A hub that reports a commit without the move is not believed."""
    if landed == result.sha:
        git.call("update-ref", up.tracking, landed)   # a fast-forward: nothing to fetch
        return True, None
    try:
        _fetch(git, up)
    except GitFailure as exc:
        return True, _stays(result, landed, f"could not fetch it: {exc.message}")
    if not _holds_move(git, up, result, landed):
        return False, None
    reason = judge_fetched(result.parent, landed) if judge_fetched else None
    if reason is None:
        reason = _follow(git, up, result, landed)
    return True, None if reason is None else _stays(result, landed, reason)


def _holds_move(git: Git, up: Upstream, result: Result, landed: str) -> bool:
    """Does `landed` hold the move's files as the move left them, on the fetched branch?"""
    paths = sorted({result.plan.info.get("path") or "", *result.plan.files} - {""})
    specs = [f"{rev}:{p}" for p in paths for rev in (result.sha, landed)]
    ids = git.run("cat-file", "--batch-check=%(objectname)", check=False,
                  input="".join(f"{s}\n" for s in specs).encode()).split(b"\n")
    ids = [b"" if i.endswith(b" missing") else i for i in ids]
    return all(ids[2 * i] == ids[2 * i + 1] for i in range(len(paths))) and git.ok(
        "merge-base", "--is-ancestor", landed, up.tracking)


def _follow(git: Git, up: Upstream, result: Result, landed: str) -> str | None:
    """The branch (the line by ref, else HEAD on the move) to `landed`: why not, if not."""
    if up.line:
        from gitstate.git.line import step_line
        if not step_line(git, up.branch, result.sha, landed):
            return f"{up.branch.removeprefix('refs/heads/')} moved here meanwhile"
        return None
    if git.rev("HEAD") != result.sha:
        return None
    git.run("update-index", "-q", "--refresh", check=False)
    code, _, err = git.call("reset", "-q", "--keep", landed, env={"GITSTATE_JUDGED": landed})
    return err.decode("utf-8", "replace").strip() if code != 0 else None


def _stays(result: Result, landed: str, why: str) -> str:
    return f"landed as {landed[:10]}, but this branch stays at {result.sha[:10]} ({why}); " \
        "`gitstate sync` brings it in step"


def _fetch(git: Git, up: Upstream) -> str:
    # other worktrees of this repository share the tracking ref: a locked ref is a race too
    for attempt in range(20):
        code, _, err = git.call("fetch", "--quiet", "--no-tags", up.remote,
                                  f"+{up.ref}:{up.tracking}")
        if code == 0:
            break
        words = err.decode("utf-8", "replace")
        if "lock" not in words or attempt == 19:
            raise GitFailure(words.strip() or "git fetch failed")
        import random
        time.sleep(random.uniform(0.01, 0.05 * (attempt + 1)))
    tip = git.rev(up.tracking)
    if tip is None:
        raise GitFailure(f"{up.name} does not exist after fetching")
    return tip


def _stepped_back(git: Git, top: Path, up: Upstream, result: Result, fetch: bool
                  ) -> list[str]:
    """The branch back onto upstream from the unlanded commit: the work left staged."""
    try:
        tip = _fetch(git, up) if fetch else git.rev(up.tracking)
        if tip and up.line:
            from gitstate.git.line import step_line
            step_line(git, up.branch, result.sha, tip)
        elif tip and git.rev("HEAD") == result.sha:
            return carry_work(git, top, result, tip, replay=False)
    except (GitFailure, Conflict):
        pass   # the side branch holds everything; the branch stays where it was
    return []


def _gave_up(up: Upstream, result: Result, attempts: int, why: str) -> tuple[Landing, Result]:
    reason = (f"{why}; the move stays committed here as {result.sha[:10]}, not on {up.name}: "
              "land it with `gitstate sync`, or undo it with `git reset --keep HEAD~1`")
    return Landing("gave-up", attempts, result.sha, up.name, reason=reason), result


def _set_aside(git: Git, top: Path, up: Upstream, result: Result, agent: str, attempts: int,
               why: str, *, fetch: bool, staged: list[str] | None = None,
               rule: str | None = None) -> tuple[Landing, Result]:
    """The move cannot land: keep the unlanded commit on a side branch, bring the local branch
    back in step with upstream, and leave the work staged."""
    n = 1
    while git.rev(f"{UNLANDED}/{agent}-{n}"):
        n += 1
    side = f"{UNLANDED}/{agent}-{n}"
    git.run("update-ref", side, result.sha, zero_like(result.sha),
            env={"GITSTATE_JUDGED": result.sha})
    if staged is None:   # still on the unlanded commit: step back onto upstream
        staged = _stepped_back(git, top, up, result, fetch)
    short = side.removeprefix("refs/heads/")
    return Landing("illegal", attempts, None, up.name, reason=why, rule=rule, kept=short,
                   staged=staged), result
