"""`gitstate verify`: replay history through the hooks' own rules.

History is read without ever splitting free text: one streamed `git log -z` gives each
commit's id, parents and the blobs it changed (merges against their first parent) — fields that
are hex, or paths terminated by NUL — and one `git cat-file --batch` per batch gives the commit
objects (author, committer time, message: parsed from their headers, sized by the object
header) and the contents of every state file involved. A message or a name may hold any
character; none of them can cut a record or forge a change.

Each commit is then judged by `rules.validate` exactly as the hooks would have judged it, so a
commit made with `git commit --no-verify`, or pushed from a clone without hooks, is caught.
Beyond the hooks' rules, every door applies the README's "What gitstate promises": once
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

from gitstate import __version__
from gitstate.errors import GitstateError
from gitstate.git import cache
from gitstate.git.lifecycle_cache import load_lifecycle_cached
from gitstate.git.repo import judge_merge_at, law_made_by_merge
from gitstate.git.runner import Git
from gitstate.git.signing import signed_by
from gitstate.history.commits import Commit, parse_commit_object, read_commits
from gitstate.history.movers import judge_movers
from gitstate.history.replay import ReplayContext, carry_over
from gitstate.law.lifecycle import LIFECYCLE_PATH, SIGNERS_PATH, Lifecycle, is_law_path
from gitstate.law.limits import LIFECYCLE_BYTES, STATE_FILE_BYTES
from gitstate.law.rules import FileChange, check_law_change, validate
from gitstate.law.signers import approvers, gated, unsigned
from gitstate.law.timeline import judge_tags
from gitstate.law.times import iso
from gitstate.rule_ids import Rule

CACHE_NAME = "verified.json"
READ_LIMIT = max(STATE_FILE_BYTES, LIFECYCLE_BYTES)   # a larger blob is refused by its size
SKEW = 300   # seconds a committer's clock may run ahead of the hub's


def verify(git: Git, revs: list[str], cache_dir: str | None, *, remember: bool = False,
           root: str | None = None, clock=None,
           report: dict | None = None, progress=None,
           bound: tuple[str, set[str]] | None = None) -> tuple[list[dict], int]:
    """(problems, number of commits judged) for the history of `revs`.

    `cache_dir` None: no cache is read or written, not even the checked lifecycles.
    `root`: the commit whose law is in force, for a caller judging commits that join an
    existing history (the hub, the ref guard): a commit with no parent, or whose parent has
    no law, is judged by it, and a gated move there by its allowed signers.
    `clock`: the hub's (`doors.hub.HubClock`): time is its own, not the committers'.
    `report`, if given, gets `by_tag`: the commits older than the lifecycle, judged by their
    tags alone (an adopted history). `progress(count)` is told how many commits are judged
    as each batch is done. `bound`: (agent, commits made here) of a session bound to an agent
    (the ref guard): those commits are judged for who moved whom as the hooks judge them."""
    saved = _load(cache_dir) if remember else None
    head = revs[0] if len(revs) == 1 else None
    problems: list[dict] = []
    judged_revs = revs
    by_tag: list[str] = []
    if saved and head and saved["tip"] == head:
        if report is not None:
            report["by_tag"] = saved.get("by_tag", [])
        return saved["problems"], 0
    if saved and head and _extends(git, saved["tip"], head):
        problems = list(saved["problems"])
        by_tag = list(saved.get("by_tag", []))
        judged_revs = [f"{saved['tip']}..{head}"]
    found, judged, tagged = _judge_all(git, read_commits(git, judged_revs), cache_dir,
                                       root, clock, progress, bound)
    problems += found
    by_tag += tagged
    if report is not None:
        report["by_tag"] = by_tag
    if remember and head:
        _store(cache_dir, {"tip": head, "problems": problems, "by_tag": by_tag})
    return problems, judged


BATCH = 2000


# The origin of a law this door already holds: the history it guards, or the commits before
# those being judged (a cached verify goes on from them).
HELD = "held"


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
               clock=None, progress=None, bound=None) -> tuple[list[dict], int, list[str]]:
    """(problems, count, judged by tag alone) for commits (oldest first), judged in batches
    as they are read."""
    lifecycles: dict = {}
    state = {"law": {}, "lifecycles": lifecycles, "parsed": {},
             "run": {"at": None, "agents": {}}, "root": root,
             "root_law": law_at(git, root, cache_dir, lifecycles), "origin": {},
             "clock": clock, "before_law": [], "by_tag": [], "bound": bound}
    problems: list[dict] = []
    count = 0
    # git reads the objects of the next batches (a process of its own) while Python judges
    # this one: the two cores work at once instead of in turn
    from concurrent.futures import ThreadPoolExecutor  # (and logging: ~10 ms to import)
    with ThreadPoolExecutor(max_workers=1) as pool:
        for done, fetched in _read_ahead(pool, git, commits, state["law"]):
            problems += _judge_batch(git, done, fetched.result(), cache_dir, state)
            count += len(done)
            if progress is not None:
                progress(count)
    return problems, count, state["by_tag"]


# Batches whose objects are being read while one is judged: a read waits for Python's lock
# whenever it has work to do, so it starts early. The first batches are small, so that
# judging starts while git is still writing the first ones.
AHEAD, FIRST = 2, 250


def _read_ahead(pool, git: Git, commits, law: dict):
    """(batch, its objects as they will be read) AHEAD batches before they are judged."""
    from collections import deque
    pending: deque = deque()
    kept: dict = {}   # the reading thread's alone
    for batch in _batches(commits):
        before = {c.sha for b, _f in pending for c in b}
        pending.append((batch, pool.submit(_fetch, git, batch, law, before, kept)))
        if len(pending) > AHEAD:
            yield pending.popleft()
    yield from pending


def _batches(commits):
    batch: list[Commit] = []
    size = min(FIRST, BATCH)
    for c in commits:
        batch.append(c)
        if len(batch) >= size:
            yield batch
            batch = []
            size = min(size * 2, BATCH)
    if batch:
        yield batch


def _fetch(git: Git, commits: list[Commit], known: dict, before: set[str],
           kept: dict | None = None) -> tuple:
    """The objects a batch is judged with: its commits' objects, the lifecycle of each
    parent outside it (not judged already: `known`, the laws found so far, which grows
    meanwhile; nor in the batches `before` it, whose laws are being worked out), and the
    content of every state file its changes name. `kept` (path -> (blob, content) last read,
    carried from batch to batch): a change's old side, most often read by the batch before,
    is not read again (contents are named by their blob ids)."""
    outside = sorted(p for p in {p for c in commits for p in c.parents}
                     - {c.sha for c in commits} - before if p not in known)
    contents: dict = {} if kept is None else dict(
        kept[path] for c in commits for path, *_r in c.changes if path in kept)
    blobs = sorted({b for c in commits for _, old, new, _m in c.changes for b in (old, new)
                    if b and b not in contents})
    specs = [c.sha for c in commits] + [f"{p}:{LIFECYCLE_PATH}" for p in outside]
    found = git.cat_batch(specs)
    # blobs over the limit are not read: their size alone refuses them
    for b, got in zip(blobs, git.cat_batch(blobs, READ_LIMIT)):
        contents[b] = got[2] if got and got[1] == "blob" else None
    if kept is not None:
        for c in commits:
            for path, _old, new, _m in c.changes:
                if new is not None:
                    kept[path] = (new, contents[new])
        if len(kept) > 100_000:   # (the judgement keeps as many files parsed already)
            kept.clear()
    return outside, contents, found


def _judge_batch(git: Git, commits: list[Commit], fetched: tuple, cache_dir: str | None,
                 state: dict) -> list[dict]:
    # the valid law in force after each commit, inherited from the first parent
    law: dict[str, tuple[str, bytes] | None] = state["law"]
    lifecycles: dict[str, Lifecycle | None] = state["lifecycles"]
    outside, contents, found = fetched
    n = len(commits)
    laws = [(p, got) for p, got in zip(outside, found[n:n + len(outside)])
            if p not in law]         # a parent the batch before set meanwhile keeps its law
    for c, obj in zip(commits, found):
        if obj is not None:
            c.time, c.author, c.message = parse_commit_object(obj[2])
    for parent, got in laws:
        entry = (got[0], got[2]) if got and got[1] == "blob" else None
        law[parent] = entry if entry and _lifecycle(entry, lifecycles, cache_dir) else None
        state["origin"][parent] = HELD
    parsed: dict = state["parsed"]   # each blob parsed once, judged as new and then as old
    run: dict = state["run"]         # every agent's front matter along the line being replayed
    problems = []
    for c in commits:
        problems += _as_problems(c, _judge_commit(git, c, law, lifecycles, contents, parsed,
                                                  run, state, cache_dir))
        joined = state.pop("joined_problems", None)
        if joined:   # a line without law that this merge joined, judged by its law
            by_tag = state.get("by_tag_rules", set())
            problems += [p for p in joined if (p["commit"], p["rule"]) not in by_tag]
        adopted = law.get(c.sha) if state["before_law"] else None
        if adopted is not None:   # the law an old history took
            problems += _judge_adopted(state, _lifecycle(adopted, lifecycles, cache_dir))
    return problems


def _judge_commit(git: Git, c: Commit, law: dict, lifecycles: dict, contents: dict,
                  parsed: dict, run: dict, state: dict, cache_dir: str | None) -> list[dict]:
    parent = c.parents[0] if c.parents else None
    origin: dict = state["origin"]
    before = law.get(parent) if parent is not None else None
    came_from = origin.get(parent, HELD) if before is not None else None
    law_from = parent   # the commit whose tree holds the law in force (its allowed signers)
    if before is None and state["root_law"] is not None:
        # joining the history this door guards, with no law of its own: judged by that one's
        # (once managed, always managed)
        before, came_from, law_from = state["root_law"], HELD, state["root"]
    violations: list[dict] = []
    clock = state["clock"]
    if clock is not None and c.time > clock.now + SKEW:
        violations.append({"rule": Rule.FUTURE_DATE, "message": "committed "
                           f"{int(c.time - clock.now)}s in the hub's future (more than 5 "
                           "minutes of clock skew); fix the committer's clock and recommit",
                           "where": None})
    after = before
    lc_change = next(((new, mode) for path, _o, new, mode in c.changes
                      if path == LIFECYCLE_PATH), None)
    if lc_change is not None:
        new = lc_change[0]
        entry = (new, contents.get(new)) if new else None
        if entry is not None and _lifecycle(entry, lifecycles, cache_dir) is not None:
            after = entry
        elif new is None and before is not None:
            violations.append({"rule": Rule.LIFECYCLE, "message": f"this commit deletes "
                               f"{LIFECYCLE_PATH}; a managed repository keeps its law (later "
                               "commits are judged by the last valid one)",
                               "where": LIFECYCLE_PATH})
        elif new is not None:
            err = lifecycles.get(("error", new))
            violations.append({"rule": getattr(err, "rule", Rule.LIFECYCLE), "message":
                               f"this commit leaves {LIFECYCLE_PATH} invalid (later commits are "
                               "judged by the last valid law)"
                               + (f": {err.message}" if err is not None else ""),
                               "where": getattr(err, "where", None) or LIFECYCLE_PATH})
    if len(c.parents) > 1:
        joining, came_from = _judge_joining(git, c, law, before, after, came_from, state,
                                            cache_dir)
        violations += joining
    law[c.sha] = after
    if after is not None:
        origin[c.sha] = came_from if came_from is not None else c.sha
    rules_from = before or after
    if rules_from is None:
        state["before_law"].append(c)
        carry_over(run, c, parent)
        return violations   # not managed yet at this point of history
    lc = _lifecycle(rules_from, lifecycles, cache_dir)
    changed_law: list[str] = []
    if before is not None:
        changed_law = [p for p, _o, _n, _m in c.changes if is_law_path(p)]
        if len(c.parents) > 1:   # what the merge takes from a line that changed it was judged there
            changed_law = law_made_by_merge(git, c.parents, c.sha, changed_law)
        violations += [v.to_dict() for v in check_law_change(lc, c.message, changed_law)]
    rx = lc.state_path_regex()
    changes = [FileChange(p, contents.get(o) if o else None, contents.get(n) if n else None,
                          m) for p, o, n, m in c.changes if rx.match(p)]
    if len(c.parents) > 1:
        ctx = ReplayContext(git, parent, c, lc, run, contents, parsed, clock)
        found = judge_merge_at(git, lc, c.parents, c.sha, ctx)
        ctx.settle()
        violations += [v.to_dict() for v in found]
        if changed_law and not any(v["rule"] == Rule.NEEDS_APPROVAL for v in violations):
            violations += _check_signed(git, c, lc, [], changed_law, law_from)
        return violations
    if not changes and "[" not in c.subject and not lc.accept \
            and not (lc.policies.atomic_commits and c.subject.startswith("@")):
        carry_over(run, c, parent)   # no state file changed: they carry over as they were
        if changed_law and "approved-by" in c.message.lower() and not violations:
            violations += _check_signed(git, c, lc, [], changed_law, law_from)
        return violations
    ctx = ReplayContext(git, parent, c, lc, run, contents, parsed, clock)
    found = validate(changes, lc, c.message, context=ctx, memo=parsed)
    violations += [v.to_dict() for v in found]
    violations += judge_movers(git, c, lc, changes, ctx, law_from, parsed, state["bound"])
    ctx.settle()
    if law_from is not None and "approved-by" in c.message.lower() \
            and not any(v["rule"] == Rule.NEEDS_APPROVAL for v in violations):
        violations += _check_signed(git, c, lc, changes, changed_law, law_from)
    return violations


def _judge_joining(git: Git, c: Commit, law: dict, before, after, came_from, state: dict,
                   cache_dir: str | None) -> tuple[list[dict], str | None]:
    """A merge joins lines of history: (violations, origin of its law). Lines whose laws began
    apart (each brought its own lifecycle) are not one history (`foreign-law`); a line that had
    no law is judged now, commit by commit, by the law it joins."""
    origin = state["origin"]
    held = [(c.parents[0], came_from)] if before is not None and came_from is not None else []
    held += [(p, origin.get(p, HELD)) for p in c.parents[1:] if law.get(p) is not None]
    origins = {o for _p, o in held}
    out: list[dict] = []
    if len(origins) > 1:
        lines = ", ".join(
            f"{p[:10]} (law first brought by {o[:10] if o != HELD else 'this history'})"
            for p, o in held)
        out.append({"rule": Rule.FOREIGN_LAW, "message": "this merge joins lines of history whose "
                    f"laws began apart: {lines}. A managed history has one law; rebase the "
                    "work of one line onto the other instead", "where": LIFECYCLE_PATH})
    joined_origin = came_from if came_from is not None else min(origins, default=None)
    ruling = after or before
    if ruling is None or state["root_law"] is not None:
        return out, joined_origin   # a door's history: every line was judged with its law
    lawless = [p for p in c.parents if law.get(p) is None]
    managed = [p for p in c.parents if law.get(p) is not None]
    if not lawless:
        return out, joined_origin
    sub = {**state, "law": {}, "origin": {}, "run": {"at": None, "agents": {}},
           "root": managed[0] if managed else None, "root_law": ruling, "before_law": [],
           "by_tag": []}
    judged: set[str] = set()
    for p in lawless:
        commits = read_commits(git, [p, "--not", *[q for q in c.parents if q != p]])
        for batch in _batches(commits):
            judged.update(b.sha for b in batch)
            fetched = _fetch(git, batch, sub["law"], set())
            state.setdefault("joined_problems", []).extend(
                _judge_batch(git, batch, fetched, cache_dir, sub))
    # judged in full now: not again by their tags alone when a law first appears
    state["before_law"] = [b for b in state["before_law"] if b.sha not in judged]
    return out, joined_origin


def _check_signed(git: Git, c: Commit, lc: Lifecycle, changes: list,
                  changed_law: list[str], law_from: str | None) -> list[dict]:
    """A gated move approved by a human must be signed by that human's key, where the law in
    force (the tree of `law_from`: the parent, or the commit a door guards) has
    protocols/allowed_signers."""
    what = gated(lc, changes, changed_law)
    names = approvers(lc, c.message) if what else []
    if not names:
        return []
    signers = git.cat_files([f"{law_from}:{SIGNERS_PATH}"])[0] if law_from else None
    if signers is None:
        return []   # keys not known: the trailer alone counts (doctor says so)
    raw = git.cat_batch([c.sha])[0]
    reasons = [signed_by(raw[2] if raw else b"", signers, n) for n in names]
    why = reasons[0]
    if why is None or None in reasons:
        return []
    return [unsigned(what, names, why).to_dict()]


def _judge_adopted(state: dict, lc: Lifecycle) -> list[dict]:
    """The history written before its first lifecycle, judged by that law's tags."""
    older, state["before_law"] = state["before_law"], []
    by_sha = {c.sha: c for c in older}
    found, state["by_tag"] = judge_tags(lc, [(c.sha, c.subject) for c in older])
    state.setdefault("by_tag_rules", set()).update((sha, rule) for sha, rule, _m in found)
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
    """True if `rev` is `tip` plus a line of new commits without merges."""
    if not git.ok("merge-base", "--is-ancestor", tip, rev):
        return False
    return git.text("rev-list", "--merges", "-n", "1", f"{tip}..{rev}") == ""


def _identity() -> list:
    return [3, __version__]   # 3: problems' times as ISO strings


def _load(cache_dir: str | None) -> dict | None:
    return cache.load(cache_dir, CACHE_NAME, _identity())


def _store(cache_dir: str | None, data: dict) -> None:
    cache.store(cache_dir, CACHE_NAME, _identity(), data)
