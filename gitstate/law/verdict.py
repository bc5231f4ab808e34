"""What a judgement is made of: the changes judged, the violations found (each names its rule,
declared in `gitstate/law/rule_ids.py`), and the `Context` through which rules see the rest of the
repository. Shared by the per-agent rules (`rules`) and the rules about the whole society
(`society`).
"""

from __future__ import annotations

from gitstate.law.record import Record
from gitstate.law.rule_ids import Rule

TYPE_CHECKING = False  # statefile is imported by the rules that need it, not by every verdict
if TYPE_CHECKING:
    from gitstate.law.statefile import StateDoc

SYMLINK_MODE = "120000"


class FileChange(Record):
    """One state file in a commit: its content in the parent and in the commit (None: absent),
    and the mode it has in the commit (SYMLINK_MODE is a symlink), when known."""

    __slots__ = ("path", "old", "new", "new_mode")

    def __init__(self, path: str, old: bytes | None, new: bytes | None,
                 new_mode: str | None = None):
        self.path, self.old, self.new, self.new_mode = path, old, new, new_mode


class Violation(Record):
    __slots__ = ("rule", "message", "where")

    def __init__(self, rule: Rule, message: str, where: str | None = None):
        self.rule, self.message, self.where = rule, message, where

    def __str__(self) -> str:
        return f"[{self.rule}] {self.where}: {self.message}" if self.where \
            else f"[{self.rule}] {self.message}"

    def to_dict(self) -> dict:
        return {"rule": self.rule, "message": self.message, "where": self.where}


class Context:
    """What rules about the rest of the repository ask, answered by the caller (git-backed in
    the hooks, `transition` and `verify`; plain data in tests). The pure core never calls git.

    `base` is the parent of the commit being judged; `tree_file` and `agents` see the commit
    as it will be (after the change). Each is asked only when a rule needs it.
    """

    @property
    def base(self) -> str | None:
        return None

    def commit(self, rev: str) -> str | None:  # pragma: no cover - interface
        raise NotImplementedError

    def is_ancestor(self, a: str, b: str) -> bool:  # pragma: no cover - interface
        raise NotImplementedError

    def tree_file(self, path: str) -> bytes | None:  # pragma: no cover - interface
        raise NotImplementedError

    def base_file(self, path: str) -> bytes | None:  # pragma: no cover - interface
        """A file as it was before the commit (None if absent)."""
        raise NotImplementedError

    def tree_mode(self, path: str) -> str | None:
        """The mode of a file in the commit (SYMLINK_MODE: a symlink); None if unknown."""
        return None

    def agents(self) -> dict[str, dict]:  # pragma: no cover - interface
        """agent id -> front matter of every readable state file in the commit."""
        raise NotImplementedError

    def living_roles(self, lc) -> tuple[dict[str, set[str]], int] | None:
        """(role -> its living holders, number of living agents) in the commit, where the
        caller keeps them as it goes (`verify` along a line of history); None: the rules
        count them from `agents()`."""
        return None

    def now(self) -> float:  # pragma: no cover - interface
        """When the commit is made (the commit's own time, when replaying history)."""
        raise NotImplementedError

    def committed(self) -> float:
        """The commit's own time (its committer date; before it is made, now): what the
        stamps a move writes are (a door's clock, the hub's, may be later)."""
        return self.now()

    def entered(self, agent: str, state: str) -> float | None:  # pragma: no cover
        """When `agent` entered `state`, by the tags of the history before the commit."""
        raise NotImplementedError


class Parsed(Record):
    """A change with both sides parsed. `new_problem`: the new side is too broken for the
    rules that follow to say anything useful."""

    change: FileChange
    agent: str
    old: StateDoc | None = None
    new: StateDoc | None = None
    new_problem: bool = False
