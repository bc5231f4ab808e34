"""The hub: a bare repository whose pre-receive hook holds every pushed ref to the law.

The hub is the boundary (SPEC §7). It judges every pushed ref, branches and tags, with
`verify`'s judgement and never a cache; refuses to rewrite or delete a protected branch (its
default branch, and any `gitstate.protect` ref); refuses commits dated in its future; and
judges a timed transition by its own clock and its own record of when it received the commit
that started the wait (git notes under `refs/notes/gitstate-received`, written after each push
lands by the post-receive hook).
"""

from __future__ import annotations

import sys
import time

from gitstate.git.runner import ZERO, Git
from gitstate.law.lifecycle import LIFECYCLE_PATH

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import BinaryIO

    from gitstate.doors.install import InitReport

NOTES_REF = "refs/notes/gitstate-received"


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


def _protected(git: Git) -> set[str]:
    refs = set()
    code, out, _ = git.call("symbolic-ref", "-q", "HEAD")
    if code == 0 and out.strip():
        refs.add(out.decode().strip())
    code, out, _ = git.call("config", "--get-all", "gitstate.protect")
    for name in out.decode().split() if code == 0 else []:
        refs.add(name if name.startswith("refs/") else f"refs/heads/{name}")
    return refs


def _law_at(git: Git, rev: str | None) -> tuple[str, bytes] | None:
    if not rev:
        return None
    found = git.cat_batch([f"{rev}:{LIFECYCLE_PATH}"])[0]
    return (found[0], found[2]) if found is not None and found[1] == "blob" else None


def pre_receive(git: Git, stdin: BinaryIO, now: float | None = None) -> int:
    """Refuse the whole push if any pushed ref breaks the law."""
    from gitstate.history.problems import print_by_commit
    from gitstate.history.verify import verify

    updates = [line.split() for line in stdin.read().decode("utf-8", "replace").splitlines()]
    updates = [u for u in updates if len(u) == 3]
    protected = _protected(git)
    default = next(iter(sorted(r for r in protected if r.startswith("refs/heads/"))), None)
    bad: list[tuple[str, dict]] = []
    for old, new, ref in updates:
        if ref in protected and new == ZERO:
            bad.append((ref, _refusal("protected-ref", f"{ref} is protected on this hub: it "
                                      "cannot be deleted")))
            continue
        if new == ZERO:
            continue   # a deletion carries no commits
        if ref in protected and old != ZERO and not git.ok("merge-base", "--is-ancestor",
                                                           old, new):
            bad.append((ref, _refusal("non-fast-forward", f"{ref} is protected on this hub: "
                                      f"{new[:10]} does not contain its tip {old[:10]}; history "
                                      "is never rewritten here (fetch, rebase your commits on "
                                      "it, and push again)")))
            continue
        pushed = set(git.text("rev-list", new, "--not", "--all").split())
        if not pushed:
            continue
        law = _law_at(git, old if old != ZERO else default)
        problems, _ = verify(git, [new, "--not", "--all"], None, root_law=law,
                             clock=HubClock(git, pushed, now))
        bad += [(ref, p) for p in problems]
    if not bad:
        return 0
    print("gitstate: push refused by the hub:", file=sys.stderr)
    print_by_commit(bad, sys.stderr)
    print("Nothing was accepted. Fix these commits (e.g. rebase them) and push again.",
          file=sys.stderr)
    return 1


def _refusal(rule: str, message: str) -> dict:
    return {"commit": "", "subject": "", "rule": rule, "message": message, "where": None}


def post_receive(git: Git, stdin: BinaryIO) -> int:
    """Record when the hub received each state commit of a push that landed. (The shim
    does this in plain git now; this entry stays for shims installed before.)"""
    stamp = str(int(time.time()))
    seen: set[str] = set()
    for line in stdin.read().decode("utf-8", "replace").splitlines():
        parts = line.split()
        if len(parts) != 3 or parts[1] == ZERO:
            continue
        old, new, ref = parts
        if old != ZERO:
            rng = [new, f"^{old}"]
        else:   # a new ref: what no other branch or tag has (`--all` would add HEAD: all of it)
            others = git.text("for-each-ref", "--format=%(refname) %(objectname)",
                              "refs/heads", "refs/tags").splitlines()
            rng = [new] + [f"^{line.split()[1]}" for line in others
                           if line.split()[0] != ref]
        out = git.run("log", "--format=%H %s", "-i", "--grep=\\[state:", *rng, "--")
        for row in out.decode("utf-8", "replace").splitlines():
            sha = row.split(" ", 1)[0]
            if sha and sha not in seen:
                seen.add(sha)
                git.ok("notes", f"--ref={NOTES_REF}", "add", "-f", "-m", f"received {stamp}",
                       sha)
    return 0


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
    actions = install_into(gdir / "hooks", ("pre-receive", "post-receive"), lc)
    git.run("config", "gitstate.python", sys.executable)
    # git's own guard too: the branch HEAD names is never deleted
    git.run("config", "receive.denyDeleteCurrent", "true")
    return InitReport(lifecycle="(as committed in each pushed history)",
                      hooks_dir=str(gdir / "hooks"), actions=actions)
