"""`gitstate verify`: replay history through the hooks' own rules.

History is read without ever splitting free text: one streamed `git log -z` gives each
commit's id, parents and the blobs it changed (merges against their first parent) — fields that
are hex, or paths terminated by NUL — and one `git cat-file --batch` per batch gives the commit
objects (author, committer time, message: parsed from their headers, sized by the object
header) and the contents of every state file involved. A message or a name may hold any
character; none of them can cut a record or forge a change.

Each commit is then judged by `rules.validate` exactly as the hooks would have judged it, so a
commit made with `git commit --no-verify`, or pushed from a clone without hooks, is caught.
Beyond the hooks' rules, every door applies docs/explanation/promises.md: once
managed, always managed (a commit that deletes the lifecycle or leaves it invalid is a
violation, and later commits are judged by the last valid law); changes of the law need a
human's approval, in every commit, merges included; an agent moves on one line of history
(merges); a history has one law: a merge of lines whose laws began apart is refused, and a
line that had no law when it joins a managed one is judged by that one's law.

Where the law comes from: a commit is judged by the law its first parent was under. A door
guarding a history (the hub, the ref guard, a landing) names the commit whose law is in force
(`root`): a pushed commit with no parent, or whose parent has no law, is judged by that law.
Auditing a whole history, every root starts with no law, whichever git lists first.

The result for the whole history of HEAD is remembered under `.git/gitstate/` (sealed: see
`git/cache.py`); a later run on a descendant judges only the new commits. `--no-cache` and the
hub never read it.
"""

from __future__ import annotations

import re

from gitstate import __version__
from gitstate.errors import GitstateError, InvalidFile, NotManaged, UsageError
from gitstate.git import cache
from gitstate.git.cache import load_lifecycle_cached
from gitstate.git.lawfiles import judged_law
from gitstate.git.repo import on_first_parent_line
from gitstate.git.runner import Git
from gitstate.history.ahead import forget, read_ahead
from gitstate.history.commits import Commit, parse_commit_object, read_commits
from gitstate.history.replay import ReplayContext, carry_over
from gitstate.history.shallow import unjudged, within_reach
from gitstate.history.signatures import GitProofs
from gitstate.law.grammar import parse_message
from gitstate.law.judge import Facts, as_made, judge, line_rule
from gitstate.law.lifecycle import LIFECYCLE_PATH, Lifecycle, is_law_path
from gitstate.law.limits import LIFECYCLE_BYTES
from gitstate.law.rule_ids import Rule
from gitstate.law.timeline import judge_tags
from gitstate.law.times import iso
from gitstate.law.verdict import FileChange, Violation

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import TypeGuard

CACHE_NAME = "verified.json"


def verify(git: Git, revs: list[str], cache_dir: str | None, *, remember: bool = False,
           root: str | None = None, clock=None,
           report: dict | None = None, progress=None,
           bound: tuple[str | None, str | None, set[str]] | None = None,
           line: bool = True) -> tuple[list[dict], int]:
    """(problems, number of commits judged) for the history of `revs`.

    `line`: `revs` is a line of the lifecycle (the team line, or what is judged as one): only
    its first-parent history is read, and a merge there is judged by the line rule; else
    (a branch off the team line, at the hub and the ref guard) every commit `revs` names is
    read, and merges are work on a branch, not judged.
    `cache_dir` None: no cache is read or written, not even the checked lifecycles.
    `root`: the commit whose law is in force, for a caller judging commits that join an
    existing history (the hub, the ref guard): a commit with no parent, or whose parent has
    no law, is judged by it, and a gated move there by its allowed signers.
    `clock`: the hub's (`doors.hub.HubClock`): time is its own, not the committers'.
    `report`, if given, gets `by_tag`: the commits older than the lifecycle, judged by their
    tags alone (an adopted history); `line_from`: the commit from which the law declares the
    team line (None: not in these commits); `unjudged_merges`: merges read but not judged
    (before the line rule, or off the line). `progress(count)` is told how many commits are
    judged as each batch is done. `bound`: (agent, runtime mark, commits made here) of an
    agent's session (the ref guard): those commits are judged for who moved whom as the
    hooks judge them."""
    keep = remember and line
    saved = _load(cache_dir) if keep else None
    head = revs[0] if len(revs) == 1 else None
    if _kept_at(saved, head):
        return _as_kept(saved, report)
    problems, kept, judged_revs = _resumed(git, saved, head, revs)
    boundary: list[Commit] = []   # where a shallow clone's history stops: never judged
    commits = within_reach(git, read_commits(git, judged_revs, first_parent=line), boundary)
    found, judged, said = _judge_all(git, commits, cache_dir, root, clock, progress, bound, line)
    problems += found
    kept = _joined(kept, said)
    _tell(report, kept)
    if keep and head and not boundary:   # a shallow clone's: not the whole answer
        _store(cache_dir, {"tip": head, "problems": problems, **kept})
    return problems + unjudged(git, boundary), judged


def _kept_at(saved: dict | None, head: str | None) -> TypeGuard[dict]:
    """Was the answer kept for this very tip `head`?"""
    return bool(saved and head and saved["tip"] == head)


def _as_kept(saved: dict, report: dict | None) -> tuple[list[dict], int]:
    """The answer kept for this very tip: its problems, none judged again."""
    _tell(report, _said(saved))
    return saved["problems"], 0


def _tell(report: dict | None, said: dict) -> None:
    if report is not None:
        report.update(said)


def _joined(kept: dict, said: dict) -> dict:
    """The report of the commits judged before (`kept`) and of those judged now (`said`)."""
    return {"by_tag": kept["by_tag"] + said["by_tag"],
            "line_from": kept["line_from"] or said["line_from"],
            "unjudged_merges": kept["unjudged_merges"] + said["unjudged_merges"]}


def _said(saved: dict) -> dict:
    """What the report says (`by_tag`, `line_from`, `unjudged_merges`), as kept in `saved`."""
    return {k: saved.get(k, v) for k, v in (("by_tag", []), ("line_from", None),
                                             ("unjudged_merges", 0))}


def _resumed(git: Git, saved: dict | None, head: str | None, revs: list[str]
             ) -> tuple[list[dict], dict, list[str]]:
    """(problems, report, revisions to judge): on from what was kept for a tip `head`'s line
    goes on from, else from nothing."""
    if saved and head and _extends(git, saved["tip"], head):
        return list(saved["problems"]), _said(saved), [head, "--not", saved["tip"]]
    return [], _said({}), revs


def law_at(git: Git, rev: str | None, cache_dir: str | None = None,
           memo: dict | None = None) -> tuple[str, bytes] | None:
    """(blob, content) of the valid lifecycle committed at `rev`, or None."""
    if not rev:
        return None
    found = git.cat_batch([f"{rev}:{LIFECYCLE_PATH}"], LIFECYCLE_BYTES)[0]
    if found is None or found[1] != "blob" or not isinstance(found[2], bytes):
        return None
    entry = (found[0], found[2])
    return entry if _lifecycle(entry, {} if memo is None else memo, cache_dir) else None


def _judge_all(git: Git, commits, cache_dir: str | None, root: str | None,
               clock=None, progress=None, bound=None,
               line: bool = True) -> tuple[list[dict], int, dict]:
    """(problems, count, what the report says: `by_tag`, `line_from`, `unjudged_merges`) for
    commits (oldest first), judged in batches as they are read."""
    lifecycles: dict = {}
    state = {"law": {}, "lifecycles": lifecycles, "parsed": {},
             "run": {"at": None, "agents": {}}, "root": root,
             "root_law": law_at(git, root, cache_dir, lifecycles),
             "clock": clock, "before_law": [], "by_tag": [], "bound": bound, "line": line,
             "line_from": None, "unjudged_merges": 0}
    problems: list[dict] = []
    count = 0
    # git reads the objects of the next batches (a process of its own) while Python judges
    # this one: the two cores work at once instead of in turn
    from collections import deque
    from concurrent.futures import ThreadPoolExecutor  # (and logging: ~10 ms to import)
    judged: deque = deque()
    with ThreadPoolExecutor(max_workers=1) as pool:
        for done, fetched in read_ahead(pool, git, commits, state["law"]):
            problems += _judge_batch(git, done, fetched.result(), cache_dir, state)
            count += len(done)
            if line:
                forget(state["law"], judged, done)
            if progress is not None:
                progress(count)
    return problems, count, {k: state[k] for k in ("by_tag", "line_from", "unjudged_merges")}


def _judge_batch(git: Git, commits: list[Commit], fetched: tuple, cache_dir: str | None,
                 state: dict) -> list[dict]:
    # the valid law in force after each commit, inherited from the first parent
    law: dict[str, tuple[str, bytes] | None] = state["law"]
    lifecycles: dict[str, Lifecycle | None] = state["lifecycles"]
    outside, contents, found = fetched
    _take_objects(commits, outside, found, law, lifecycles, cache_dir)
    parsed: dict = state["parsed"]   # each blob parsed once, judged as new and then as old
    run: dict = state["run"]         # every agent's front matter along the line being replayed
    problems = []
    for c in commits:
        problems += _as_problems(c, _judge_commit(git, c, law, lifecycles, contents, parsed,
                                                  run, state, cache_dir))
        adopted = law.get(c.sha) if state["before_law"] else None
        if adopted is not None:   # the law an old history took
            problems += _judge_adopted(state, _lifecycle(adopted, lifecycles, cache_dir))
    return problems


def _take_objects(commits: list[Commit], outside: list[str], found: list, law: dict,
                  lifecycles: dict, cache_dir: str | None) -> None:
    """The batch's commit objects parsed into its commits, and the law of each parent
    outside it (`found`: the commits' objects, then those parents' lifecycles)."""
    n = len(commits)
    laws = [(p, got) for p, got in zip(outside, found[n:n + len(outside)])
            if p not in law]         # a parent the batch before set meanwhile keeps its law
    for c, obj in zip(commits, found):
        if obj is not None:
            c.time, c.author, c.message, c.encoding = parse_commit_object(obj[2])
    _parents_laws(laws, law, lifecycles, cache_dir)


def _parents_laws(laws: list, law: dict, lifecycles: dict, cache_dir: str | None) -> None:
    """The valid law of each parent outside the batch, from its lifecycle read (`laws`)."""
    for parent, got in laws:
        entry = (got[0], got[2]) if got and got[1] == "blob" else None
        law[parent] = entry if entry and _lifecycle(entry, lifecycles, cache_dir) else None


def _judge_commit(git: Git, c: Commit, law: dict, lifecycles: dict, contents: dict,
                  parsed: dict, run: dict, state: dict, cache_dir: str | None) -> list[dict]:
    """Gather the facts of one commit and judge it (`law.judge`)."""
    parent = c.parents[0] if c.parents else None
    before, law_from = _law_before(law, parent, state)
    clock = state["clock"]
    ahead = c.time - clock.now if clock is not None else None
    after, law_problem = _law_after(c, before, contents, lifecycles, cache_dir)
    law[c.sha] = after
    _follow_line(state, c, before, after, lifecycles, cache_dir)
    ruling = before or after
    if ruling is None:
        state["before_law"].append(c)
        carry_over(run, c, parent)
        # not managed yet at this point of history: only the hub's clock holds
        return [v.to_dict() for v in as_made(None, ahead)]
    lc, law_problem = judged_law(git, _lifecycle(ruling, lifecycles, cache_dir),
                                 law_from if before is not None else c.sha, c, law_problem)
    merge = len(c.parents) > 1
    if merge and not (state["line"] and line_rule(lc)):
        state["unjudged_merges"] += 1   # before the line rule, or off the line: work
    ctx = ReplayContext(git, parent, c, lc, run, contents, parsed, clock)
    found = judge(_facts(git, c, lc, before is not None, law_problem, law_from, ctx, state,
                         ahead, contents, parsed))
    ctx.settle()
    return [v.to_dict() for v in found]


def _facts(git: Git, c: Commit, lc: Lifecycle, had_law: bool, law_problem: Violation | None,
           law_from: str | None, ctx: ReplayContext, state: dict, ahead: float | None,
           contents: dict, parsed: dict) -> Facts:
    """What verify knows of commit `c`, judged by `lc` (`had_law`: its parent was under a
    law; `contents`: blob -> content; `parsed`: state files parsed already)."""
    rx = lc.state_path_regex()
    changes = [FileChange(p, contents.get(o) if o else None, contents.get(n) if n else None,
                          m) for p, o, n, m in c.changes if rx.match(p)]
    agent, mark = _session_of(state["bound"], c.sha)
    return Facts(lc, changes, message=parse_message(c.message), merge=len(c.parents) > 1,
                 law_changed=[p for p, _o, _n, _m in c.changes if is_law_path(p, lc)]
                 if had_law else [],
                 law_problem=law_problem, line=state["line"], context=ctx, bound=agent,
                 mark=mark, encoding=c.encoding, ahead=ahead,
                 proofs=GitProofs(git, c, law_from, ctx), memo=parsed, brings_law=not had_law)


def _law_before(law: dict, parent: str | None, state: dict) -> tuple:
    """(the valid law in force at the commit's first parent, the commit whose tree holds it
    and its allowed signers). A commit joining the history a door guards with no law of its
    own is judged by that history's (once managed, always managed)."""
    before = law.get(parent) if parent is not None else None
    if before is None and state["root_law"] is not None:
        return state["root_law"], state["root"]
    return before, parent


def _follow_line(state: dict, c: Commit, before, after, lifecycles: dict,
                 cache_dir: str | None) -> None:
    """Where the law declares the team line from: the commit whose law first declares it,
    since the last that did not."""
    if after is None or (before is not None and before[0] == after[0]):
        return
    if not line_rule(_lifecycle(after, lifecycles, cache_dir)):
        state["line_from"] = None
    elif state["line_from"] is None:
        state["line_from"] = c.sha


def _session_of(bound, sha: str) -> tuple[str | None, str | None]:
    """(agent, runtime mark) of the session that made `sha` here (the ref guard's), else
    (None, None)."""
    if bound is None or sha not in bound[2]:
        return None, None
    return bound[0], bound[1]


def _law_after(c: Commit, before, contents: dict, lifecycles: dict,
               cache_dir: str | None) -> tuple[tuple[str, bytes] | None, Violation | None]:
    """(the valid law in force after `c`, the problem of a lifecycle it deletes or leaves
    invalid): once managed, always managed, and later commits are judged by the last valid
    law."""
    changed = [n for path, _o, n, _m in c.changes if path == LIFECYCLE_PATH]
    return _law_changed(changed[0], before, contents, lifecycles, cache_dir) if changed \
        else (before, None)


def _law_changed(new: str | None, before, contents: dict, lifecycles: dict,
                 cache_dir: str | None) -> tuple[tuple[str, bytes] | None, Violation | None]:
    """`_law_after` a commit that writes the lifecycle's blob `new` (None: deletes it)."""
    if new is None:
        return _deleted(before)
    data = contents.get(new) if new else None
    if new and _lifecycle((new, data), lifecycles, cache_dir) is not None and data is not None:
        return (new, data), None
    return before, _left_invalid(lifecycles.get(("error", new)))


def _deleted(before) -> tuple[tuple[str, bytes] | None, Violation | None]:
    """The law after a commit that deletes the lifecycle: the one before, and the problem,
    where there was one."""
    if before is None:
        return None, None
    return before, Violation(Rule.LIFECYCLE, f"this commit deletes {LIFECYCLE_PATH}; a "
                             "managed repository keeps its law (later commits are judged by "
                             "the last valid one)", LIFECYCLE_PATH)


def _left_invalid(err: GitstateError | None) -> Violation:
    """The problem of a commit that leaves the lifecycle invalid (`err`: why, where known)."""
    return Violation(getattr(err, "rule", Rule.LIFECYCLE), f"this commit leaves "
                     f"{LIFECYCLE_PATH} invalid (later commits are judged by the last "
                     "valid law)" + (f": {err.message}" if err is not None else ""),
                     getattr(err, "where", None) or LIFECYCLE_PATH)


def _judge_adopted(state: dict, lc: Lifecycle) -> list[dict]:
    """The history written before its first lifecycle, judged by that law's tags."""
    older, state["before_law"] = state["before_law"], []
    by_sha = {c.sha: c for c in older}
    found, state["by_tag"] = judge_tags(lc, [(c.sha, c.subject) for c in older])
    return [p for sha, rule, message in found
            for p in _as_problems(by_sha[sha], [{"rule": rule, "message": message,
                                                  "where": None}])]


def _lifecycle(entry: tuple[str, bytes | None], memo: dict, cache_dir: str | None):
    blob, data = entry
    if blob not in memo:
        try:
            memo[blob] = load_lifecycle_cached(data or b"", blob, LIFECYCLE_PATH, cache_dir)
        except GitstateError as exc:
            memo[blob], memo[("error", blob)] = None, exc
    return memo[blob]


def _as_problems(c: Commit, violations: list[dict]) -> list[dict]:
    return [{"commit": c.sha, "subject": c.subject, "author": c.author, "time": iso(c.time),
             **v}
            for v in violations]


def _extends(git: Git, tip: str, rev: str) -> bool:
    """True if `tip` is on the first-parent line of `rev`: the line goes on from it."""
    if not git.ok("merge-base", "--is-ancestor", tip, rev):
        return False
    return on_first_parent_line(git, tip, rev)


def _identity() -> list:
    return [4, __version__]   # 4: the line's report kept beside the problems


def _load(cache_dir: str | None) -> dict | None:
    return cache.load(cache_dir, CACHE_NAME, _identity())


def _store(cache_dir: str | None, data: dict) -> None:
    cache.store(cache_dir, CACHE_NAME, _identity(), data)


# what `gitstate verify` says beside the problems (`views.verified`)

def must_be_managed(repo) -> None:
    """A repository whose history never held a lifecycle is not managed: say so (exit 1)."""
    try:
        repo.lifecycle()
        return
    except InvalidFile:
        return   # managed, with a lifecycle that is invalid now: verify says which commit
    except NotManaged:
        head = repo.git.head()
        if head and repo.git.text("log", "-1", "--format=%H", head, "--", LIFECYCLE_PATH):
            return   # it was managed once: verify judges that history
        raise


def known_revs(repo, revs) -> None:
    """A revision that names nothing is the caller's mistake: exit 2."""
    for rev in revs:
        parts = re.split(r"\.\.\.?", rev) if not rev.startswith("-") else []
        if any(part and repo.git.rev(part) is None for part in parts):
            raise UsageError(f"unknown revision or range {rev!r}",
                             hint="e.g. `gitstate verify origin/main..HEAD`")


def declared_line(repo, head: str | None) -> str | None:
    """The team line the law at `head` declares."""
    try:
        return repo.lifecycle(head, index=False, worktree=False).line if head else None
    except GitstateError:
        return None


def law_committed(repo, head: str | None) -> bool:
    """Does the history of `head` hold a lifecycle, now or before?"""
    return head is not None and (
        repo.git.cat_files([f"{head}:{LIFECYCLE_PATH}"])[0] is not None
        or bool(repo.git.text("log", "-1", "--format=%H", head, "--", LIFECYCLE_PATH)))
