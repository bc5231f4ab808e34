"""The signatures of a commit as made, read from git for the judge (`law.proofs`): the signers
in force where it joins the line (the tree of its first parent, or of the commit a door
guards), the commit's own signature, and when an agent was born by the door's clock.

Each is read only when a rule asks: a commit that moves no agent with a key and approves
nothing reads none of them.
"""

from __future__ import annotations

from gitstate.git.runner import Git
from gitstate.git.signing import signed_by, signed_by_any
from gitstate.history.commits import Commit
from gitstate.law.lifecycle import SIGNERS_PATH
from gitstate.law.proofs import Proofs


class GitProofs(Proofs):
    """`law_from`: the commit whose tree holds the law in force for `c`."""

    def __init__(self, git: Git, c: Commit, law_from: str | None, ctx):
        self.git, self.c, self.law_from, self.ctx = git, c, law_from, ctx
        self._signers: list = []
        self._raw: bytes | None = None

    def signers(self) -> str | None:
        if not self._signers:
            data = self.git.cat_files([f"{self.law_from}:{SIGNERS_PATH}"])[0] \
                if self.law_from else None
            self._signers.append(None if data is None else data.decode("utf-8", "replace"))
        return self._signers[0]

    def signed_by(self, principal: str) -> str | None:
        listed = self.signers()
        return signed_by(self.raw(), (listed or "").encode(), principal)

    def signed_by_any(self, keys: list[tuple[str, str]]) -> str | None:
        return signed_by_any(self.raw(), keys)

    def raw(self) -> bytes:
        if self._raw is None:
            found = self.git.cat_batch([self.c.sha])[0]
            self._raw = found[2] if found and isinstance(found[2], bytes) else b""
        return self._raw

    def born(self, path: str) -> float | None:
        """When the agent of `path` was born (its state file added on the line), by this
        door's clock."""
        base = self.ctx.base
        if base is None:
            return None
        line = self.git.text("log", "-1", "--first-parent", "--format=%H %ct",
                             "--diff-filter=A", base, "--", path)
        sha, _, ct = line.partition(" ")
        if not ct.isdigit():
            return None
        clock = getattr(self.ctx, "clock", None)
        return clock.received(sha, float(ct)) if clock is not None else float(ct)

    def retried(self, path: str) -> float | None:
        """When the agent of `path` was last retried (its `retries` count last changed), by
        this door's clock."""
        found = last_retry(self.git, self.ctx.base, path) if self.ctx.base else None
        if found is None:
            return None
        clock = getattr(self.ctx, "clock", None)
        return clock.received(*found) if clock is not None else found[1]


def last_retry(git: Git, rev: str, path: str) -> tuple[str, float] | None:
    """(commit, committer time) of the last retry of the agent of `path` on the first-parent
    line of `rev`: the last commit that changed its `retries` count (only a retry may)."""
    line = git.text("log", "-1", "--first-parent", "--format=%H %ct", "-G^retries:", rev,
                    "--", path)
    sha, _, ct = line.partition(" ")
    return (sha, float(ct)) if ct.strip().isdigit() else None
