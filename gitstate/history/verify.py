"""`gitstate verify`: replay history through the hooks' own rules.

One streamed `git log --raw` gives every commit with the blobs it changed (merges against
their first parent); one `git cat-file --batch` gives the contents of every state file
involved. Each commit is then judged by `rules.validate` exactly as the hooks would have judged
it, so a commit made with `git commit --no-verify`, or pushed from a clone without hooks, is
caught. A merge takes unchanged from its other parents what was judged there.

The result for the whole history of HEAD is remembered under `.git/gitstate/`; a later run on
a descendant judges only the new commits.
"""

from __future__ import annotations

import re

from gitstate import __version__
from gitstate.git import cache
from gitstate.errors import GitstateError
from gitstate.git.runner import Git
from gitstate.law.lifecycle import Lifecycle
from gitstate.git.lifecycle_cache import load_lifecycle_cached
from gitstate.git.repo import GitContext, inherited_paths
from gitstate.law.rules import FileChange, parse_state, validate
from gitstate.law.limits import LIFECYCLE_BYTES, STATE_FILE_BYTES
from gitstate.law.verdict import SYMLINK_MODE
from gitstate.law.lifecycle import LIFECYCLE_PATH

_REC, _END = "\x1e", "\x1d"
_FORMAT = f"--format={_REC}%H%x1f%P%x1f%ct%x1f%an%x1f%B{_END}"
_ZERO = re.compile(r"^0+$")
CACHE_NAME = "verified.json"
READ_LIMIT = max(STATE_FILE_BYTES, LIFECYCLE_BYTES)   # a larger blob is refused by its size


class Commit:
    __slots__ = ("sha", "parents", "time", "author", "message", "changes", "links")

    def __init__(self, sha, parents, time, author, message, changes, links=frozenset()):
        self.sha, self.parents, self.time = sha, parents, time
        self.author, self.message, self.changes = author, message, changes
        self.links = links   # paths the commit writes as symbolic links (mode 120000)

    @property
    def subject(self) -> str:
        return self.message.split("\n", 1)[0]


def read_commits(git: Git, revs: list[str]):
    """Every commit of `revs`, oldest first, with (path, old blob, new blob) of its changes.

    A thread drains git's output as it comes, so that git keeps walking history while the
    commits already read are being judged (the two take about as long on long histories)."""
    import queue
    import threading

    args = ["-c", "core.quotePath=false", "log", "--reverse", "--topo-order", "--raw",
            "--no-abbrev", "--no-renames", "--diff-merges=first-parent", _FORMAT, *revs, "--"]
    chunks: queue.Queue = queue.Queue(maxsize=4096)
    done = object()

    def pump() -> None:
        try:
            for chunk in git.stream(*args, sep=_REC.encode()):
                chunks.put(chunk)
            chunks.put(done)
        except BaseException as exc:  # handed to the reading side, raised there
            chunks.put(exc)

    threading.Thread(target=pump, daemon=True).start()
    while True:
        chunk = chunks.get()
        if chunk is done:
            return
        if isinstance(chunk, BaseException):
            raise chunk
        if not chunk:
            continue
        head, _, raw = chunk.decode("utf-8", "surrogateescape").partition(_END)
        fields = head.split("\x1f", 4)
        if len(fields) != 5:
            continue
        sha, parents, ct, author, message = fields
        changes = []
        links = set()
        for line in raw.split("\n"):
            if not line.startswith(":"):
                continue
            meta, _, path = line.partition("\t")
            parts = meta.split()
            if len(parts) < 5:
                continue
            old, new = parts[2], parts[3]
            changes.append((_unquote(path), None if _ZERO.match(old) else old,
                            None if _ZERO.match(new) else new))
            if parts[1] == SYMLINK_MODE:
                links.add(changes[-1][0])
        yield Commit(sha, parents.split(), int(ct or 0), author, message, changes, links)


def _unquote(path: str) -> str:
    """git's C-style quoting of unusual paths, undone."""
    if not (path.startswith('"') and path.endswith('"')):
        return path
    body = path[1:-1].encode("latin-1", "backslashreplace").decode("unicode_escape")
    return body.encode("latin-1", "surrogateescape").decode("utf-8", "surrogateescape")


def verify(git: Git, revs: list[str], cache_dir: str | None, *,
           remember: bool = False) -> tuple[list[dict], int]:
    """(problems, number of commits judged) for the history of `revs`."""
    saved = _load(cache_dir) if remember else None
    head = revs[0] if len(revs) == 1 else None
    problems: list[dict] = []
    judged_revs = revs
    if saved and head and saved["tip"] == head:
        return saved["problems"], 0
    if saved and head and _extends(git, saved["tip"], head):
        problems = list(saved["problems"])
        judged_revs = [f"{saved['tip']}..{head}"]
    found, judged = _judge_all(git, read_commits(git, judged_revs), cache_dir)
    problems += found
    if remember and head:
        _store(cache_dir, {"tip": head, "problems": problems})
    return problems, judged


BATCH = 2000


def _judge_all(git: Git, commits, cache_dir: str | None) -> tuple[list[dict], int]:
    """(problems, count) for commits (oldest first), judged in batches as they are read."""
    state = {"law": {}, "lifecycles": {}, "parsed": {}, "run": {"at": None, "agents": {}}}
    problems: list[dict] = []
    batch: list[Commit] = []
    count = 0
    for c in commits:
        batch.append(c)
        if len(batch) >= BATCH:
            problems += _judge_batch(git, batch, cache_dir, state)
            count += len(batch)
            batch = []
    if batch:
        problems += _judge_batch(git, batch, cache_dir, state)
        count += len(batch)
    return problems, count


def _judge_batch(git: Git, commits: list[Commit], cache_dir: str | None,
                 state: dict) -> list[dict]:
    # the lifecycle blob in force at each commit, inherited from the first parent
    law: dict[str, tuple[str, bytes] | None] = state["law"]
    outside = sorted({c.parents[0] for c in commits if c.parents} - {c.sha for c in commits}
                     - set(law))
    for parent, found in zip(outside, git.cat_batch(f"{p}:{LIFECYCLE_PATH}" for p in outside)):
        law[parent] = (found[0], found[2]) if found and found[1] == "blob" else None

    blobs = {b for c in commits for _, old, new in c.changes for b in (old, new) if b}
    contents = dict(zip(blobs, git.cat_files(blobs, READ_LIMIT))) if blobs else {}
    lifecycles: dict[str, Lifecycle | None] = state["lifecycles"]
    parsed: dict = state["parsed"]   # each blob parsed once, judged as new and then as old
    run: dict = state["run"]         # every agent's front matter along the line being replayed
    problems = []
    for c in commits:
        parent = c.parents[0] if c.parents else None
        before = law.get(parent) if parent else None
        after = before
        violations = []
        for path, _old, new in c.changes:
            if path == LIFECYCLE_PATH:
                after = (new, contents.get(new)) if new else None
        law[c.sha] = after
        rules_from = before or after
        if rules_from is None:
            _carry_over(run, c, parent)
            continue  # not managed yet at this point of history
        lc = _lifecycle(rules_from, lifecycles, cache_dir)
        if lc is None:
            run["agents"], run["at"] = None, None
        if after is not None and after is not before and after[0] != (before or ("",))[0]:
            if _lifecycle(after, lifecycles, cache_dir) is None:
                err = lifecycles.get(("error", after[0]))
                violations.append({"rule": getattr(err, "rule", "lifecycle"),
                                   "message": f"this commit leaves {LIFECYCLE_PATH} invalid"
                                   + (f": {err.message}" if err is not None else ""),
                                   "where": getattr(err, "where", None) or LIFECYCLE_PATH})
        if lc is None:
            problems += _as_problems(c, violations)
            continue
        rx = lc.state_path_regex()
        changes = [FileChange(p, contents.get(o) if o else None, contents.get(n) if n else None,
                              SYMLINK_MODE if p in c.links else None)
                   for p, o, n in c.changes if rx.match(p)]
        if not changes and "[" not in c.subject and not lc.accept \
                and not (lc.policies.atomic_commits and c.subject.startswith("@")):
            _carry_over(run, c, parent)   # no state file changed: they carry over as they were
            problems += _as_problems(c, violations)
            continue
        inherited = inherited_paths(git, c.parents[1:], changes)
        ctx = _ReplayContext(git, parent, c, lc, run, contents, parsed)
        found = validate(changes, lc, c.message, inherited=inherited, context=ctx, memo=parsed)
        ctx.settle()
        violations += [v.to_dict() for v in found]
        problems += _as_problems(c, violations)
    return problems


def _carry_over(run: dict, c: Commit, parent: str | None) -> None:
    """The agents' state files of `c` are its parent's: keep them if they were known."""
    if run["agents"] is not None and run["at"] == parent:
        run["at"] = c.sha
    else:
        run["agents"], run["at"] = None, None


class _ReplayContext(GitContext):
    """A commit being replayed. The state files of every agent (asked by the rules about
    roles and the pool) are kept up to date commit by commit along a line of history, instead
    of being read from git again for each commit; at a fork they are read once from the tree."""

    def __init__(self, git: Git, parent: str | None, c: Commit, lc: Lifecycle, run: dict,
                 contents: dict, parsed: dict):
        super().__init__(git, parent, tree=c.sha, now=c.time, lc=lc)
        linear = run["agents"] is not None and (
            run["at"] == parent if parent else run["at"] is None)
        self._running = run["agents"] if linear else None
        self._changes = [(p, n) for p, _o, n in c.changes if lc.state_path_regex().match(p)]
        self._contents, self._parsed, self._run, self._sha = contents, parsed, run, c.sha
        self._rx = lc.state_path_regex()
        self._applied = False

    def _apply(self) -> None:
        if self._applied or self._running is None:
            return
        self._applied = True
        for path, new in self._changes:
            agent = self._rx.match(path).group("id")
            try:
                doc = parse_state(self._contents.get(new) or b"", path, self._parsed) \
                    if new else None
            except GitstateError:
                doc = None
            if doc is None:
                self._running.pop(agent, None)
            else:
                self._running[agent] = doc.front

    def agents(self) -> dict[str, dict]:
        if self._agents is None:
            if self._running is not None:
                self._apply()
                self._agents = self._running
            else:
                self._agents = super().agents()
        return self._agents

    def settle(self) -> None:
        """After judging: hand the agents' state files on to the next commit, if known."""
        self._apply()
        known = self._running if self._running is not None else self._agents
        self._run["agents"] = known
        self._run["at"] = self._sha if known is not None else None


def _lifecycle(entry: tuple[str, bytes | None], memo: dict, cache_dir: str | None):
    blob, data = entry
    if blob not in memo:
        try:
            memo[blob] = load_lifecycle_cached(data or b"", blob, LIFECYCLE_PATH, cache_dir)
        except GitstateError as exc:
            memo[blob], memo[("error", blob)] = None, exc
    return memo[blob]


def _as_problems(c: Commit, violations: list[dict]) -> list[dict]:
    return [{"commit": c.sha, "subject": c.subject, "author": c.author, "time": c.time, **v}
            for v in violations]


def _extends(git: Git, tip: str, rev: str) -> bool:
    """True if `rev` is `tip` plus a line of new commits without merges."""
    if not git.ok("merge-base", "--is-ancestor", tip, rev):
        return False
    return git.text("rev-list", "--merges", "-n", "1", f"{tip}..{rev}") == ""


def _identity() -> list:
    return [1, __version__]


def _load(cache_dir: str | None) -> dict | None:
    return cache.load(cache_dir, CACHE_NAME, _identity())


def _store(cache_dir: str | None, data: dict) -> None:
    cache.store(cache_dir, CACHE_NAME, _identity(), data)


def describe_problem(p: dict) -> str:
    where = f"{p['where']}: " if p.get("where") else ""
    return f"{p['commit'][:10]} [{p['rule']}] {where}{p['message']}  ({p['subject'][:60]})"

