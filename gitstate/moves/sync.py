"""`gitstate sync`: bring a clone back in step with its hub by hand (docs/explanation/landing.md).

The unlanded moves are this branch's commits the upstream has not got (oldest first) and the
side branches `gitstate/unlanded/*` that `--push` leaves. A rebase, merge or cherry-pick left
waiting (a `git pull --rebase` stopped on a `_state.md`) is aborted first. Each move is then
made again on the upstream tip:
- its commit applies there (a three-way merge of its changes): the same commit (message,
  author, work) is made again with `git commit`, so every local door judges it;
- its agent's own state file was changed upstream (someone else moved that agent): a plain
  transition is decided again from the agent's state there (`moves.agent.transition`), with
  the rest of the commit's work; any other move cannot be decided again and is kept;
- a signed commit (an approval, a keyed agent's move) is never re-made here: it goes as it is
  when its parent is the tip, else it is kept, to be made (and signed) again on the tip.
By default each replayed move is landed as `--push` lands one (`landing.push_move`); with
`push=False` they are only committed here. Whatever cannot be done is kept on a side branch,
with the reason; nothing is lost. A commit that moves no agent (work alone) is replayed on the
branch after the moves and not pushed (the hub's queue lands moves).

What `--push` leaves when a move does not land is sync's own: the side branch, and the move's
work staged on the branch's tip (or unstaged since, byte for byte the same). That work goes
with its move (it is made again from the side branch); while the move stays kept, it is left
as it was found. Any other uncommitted change the replay would touch stops it first.
"""

from __future__ import annotations

from pathlib import Path

from gitstate.errors import GitstateError, Rejected
from gitstate.git.atomic import Result, git_dir
from gitstate.git.carry import restore, stage
from gitstate.git.push import UNLANDED, PushPolicy
from gitstate.git.repo import Managed
from gitstate.git.runner import Git
from gitstate.git.threeway import CannotApply, cherry_tree, tree_of
from gitstate.git.upstream import Upstream, upstream_of
from gitstate.law.rule_ids import Rule
from gitstate.moves import agent as moves
from gitstate.moves.landing import push_move
from gitstate.moves.unlanded import (
    Unlanded,
    entries,
    fetch_tip,
    find_unlanded,
    keep,
    leave_as_found,
    left_by_push,
    refuse_dirty,
    reset_keep,
    rule_of,
)

# What git leaves while an operation waits for the user, and how to abort it (back to where
# the user was before it started).
_WAITING = (("rebase-merge", "a rebase", ("rebase", "--abort")),
            ("rebase-apply/applying", "an am", ("am", "--abort")),
            ("rebase-apply", "a rebase", ("rebase", "--abort")),
            ("MERGE_HEAD", "a merge", ("merge", "--abort")),
            ("CHERRY_PICK_HEAD", "a cherry-pick", ("cherry-pick", "--abort")),
            ("REVERT_HEAD", "a revert", ("revert", "--abort")))


class CannotReplay(Exception):
    """The move cannot be made again on the tip; why, and the rule when the law said so."""

    def __init__(self, why: str, rule: str | None = None, outcome: str = "kept"):
        super().__init__(why)
        self.rule = rule
        self.outcome = outcome


class AlreadyThere(Exception):
    """The commit's changes are on the tip already (it landed, e.g. as a re-made commit)."""


def sync(repo: Managed, *, push: bool = True) -> dict:
    """Replay this clone's unlanded moves onto the upstream tip and (with `push`) land them;
    the record of what was done to each (the model SyncResult of gitstate/schema). From a
    worktree on another branch, the team line is synced, where it is checked out (or in a
    worktree of its own made for the while)."""
    git = repo.git
    aborted = _abort_waiting(git, git_dir(git))   # a rebase of the line: HEAD is on it again
    repo.__dict__.pop("_line_ref", None)
    line = repo.line_ref()
    if line is not None:
        return {**_sync_line(repo, line, push), **({"aborted": aborted} if aborted else {})}
    top = repo.work_tree
    up = upstream_of(git)
    tip = fetch_tip(git, up)
    head = git.head()
    assert head is not None
    sides = git.text("for-each-ref", "--format=%(refname)", UNLANDED + "/").split()
    todo, merges = find_unlanded(repo, up, head, sides)
    found = left_by_push(git, top, head, todo)
    refuse_dirty(git, head, tip, todo, set(found))
    restore(git, top, head, sorted(found))   # it is on the side branches: made again from there
    if head != tip:
        reset_keep(git, tip)
    record: dict = {"upstream": up.name, "branch": up.branch.removeprefix("refs/heads/"),
                    "aborted": aborted, "pushed": push, "before": head,
                    "side_branches": [s.removeprefix("refs/heads/") for s in sides],
                    "skipped_merges": merges, "work_found": sorted(found), "moves": []}
    record["moves"] = replay_commits(repo, top, up, todo, push=push)
    leave_as_found(git, top, head, todo, found)
    for side in sides:   # a side branch whose moves all landed or were replayed goes
        _drop_when_done(git, side, record["moves"])
    record["head"] = git.head()
    record["ok"] = _all_done(record["moves"])
    return record


def _all_done(moves) -> bool:
    return all(m["outcome"] in ("landed", "replayed") for m in moves)


def _drop_when_done(git: Git, side: str, moves: list[dict]) -> None:
    if _all_done(m for m in moves if m["source"] == side.removeprefix("refs/heads/")):
        git.call("update-ref", "-d", side)


def replay_commits(repo: Managed, top: Path, up: Upstream, todo: list[Unlanded], *,
                   push: bool, stop: bool = False,
                   policy: PushPolicy | None = None) -> list[dict]:
    """Replay `todo` on HEAD, in order, the moves first and (with `push`) each landed, then
    the work; the record of each. Once a move gives up (with `stop`: once one does not land),
    the rest are only replayed here."""
    landing_ok = push
    failed: Unlanded | None = None
    records = []
    for u in _moves_first(todo) if push else todo:
        u.record = _first_record(u)
        _one(repo, top, up, u, push=landing_ok and u.kind != "work", policy=policy)
        if push and u.record["outcome"] == "replayed":
            _why_not_landed(u, failed)
        if landing_ok and _stops_landing(u, stop):
            landing_ok = False   # the move stays committed here; the rest only replayed
            failed = u
        records.append(u.record)
    return records


def _first_record(u: Unlanded) -> dict:
    return {"commit": u.sha, "subject": u.subject, "agent": u.agent,
            "source": u.source.removeprefix("refs/heads/"), "outcome": "replayed",
            "how": None, "new": None, "reason": None, "rule": None, "kept": None}


def _moves_first(todo: list[Unlanded]) -> list[Unlanded]:
    return sorted(todo, key=lambda u: u.kind == "work")


def _why_not_landed(u: Unlanded, failed: Unlanded | None) -> None:
    """The reason in the record of `u`, replayed but not landed by a sync that lands: work is
    not a move, and a move after one that did not land (`failed`) waits."""
    if u.kind == "work":
        u.record["reason"] = "not a move (it changes no state file): replayed on the " \
                             "branch, not pushed (`git push` lands it)"
    elif failed is not None:
        u.record["reason"] = (f"not landed, since {failed.sha[:10]} ({failed.subject}) "
                              f"did not land ({failed.record['outcome']}): it stays "
                              f"committed here as {(u.record['new'] or '')[:10]}; "
                              "`gitstate sync` lands it")


def _stops_landing(u: Unlanded, stop: bool) -> bool:
    """Whether `u`'s outcome ends the landing of the rest: it gave up (with `stop`: a move
    that did not land)."""
    outcome = u.record["outcome"]
    return outcome == "gave-up" or (stop and u.kind != "work" and outcome != "landed")


def _abort_waiting(git: Git, gdir: Path) -> str | None:
    for marker, what, abort in _WAITING:
        if (gdir / marker).exists():
            code, _, err = git.call(*abort)
            if code != 0:
                raise GitstateError(f"{what} is in progress and `git {' '.join(abort)}` failed: "
                                    f"{err.decode('utf-8', 'replace').strip()}; nothing else "
                                    "was done", hint="end it by hand, then run `gitstate sync`")
            return what
    return None


def _one(repo: Managed, top: Path, up: Upstream, u: Unlanded, *, push: bool,
         policy: PushPolicy | None = None) -> None:
    """Replay `u` on HEAD (and land it with `push`), filling in its record (and `u.landing`,
    `u.result`)."""
    git, rec = repo.git, u.record
    head = git.head()
    try:
        landing = _replay(repo, top, up, u, head, push, policy)
    except AlreadyThere:
        rec.update(outcome="landed" if push else "replayed", how="already",
                   reason=f"its changes are on {up.name} already")
        return
    except (CannotReplay, GitstateError) as exc:
        keep(git, top, u, head, *_why_kept(exc))
        return
    if landing is not None:
        _landed(git, top, up, u, landing)


def _why_kept(exc: CannotReplay | GitstateError) -> tuple[str, str | None, str]:
    """Why a move that could not be made again is kept: the reason, rule and outcome."""
    if isinstance(exc, CannotReplay):
        return str(exc), exc.rule, exc.outcome
    if isinstance(exc, Rejected):
        return f"now illegal: {exc}", rule_of(exc), "illegal"
    return exc.message, None, "kept" if isinstance(exc, CannotApply) else "illegal"


def _replay(repo: Managed, top: Path, up: Upstream, u: Unlanded, head: str | None,
            push: bool, policy: PushPolicy | None):
    """Make `u` again on `head`, and land it with `push`: the landing (None without `push`).
    AlreadyThere, CannotReplay: raised before anything is pushed."""
    if u.remake is None:
        _replayable(repo.git, up, u, head)
    make = u.remake or _move(repo, top, u)
    if not push:
        u.result = make()
        u.record.update(new=u.result.sha, how=u.record["how"] or "applied")
        return None
    landing, result = push_move(repo, u.agent or "", make, policy)
    u.landing, u.result = landing, result
    return landing


def _replayable(git: Git, up: Upstream, u: Unlanded, head: str | None) -> None:
    """Raise CannotReplay when `u` is signed on a parent that is no longer the tip (and what
    `_applies` raises)."""
    if u.signed and u.parent != head:
        raise CannotReplay("a signed commit (an approval, a keyed agent's move) is signed "
                           f"on its parent, which is no longer the tip of {up.name}; make "
                           "the move again on the tip (gitstate signs it again where this "
                           "clone holds the key; an approval is asked for again)")
    _applies(git, u, head, conflicts=not u.signed)


def _landed(git: Git, top: Path, up: Upstream, u: Unlanded, landing) -> None:
    """`u`'s record filled in from its landing; an illegal move's work unstaged and the
    branch it came on kept, a signed move the hub merged taken as merged."""
    rec = u.record
    rec.update(outcome=landing.outcome, new=landing.commit, reason=landing.reason,
               rule=landing.rule, kept=landing.kept, how=rec["how"] or "applied")
    if landing.outcome == "illegal":
        _kept_illegal(git, top, up, u, landing)
    if landing.outcome == "landed" and u.signed and git.head() != git.rev(up.tracking):
        reset_keep(git, git.rev(up.tracking) or "HEAD")   # the hub merged it: take the merge
        rec["reason"] = None


def _kept_illegal(git: Git, top: Path, up: Upstream, u: Unlanded, landing) -> None:
    """An illegal move's work unstaged, and the branch it came on kept for it."""
    if landing.staged:   # its work is on the side branch: not staged for the next move
        restore(git, top, git.head() or "HEAD", landing.staged)
    if u.source != up.branch and landing.kept:   # the move keeps the branch it came on
        git.call("update-ref", "-d", f"refs/heads/{landing.kept}")
        u.record["kept"] = u.source.removeprefix("refs/heads/")


def _applies(git: Git, u: Unlanded, head: str | None, *, conflicts: bool = True) -> None:
    """Raise AlreadyThere when the tip has the commit's changes, CannotReplay when its work
    conflicts there (or it is not a transition and its state file does)."""
    if head is None or u.parent == head:
        return
    tree, found = cherry_tree(git, u.parent, head, u.sha)
    if not found and _there_already(git, u, tree, head):
        raise AlreadyThere()
    if not conflicts:
        return
    _refuse_conflicts(u, head, _undecided(git, u, tree, head, found))


def _refuse_conflicts(u: Unlanded, head: str, found: list[str]) -> None:
    """CannotReplay when the commit's work conflicts on `head`, or its state file does and it
    is not a transition (which is decided again)."""
    others = [p for p in found if p != u.path]
    if others:
        raise CannotReplay(f"its work conflicts with {head[:10]} in "
                           f"{', '.join(others)}: merge it by hand "
                           f"(`git cherry-pick {u.sha[:10]}`)")
    if found and u.kind != "transition":
        raise CannotReplay(f"{u.agent} was moved upstream meanwhile, and this move ({u.kind}) "
                           "cannot be decided again here: make it again from the new state")


def _there_already(git: Git, u: Unlanded, tree: str, head: str) -> bool:
    """Whether the commit's changes, merged on `head`, change nothing there (and a transition
    is in `head`'s history already)."""
    return tree == tree_of(git, head) and (u.kind != "transition" or _made_there(git, u, head))


def _made_there(git: Git, u: Unlanded, head: str) -> bool:
    """Whether `head`'s history holds `u` made again (the same message and author), as the
    hub's queue makes a move it lands on a newer tip."""
    def said(sha: str) -> tuple[list[bytes], bytes]:
        header, _, body = git.run("cat-file", "commit", sha).partition(b"\n\n")
        return [ln for ln in header.split(b"\n") if ln.startswith(b"author ")], body
    mine = said(u.sha)
    since = ("--not", u.parent) if u.parent else ()
    return any(said(sha) == mine for sha in git.text(
        "rev-list", "--fixed-strings", f"--grep={u.subject}", head, *since).split())


def _undecided(git: Git, u: Unlanded, tree: str, head: str, found: list[str]) -> list[str]:
    """The paths to decide again: the conflicts, and the move's state file when its changes
    merge there to no change (another move left it just so: the same state, stamped in the
    same second). A move is never made as no change: it is decided again, with its own stamp."""
    if not u.path or u.path in found or u.path not in u.paths:
        return found
    merged, there = git.cat_files([f"{tree}:{u.path}", f"{head}:{u.path}"])
    return sorted([*found, u.path]) if merged == there else found


def _move(repo: Managed, top: Path, u: Unlanded):
    """The move that makes `u` again on HEAD (called again by the landing when it decides
    again from a newer tip)."""
    git = repo.git

    def move() -> Result:
        head = git.head()
        assert head is not None
        if u.signed:   # never re-made: it goes as it is, on the tip it was signed on
            if u.parent == head:
                reset_keep(git, u.sha)
            u.record["how"] = "fast-forward"
            return Result(u.sha, u.parent, u.plan(git, u.sha))
        if u.parent == head:
            _take(git, top, u, u.sha, list(u.paths))
            return _commit(git, top, u, head)
        tree, conflicts = cherry_tree(git, u.parent, head, u.sha)
        conflicts = _undecided(git, u, tree, head, conflicts)
        others = [p for p in u.paths if p != u.path or not conflicts]
        _take(git, top, u, tree, others)
        if not conflicts:
            return _commit(git, top, u, head)
        u.record["how"] = "re-decided"
        try:
            return moves.transition(repo, u.agent or "", u.state or "", text=u.text(),
                                    body=u.body(), sets=u.sets(git))
        except GitstateError:
            restore(git, top, head, others)
            raise
    return move


def _take(git: Git, top: Path, u: Unlanded, rev: str, paths: list[str]) -> None:
    """Stage (and write) `rev`'s version of the commit's `paths`."""
    at = entries(git, paths, "ls-tree", "-z", rev) if paths else {}
    stage(git, top, {p: at.get(p, (u.paths[p][0], None)) for p in paths})


def _commit(git: Git, top: Path, u: Unlanded, head: str) -> Result:
    """The commit again, with its message and author, through the commit hooks."""
    code, _, err = git.call("commit", "-q", "--cleanup=verbatim", "--no-edit", "-C", u.sha)
    if code != 0:
        restore(git, top, head, list(u.paths))
        words = err.decode("utf-8", "replace").strip()
        # the hook names each problem's rule in brackets: the first one said
        said = sorted((words.find(f"[{r}]"), r) for r in Rule if f"[{r}]" in words)
        raise CannotReplay(f"now illegal on {head[:10]}: {words}",
                           str(said[0][1]) if said else None, "illegal")
    sha = git.head()
    assert sha is not None
    return Result(sha, head, u.plan(git, sha))


def _sync_line(repo: Managed, line: str, push: bool) -> dict:
    """`sync` of the team line `line` from a worktree on another branch: in the worktree that
    has it checked out, else in a worktree made for it under .git/gitstate and removed after
    (what cannot land is kept on side branches, as always)."""
    import os

    from gitstate.git.line import checked_out, common_dir
    from gitstate.git.repo import open_managed
    git = repo.git
    there = checked_out(git, line)
    if there:
        return sync(open_managed(str(there[0].top)), push=push)
    place = common_dir(git) / "gitstate" / f"line-{os.getpid()}"
    code, _, err = git.call("worktree", "add", "--quiet", str(place),
                            line.removeprefix("refs/heads/"))
    if code != 0:
        raise GitstateError(f"could not check out {line.removeprefix('refs/heads/')} to sync "
                            f"it: {err.decode('utf-8', 'replace').strip()}",
                            hint="run `gitstate sync` in a worktree of the team line")
    try:
        return sync(open_managed(str(place)), push=push)
    finally:
        git.call("worktree", "remove", "--force", str(place))
