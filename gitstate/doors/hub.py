"""The hub: a bare repository whose pre-receive hook holds every pushed ref to the law.

The hub is the boundary (docs/explanation/promises.md). It accepts only the refs a
team uses — branches, tags and gitstate's own `refs/gitstate/` — and a bounded number of them
per push; judges every new commit once, with `verify`'s judgement and never a cache; refuses to
rewrite or delete a protected branch (its default branch, `main` and `master`, and any
`gitstate.protect` ref); refuses commits dated in its future; and judges a timed transition by
its own clock and its own record of when it received the commit that started the wait (git
notes under `refs/notes/gitstate-received`, written after each push lands by the post-receive
hook, and out of any client's reach).
"""

from __future__ import annotations

import os
import sys
import time

from gitstate.git import QUEUE_PREFIX
from gitstate.git.repo import team_ref
from gitstate.git.runner import Git, is_zero
from gitstate.git.upstream import HUB_MARK_REF
from gitstate.law.rule_ids import Rule

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import BinaryIO

    from gitstate.doors.install import InitReport

NOTES_REF = "refs/notes/gitstate-received"
# What a client may push: branches, tags, and gitstate's own refs. Anything else could change
# how the hub reads history (refs/replace/), its clock (refs/notes/), or hide commits from it.
ACCEPTED = ("refs/heads/", "refs/tags/", "refs/gitstate/")
ALWAYS_PROTECTED = ("refs/heads/main", "refs/heads/master")
MAX_REFS = 1000   # per push, unless `git config gitstate.maxRefsPerPush` says otherwise
HUB_HOOKS = ("pre-receive", "proc-receive", "post-receive", "reference-transaction")
# the hub's reference-transaction is post-receive's own script, run as the refs move: a pusher
# that hangs up before git's report leaves no post-receive, and its commits are noted all the
# same (.githooks/post-receive)
HUB_TEMPLATES = {"reference-transaction": "post-receive"}


class HubClock:
    """The hub's time: its clock for `now`, and for when a commit started a wait, the time
    it was received (its note), or now for a commit of this very push."""

    def __init__(self, git: Git, pushed: set[str], now: float | None = None):
        self.git, self.pushed = git, pushed
        self.now = time.time() if now is None else now

    def received(self, sha: str, committed: float) -> float:
        if sha in self.pushed:
            return self.now
        code, out, _ = self.git.call("notes", f"--ref={NOTES_REF}", "show", sha)
        text = out.decode("ascii", "replace").split()
        if code == 0 and text and text[-1].isdigit():
            return float(text[-1])
        return min(committed, self.now)   # history from before the hub kept its record


def protected_refs(git: Git) -> list[str]:
    """The branches this hub never lets be rewritten or deleted: its HEAD's, `main` and
    `master` (whichever a team pushes, whatever `git init --bare` named HEAD), and any
    `git config gitstate.protect` names."""
    refs = set(ALWAYS_PROTECTED)
    code, out, _ = git.call("symbolic-ref", "-q", "HEAD")
    if code == 0 and out.strip():
        refs.add(out.decode().strip())
    code, out, _ = git.call("config", "--get-all", "gitstate.protect")
    for name in out.decode().split() if code == 0 else []:
        refs.add(name if name.startswith("refs/") else f"refs/heads/{name}")
    return sorted(refs)


def default_branch(git: Git) -> str | None:
    """The branch whose law a new branch joins: HEAD's if it exists, else main, else master."""
    code, out, _ = git.call("symbolic-ref", "-q", "HEAD")
    names = ([out.decode().strip()] if code == 0 and out.strip() else []) + list(ALWAYS_PROTECTED)
    return next((n for n in names if git.rev(n)), None)


def _max_refs(git: Git) -> int:
    value = git.config("gitstate.maxRefsPerPush")
    return int(value) if value and value.isdigit() and int(value) > 0 else MAX_REFS


def _updates(stdin: BinaryIO) -> list[list[str]]:
    """A receive hook's input: one [old, new, ref] per line."""
    lines = stdin.read().decode("utf-8", "replace").splitlines()
    return [u for u in (line.split() for line in lines) if len(u) == 3]


def _pushed(git: Git, tips: list[str]) -> set[str]:
    """The commits these tips bring that the hub holds under no ref yet."""
    return set(git.text("rev-list", *tips, "--not", "--all").split())


def _judged(git: Git, name: str, revs: list[str], pushed: set[str], root: str | None,
            now: float | None, line: bool) -> list[tuple[str, dict]]:
    """`verify`'s judgement of `revs` by the hub's clock, each problem filed under `name`."""
    from gitstate.history.verify import verify
    problems, _ = verify(git, revs, None, root=root, clock=HubClock(git, pushed, now), line=line)
    return [(name, p) for p in problems]


def pre_receive(git: Git, stdin: BinaryIO, now: float | None = None) -> int:
    """Refuse the whole push if any pushed ref breaks the law."""
    from gitstate.history.problems import print_by_commit

    updates = _updates(stdin)
    bad: list[tuple[str, dict]] = []
    limit = _max_refs(git)
    if len(updates) > limit:
        bad.append(("", _refusal(Rule.TOO_MANY_REFS, f"this push updates {len(updates)} refs; "
                                 f"this hub takes at most {limit} in one push (git config "
                                 "gitstate.maxRefsPerPush): push them in parts")))
        updates = []
    bad += _Push(git, now).judge(updates)
    if not bad:
        return 0
    print("gitstate: push refused by the hub:", file=sys.stderr)
    print_by_commit(bad, sys.stderr)
    fix = " Fix these commits and push again (`gitstate sync` decides moves again on this " \
        "hub's branch)." if any(v.get("commit") for _, v in bad) else ""
    print("Nothing was accepted." + fix, file=sys.stderr)
    return 1


class _Push:
    """One push as the hub judges it: each ref by its name and what its update does, then the
    commits it brings, by the law in force where they land."""

    def __init__(self, git: Git, now: float | None):
        self.git, self.now = git, now
        self.protected = set(protected_refs(git))
        self.queues = bool(git.config("receive.procReceiveRefs"))
        self.default = default_branch(git)
        self.laws: dict[str | None, bool] = {}

    def judge(self, updates: list[list[str]]) -> list[tuple[str, dict]]:
        bad, groups = self._judge_each(updates)
        for root, items in groups.items():
            bad += self._judge_group(root, items)
        return bad

    def _judge_each(self, updates: list[list[str]]):
        """(the refusals of each update by itself, and of the team line; the other updates by
        the law they are under, judged together after)."""
        bad: list[tuple[str, dict]] = []
        groups: dict[str | None, list[tuple[str, str]]] = {}
        for old, new, ref in updates:
            refusal = self._refusal(old, new, ref)
            if refusal is not None:
                bad.append((ref, refusal))
                continue
            if ref.startswith(QUEUE_PREFIX) or is_zero(new):
                continue   # a queued move (judged when the hub lands it), or a deletion
            root = self._root(old)
            if ref == team_ref(self.git, root or new, local=False):
                bad += _judge_line(self.git, ref, old, new, root, self.now)
                continue
            groups.setdefault(root, []).append((ref, new))
        return bad, groups

    def _lawful(self, rev: str | None) -> bool:
        from gitstate.history.verify import law_at
        if rev not in self.laws:
            self.laws[rev] = law_at(self.git, rev) is not None
        return self.laws[rev]

    def _root(self, old: str) -> str | None:
        """The law in force: the branch's own, else the default branch's (once managed,
        always)."""
        if not is_zero(old) and self._lawful(old):
            return old
        return self.default if self._lawful(self.default) else None

    def _refusal(self, old: str, new: str, ref: str) -> dict | None:
        """Why `ref` may not be pushed by its name, else by what its update does."""
        if not ref.startswith(ACCEPTED):
            return _refusal(Rule.REF_NAMESPACE, f"{ref}: this hub accepts branches "
                            "(refs/heads/), tags (refs/tags/) and gitstate's own refs "
                            "(refs/gitstate/), nothing else: replace refs, notes and "
                            "other refs would change how it reads history")
        if ref.startswith(QUEUE_PREFIX) and self.queues:
            return None   # a queued move: judged when the hub lands it (doors/queue.py)
        if ref == HUB_MARK_REF or ref.startswith(QUEUE_PREFIX):
            return _refusal(Rule.PROTECTED_REF, f"{ref} is the hub's own: "
                            "clients do not write it")
        return self._rewrite(old, new, ref)

    def _rewrite(self, old: str, new: str, ref: str) -> dict | None:
        """A protected ref or the team line deleted, a protected ref rewritten."""
        if is_zero(new):
            return self._deleted(old, ref)
        if ref not in self.protected or is_zero(old):
            return None
        if self.git.ok("merge-base", "--is-ancestor", old, new):
            return None
        return _refusal(Rule.NON_FAST_FORWARD, f"{ref} is protected on this hub: "
                        f"{new[:10]} does not contain its tip {old[:10]}; history "
                        "is never rewritten here (fetch, rebase your commits on "
                        "it, and push again)")

    def _deleted(self, old: str, ref: str) -> dict | None:
        """A protected ref or the team line deleted."""
        if ref in self.protected:
            return _refusal(Rule.PROTECTED_REF, f"{ref} is protected on this hub: it "
                            "cannot be deleted")
        if not is_zero(old) and ref == team_ref(self.git, old, local=False):
            return _refusal(Rule.PROTECTED_REF, f"{ref} is the team line (`line:` "
                            "of the law at its tip): it cannot be deleted, nor made "
                            "again from another history")
        return None

    def _judge_group(self, root: str | None, items: list[tuple[str, str]]
                     ) -> list[tuple[str, dict]]:
        """The new commits of the refs under one law, judged together."""
        tips = sorted({new for _ref, new in items})
        pushed = _pushed(self.git, tips)
        if not pushed:
            return []
        name = items[0][0] + (f" and {len(items) - 1} more" if len(items) > 1 else "")
        return _judged(self.git, name, [*tips, "--not", "--all"], pushed, root, self.now,
                       line=False)


def _judge_line(git: Git, ref: str, old: str, new: str, root: str | None,
                now: float | None) -> list[tuple[str, dict]]:
    """A push to the team line: the line only ever goes on from its tip (the old tip stays on
    its first-parent line), and every commit it gains on that line is judged as one of the
    line, whatever other refs already hold it."""
    from gitstate.git.repo import on_first_parent_line
    if not is_zero(old) and not on_first_parent_line(git, old, new):
        return [(ref, _refusal(Rule.NON_FAST_FORWARD, f"{ref} is the team line: its tip "
                               f"{old[:10]} would no longer be on its first-parent line (a "
                               "merge that takes the line as a second parent rewrites it); "
                               "merge the other way round (on the team line) or rebase your "
                               "commits on it, and push again"))]
    # a team line made anew is judged whole: its history may hold commits another branch
    # brought here, never judged as the line's
    revs = [new, "--not", old] if not is_zero(old) else [new]
    return _judged(git, ref, revs, _pushed(git, [new]), root, now, line=True)


def _refusal(rule: Rule, message: str) -> dict:
    return {"commit": "", "subject": "", "rule": rule, "message": message, "where": None}


def record_received(git: Git, git_dir: str, landed: list[tuple[str, int]]) -> bool:
    """The hub's record of when it received each commit a pass of its landing queue landed
    (`(commit, seconds)`), in one notes commit for the pass (`git fast-import`, which lays
    the notes out as `git notes` does), swapped in by compare-and-swap as the post-receive
    shim swaps its own: each pusher's post-receive then finds its move noted, and adds
    nothing. A pass that dies before this leaves them to the post-receives. Whether they
    were noted."""
    if not landed:
        return False
    mine = f"{NOTES_REF}-lander-{os.getpid()}"
    notes = "".join(f"N inline {sha}\ndata {len(text)}\n{text}\n"
                    for sha, text in ((sha, f"received {when}\n") for sha, when in landed))
    for _try in range(200):
        old = git.rev(NOTES_REF)
        if git.call("fast-import", "--quiet", "--force",
                    input=_notes_commit(mine, old, notes).encode())[0] != 0:
            break
        swap = f"update {NOTES_REF} {mine} {old}" if old else f"create {NOTES_REF} {mine}"
        if git.call("update-ref", "--stdin", input=f"{swap}\ndelete {mine}\n".encode())[0] == 0:
            _mark_noted(git_dir, [sha for sha, _when in landed])
            return True
    git.call("update-ref", "-d", mine)
    return False


def _notes_commit(mine: str, old: str | None, notes: str) -> str:
    """The `fast-import` stream of the notes commit on `old` (None: the first)."""
    return (f"commit {mine}\ncommitter gitstate hub <hub@gitstate.invalid> "
            f"{int(time.time())} +0000\ndata 0\n" + (f"from {old}\n" if old else "") + notes)


def _mark_noted(git_dir: str, landed: list[str]) -> None:
    """Say to the post-receive shim that these commits are noted (`queue/landed/<commit>`,
    an empty file each, kept a day): it then starts nothing for them."""
    folder = os.path.join(git_dir, "gitstate", "queue", "landed")
    os.makedirs(folder, exist_ok=True)
    for sha in landed:
        open(os.path.join(folder, sha), "w").close()


def post_receive(git: Git, stdin: BinaryIO) -> int:
    """Record when the hub received each state commit of a push that landed. The shim does
    this in plain git now; a shim installed before runs this entry, which runs the shipped
    shim's own script (`.githooks/post-receive`): the same records, added on a notes ref of
    the run's own and swapped in by compare-and-swap, so that pushes landing at once each
    keep theirs. (The old shim runs the hub's own chained hook itself.)"""
    import subprocess

    from gitstate.resources import read_shipped
    script = read_shipped("githooks", "post-receive")
    # $0 names no hook: the chained `<hook>.pre-gitstate` is not run a second time
    return subprocess.run(["sh", "-c", script, "gitstate-post-receive"], input=stdin.read(),
                          cwd=git.cwd).returncode


def init_server(path: str | None, lifecycle: str | None) -> InitReport:
    """Install the hub's shims into a bare repository (the law comes from the pushed history)."""
    from pathlib import Path

    from gitstate.doors.install import InitReport
    from gitstate.doors.shims import install_into
    from gitstate.errors import UsageError
    from gitstate.law.load import load_lifecycle
    from gitstate.resources import preset_dir

    git = Git(path)
    if not git.is_bare():
        raise UsageError("--server is for a bare hub repository (git init --bare)")
    gdir = Path(git.text("rev-parse", "--absolute-git-dir"))
    lc = load_lifecycle((preset_dir(lifecycle or "haak") / "lifecycle.yaml").read_text("utf-8"))
    actions = install_into(gdir / "hooks", HUB_HOOKS, lc, templates=HUB_TEMPLATES)
    git.run("config", "gitstate.python", sys.executable)
    # git's own guard too: the branch HEAD names is never deleted
    git.run("config", "receive.denyDeleteCurrent", "true")
    # the landing queue: git hands pushes to refs/gitstate/queue/ to proc-receive, and the ref
    # that says so to clones (`git ls-remote HUB refs/gitstate/hub`)
    git.run("config", "receive.procReceiveRefs", QUEUE_PREFIX.rstrip("/"))
    mark = git.hash_object(b"gitstate hub: a move pushed to refs/gitstate/queue/<branch> is "
                           b"landed on the branch in order of arrival\n")
    if git.text("rev-parse", "-q", "--verify", HUB_MARK_REF, check=False) != mark:
        git.run("update-ref", HUB_MARK_REF, mark)
        actions.append(f"the landing queue: {QUEUE_PREFIX}<branch> (said by {HUB_MARK_REF})")
    return InitReport(lifecycle=None, hooks_dir=str(gdir / "hooks"), actions=actions)


def diagnose_hub(git: Git) -> list[dict]:
    """`gitstate doctor` on a hub: its hooks, the gitstate they run, what it protects and
    which refs it accepts."""
    from pathlib import Path

    from gitstate.doors.doctor import finding
    from gitstate.doors.shims import is_ours

    hooks = Path(git.text("rev-parse", "--absolute-git-dir")) / "hooks"
    missing = [n for n in HUB_HOOKS if not is_ours(hooks / n)]
    late = missing == ["reference-transaction"]   # a hub made before it had one
    out = [finding("warn", "hooks", f"reference-transaction in {hooks} is not gitstate's: a "
                   "pusher that hangs up before git's report leaves its commits without the "
                   "hub's record of when they arrived", "run `gitstate init --server` here")
           if late else
           finding("fail", "hooks", f"{', '.join(missing)} in {hooks} "
                   f"{'is' if len(missing) == 1 else 'are'} not gitstate's: pushes "
                   "are not judged", "run `gitstate init --server` here") if missing else
           finding("ok", "hooks", f"pre-receive judges every push; proc-receive lands "
                   "queued moves; post-receive and reference-transaction record when state "
                   f"commits arrive ({hooks})")]
    queue = git.config("receive.procReceiveRefs")
    marked = git.ok("rev-parse", "-q", "--verify", HUB_MARK_REF)
    out.append(finding("ok", "queue", f"moves pushed to {QUEUE_PREFIX}<branch> land in order "
                       "of arrival (`gitstate hub drain` lands any left by a crash)")
               if queue and marked else
               finding("warn", "queue", "no landing queue: `--push` falls back to retrying "
                       "against the branch, which a burst of clones makes slow",
                       "run `gitstate init --server` here"))
    out.append(_hub_python(git))
    out.append(_hub_law(git))
    out.append(finding("ok", "protected", "never rewritten or deleted: "
                       + ", ".join(protected_refs(git))
                       + " (more with `git config --add gitstate.protect REF`)"))
    out.append(finding("ok", "refs", "accepted from clients: " + ", ".join(ACCEPTED)
                       + f"; at most {_max_refs(git)} refs per push; "
                       f"{NOTES_REF} is the hub's own"))
    return out


def _hub_python(git: Git) -> dict:
    """Whether the hooks' Python imports gitstate."""
    import os
    import subprocess

    from gitstate.doors.doctor import finding
    python = git.config("gitstate.python")
    ok = python is not None and os.access(python, os.X_OK) and subprocess.run(
        [python, "-c", "import gitstate"], capture_output=True).returncode == 0
    return finding("ok", "gitstate", f"the hooks run {python}") if ok else \
        finding("fail", "gitstate", f"the hooks' Python ({python or 'not set'}) cannot "
                "import gitstate: every push will be refused",
                "run `gitstate init --server` with the gitstate you use")


def _hub_law(git: Git) -> dict:
    """Whether a branch carries the law new branches join."""
    from gitstate.doors.doctor import finding
    from gitstate.history.verify import law_at
    default = default_branch(git)
    if default and law_at(git, default):
        return finding("ok", "law", f"{default} carries the law; new branches join it")
    return finding("warn", "law", "no branch carries a valid lifecycle yet: the first push "
                   "brings the law", "push a managed history (`gitstate init` in a clone, "
                   "then `git push`)")
